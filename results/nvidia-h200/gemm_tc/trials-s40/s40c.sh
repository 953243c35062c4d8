#!/bin/bash
# Session 40, call C: rung 5's 128 x 96 / 128 x 112 decode grids at 4, 5, 6 (landed) and 7 stages (the
# trial build's MEMLAB_TRIAL_DEC), against cublasLt: call B found 8 stages slower than 6.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/C && cd /tmp && tar xJf $R/build/c40/binsc.tar.xz
X=/tmp/c40c
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/C/gpu.txt
cat /tmp/C/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
SH=128x11008x4096,128x12288x4096,128x10240x8192,128x14336x4096,128x13824x5120,128x28672x8192
killgroup 150 $X/decode40 $SH 5 4 rule,dec:s4,dec:s5,dec:s7,cublasLt > /tmp/C/trial.txt 2>&1
echo "trial rc=$? $(date +%T)"; grep -c FAILED /tmp/C/trial.txt; grep "^verify" /tmp/C/trial.txt | grep -v " 0 of" | head
tar czf $OUT/C.tgz -C /tmp C
echo "end $(( $(date +%s) - T0 )) s"
