// synccheck probe (docs/async.md, "compute-sanitizer"): the smallest kernels that use
// libcu++'s cuda::memcpy_async on a block-scoped cuda::barrier (modes 0, 1) and on a
// block-scoped cuda::pipeline (modes 2, 3); modes 1 and 3 add a redundant cp.async.wait_all.
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -o probe tools/synccheck_probe.cu
// Run:   compute-sanitizer --tool synccheck ./probe {0,1,2,3}
// Seen on CUDA 13.0, driver 580.159.04, H200 (2026-11-22): every mode reports "Barrier error
// detected. Missing wait." although each thread waits on the barrier (or pipeline stage)
// before it reads the copied data; memcheck and racecheck report nothing.
#include <cooperative_groups.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cstdio>
namespace cg = cooperative_groups;
using bar_t = cuda::barrier<cuda::thread_scope_block>;

template <int Mode>
__global__ void barrier_probe(float* out, float const* in, int batches) {
  extern __shared__ float stage[];
  auto block = cg::this_thread_block();
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ bar_t bar;
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  for (int k = 0; k < batches; ++k) {
    cuda::memcpy_async(block, stage, in + k * blockDim.x, sizeof(float) * blockDim.x, bar);
    bar.arrive_and_wait();
    if (Mode == 1) asm volatile("cp.async.wait_all;" ::: "memory");
    out[k * blockDim.x + threadIdx.x] = stage[threadIdx.x] * 2.f;
    block.sync();
  }
}

template <int Mode>
__global__ void pipeline_probe(float* out, float const* in, int batches) {
  extern __shared__ float stage[];
  auto block = cg::this_thread_block();
  constexpr int S = 2;
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, S> st;
  auto pipe = cuda::make_pipeline(block, &st);
  auto issue = [&](int k) {
    if (k >= batches) return;
    pipe.producer_acquire();
    cuda::memcpy_async(block, stage + (k % S) * blockDim.x, in + k * blockDim.x, sizeof(float) * blockDim.x, pipe);
    pipe.producer_commit();
  };
  for (int s = 0; s < S; ++s) issue(s);
  for (int k = 0; k < batches; ++k) {
    pipe.consumer_wait();
    if (Mode == 1) asm volatile("cp.async.wait_all;" ::: "memory");
    out[k * blockDim.x + threadIdx.x] = stage[(k % S) * blockDim.x + threadIdx.x] * 2.f;
    pipe.consumer_release();
    issue(k + S);
  }
}

int main(int argc, char** argv) {
  int const which = argc > 1 ? atoi(argv[1]) : 0;
  int const T = 128, batches = 8, n = T * batches;
  float *in, *out;
  cudaMalloc(&in, n * 4);
  cudaMalloc(&out, n * 4);
  cudaMemset(in, 0, n * 4);
  size_t smem = 2 * T * 4;
  if (which == 0) barrier_probe<0><<<2, T, smem>>>(out, in, batches);
  if (which == 1) barrier_probe<1><<<2, T, smem>>>(out, in, batches);
  if (which == 2) pipeline_probe<0><<<2, T, smem>>>(out, in, batches);
  if (which == 3) pipeline_probe<1><<<2, T, smem>>>(out, in, batches);
  cudaError_t e = cudaDeviceSynchronize();
  printf("probe %d: %s\n", which, cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
