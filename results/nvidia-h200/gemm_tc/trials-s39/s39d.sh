#!/bin/bash
# Session 39, call D (74e7588): the new gemm.tc_decode record, then a repeat of it if the call has time.
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/D && cd /tmp && tar xJf $R/build/c39/binsd.tar.xz
X=/tmp/c39d
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/D/gpu.txt
cat /tmp/D/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
killgroup 330 $X/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/D/gemm_tc_decode --md /tmp/D/gemm_tc_decode/run.md > /tmp/D/decode.log 2>&1
echo "decode rc=$? $(date +%T)"; tail -2 /tmp/D/decode.log
tar czf $OUT/D.tgz -C /tmp D
left=$(( 590 - ($(date +%s) - T0) ))
echo "left $left s"
if [ $left -gt 200 ]; then
  killgroup $((left - 10)) $X/memlab run gemm.tc_decode -d 0 --no-progress --no-report -o /tmp/D/repeat --md /tmp/D/repeat/run.md > /tmp/D/repeat.log 2>&1
  echo "repeat rc=$? $(date +%T)"; tail -2 /tmp/D/repeat.log
  tar czf $OUT/D.tgz -C /tmp D
fi
