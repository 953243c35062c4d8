#pragma once
// Step 9: a persistent, software-pipelined tile transpose. A GPU-filling grid of blocks
// walks the tiles; each block holds the next tile's elements in registers while it writes
// the current one, so its loads for tile i+1 are in flight during its stores of tile i
// and no block ever waits with an empty memory queue between tiles (the one-tile-per-block
// steps load, wait, store, exit, and a new block starts from nothing).
// Measured on the H200 at 8192^2 (docs/transpose.md): 0.94 of cublasSgeam, below the
// one-tile-per-block multi_element_8 (0.98); with 16 elements per thread 0.94, and with
// evict-first (__ldcs/__stcs) loads and stores 0.90. Kept as the ladder's negative result.
#include "kernels/transpose/transpose_common.cuh"

namespace memlab::kernels::transpose {

/// Block (Tile, Rows); a 1D grid of any size strides over the row-major tile order.
template <class T, int Tile, int Rows>
__global__ void __launch_bounds__(Tile * Rows)
    pipelined(T const* __restrict__ in, T* __restrict__ out, std::size_t rows, std::size_t cols, std::size_t ld_in,
              std::size_t ld_out, std::size_t row_tiles, std::size_t col_tiles) {
  using L = padded_layout<Tile>;
  constexpr int E = Tile / Rows;
  static_assert(Tile % 32 == 0 && Tile % Rows == 0, "whole warps per tile row, whole passes per tile");
  __shared__ T tile[L::words];
  int const tx = threadIdx.x, ty = threadIdx.y;
  std::size_t const tiles = row_tiles * col_tiles;
  std::size_t b = blockIdx.x;
  if (b >= tiles) return;

  T v[E];
  auto load = [&](std::size_t t) {
    std::size_t const r0 = t / col_tiles * Tile, c0 = t % col_tiles * Tile;
    std::size_t const rem_r = rows - r0, rem_c = cols - c0;
    T const* src = in + (r0 + ty) * ld_in + c0 + tx;
    std::size_t const pass = std::size_t(Rows) * ld_in;
    if (rem_r >= Tile && rem_c >= Tile) {
#pragma unroll
      for (int k = 0; k < E; ++k) v[k] = src[k * pass];
    } else {
#pragma unroll
      for (int k = 0; k < E; ++k)
        v[k] = (std::size_t(ty + k * Rows) < rem_r && std::size_t(tx) < rem_c) ? src[k * pass]
                                                                               : T(0);
    }
  };

  load(b);
  for (;;) {
#pragma unroll
    for (int k = 0; k < E; ++k) tile[L::at(ty + k * Rows, tx)] = v[k];
    __syncthreads();
    std::size_t const cur = b;
    b += gridDim.x;
    if (b < tiles) load(b);  // in flight while this tile is written
    std::size_t const r0 = cur / col_tiles * Tile, c0 = cur % col_tiles * Tile;
    std::size_t const rem_r = rows - r0, rem_c = cols - c0;
    T* dst = out + (c0 + ty) * ld_out + r0 + tx;
    std::size_t const pass = std::size_t(Rows) * ld_out;
    if (rem_r >= Tile && rem_c >= Tile) {
#pragma unroll
      for (int k = 0; k < E; ++k) dst[k * pass] = tile[L::at(tx, ty + k * Rows)];
    } else {
#pragma unroll
      for (int k = 0; k < E; ++k)
        if (std::size_t(ty + k * Rows) < rem_c && std::size_t(tx) < rem_r)
          dst[k * pass] = tile[L::at(tx, ty + k * Rows)];
    }
    if (b >= tiles) break;
    __syncthreads();  // every column read of this tile is done before the next fill
  }
}

}  // namespace memlab::kernels::transpose
