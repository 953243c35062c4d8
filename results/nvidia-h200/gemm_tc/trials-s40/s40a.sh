#!/bin/bash
# Session 40, call A (bc945dc): the trial first (rung 6's cooperative kernel on 128 x 96 tiles in pairs
# along N sharing A, against rung 5's choice and cublasLt at the wide decode rows; then ncu's counts for
# one launch of each at 128x11008x4096), then rung 5's GPU tests at head (after 1a828c8) with the
# sanitizers, then the 80-virtual and 75-virtual builds' gemm + hierarchy + CoreTiming tests, one binary
# at a time.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/A && cd /tmp && tar xJf $R/build/c40/binsa.tar.xz
X=/tmp/c40a
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/A/gpu.txt
cat /tmp/A/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
SH=128x11008x4096,128x12288x4096,128x14336x4096,128x10240x8192,128x13824x5120,128x28672x8192
killgroup 100 $X/decode40 $SH 3 4 rule,coop128x96,cublasLt > /tmp/A/trial.txt 2>&1
echo "trial rc=$? $(date +%T)"; grep -c FAILED /tmp/A/trial.txt; grep "^verify" /tmp/A/trial.txt | head -20
tar czf $OUT/A.tgz -C /tmp A
M=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,l1tex__m_xbar2l1tex_read_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__cluster_dim_x,launch__registers_per_thread
killgroup 120 ncu --profile-from-start off --metrics $M --csv $X/decode40 128x11008x4096 0 4 rule,coop128x96,cublasLt > /tmp/A/ncu.csv 2> /tmp/A/ncu.err
echo "ncu rc=$? $(date +%T)"
tar czf $OUT/A.tgz -C /tmp A
T='GemmTc.PersistentTilesOf128x96And128x112SpreadOneRowOfTiles:GemmTc.PersistentAndClusterWalkManyTiles:GemmTc.LayoutsAndAlignmentFallBack:GemmTc.BackToBackCallsSeeEachOthersWrites:GemmTc.BadInputThrowsAndLeavesCUntouched:GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.FewTilesRunOnRungFiveWhereItsGridsAreFaster:GemmTc.Persistent_*:GemmTc.ReadsBStoredKByN:GemmTc.NanInAPropagates:GemmTc.E4m3NanInAPropagates:GemmTc.KZeroScalesC:GemmTc.Automatic*'
S='GemmTc.PersistentTilesOf128x96And128x112SpreadOneRowOfTiles:GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.Persistent_bf16:GemmTc.ReadsBStoredKByN'
( killgroup 200 $X/dev/memlab_gpu_tests --gtest_filter="$T" > /tmp/A/tests.txt 2>&1; echo "tests rc=$? $(date +%T)" >> /tmp/A/rc.txt ) &
for t in memcheck racecheck synccheck; do
  ( MEMLAB_TEST_SMALL=1 killgroup 220 compute-sanitizer --tool $t --error-exitcode 1 $X/dev/memlab_gpu_tests --gtest_filter="$S" --gtest_brief=1 > /tmp/A/san-$t.txt 2>&1; echo "$t rc=$? $(date +%T)" >> /tmp/A/rc.txt ) &
done
wait
cat /tmp/A/rc.txt; grep -E 'FAILED|tests from.*ran|PASSED' /tmp/A/tests.txt | tail -4
for t in memcheck racecheck synccheck; do tail -3 /tmp/A/san-$t.txt; done
tar czf $OUT/A.tgz -C /tmp A
for a in 80 75; do
  left=$(( 580 - ($(date +%s) - T0) ))
  [ $left -lt 40 ] && { echo "no time for v$a"; break; }
  killgroup $((left - 10)) $X/v$a/memlab_gpu_tests --gtest_filter='Gemm*:CoreTiming*:Hierarchy*' > /tmp/A/v$a-tests.txt 2>&1
  echo "v$a rc=$? $(date +%T)"
  grep -E 'FAILED|tests from.*ran|PASSED|SKIPPED \]' /tmp/A/v$a-tests.txt | grep -v "^\[  SKIPPED \] [A-Z]" | tail -5
  tar czf $OUT/A.tgz -C /tmp A
done
echo "end $(( $(date +%s) - T0 )) s"
