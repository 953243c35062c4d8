#!/bin/bash
# Session 37, call F: 64 x 128 tiles a CTA (the trial's 64x128:1x1, no multicast) against the rule's grid at
# decode batches and few-tile shapes where the rule splits 128 x 128 tiles in a cluster (k-blocks > 64).
R=$PWD
mkdir -p /tmp/F && cd /tmp && tar xJf $R/build/c37f/bins.tar.xz
B=/tmp/c37
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/F/gpu.txt
cat /tmp/F/gpu.txt
run() { # tag args...
  local tag=$1; shift
  timeout -s KILL 200 $B/memlab-base3 run "$@" --in-process -d 0 --no-progress --no-report -o /tmp/F/$tag > /tmp/F/$tag.log 2>&1
  echo "$tag rc=$? $(date +%T)"
}
DEC=128x8192x28672,128x8192x8192,128x8192x16384,128x6144x8192,96x8192x28672,128x5120x8192,128x8192x4096,128x4096x28672
for rep in 1 2; do
  unset MEMLAB_TRIAL_MCAST
  run dec-rule-$rep gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=$DEC
  MEMLAB_TRIAL_MCAST=64x128:1x1 run dec-t64x128-$rep gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=$DEC
  run few-rule-$rep gemm.tc_few_tiles -a variant=persistent -a dtype=bf16,f16 -a shape=1024x1024x8192,256x3072x8192
  MEMLAB_TRIAL_MCAST=64x128:1x1 run few-t64x128-$rep gemm.tc_few_tiles -a variant=persistent -a dtype=bf16,f16 -a shape=1024x1024x8192,256x3072x8192
  tar czf $OUT/F.tgz -C /tmp F
done
