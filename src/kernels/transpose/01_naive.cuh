#pragma once
// Step 1: one element per thread straight from global to global. Reads are coalesced
// (a warp reads 32 consecutive elements of a row); writes are not: the warp's 32 stores
// go to 32 different output rows, one 32-byte sector each for 4 useful bytes.
#include "kernels/transpose/transpose_common.cuh"

namespace memlab::kernels::transpose {

/// Block (32, Rows); grid.x over column tiles of 32, grid.y strides over row groups.
template <class T, int Rows>
__global__ void __launch_bounds__(32 * Rows) naive(T const* __restrict__ in, T* __restrict__ out, std::size_t rows,
                                                   std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                                                   unsigned row_groups) {
  std::size_t const c = std::size_t(blockIdx.x) * 32 + threadIdx.x;
  for (unsigned g = blockIdx.y; g < row_groups; g += gridDim.y) {
    std::size_t const r = std::size_t(g) * Rows + threadIdx.y;
    if (r < rows && c < cols) out[c * ld_out + r] = in[r * ld_in + c];
  }
}

}  // namespace memlab::kernels::transpose
