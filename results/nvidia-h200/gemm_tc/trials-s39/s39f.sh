#!/bin/bash
# Session 39, call F: the wide decode projections (m = 128, 128 x 128 tiles between half a wave and two)
# under rung 5's grids forced (trial build: MEMLAB_TRIAL_R5GRID), rung 6's rule and cublasLt (decode39.cu).
R=$PWD
mkdir -p /tmp/F && cd /tmp && tar xJf $R/build/c39/binsf.tar.xz
X=/tmp/c39f
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/F/gpu.txt
cat /tmp/F/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
run() { local tag=$1; shift; killgroup 150 $X/decode39 "$@" > /tmp/F/$tag.txt 2>&1; echo "$tag rc=$? $(date +%T)"; grep -E "verify|FAILED|error" /tmp/F/$tag.txt | grep -v " 0 of " | head; tar czf $OUT/F.tgz -C /tmp F; }
run wide 128x11008x4096,128x12288x4096,128x10240x8192,128x13824x5120,128x14336x4096,128x15360x5120,128x8192x8192 3 4 rule,128x96,128x112,cluster,cublasLt
run twowaves 128x28672x8192 3 4 rule,p128x112,p128x96,128x96,cluster,cublasLt
run narrow 128x6144x4096,128x5120x5120 3 4 rule,64x96,128x96,64x128,cluster,cublasLt
