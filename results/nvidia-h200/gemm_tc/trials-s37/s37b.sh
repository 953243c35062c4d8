#!/bin/bash
# Session 37, call B: hierarchy.l2_intake with up to four consumer warps (d3ed6f6): its GPU tests,
# compute-sanitizer (memcheck, racecheck, synccheck) over them at small sizes, the record and a repeat.
R=$PWD
mkdir -p /tmp/B && cd /tmp && tar xJf $R/build/c37b/hier.tar.xz
H=/tmp/h37
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/B/gpu.txt
cat /tmp/B/gpu.txt
killgroup() { # seconds command...: the command in its own process group, the whole group killed at the limit
  local lim=$1; shift
  setsid "$@" & local pid=$!
  ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!
  wait $pid; local rc=$?
  kill $w 2>/dev/null
  return $rc
}
killgroup 120 $H/memlab_gpu_tests --gtest_filter='-CoreTiming.*' > /tmp/B/gpu-tests.log 2>&1
echo "gpu tests rc=$?"; tail -3 /tmp/B/gpu-tests.log
$H/memlab_cpu_tests --gtest_filter='HierarchyIntake.*' > /tmp/B/cpu-tests.log 2>&1; echo "cpu tests rc=$?"
for t in memcheck racecheck synccheck; do
  MEMLAB_TEST_SMALL=1 killgroup 200 compute-sanitizer --tool $t --error-exitcode 1 $H/memlab_gpu_tests --gtest_filter='HierarchyIntake.*' --gtest_brief=1 > /tmp/B/san-$t.log 2>&1
  echo "$t rc=$?"; tail -2 /tmp/B/san-$t.log
done
tar czf $OUT/B.tgz -C /tmp B
for run in intake repeat; do
  killgroup 200 $H/memlab run hierarchy.l2_intake -d 0 --no-progress --no-report -o /tmp/B/$run --md /tmp/B/$run/run.md > /tmp/B/$run.log 2>&1
  echo "$run rc=$?"
  tar czf $OUT/B.tgz -C /tmp B
done
# rung 6's kernels forced at 4096x11008x4096 (the H200's BF16 miss), the trial build's memlab (rung 6 as at a6fc98d)
cd /tmp && tar xJf $R/build/c37/bins.tar.xz
V=auto,cooperative,pingpong192,pingpong160,cooperative256,pingpong192s,pingpong160s,pingpong176,pingpong144,coop128x256,coop128x128
for rep in 1 2; do
  killgroup 150 /tmp/c37/memlab-base run gemm.tc_cluster_kernels --in-process -a variant=$V -a dtype=bf16,f16 -a shape=4096x11008x4096 -d 0 --no-progress --no-report -o /tmp/B/ck-$rep > /tmp/B/ck-$rep.log 2>&1
  echo "ck $rep rc=$? $(date +%T)"
  tar czf $OUT/B.tgz -C /tmp B
done
