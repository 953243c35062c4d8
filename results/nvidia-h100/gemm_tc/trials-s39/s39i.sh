#!/bin/bash
# Session 39, call I: gemm.tc_decode at 5f79061 and a repeat, on the H200 only (an H100 already has it).
R=$PWD
mkdir -p /tmp/I && cd /tmp && tar xJf $R/build/c39/binsg.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/I/gpu.txt
cat /tmp/I/gpu.txt
grep -q H200 /tmp/I/gpu.txt || { echo "not an H200: nothing to do"; exit 0; }
for t in gemm_tc_decode repeat; do
  timeout -s KILL 150 /tmp/c39g/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/I/$t --md /tmp/I/$t/run.md > /tmp/I/$t.log 2>&1
  echo "$t rc=$? $(date +%T)"; tail -1 /tmp/I/$t.log
  tar czf $OUT/I.tgz -C /tmp I
done
