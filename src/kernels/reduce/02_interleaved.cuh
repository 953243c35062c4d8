#pragma once
// Step 2 (seed 003's first kernel): interleaved addressing with a strided index
// `index = 2*stride*tid`. The adding threads are now contiguous (no divergence inside a
// warp until fewer than 32 remain) but their words are 2*stride apart: an even stride,
// hence a (2*stride)-way bank conflict, up to 32-way.
#include "kernels/reduce/reduce_common.cuh"

namespace memlab::kernels::reduce {

template <class T, int Block>
__global__ void __launch_bounds__(Block) interleaved(T const* __restrict__ in, std::size_t n, T* __restrict__ out) {
  using A = accum_t<T>;
  __shared__ A s[Block];
  unsigned const tid = threadIdx.x;
  std::size_t const i = std::size_t(blockIdx.x) * Block + tid;
  s[tid] = i < n ? A(in[i]) : A(0);
  __syncthreads();
  for (unsigned stride = 1; stride < Block; stride *= 2) {
    unsigned const index = 2 * stride * tid;
    if (index < Block) s[index] += s[index + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = T(s[0]);
}

}  // namespace memlab::kernels::reduce
