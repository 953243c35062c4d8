#!/bin/bash
# Session 37, call E: call C's decode trial (64 x 128 tiles in 2-CTA clusters sharing B) on whatever
# card comes; on an H100 also call A's slot budget (192 KB against the most that fits) at the few-tile shapes.
R=$PWD
mkdir -p /tmp/E && cd /tmp && tar xJf $R/build/c37/bins.tar.xz && tar xJf $R/build/c37c/bins.tar.xz
B=/tmp/c37
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/E/gpu.txt
cat /tmp/E/gpu.txt
run() { # tag bin args...
  local tag=$1 bin=$2; shift 2
  timeout -s KILL 150 $B/memlab-$bin run "$@" --in-process -d 0 --no-progress --no-report -o /tmp/E/$tag > /tmp/E/$tag.log 2>&1
  echo "$tag rc=$? $(date +%T)"
}
SH=256x1024x4096,512x1024x4096,1024x1024x4096,768x1024x4096,256x2048x4096,512x2048x4096
for rep in 1 2; do
  unset MEMLAB_TRIAL_MCAST MEMLAB_TRIAL_R5GRID
  run rule-$rep base2 gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=128x8192x28672
  MEMLAB_TRIAL_MCAST=64x128:2x1 run mc21-$rep base2 gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=128x8192x28672
  MEMLAB_TRIAL_MCAST=64x128:1x1 run mc11-$rep base2 gemm.tc_ladder -a variant=persistent -a dtype=bf16,f16 -a shape=128x8192x28672
  tar czf $OUT/E.tgz -C /tmp E
done
if grep -q H100 /tmp/E/gpu.txt; then
  for rep in 1 2; do
    for bin in base max; do
      unset MEMLAB_TRIAL_MCAST MEMLAB_TRIAL_R5GRID
      run few-$bin-$rep $bin gemm.tc_few_tiles -a variant=automatic,persistent -a dtype=bf16
      MEMLAB_TRIAL_R5GRID=tiles_128x64 run few-t128x64-$bin-$rep $bin gemm.tc_few_tiles -a variant=persistent -a dtype=bf16 -a shape=$SH
      tar czf $OUT/E.tgz -C /tmp E
    done
  done
fi
tar czf $OUT/E.tgz -C /tmp E
