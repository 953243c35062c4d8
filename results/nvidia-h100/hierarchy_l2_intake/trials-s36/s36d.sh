#!/bin/bash
# Session 36, call D (again at ac78f84): hierarchy.l2_intake: the hierarchy GPU tests for the stream rings
# and the intake kernel (native, and the 80-virtual build's), compute-sanitizer on the intake
# tests, the experiment's record.
R=$PWD
mkdir -p /tmp/D && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/D/gpu.txt
timeout 240 $B/hier_gpu_tests --gtest_filter='HierarchyStream*:HierarchyIntake*' > /tmp/D/tests-native.txt 2>&1
echo "native rc=$?"
timeout 120 $B/v80h_gpu_tests --gtest_filter='HierarchyStream*:HierarchyIntake*' > /tmp/D/tests-v80.txt 2>&1
echo "v80 rc=$?"
tar czf $OUT/D.tgz -C /tmp D
for tool in memcheck racecheck synccheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B/hier_gpu_tests --gtest_filter='HierarchyIntake*' > /tmp/D/$tool.txt 2>&1
  echo "$tool rc=$?"
done
tar czf $OUT/D.tgz -C /tmp D
timeout 200 $B/memlab run hierarchy.l2_intake -d 0 --no-progress --no-report -o /tmp/D/intake --md /tmp/D/intake/run.md > /tmp/D/intake.log 2>&1
echo "intake rc=$?"
tar czf $OUT/D.tgz -C /tmp D
timeout 200 $B/memlab run hierarchy.l2_intake -d 0 --no-progress --no-report -o /tmp/D/repeat --md /tmp/D/repeat/run.md > /tmp/D/repeat.log 2>&1
echo "repeat rc=$?"
tar czf $OUT/D.tgz -C /tmp D
