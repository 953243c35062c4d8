#!/bin/bash
# Session 38, call D: ncu's counts for one launch each of memlab, cublasLt, cublasGemmEx and fast.cu's
# kernel 12 at 4096³ and 8192³ BF16; then the FP8 ladder twice (gemm code as 6fbe36d) to see whether the
# H100's FP8 3000x5000x2000 at 0.962 was the call's spread.
R=$PWD
mkdir -p /tmp/D && cd /tmp && tar xJf $R/build/c38/binsd.tar.xz
X=/tmp/c38d
nvidia-smi --query-gpu=name,clocks.max.sm,power.limit,driver_version,temperature.gpu --format=csv > /tmp/D/gpu.txt
cat /tmp/D/gpu.txt
killgroup() { local lim=$1; shift; setsid "$@" & local pid=$!; ( sleep $lim; kill -KILL -$pid 2>/dev/null ) & local w=$!; wait $pid; local rc=$?; kill $w 2>/dev/null; return $rc; }
M=gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_active.avg,sm__inst_executed.sum,lts__t_bytes.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,launch__grid_size,launch__cluster_dim_x,launch__registers_per_thread
for s in 4096 8192; do
  killgroup 120 ncu --profile-from-start off --metrics $M --csv $X/peers $s once > /tmp/D/ncu-$s.csv 2> /tmp/D/ncu-$s.err
  echo "ncu $s rc=$? $(date +%T)"
done
tar czf $OUT/D.tgz -C /tmp D
for r in 1 2; do
  killgroup 120 $X/memlab-gemm run gemm.tc_fp8 -d 0 --no-progress --no-report -o /tmp/D/fp8-$r --md /tmp/D/fp8-$r/run.md > /tmp/D/fp8-$r.log 2>&1
  echo "fp8 $r rc=$? $(date +%T)"
  tar czf $OUT/D.tgz -C /tmp D
done
