#!/bin/bash
# Session 40, calls D and E: gemm.tc_decode recorded and repeated at the commit that gives decode
# points a 1.5% noise floor (streamed_weights_noise_floor), to check the floor against a fresh pair.
# $1: the call's letter; $2 (optional): the GPU name the call wants (exit early on another).
L=${1:-D}; WANT=${2:-}
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/$L && cd /tmp && tar xJf $R/build/c40/binsd.tar.xz
X=/tmp/c40d
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/$L/gpu.txt
cat /tmp/$L/gpu.txt
if [ -n "$WANT" ] && ! grep -q "$WANT" /tmp/$L/gpu.txt; then echo "not $WANT: stop"; tar czf $OUT/$L.tgz -C /tmp $L; exit 3; fi
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
for r in gemm_tc_decode repeat; do
  killgroup 200 $X/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/$L/$r --md /tmp/$L/$r/run.md > /tmp/$L/$r.log 2>&1
  echo "$r rc=$? $(date +%T)"; tail -1 /tmp/$L/$r.log
  tar czf $OUT/$L.tgz -C /tmp $L
done
echo "end $(( $(date +%s) - T0 )) s"
