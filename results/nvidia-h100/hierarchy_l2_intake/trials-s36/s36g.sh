#!/bin/bash
# Session 36, call G: call F again without the configurations that hung (slots shared by two consumer
# warps: parity aliasing in the trial's own code), in-process, each run killed at 40 s.
R=$PWD
mkdir -p /tmp/G && cd /tmp && tar xJf $R/build/c36x/bins.tar.xz
B=/tmp/c36
for k in base noread cw4 swz,noread; do
  if [ $k = base ]; then unset MEMLAB_TRIAL_INTAKE; else export MEMLAB_TRIAL_INTAKE=$k; fi
  timeout -s KILL 40 $B/memlab run hierarchy.l2_intake --in-process -a variant=own -a share=16 -a ctas=8,128 -a bytes_in_flight_per_sm=131072 -a box=8192,16384,32768 -d 0 --no-progress --no-report -o /tmp/G/$k > /tmp/G/$k.log 2>&1
  echo "$k rc=$?"
  tar czf $OUT/G.tgz -C /tmp G
done
