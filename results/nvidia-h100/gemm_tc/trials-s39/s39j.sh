#!/bin/bash
# Session 39, call J (2db24ab): the two grid tests after their shared check was factored out, the
# sanitizers over the new one (memcheck); on an H200 also gemm.tc_decode at the new rule.
R=$PWD
mkdir -p /tmp/J && cd /tmp && tar xJf $R/build/c39/binsj.tar.xz
X=/tmp/c39j
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/J/gpu.txt
cat /tmp/J/gpu.txt
T='GemmTc.PersistentTilesOf128x96And128x112SpreadOneRowOfTiles:GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone'
timeout -s KILL 120 $X/memlab_gpu_tests --gtest_filter="$T" > /tmp/J/tests.txt 2>&1 &
MEMLAB_TEST_SMALL=1 timeout -s KILL 120 compute-sanitizer --tool memcheck --error-exitcode 1 $X/memlab_gpu_tests --gtest_filter='GemmTc.PersistentTilesOf128x96And128x112SpreadOneRowOfTiles' --gtest_brief=1 > /tmp/J/san-memcheck.txt 2>&1
echo "memcheck rc=$?"; wait; grep -E 'OK|FAILED|PASSED' /tmp/J/tests.txt | tail -4; tail -2 /tmp/J/san-memcheck.txt
tar czf $OUT/J.tgz -C /tmp J
grep -q H200 /tmp/J/gpu.txt || exit 0
timeout -s KILL 150 $X/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/J/gemm_tc_decode --md /tmp/J/gemm_tc_decode/run.md > /tmp/J/decode.log 2>&1
echo "decode rc=$? $(date +%T)"; tail -1 /tmp/J/decode.log
tar czf $OUT/J.tgz -C /tmp J
