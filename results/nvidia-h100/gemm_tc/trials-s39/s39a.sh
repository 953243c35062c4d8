#!/bin/bash
# Session 39, call A: rung 5's 64 x 96 grid landed (f7af7ee): its GPU tests and rung 5's, the
# sanitizers over them (small sizes), then the gemm.tc_few_tiles record if the call has time left.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/A && cd /tmp && tar xJf $R/build/c39/binsa.tar.xz
X=/tmp/c39a
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/A/gpu.txt
cat /tmp/A/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
T='GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.FewTilesRunOnRungFiveWhereItsGridsAreFaster:GemmTc.Persistent_*:GemmTc.ReadsBStoredKByN:GemmTc.NanInAPropagates:GemmTc.E4m3NanInAPropagates:GemmTc.KZeroScalesC'
S='GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.FewTilesRunOnRungFiveWhereItsGridsAreFaster:GemmTc.Persistent_*'
( killgroup 280 $X/memlab_gpu_tests --gtest_filter="$T" > /tmp/A/tests.txt 2>&1; echo "tests rc=$? $(date +%T)" >> /tmp/A/rc.txt ) &
for t in memcheck racecheck synccheck; do
  ( MEMLAB_TEST_SMALL=1 killgroup 300 compute-sanitizer --tool $t --error-exitcode 1 $X/memlab_gpu_tests --gtest_filter="$S" --gtest_brief=1 > /tmp/A/san-$t.txt 2>&1; echo "$t rc=$? $(date +%T)" >> /tmp/A/rc.txt ) &
done
wait
cat /tmp/A/rc.txt; grep -E 'FAILED|tests from.*ran|PASSED' /tmp/A/tests.txt | tail -4
for t in memcheck racecheck synccheck; do tail -3 /tmp/A/san-$t.txt; done
tar czf $OUT/A.tgz -C /tmp A
left=$(( 590 - ($(date +%s) - T0) ))
echo "left $left s"
if [ $left -gt 230 ]; then
  killgroup $((left - 10)) $X/memlab run gemm.tc_few_tiles -a variant=automatic,persistent,cluster,coop128x128,coop128x256,coop128x64 -a dtype=bf16,f16 -d 0 --no-progress --no-report -o /tmp/A/gemm_tc_few_tiles --md /tmp/A/gemm_tc_few_tiles/run.md > /tmp/A/few.log 2>&1
  echo "few rc=$? $(date +%T)"; tail -3 /tmp/A/few.log
  tar czf $OUT/A.tgz -C /tmp A
fi
