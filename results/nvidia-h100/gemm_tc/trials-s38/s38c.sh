#!/bin/bash
# Session 38, call C: the peers trial again (3 rounds, 3 reps), and where the card is an H200 the
# hierarchy family's and hierarchy.l2_intake's records with the prepared launches (884d4d6).
R=$PWD
mkdir -p /tmp/C && cd /tmp && tar xJf $R/build/c38/binsc.tar.xz
X=/tmp/c38c
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/C/gpu.txt
cat /tmp/C/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
killgroup 300 $X/peers 4096,8192 3 3 2 > /tmp/C/peers.txt 2>&1
echo "peers rc=$? $(date +%T)"; grep -E "verify|FAILED" /tmp/C/peers.txt
tar czf $OUT/C.tgz -C /tmp C
if grep -q H200 /tmp/C/gpu.txt; then
  killgroup 150 $X/memlab run hierarchy -d 0 --no-progress --no-report -o /tmp/C/hierarchy --md /tmp/C/hierarchy/run.md > /tmp/C/hierarchy.log 2>&1
  echo "hierarchy rc=$? $(date +%T)"
  tar czf $OUT/C.tgz -C /tmp C
  killgroup 80 $X/memlab run hierarchy.l2_intake -d 0 --no-progress --no-report -o /tmp/C/intake --md /tmp/C/intake/run.md > /tmp/C/intake.log 2>&1
  echo "intake rc=$? $(date +%T)"
  tar czf $OUT/C.tgz -C /tmp C
fi
