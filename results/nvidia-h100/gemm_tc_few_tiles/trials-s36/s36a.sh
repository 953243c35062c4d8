#!/bin/bash
# Session 36, call A: rung 5's few-tile grids forced (trial env MEMLAB_TRIAL_R5GRID), ncu source-level
# sampling of rung 5's 128x64 grid and cuBLAS's kernel at 1024x1024x4096 BF16.
R=$PWD
mkdir -p /tmp/A && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/A/gpu.txt
SH=256x1024x4096,512x1024x4096,1024x1024x4096,768x1024x4096,256x2048x4096,512x2048x4096
for rep in 1 2; do
  for g in rule tiles_128x64 tiles_64x64 split_128x128:2 split_128x64:2 split_64x64:2; do
    tag=${g/:/s}
    if [ $g = rule ]; then unset MEMLAB_TRIAL_R5GRID; else export MEMLAB_TRIAL_R5GRID=$g; fi
    timeout 120 $B/memlab run gemm.tc_few_tiles -a variant=persistent -a dtype=bf16 -a shape=$SH -d 0 --no-progress --no-report -o /tmp/A/g-$tag-$rep > /tmp/A/g-$tag-$rep.log 2>&1
    echo "$g $rep rc=$?"
  done
  tar czf $OUT/A.tgz -C /tmp A
done
unset MEMLAB_TRIAL_R5GRID
timeout 200 ncu --profile-from-start off --clock-control none --set full --warp-sampling-interval 0 \
  --metrics group:smsp__pcsamp_warp_stall_reasons,group:smsp__pcsamp_warp_stall_reasons_not_issued \
  -o /tmp/A/few1024 -f $B/energy 1024 1024 4096 bf16 0 once r5 lt > /tmp/A/ncu.log 2>&1
echo "ncu rc=$?"
ncu -i /tmp/A/few1024.ncu-rep --page source --csv --print-source sass > /tmp/A/src.csv 2>>/tmp/A/ncu.log
ncu -i /tmp/A/few1024.ncu-rep --page details --csv > /tmp/A/details.csv 2>>/tmp/A/ncu.log
gzip /tmp/A/src.csv
tar czf $OUT/A.tgz -C /tmp A
ls -la /tmp/A | head -40
