#!/bin/bash
# Session 36, call F: what holds the intake ring's blocks at 57-170 GB/s (trial knobs, MEMLAB_TRIAL_INTAKE):
# 4 or 8 consumer warps taking slots in turn, no shared-memory reads, 128-byte swizzled boxes.
R=$PWD
mkdir -p /tmp/F && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
for k in base cw4 cw8 noread swz,noread cw4,noread; do
  if [ $k = base ]; then unset MEMLAB_TRIAL_INTAKE; else export MEMLAB_TRIAL_INTAKE=$k; fi
  timeout 100 $B/memlab run hierarchy.l2_intake -a variant=own -a share=16 -a ctas=8,64,128 -a bytes_in_flight_per_sm=131072,196608 -a box=8192,16384,32768 -d 0 --no-progress --no-report -o /tmp/F/$k > /tmp/F/$k.log 2>&1
  echo "$k rc=$?"
done
tar czf $OUT/F.tgz -C /tmp F
