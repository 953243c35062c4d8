#!/bin/bash
# Session 40, call I: the CI build of f1c2e43 (the cpu preset from a fresh clone: library for sm_75 and
# sm_90a, experiments and GPU tests for sm_90a; 17 experiment and 13 GPU-test files now .cpp) on the card:
# the GPU tests of the renamed files' suites, then the renamed families' experiments --quick.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/I && cd /tmp && tar xJf $R/build/c40/binsi.tar.xz
X=/tmp/c40i
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/I/gpu.txt
cat /tmp/I/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
F='Async*:Ceilings*:Coalescing*:Constant*:GemmSeed*:GemmVariants*:GemmEx*:GemmArguments*:GemmGuide*:Hierarchy*:L2*:Layout*:Link*:Reduce*:Registers*:Smem*'
killgroup 130 $X/memlab_gpu_tests --gtest_filter="$F" --gtest_brief=1 > /tmp/I/tests.txt 2>&1
echo "tests rc=$? $(date +%T)"; grep -E 'FAILED|tests from.*ran|PASSED|SKIPPED \]' /tmp/I/tests.txt | grep -v "^\[  SKIPPED \] [A-Z]" | tail -6
tar czf $OUT/I.tgz -C /tmp I
left=$(( 215 - ($(date +%s) - T0) ))
killgroup $left $X/memlab run coalescing constant registers smem layout l2 async ceilings --quick -d 0 --no-progress --no-report -o /tmp/I/quick > /tmp/I/quick.log 2>&1
echo "quick rc=$? $(date +%T)"; tail -2 /tmp/I/quick.log
tar czf $OUT/I.tgz -C /tmp I
echo "end $(( $(date +%s) - T0 )) s"
