#!/bin/bash
# Session 39, call L: gemm.tc_decode at 2db24ab and a repeat, on the H200 only (an H100 already has it).
R=$PWD
mkdir -p /tmp/L && cd /tmp && tar xJf $R/build/c39/binsj.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/L/gpu.txt
cat /tmp/L/gpu.txt
grep -q H200 /tmp/L/gpu.txt || { echo "not an H200: nothing to do"; exit 0; }
for t in gemm_tc_decode repeat; do
  timeout -s KILL 150 /tmp/c39j/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/L/$t --md /tmp/L/$t/run.md > /tmp/L/$t.log 2>&1
  echo "$t rc=$? $(date +%T)"; tail -1 /tmp/L/$t.log
  tar czf $OUT/L.tgz -C /tmp L
done
