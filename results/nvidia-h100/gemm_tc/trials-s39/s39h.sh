#!/bin/bash
# Session 39, call H (the H100 of call G, warm): gemm.tc_decode at 74e7588 (before the 128 x 96 / 128 x 112
# grid), the baseline for call G's record at 5f79061 on this card.
R=$PWD
mkdir -p /tmp/H && cd /tmp && tar xJf $R/build/c39/binsd.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/H/gpu.txt
cat /tmp/H/gpu.txt
timeout -s KILL 200 /tmp/c39d/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/H/gemm_tc_decode --md /tmp/H/gemm_tc_decode/run.md > /tmp/H/decode.log 2>&1
echo "decode rc=$? $(date +%T)"; tail -1 /tmp/H/decode.log
tar czf $OUT/H.tgz -C /tmp H
