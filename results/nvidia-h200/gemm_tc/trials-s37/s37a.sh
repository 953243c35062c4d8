#!/bin/bash
# Session 37, call A: rung 5's slot budget (192 KB against the most that fits, 9 slots of 128 x 64,
# 14 of 64 x 64, 7 of 128 x 128) at the few-tile shapes and the decode batches; 128 x 64 tiles in
# 1x2 multicast pairs sharing A at the decode batches. Every trial in-process, killed at its limit.
R=$PWD
mkdir -p /tmp/A && cd /tmp && tar xJf $R/build/c37/bins.tar.xz
B=/tmp/c37
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/A/gpu.txt
cat /tmp/A/gpu.txt
SH=256x1024x4096,512x1024x4096,1024x1024x4096,768x1024x4096,256x2048x4096,512x2048x4096
DEC=128x8192x28672,128x4096x4096
run() { # tag bin args...
  local tag=$1 bin=$2; shift 2
  timeout -s KILL 150 $B/memlab-$bin run "$@" --in-process -d 0 --no-progress --no-report -o /tmp/A/$tag > /tmp/A/$tag.log 2>&1
  echo "$tag rc=$? $(date +%T)"
}
for rep in 1 2; do
  for bin in base max; do
    unset MEMLAB_TRIAL_R5GRID MEMLAB_TRIAL_MCAST
    run dec-rule-$bin-$rep $bin gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=$DEC
    MEMLAB_TRIAL_MCAST=1x2 run dec-mc12-$bin-$rep $bin gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=128x8192x28672
    MEMLAB_TRIAL_R5GRID=tiles_128x64 run dec-t128x64-$bin-$rep $bin gemm.tc_ladder -a variant=persistent -a dtype=bf16 -a shape=128x8192x28672
    run few-$bin-$rep $bin gemm.tc_few_tiles -a variant=automatic,persistent -a dtype=bf16
    MEMLAB_TRIAL_R5GRID=tiles_128x64 run few-t128x64-$bin-$rep $bin gemm.tc_few_tiles -a variant=persistent -a dtype=bf16 -a shape=$SH
    tar czf $OUT/A.tgz -C /tmp A
  done
done
tar czf $OUT/A.tgz -C /tmp A
