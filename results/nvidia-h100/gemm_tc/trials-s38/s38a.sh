#!/bin/bash
# Session 38, call A: the public kernel's bar measured two ways (peers: memlab, cublasLt, cublasGemmEx,
# fast.cu's kernel 12 at 4096³ and 8192³ BF16), then the 80-virtual and 75-virtual builds' gemm tests.
R=$PWD
mkdir -p /tmp/A && cd /tmp && tar xJf $R/build/c38/bins.tar.xz
X=/tmp/c38
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/A/gpu.txt
cat /tmp/A/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
killgroup 240 $X/peers 4096,8192 2 2 2 > /tmp/A/peers.txt 2>&1
echo "peers rc=$? $(date +%T)"; grep -E "verify|FAILED" /tmp/A/peers.txt
tar czf $OUT/A.tgz -C /tmp A
for a in 80 75; do
  killgroup 150 $X/gpu-v$a --gtest_filter='Gemm*:CoreTiming*' > /tmp/A/tests-v$a.txt 2>&1
  echo "v$a rc=$? $(date +%T)"; grep -E 'FAILED|tests from.*ran|PASSED|SKIPPED \[' /tmp/A/tests-v$a.txt | tail -4
  tar czf $OUT/A.tgz -C /tmp A
done
