#!/bin/bash
# Session 36, call B: rung 5's 128x64 tiles a CTA in CM x CN clusters with 2-D multicast (trial env
# MEMLAB_TRIAL_MCAST), against the rule's grid, paired with cuBLAS; ncu of three of them.
R=$PWD
mkdir -p /tmp/B && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/B/gpu.txt
SH=1024x1024x4096,512x1024x4096,512x2048x4096,1024,1024x1024x2048,768x1024x4096
for rep in 1 2; do
  for g in base 1x1 1x2 2x1 2x2 1x4 2x4 4x2; do
    if [ $g = base ]; then unset MEMLAB_TRIAL_MCAST; else export MEMLAB_TRIAL_MCAST=$g; fi
    timeout 120 $B/memlab run gemm.tc_few_tiles -a variant=persistent -a dtype=bf16 -a shape=$SH -d 0 --no-progress --no-report -o /tmp/B/m-$g-$rep > /tmp/B/m-$g-$rep.log 2>&1
    echo "$g $rep rc=$?"
  done
  tar czf $OUT/B.tgz -C /tmp B
done
for g in 1x1 2x2 2x4; do
  export MEMLAB_TRIAL_MCAST=$g
  timeout 100 ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,lts__t_sectors_srcunit_tex.sum,lts__t_bytes.sum \
    --csv --page details $B/energy 1024 1024 4096 bf16 0 once r5 lt > /tmp/B/ncu-$g.csv 2>/tmp/B/ncu-$g.err
  echo "ncu $g rc=$?"
done
unset MEMLAB_TRIAL_MCAST
tar czf $OUT/B.tgz -C /tmp B
