#!/bin/bash
# Session 36, call C (H200): the FP8 ladder's record in blocks (clean build of the head); rung 5's
# decode grids forced (trial build: MEMLAB_TRIAL_R5GRID, MEMLAB_TRIAL_MCAST) at the two decode
# shapes, paired with cuBLAS; ncu memory counters and energy at 128x8192x28672.
R=$PWD
mkdir -p /tmp/C && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/C/gpu.txt
timeout 200 $B/memlab-clean run gemm.tc_fp8 -d 0 --no-progress --no-report -o /tmp/C/fp8 --md /tmp/C/fp8/run.md > /tmp/C/fp8.log 2>&1
echo "fp8 rc=$?"
tar czf $OUT/C.tgz -C /tmp C
for rep in 1 2; do
  for g in rule g:tiles_128x64 m:1x1 m:1x2; do
    unset MEMLAB_TRIAL_R5GRID MEMLAB_TRIAL_MCAST
    case $g in g:*) export MEMLAB_TRIAL_R5GRID=${g#g:};; m:*) export MEMLAB_TRIAL_MCAST=${g#m:};; esac
    tag=${g/:/-}
    timeout 150 $B/memlab run gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a out=same -a shape=128x8192x28672,128x4096x4096 -d 0 --no-progress --no-report -o /tmp/C/d-$tag-$rep > /tmp/C/d-$tag-$rep.log 2>&1
    echo "$g $rep rc=$?"
  done
  tar czf $OUT/C.tgz -C /tmp C
done
unset MEMLAB_TRIAL_R5GRID MEMLAB_TRIAL_MCAST
for g in rule m:1x2; do
  unset MEMLAB_TRIAL_MCAST; case $g in m:*) export MEMLAB_TRIAL_MCAST=${g#m:};; esac
  tag=${g/:/-}
  timeout 100 ncu --profile-from-start off --clock-control none --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis \
    --metrics dram__bytes_read.sum,lts__t_bytes.sum,lts__t_sectors_srcunit_tex.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed \
    --csv --page details $B/energy 128 8192 28672 bf16 0 once r5 lt > /tmp/C/ncu-$tag.csv 2>/tmp/C/ncu-$tag.err
  echo "ncu $g rc=$?"
  timeout 60 $B/energy 128 8192 28672 bf16 2 2 lt r5 > /tmp/C/energy-$tag.txt 2>&1
  echo "energy $g rc=$?"
done
tar czf $OUT/C.tgz -C /tmp C
