#!/bin/bash
# Session 38, call B: hierarchy's prepared launches at the committed head: GPU tests, sanitizers, the
# hierarchy family's record and hierarchy.l2_intake's, and the old launch path's tma, inflight and
# l2_intake rows in the same call (the bias the prepared launch removes); then the 80-virtual build's
# last four gemm tests.
R=$PWD
T0=$(date +%s)
mkdir -p /tmp/B && cd /tmp && tar xJf $R/build/c38/binsb.tar.xz
X=/tmp/c38b
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/B/gpu.txt
cat /tmp/B/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
killgroup 120 $X/gpu-hier --gtest_filter='Hierarchy*' > /tmp/B/tests-hier.txt 2>&1
echo "hier tests rc=$? $(date +%T)"; grep -E 'FAILED|tests from.*ran|PASSED' /tmp/B/tests-hier.txt | tail -3
for t in memcheck racecheck synccheck; do
  MEMLAB_TEST_SMALL=1 killgroup 60 compute-sanitizer --tool $t --error-exitcode 1 $X/gpu-hier --gtest_filter='HierarchyPrepared.*:HierarchyIntake.*' --gtest_brief=1 > /tmp/B/san-$t.txt 2>&1
  echo "$t rc=$? $(date +%T)"; tail -2 /tmp/B/san-$t.txt
done
tar czf $OUT/B.tgz -C /tmp B
killgroup 100 $X/memlab-old run hierarchy.tma hierarchy.inflight hierarchy.l2_intake -d 0 --no-progress --no-report -o /tmp/B/old --md /tmp/B/old/run.md > /tmp/B/old.log 2>&1
echo "old rc=$? $(date +%T)"
tar czf $OUT/B.tgz -C /tmp B
killgroup 150 $X/memlab run hierarchy -d 0 --no-progress --no-report -o /tmp/B/hierarchy --md /tmp/B/hierarchy/run.md > /tmp/B/hierarchy.log 2>&1
echo "hierarchy rc=$? $(date +%T)"
killgroup 80 $X/memlab run hierarchy.l2_intake -d 0 --no-progress --no-report -o /tmp/B/intake --md /tmp/B/intake/run.md > /tmp/B/intake.log 2>&1
echo "intake rc=$? $(date +%T)"
tar czf $OUT/B.tgz -C /tmp B
left=$(( 570 - ($(date +%s) - T0) ))
if [ $left -gt 20 ]; then
  killgroup $left $X/gpu-v80 --gtest_filter='GemmTc.MmaSyncStages:GemmTc.MmaSyncWideTiles:GemmTc.MmaSyncTuringKernel:GemmTc.BadInputThrowsAndLeavesCUntouched' > /tmp/B/tests-v80-rest.txt 2>&1
  echo "v80 rest rc=$? $(date +%T)"; grep -E 'FAILED|tests from.*ran|PASSED|OK \]' /tmp/B/tests-v80-rest.txt | tail -6
fi
tar czf $OUT/B.tgz -C /tmp B
