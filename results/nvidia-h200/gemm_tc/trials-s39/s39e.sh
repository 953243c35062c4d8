#!/bin/bash
# Session 39, call E (H200, warm): gemm.tc_few_tiles recorded at 74e7588, then rung 5's GPU tests (f7af7ee).
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/E && cd /tmp && tar xJf $R/build/c39/binsd.tar.xz && tar xJf $R/build/c39/binsa.tar.xz
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/E/gpu.txt
cat /tmp/E/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
killgroup 360 /tmp/c39d/memlab run gemm.tc_few_tiles -a variant=automatic,persistent,cluster,coop128x128,coop128x256,coop128x64 -a dtype=bf16,f16 -d 0 --no-progress --no-report -o /tmp/E/gemm_tc_few_tiles --md /tmp/E/gemm_tc_few_tiles/run.md > /tmp/E/few.log 2>&1
echo "few rc=$? $(date +%T)"; tail -1 /tmp/E/few.log
tar czf $OUT/E.tgz -C /tmp E
T='GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.FewTilesRunOnRungFiveWhereItsGridsAreFaster:GemmTc.Persistent_*:GemmTc.ReadsBStoredKByN:GemmTc.NanInAPropagates:GemmTc.E4m3NanInAPropagates:GemmTc.KZeroScalesC'
left=$(( 590 - ($(date +%s) - T0) ))
killgroup $((left - 5)) /tmp/c39a/memlab_gpu_tests --gtest_filter="$T" > /tmp/E/tests.txt 2>&1
echo "tests rc=$? $(date +%T)"; grep -E 'FAILED|tests from.*ran|PASSED' /tmp/E/tests.txt | tail -4
tar czf $OUT/E.tgz -C /tmp E
