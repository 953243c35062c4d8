#!/bin/bash
# Session 38, call E: rung 5's 64 x 96 grid (the trial build: 0c38 landing code + MEMLAB_TRIAL_R5GRID):
# its GPU tests and rung 5's, the sanitizers on the new test, and the decode trial (decode.cu).
R=$PWD
mkdir -p /tmp/E && cd /tmp && tar xJf $R/build/c38/binse.tar.xz
X=/tmp/c38e
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/E/gpu.txt
cat /tmp/E/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
killgroup 60 $X/decode 128x5120x8192,128x6144x8192,128x4608x8192,256x3072x8192,128x5120x16384,128x6144x28672,128x8192x8192 3 4 > /tmp/E/decode.txt 2>&1
echo "decode rc=$? $(date +%T)"; grep -E "verify|FAILED" /tmp/E/decode.txt | head -20
tar czf $OUT/E.tgz -C /tmp E
T='GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.FewTilesRunOnRungFiveWhereItsGridsAreFaster:GemmTc.Persistent_*:GemmTc.ReadsBStoredKByN:GemmTc.NanInAPropagates:GemmTc.E4m3NanInAPropagates:GemmTc.KZeroScalesC'
killgroup 200 $X/memlab_gpu_tests --gtest_filter="$T" > /tmp/E/tests.txt 2>&1
echo "tests rc=$? $(date +%T)"; grep -E 'FAILED|tests from.*ran|PASSED' /tmp/E/tests.txt | tail -4
tar czf $OUT/E.tgz -C /tmp E
for t in memcheck racecheck synccheck; do
  MEMLAB_TEST_SMALL=1 killgroup 90 compute-sanitizer --tool $t --error-exitcode 1 $X/memlab_gpu_tests --gtest_filter='GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone' --gtest_brief=1 > /tmp/E/san-$t.txt 2>&1
  echo "$t rc=$? $(date +%T)"; tail -2 /tmp/E/san-$t.txt
  tar czf $OUT/E.tgz -C /tmp E
done
