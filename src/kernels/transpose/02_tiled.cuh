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
//   step 6 multi_element_8: padded_layout<32>,  Rows 4 (eight elements per thread)
//   step 8 grouped_tile:   step 5, tiles rasterized in bands (see grouped_tile)
#include "kernels/transpose/transpose_common.cuh"

namespace memlab::kernels::transpose {

/// Moves the tile at input (r0, c0) to output (c0, r0) through `tile`. Block (Tile, Rows).
/// One base pointer per side and a constant stride per pass keep the 64-bit index
/// arithmetic (and the registers it costs) out of the unrolled loops; whole tiles skip the
/// bounds checks.
template <class T, class Layout, int Tile, int Rows>
__device__ __forceinline__ void move_tile(T* tile, T const* __restrict__ in, T* __restrict__ out, std::size_t rows,
                                          std::size_t cols, std::size_t ld_in, std::size_t ld_out, std::size_t r0,
                                          std::size_t c0) {
  static_assert(Tile % 32 == 0 && Tile % Rows == 0, "whole warps per tile row, whole passes per tile");
  int const tx = threadIdx.x, ty = threadIdx.y;
  std::size_t const rem_r = rows - r0, rem_c = cols - c0;  // both > 0
  bool const full = rem_r >= Tile && rem_c >= Tile;
  T const* src = in + (r0 + ty) * ld_in + c0 + tx;
  std::size_t const in_pass = std::size_t(Rows) * ld_in;
  if (full) {
#pragma unroll
    for (int k = 0; k < Tile; k += Rows) tile[Layout::at(ty + k, tx)] = src[(k / Rows) * in_pass];
  } else {
#pragma unroll
    for (int k = 0; k < Tile; k += Rows)
      if (std::size_t(ty + k) < rem_r && std::size_t(tx) < rem_c) tile[Layout::at(ty + k, tx)] = src[(k / Rows) * in_pass];
  }
  __syncthreads();
  // Output row c0 + ty + k is input column c0 + ty + k; its elements are the tile's column.
  T* dst = out + (c0 + ty) * ld_out + r0 + tx;
  std::size_t const out_pass = std::size_t(Rows) * ld_out;
  if (full) {
#pragma unroll
    for (int k = 0; k < Tile; k += Rows) dst[(k / Rows) * out_pass] = tile[Layout::at(tx, ty + k)];
  } else {
#pragma unroll
    for (int k = 0; k < Tile; k += Rows)
      if (std::size_t(ty + k) < rem_c && std::size_t(tx) < rem_r) dst[(k / Rows) * out_pass] = tile[Layout::at(tx, ty + k)];
  }
  __syncthreads();  // the next tile overwrites the tile
}

/// Block (Tile, Rows); grid.x over column tiles, grid.y strides over `row_tiles` row tiles.
/// Min blocks per SM: a full SM (2048 threads), which caps registers at 32 per thread; at
/// the compiler's free choice (42 for the four-element step) occupancy fell to 75%.
template <class T, class Layout, int Tile, int Rows>
__global__ void __launch_bounds__(Tile * Rows, 2048 / (Tile * Rows))
    tiled(T const* __restrict__ in, T* __restrict__ out, std::size_t rows, std::size_t cols, std::size_t ld_in,
          std::size_t ld_out, unsigned row_tiles) {
  __shared__ T tile[Layout::words];
  std::size_t const c0 = std::size_t(blockIdx.x) * Tile;
  for (unsigned bt = blockIdx.y; bt < row_tiles; bt += gridDim.y)
    move_tile<T, Layout, Tile, Rows>(tile, in, out, rows, cols, ld_in, ld_out, std::size_t(bt) * Tile, c0);
}

/// Which tile block b moves when tiles are rasterized in bands of `group` tile rows, going
/// down each band's column of tiles before moving right. The blocks resident at one time
/// (about 1000 on an H100/H200) then cover a near-square patch, e.g. 32 x 33 tiles
/// (1024 x 1056 elements): each side reads or writes 4 KB runs of 1000 rows, instead of
/// the row-major order's 32 KB runs of 128 input rows against 512-byte runs of 8192
/// output rows.
__host__ __device__ constexpr void grouped_tile(std::size_t b, std::size_t row_tiles, std::size_t col_tiles,
                                                std::size_t group, std::size_t& tile_row, std::size_t& tile_col) {
  std::size_t const band = b / (group * col_tiles);
  std::size_t const within = b % (group * col_tiles);
  std::size_t const band_rows = row_tiles - band * group < group ? row_tiles - band * group : group;
  tile_row = band * group + within % band_rows;
  tile_col = within / band_rows;
}

/// Step 8: step 5 with tiles rasterized in bands of `group` tile rows (1D grid striding
/// over all tiles).
template <class T, class Layout, int Tile, int Rows>
__global__ void __launch_bounds__(Tile * Rows, 2048 / (Tile * Rows))
    grouped(T const* __restrict__ in, T* __restrict__ out, std::size_t rows, std::size_t cols, std::size_t ld_in,
            std::size_t ld_out, std::size_t row_tiles, std::size_t col_tiles, unsigned group) {
  __shared__ T tile[Layout::words];
  std::size_t const tiles = row_tiles * col_tiles;
  for (std::size_t b = blockIdx.x; b < tiles; b += gridDim.x) {
    std::size_t tr = 0, tc = 0;
    grouped_tile(b, row_tiles, col_tiles, group, tr, tc);
    move_tile<T, Layout, Tile, Rows>(tile, in, out, rows, cols, ld_in, ld_out, tr * Tile, tc * Tile);
  }
}

}  // namespace memlab::kernels::transpose
