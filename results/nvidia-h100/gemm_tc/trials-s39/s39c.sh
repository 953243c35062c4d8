#!/bin/bash
# Session 39, call C: the CoreTiming tests of the PTX builds alone (call B ran them beside other GPU work),
# and the m = 128 decode survey on rung 5.
R=$PWD
mkdir -p /tmp/C && cd /tmp && tar xJf $R/build/c39/binsb.tar.xz
X=/tmp/c39b
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/C/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
for a in 80 75; do killgroup 120 $X/v$a/memlab_gpu_tests --gtest_filter='CoreTiming*' > /tmp/C/v$a-coretiming.txt 2>&1; echo "v$a rc=$? $(date +%T)"; grep -E 'FAILED|PASSED' /tmp/C/v$a-coretiming.txt | tail -3; done
tar czf $OUT/C.tgz -C /tmp C
killgroup 300 $X/memlab run gemm.tc_ladder -a variant=persistent -a dtype=bf16 -a out=same -a shape=128x4096x11008,128x11008x4096,128x12288x4096,128x14336x4096,128x4096x14336,128x28672x8192,128x10240x8192,128x8192x22016,128x3072x8192,128x2048x8192 -d 0 --no-progress --no-report -o /tmp/C/decode-survey > /tmp/C/decode-survey.log 2>&1
echo "survey rc=$? $(date +%T)"; tail -2 /tmp/C/decode-survey.log
tar czf $OUT/C.tgz -C /tmp C
