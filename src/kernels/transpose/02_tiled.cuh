#pragma once
// Steps 2..6: through a shared-memory tile. A block loads a Tile x Tile block of the
// input row by row (coalesced reads), and writes the transposed block row by row
// (coalesced writes), reading the tile by columns. The Layout decides the bank
// conflicts of those column reads (plain: 32-way; padded, swizzled: none); Rows < Tile
// makes each thread move Tile/Rows elements, more bytes in flight per thread and fewer
// index computations per element.
//
//   step 2 smem_tile:      plain_layout<32>,    Rows 32 (one element per thread)
//   step 3 padded_tile:    padded_layout<32>,   Rows 32
//   step 4 swizzled_tile:  swizzled_layout<32>, Rows 32
//   step 5 multi_element:  padded_layout<32>,   Rows 8 (four elements per thread)
#include "kernels/transpose/transpose_common.cuh"

namespace memlab::kernels::transpose {

/// Block (Tile, Rows); grid.x over column tiles, grid.y strides over `row_tiles` row tiles.
/// Min blocks per SM: a full SM (2048 threads), which caps registers at 32 per thread; at
/// the compiler's free choice (42 for the four-element step) occupancy fell to 75%.
template <class T, class Layout, int Tile, int Rows>
__global__ void __launch_bounds__(Tile * Rows, 2048 / (Tile * Rows)) tiled(T const* __restrict__ in, T* __restrict__ out, std::size_t rows,
                                                     std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                                                     unsigned row_tiles) {
  static_assert(Tile % 32 == 0 && Tile % Rows == 0, "whole warps per tile row, whole passes per tile");
  __shared__ T tile[Layout::words];
  int const tx = threadIdx.x, ty = threadIdx.y;
  std::size_t const c0 = std::size_t(blockIdx.x) * Tile;
  for (unsigned bt = blockIdx.y; bt < row_tiles; bt += gridDim.y) {
    std::size_t const r0 = std::size_t(bt) * Tile;
#pragma unroll
    for (int k = 0; k < Tile; k += Rows) {
      std::size_t const r = r0 + ty + k, c = c0 + tx;
      if (r < rows && c < cols) tile[Layout::at(ty + k, tx)] = in[r * ld_in + c];
    }
    __syncthreads();
    // Output row c0 + ty + k is input column c0 + ty + k; its elements are the tile's column.
#pragma unroll
    for (int k = 0; k < Tile; k += Rows) {
      std::size_t const orow = c0 + ty + k, ocol = r0 + tx;
      if (orow < cols && ocol < rows) out[orow * ld_out + ocol] = tile[Layout::at(tx, ty + k)];
    }
    __syncthreads();  // the next row tile overwrites the tile
  }
}

}  // namespace memlab::kernels::transpose
