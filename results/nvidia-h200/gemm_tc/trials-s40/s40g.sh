#!/bin/bash
# Session 40, calls G (H100) and H (H200), at 42ac9e4 (decode batches at short k take 64 x 96 tiles where
# those make one wave and are more): the trial build's base-against-64x96 runs once more on this card
# (TRIAL=1), rung 5's GPU tests with the new one, the sanitizers over the new test, then gemm.tc_decode.
# $1: the call's letter; $2: the GPU name the call wants (exit early on another); $3: 1 to run the trial.
L=${1:-G}; WANT=${2:-}; TRIAL=${3:-0}
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/$L && cd /tmp && tar xJf $R/build/c40/binsg.tar.xz
X=/tmp/c40g
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/$L/gpu.txt
cat /tmp/$L/gpu.txt
if [ -n "$WANT" ] && ! grep -q "$WANT" /tmp/$L/gpu.txt; then echo "not $WANT: stop"; tar czf $OUT/$L.tgz -C /tmp $L; exit 3; fi
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
if [ "$TRIAL" = 1 ]; then
  i=0
  for g in base 64x96 base 64x96; do
    i=$((i+1))
    if [ $g = base ]; then unset MEMLAB_TRIAL_R5GRID; else export MEMLAB_TRIAL_R5GRID=$g; fi
    killgroup 100 $X/memlab-trial run gemm.tc_decode -a variant=automatic -a shape=128x5120x5120,128x6144x4096 -d 0 --no-progress --no-report -o /tmp/$L/trial/$i-$g > /tmp/$L/trial-$i-$g.log 2>&1
    echo "trial $i $g rc=$? $(date +%T)"
  done
  unset MEMLAB_TRIAL_R5GRID
  tar czf $OUT/$L.tgz -C /tmp $L
fi
T='GemmTc.DecodeBatchesTake64x96TilesAtShortK:GemmTc.PersistentTilesOf64x96And64x128TakeLongKAlone:GemmTc.PersistentTilesOf128x96And128x112SpreadOneRowOfTiles:GemmTc.Persistent_*:GemmTc.FewTilesRunOnRungFiveWhereItsGridsAreFaster:GemmTc.LayoutsAndAlignmentFallBack:GemmTc.ReadsBStoredKByN:GemmTc.NanInAPropagates:GemmTc.E4m3NanInAPropagates:GemmTc.KZeroScalesC:GemmTc.BadInputThrowsAndLeavesCUntouched:GemmTc.BackToBackCallsSeeEachOthersWrites:GemmTc.Automatic*'
S='GemmTc.DecodeBatchesTake64x96TilesAtShortK'
( killgroup 220 $X/memlab_gpu_tests --gtest_filter="$T" > /tmp/$L/tests.txt 2>&1; echo "tests rc=$? $(date +%T)" >> /tmp/$L/rc.txt ) &
if [ "$TRIAL" = 1 ]; then
  for t in memcheck racecheck synccheck; do
    ( MEMLAB_TEST_SMALL=1 killgroup 220 compute-sanitizer --tool $t --error-exitcode 1 $X/memlab_gpu_tests --gtest_filter="$S" --gtest_brief=1 > /tmp/$L/san-$t.txt 2>&1; echo "$t rc=$? $(date +%T)" >> /tmp/$L/rc.txt ) &
  done
fi
wait
cat /tmp/$L/rc.txt; grep -E 'FAILED|tests from.*ran|PASSED' /tmp/$L/tests.txt | tail -4
for t in memcheck racecheck synccheck; do [ -f /tmp/$L/san-$t.txt ] && tail -3 /tmp/$L/san-$t.txt; done
tar czf $OUT/$L.tgz -C /tmp $L
killgroup 200 $X/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/$L/gemm_tc_decode --md /tmp/$L/gemm_tc_decode/run.md > /tmp/$L/gemm_tc_decode.log 2>&1
echo "decode rc=$? $(date +%T)"; tail -1 /tmp/$L/gemm_tc_decode.log
tar czf $OUT/$L.tgz -C /tmp $L
echo "end $(( $(date +%s) - T0 )) s"
