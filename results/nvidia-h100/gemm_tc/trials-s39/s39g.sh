#!/bin/bash
# Session 39, call G: rung 5's persistent 128 x 96 / 128 x 112 grid for one row of tiles (the landing
# commit): the GPU tests of rung 5 and the sanitizers over the new test, then gemm.tc_decode recorded
# and repeated.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/G && cd /tmp && tar xJf $R/build/c39/binsg.tar.xz
X=/tmp/c39g
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/G/gpu.txt
cat /tmp/G/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
T='GemmTc.PersistentTilesOf128x96And128x112SpreadOneRowOfTiles:GemmTc.PersistentAndClusterWalkManyTiles:GemmTc.LayoutsAndAlignmentFallBack:GemmTc.BackToBackCallsSeeEachOthersWrites:GemmTc.BadInputThrowsAndLeavesCUntouched:GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.FewTilesRunOnRungFiveWhereItsGridsAreFaster:GemmTc.Persistent_*:GemmTc.ReadsBStoredKByN:GemmTc.NanInAPropagates:GemmTc.E4m3NanInAPropagates:GemmTc.KZeroScalesC:GemmTc.Automatic*'
S='GemmTc.PersistentTilesOf128x96And128x112SpreadOneRowOfTiles:GemmTc.Persistent_bf16:GemmTc.Persistent_e4m3'
( killgroup 200 $X/memlab_gpu_tests --gtest_filter="$T" > /tmp/G/tests.txt 2>&1; echo "tests rc=$? $(date +%T)" >> /tmp/G/rc.txt ) &
for t in memcheck racecheck synccheck; do
  ( MEMLAB_TEST_SMALL=1 killgroup 220 compute-sanitizer --tool $t --error-exitcode 1 $X/memlab_gpu_tests --gtest_filter="$S" --gtest_brief=1 > /tmp/G/san-$t.txt 2>&1; echo "$t rc=$? $(date +%T)" >> /tmp/G/rc.txt ) &
done
wait
cat /tmp/G/rc.txt; grep -E 'FAILED|tests from.*ran|PASSED' /tmp/G/tests.txt | tail -4
for t in memcheck racecheck synccheck; do tail -3 /tmp/G/san-$t.txt; done
tar czf $OUT/G.tgz -C /tmp G
killgroup 150 $X/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/G/gemm_tc_decode --md /tmp/G/gemm_tc_decode/run.md > /tmp/G/decode.log 2>&1
echo "decode rc=$? $(date +%T)"; tail -1 /tmp/G/decode.log
tar czf $OUT/G.tgz -C /tmp G
left=$(( 590 - ($(date +%s) - T0) ))
echo "left $left s"
if [ $left -gt 130 ]; then
  killgroup $((left - 10)) $X/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/G/repeat --md /tmp/G/repeat/run.md > /tmp/G/repeat.log 2>&1
  echo "repeat rc=$? $(date +%T)"; tail -1 /tmp/G/repeat.log
  tar czf $OUT/G.tgz -C /tmp G
fi
