#pragma once
// Step 4: first add during load. Half of step 3's threads idled from the first level on;
// here each thread loads two elements Block apart and adds them before the tree, so a
// block covers 2*Block elements and the grid (and the passes' traffic) halves.
#include "kernels/reduce/reduce_common.cuh"

namespace memlab::kernels::reduce {

template <class T, int Block>
__global__ void __launch_bounds__(Block) first_add(T const* __restrict__ in, std::size_t n, T* __restrict__ out) {
  using A = accum_t<T>;
  __shared__ A s[Block];
  unsigned const tid = threadIdx.x;
  std::size_t const i = std::size_t(blockIdx.x) * (2 * Block) + tid;
  A v = i < n ? A(in[i]) : A(0);
  if (i + Block < n) v += A(in[i + Block]);
  s[tid] = v;
  __syncthreads();
  for (unsigned stride = Block / 2; stride > 0; stride >>= 1) {
    if (tid < stride) s[tid] += s[tid + stride];
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = T(s[0]);
}

}  // namespace memlab::kernels::reduce
