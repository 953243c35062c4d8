#pragma once
// Step 3 (seed 003's second kernel): sequential addressing. Thread tid adds word
// tid + stride to word tid: consecutive lanes, consecutive words, no bank conflict, and
// the active threads are the low ones, so whole warps retire as the stride halves.
#include "kernels/reduce/reduce_common.cuh"

namespace memlab::kernels::reduce {

template <class T, int Block>
__global__ void __launch_bounds__(Block) sequential(T const* __restrict__ in, std::size_t n, T* __restrict__ out) {
  using A = accum_t<T>;
  __shared__ A s[Block];
  unsigned const tid = threadIdx.x;
  std::size_t const i = std::size_t(blockIdx.x) * Block + tid;
  s[tid] = i < n ? A(in[i]) : A(0);
  __syncthreads();
  for (unsigned stride = Block / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = T(s[0]);
}

}  // namespace memlab::kernels::reduce
