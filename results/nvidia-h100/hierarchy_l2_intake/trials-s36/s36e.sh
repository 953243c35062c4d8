#!/bin/bash
# Session 36, call E: hierarchy.l2_intake's record (box x bytes in flight x blocks x share x multicast) and a repeat.
R=$PWD
mkdir -p /tmp/E && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/E/gpu.txt
for run in intake repeat; do
  timeout 250 $B/memlab run hierarchy.l2_intake -d 0 --no-progress --no-report -o /tmp/E/$run --md /tmp/E/$run/run.md > /tmp/E/$run.log 2>&1
  echo "$run rc=$?"
  tar czf $OUT/E.tgz -C /tmp E
done
