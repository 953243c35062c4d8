#!/bin/bash
# Session 40, call B: rung 5's 128 x 96 / 128 x 112 decode grids with 224 KB of slots (8 / 7 stages
# against 6 / 6), with each tile's k-loop rotated to start at its own k-block, and both (the trial
# build's MEMLAB_TRIAL_DEC), against the landed grids and cublasLt; then ncu at full clocks
# (--clock-control none) for one launch of each at 128x11008x4096.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/B && cd /tmp && tar xJf $R/build/c40/binsb.tar.xz
X=/tmp/c40b
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/B/gpu.txt
cat /tmp/B/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
SH=128x11008x4096,128x12288x4096,128x10240x8192,128x14336x4096,128x13824x5120,128x28672x8192
killgroup 150 $X/decode40 $SH 3 4 rule,dec:s8,dec:rot,dec:s8rot,cublasLt > /tmp/B/trial.txt 2>&1
echo "trial rc=$? $(date +%T)"; grep -c FAILED /tmp/B/trial.txt; grep "^verify" /tmp/B/trial.txt | grep -v " 0 of" | head
tar czf $OUT/B.tgz -C /tmp B
M=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_active.avg,sm__cycles_active.max,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__t_bytes.sum,lts__t_sector_hit_rate.pct,l1tex__m_xbar2l1tex_read_bytes.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,launch__grid_size,launch__cluster_dim_x
killgroup 120 ncu --clock-control none --profile-from-start off --metrics $M --csv $X/decode40 128x11008x4096 0 4 rule,dec:s8,dec:rot,dec:s8rot,cublasLt > /tmp/B/ncu-fullclock.csv 2> /tmp/B/ncu-fullclock.err
echo "ncu rc=$? $(date +%T)"
tar czf $OUT/B.tgz -C /tmp B
echo "end $(( $(date +%s) - T0 )) s"
