#!/bin/bash
# Session 39, call B (f7af7ee): the hierarchy family's GPU tests natively and, with the gemm family's,
# JIT-compiled from 80-virtual and 75-virtual images; hierarchy.tma/l2_intake/inflight --quick
# (runs 9c13058's prepared-once experiments on the card); a survey of m = 128 decode batches (automatic).
R=$PWD; T0=$(date +%s)
mkdir -p /tmp/B && cd /tmp && tar xJf $R/build/c39/binsb.tar.xz
X=/tmp/c39b
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/B/gpu.txt
cat /tmp/B/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
( killgroup 200 $X/hier/memlab_gpu_tests --gtest_filter='Hierarchy*' > /tmp/B/hier-tests.txt 2>&1; echo "hier rc=$? $(date +%T)" >> /tmp/B/rc.txt ) &
for a in 80 75; do
  ( killgroup 260 $X/v$a/memlab_gpu_tests --gtest_filter='Gemm*:CoreTiming*:Hierarchy*' > /tmp/B/v$a-tests.txt 2>&1; echo "v$a rc=$? $(date +%T)" >> /tmp/B/rc.txt ) &
done
wait
cat /tmp/B/rc.txt
for f in hier v80 v75; do echo "== $f"; grep -E 'FAILED|tests from.*ran|PASSED|SKIPPED \]' /tmp/B/$f-tests.txt | grep -v "^\[  SKIPPED \] [A-Z]" | tail -5; done
tar czf $OUT/B.tgz -C /tmp B
killgroup 120 $X/hier/memlab run hierarchy.tma hierarchy.l2_intake hierarchy.inflight --quick -d 0 --no-progress --no-report -o /tmp/B/hier-quick > /tmp/B/hier-quick.log 2>&1
echo "hier-quick rc=$? $(date +%T)"; tail -2 /tmp/B/hier-quick.log
tar czf $OUT/B.tgz -C /tmp B
left=$(( 590 - ($(date +%s) - T0) ))
echo "left $left s"
if [ $left -gt 100 ]; then
  killgroup $((left - 10)) $X/memlab run gemm.tc_ladder -a variant=automatic -a dtype=bf16 -a out=same -a shape=128x4096x11008,128x11008x4096,128x12288x4096,128x14336x4096,128x4096x14336,128x28672x8192,128x8192x28672,128x10240x8192,128x8192x8192,128x8192x22016,128x3072x8192,128x2048x8192 -d 0 --no-progress --no-report -o /tmp/B/decode-survey > /tmp/B/decode-survey.log 2>&1
  echo "survey rc=$? $(date +%T)"; tail -2 /tmp/B/decode-survey.log
  tar czf $OUT/B.tgz -C /tmp B
fi
