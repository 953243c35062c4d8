#pragma once
// Step 7: one launch for any length. Step 6's blocks each publish a partial, then take a
// ticket from a global counter; the block that draws the last ticket knows every other
// partial is visible (each was fenced before its ticket) and sums them. The second
// launch and its launch gap disappear; the counter is returned to zero for the next call.
#include "kernels/reduce/06_vectorized.cuh"

namespace memlab::kernels::reduce {

template <class T, int Block, int Unroll>
__global__ void __launch_bounds__(Block, 2048 / Block) single_pass(T const* __restrict__ in, std::size_t n, T* __restrict__ out,
                                                     accum_t<T>* __restrict__ partials, unsigned* __restrict__ ticket) {
  using A = accum_t<T>;
  __shared__ bool is_last;
  A acc = thread_sum<T, Unroll>(in, n, std::size_t(blockIdx.x) * Block + threadIdx.x, std::size_t(gridDim.x) * Block);
  acc = block_sum<Block>(acc);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // the partial is visible device-wide before the ticket is taken
    unsigned const t = atomicAdd(ticket, 1u);
    is_last = (t == gridDim.x - 1);
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();  // order the partials' reads after observing the last ticket
  A total = A(0);
  for (unsigned i = threadIdx.x; i < gridDim.x; i += Block) total += __ldcg(partials + i);  // L2, not a stale L1 line
  total = block_sum<Block>(total);
  if (threadIdx.x == 0) {
    *out = T(total);
    *ticket = 0u;
  }
}

}  // namespace memlab::kernels::reduce
