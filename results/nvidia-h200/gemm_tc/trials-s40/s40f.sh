#!/bin/bash
# Session 40, call F: decode batches where rung 5 runs 128 x 64 tiles a CTA (k <= 64 k-blocks) and
# 64 x 96 tiles would make one wave with more tiles (more SMs reading B): the trial build's
# MEMLAB_TRIAL_R5GRID=64x96 against the landed plan, gemm.tc_decode's automatic variant paired with
# cuBLAS, runs in the order base, 64x96, base, 64x96.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/F && cd /tmp && tar xJf $R/build/c40/binsf.tar.xz
X=/tmp/c40f
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/F/gpu.txt
cat /tmp/F/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
SH=128x5120x5120,128x6144x4096
i=0
for g in base 64x96 base 64x96; do
  i=$((i+1))
  if [ $g = base ]; then unset MEMLAB_TRIAL_R5GRID; else export MEMLAB_TRIAL_R5GRID=$g; fi
  killgroup 120 $X/memlab run gemm.tc_decode -a variant=automatic -a shape=$SH -d 0 --no-progress --no-report -o /tmp/F/$i-$g --md /tmp/F/$i-$g/run.md > /tmp/F/$i-$g.log 2>&1
  echo "$i $g rc=$? $(date +%T)"; tail -1 /tmp/F/$i-$g.log
  tar czf $OUT/F.tgz -C /tmp F
done
echo "end $(( $(date +%s) - T0 )) s"
