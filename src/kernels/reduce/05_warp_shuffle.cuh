#pragma once
// Step 5: the last warp by shuffles. Once 64 partials remain, one warp finishes with
// register-to-register __shfl_down_sync: no shared-memory round trips and no
// __syncthreads for the last six levels (step 4 spends a barrier on each).
#include "kernels/reduce/reduce_common.cuh"

namespace memlab::kernels::reduce {

template <class T, int Block>
__global__ void __launch_bounds__(Block) warp_shuffle(T const* __restrict__ in, std::size_t n, T* __restrict__ out) {
  static_assert(Block >= 64, "the shared tree stops at 64 partials");
  using A = accum_t<T>;
  __shared__ A s[Block];
  unsigned const tid = threadIdx.x;
  std::size_t const i = std::size_t(blockIdx.x) * (2 * Block) + tid;
  A v = i < n ? A(in[i]) : A(0);
  if (i + Block < n) v += A(in[i + Block]);
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = Block / 2; stride > 32; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid < 32) {
    v = s[tid] + s[tid + 32];
    v = warp_sum(v);
    if (tid == 0) out[blockIdx.x] = T(v);
  }
}

}  // namespace memlab::kernels::reduce
