#!/bin/bash
# Session 36, call H at fb4084c: hierarchy.l2_intake with up to four consumer warps: GPU tests,
# its record, sanitizers, a repeat, the 80-virtual build's tests. Every step killed at its limit.
R=$PWD
mkdir -p /tmp/H && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/H/gpu.txt
timeout -s KILL 60 $B/hier_gpu_tests --gtest_filter='HierarchyStream*:HierarchyIntake*' > /tmp/H/tests-native.txt 2>&1; echo "native rc=$?"
tar czf $OUT/H.tgz -C /tmp H
timeout -s KILL 60 $B/memlab run hierarchy.l2_intake -d 0 --in-process --no-progress --no-report -o /tmp/H/intake --md /tmp/H/intake/run.md > /tmp/H/intake.log 2>&1; echo "intake rc=$?"
tar czf $OUT/H.tgz -C /tmp H
for tool in memcheck racecheck synccheck; do
  timeout -s KILL 40 compute-sanitizer --tool $tool --error-exitcode 9 $B/hier_gpu_tests --gtest_filter='HierarchyIntake*' > /tmp/H/$tool.txt 2>&1; echo "$tool rc=$?"
done
tar czf $OUT/H.tgz -C /tmp H
timeout -s KILL 50 $B/memlab run hierarchy.l2_intake -d 0 --in-process --no-progress --no-report -o /tmp/H/repeat --md /tmp/H/repeat/run.md > /tmp/H/repeat.log 2>&1; echo "repeat rc=$?"
timeout -s KILL 20 $B/v80h_gpu_tests --gtest_filter='HierarchyIntake*' > /tmp/H/tests-v80.txt 2>&1; echo "v80 rc=$?"
tar czf $OUT/H.tgz -C /tmp H
