#!/bin/bash
# Session 37, call C: the decode batch with cuBLAS's H200 layout: 64 x 128 tiles, one consumer
# warpgroup, 2-CTA clusters along M sharing B by multicast (64x128:2x1), against the same without
# multicast (1x1) and the rule's 128 x 128 split in two. In-process, each killed at its limit.
R=$PWD
mkdir -p /tmp/C && cd /tmp && tar xJf $R/build/c37c/bins.tar.xz
B=/tmp/c37
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/C/gpu.txt
cat /tmp/C/gpu.txt
run() { # tag args...
  local tag=$1; shift
  timeout -s KILL 150 $B/memlab-base2 run "$@" --in-process -d 0 --no-progress --no-report -o /tmp/C/$tag > /tmp/C/$tag.log 2>&1
  echo "$tag rc=$? $(date +%T)"; grep -h 'trial\|error' /tmp/C/$tag.log | head -3
}
for rep in 1 2; do
  unset MEMLAB_TRIAL_MCAST
  run rule-$rep gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=128x8192x28672,128x4096x4096
  MEMLAB_TRIAL_MCAST=64x128:2x1 run mc21-$rep gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=128x8192x28672,128x4096x4096
  MEMLAB_TRIAL_MCAST=64x128:1x1 run mc11-$rep gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=128x8192x28672
  tar czf $OUT/C.tgz -C /tmp C
done
