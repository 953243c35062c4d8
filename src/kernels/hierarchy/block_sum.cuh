#pragma once
// The bandwidth kernels' epilogue: a block's per-thread checksums summed into one word per
// block (the host compares the grid's total with its own sum of the data read).
#include <cub/block/block_reduce.cuh>

#include <cstdint>

namespace memlab::hierarchy::detail {

/// block_sums[blockIdx.x] = the sum of every thread's `sum` (a block of exactly Threads threads).
template <int Threads>
__device__ __forceinline__ void store_block_sum(std::uint32_t sum, std::uint32_t* block_sums) {
  using reduce = cub::BlockReduce<std::uint32_t, Threads>;
  __shared__ typename reduce::TempStorage scratch;
  std::uint32_t const total = reduce(scratch).Sum(sum);
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

}  // namespace memlab::hierarchy::detail
