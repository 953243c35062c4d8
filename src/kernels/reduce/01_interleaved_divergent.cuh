#pragma once
// Step 1: interleaved addressing, `tid % (2*stride) == 0` picks the adding threads.
// Every warp stays active at every level while most of its lanes idle (divergence), and
// the active lanes touch words 2*stride apart (2-, 4-, ... 32-way bank conflicts).
#include "kernels/reduce/reduce_common.cuh"

namespace memlab::kernels::reduce {

template <class T, int Block>
__global__ void __launch_bounds__(Block) interleaved_divergent(T const* __restrict__ in, std::size_t n, T* __restrict__ out) {
  using A = accum_t<T>;
  __shared__ A s[Block];
  unsigned const tid = threadIdx.x;
  std::size_t const i = std::size_t(blockIdx.x) * Block + tid;
  s[tid] = i < n ? A(in[i]) : A(0);
  __syncthreads();
  for (unsigned stride = 1; stride < Block; stride *= 2) {
    if (tid % (2 * stride) == 0) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = T(s[0]);
}

}  // namespace memlab::kernels::reduce
