#pragma once
// Grid set-up shared by the ladder and the library: grid.x covers column tiles, grid.y
// row tiles up to the 65535 limit (the kernels stride over the rest).
#include <algorithm>
#include <climits>
#include <cstdint>

#include "kernels/transpose/02_tiled.cuh"
#include "kernels/transpose/03_vector_tile.cuh"
#include "kernels/transpose/04_pipelined.cuh"
#include "kernels/transpose/05_tile64.cuh"
#include "kernels/transpose/06_tile64_pairs.cuh"
#include "memlab/device.hpp"
#include "memlab/error.hpp"

namespace memlab::kernels::transpose {

template <class T, class Layout, int Tile, int Rows>
void launch_tiled(T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                  cudaStream_t stream) {
  std::size_t const col_tiles = (cols + Tile - 1) / Tile;
  std::size_t const row_tiles = (rows + Tile - 1) / Tile;
  MEMLAB_EXPECTS(col_tiles <= static_cast<std::size_t>(INT_MAX) && row_tiles <= UINT_MAX, "matrix too large");
  dim3 const grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<std::size_t>(row_tiles, 65535)));
  tiled<T, Layout, Tile, Rows><<<grid, dim3(Tile, Rows), 0, stream>>>(in, out, rows, cols, ld_in, ld_out,
                                                                      static_cast<unsigned>(row_tiles));
  MEMLAB_CHECK_LAUNCH();
}

/// Step 8: the grouped rasterization over a 1D grid.
template <class T, class Layout, int Tile, int Rows>
void launch_grouped(T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                    unsigned group, cudaStream_t stream) {
  MEMLAB_EXPECTS(group >= 1, "raster group must be at least one tile row");
  std::size_t const col_tiles = (cols + Tile - 1) / Tile;
  std::size_t const row_tiles = (rows + Tile - 1) / Tile;
  std::size_t const blocks = std::min<std::size_t>(row_tiles * col_tiles, static_cast<std::size_t>(INT_MAX));
  grouped<T, Layout, Tile, Rows><<<static_cast<unsigned>(blocks), dim3(Tile, Rows), 0, stream>>>(
      in, out, rows, cols, ld_in, ld_out, row_tiles, col_tiles, group);
  MEMLAB_CHECK_LAUNCH();
}

/// Step 9: persistent pipelined blocks, as many as fit on the device at once.
template <class T, int Tile, int Rows>
void launch_pipelined(T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                      cudaStream_t stream) {
  auto kernel = pipelined<T, Tile, Rows>;
  static int const resident = [&] {
    int per_sm = 0;
    MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, Tile * Rows, 0));
    return current_device_sm_count() * (per_sm > 0 ? per_sm : 1);
  }();
  std::size_t const col_tiles = (cols + Tile - 1) / Tile;
  std::size_t const row_tiles = (rows + Tile - 1) / Tile;
  std::size_t const blocks = std::min<std::size_t>(row_tiles * col_tiles, static_cast<std::size_t>(resident));
  kernel<<<static_cast<unsigned>(blocks), dim3(Tile, Rows), 0, stream>>>(in, out, rows, cols, ld_in, ld_out, row_tiles,
                                                                          col_tiles);
  MEMLAB_CHECK_LAUNCH();
}

/// The grid of the 64x64-tile kernels: column tiles in x, row tiles in y up to the 65535 limit
/// (the kernels stride over the rest); the row-tile count is the kernels' last argument.
struct tile64_grid {
  dim3 grid;
  unsigned row_tiles;
  tile64_grid(std::size_t rows, std::size_t cols) {
    std::size_t const col_tiles = (cols + 63) / 64, rt = (rows + 63) / 64;
    MEMLAB_EXPECTS(col_tiles <= static_cast<std::size_t>(INT_MAX) && rt <= UINT_MAX, "matrix too large");
    grid = dim3(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<std::size_t>(rt, 65535)));
    row_tiles = static_cast<unsigned>(rt);
  }
};

/// Step 10: 64x64 tiles in two 32-column halves.
template <class T>
void launch_tile64(T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                   cudaStream_t stream) {
  tile64_grid const g(rows, cols);
  tile64<T><<<g.grid, dim3(32, 8), 0, stream>>>(in, out, rows, cols, ld_in, ld_out, g.row_tiles);
  MEMLAB_CHECK_LAUNCH();
}

/// 16-bit elements: tile64_pairs (32-bit words, whole 128-byte warp accesses) where rows, columns
/// and leading dimensions are even and both matrices 4-byte aligned; tile64 otherwise.
inline void launch_transpose_16bit(std::uint16_t const* in, std::uint16_t* out, std::size_t rows, std::size_t cols,
                                   std::size_t ld_in, std::size_t ld_out, cudaStream_t stream) {
  bool const pairs = rows % 2 == 0 && cols % 2 == 0 && ld_in % 2 == 0 && ld_out % 2 == 0 &&
                     reinterpret_cast<std::uintptr_t>(in) % 4 == 0 && reinterpret_cast<std::uintptr_t>(out) % 4 == 0;
  if (!pairs) {
    launch_tile64<std::uint16_t>(in, out, rows, cols, ld_in, ld_out, stream);
    return;
  }
  tile64_grid const g(rows, cols);
  tile64_pairs<std::uint16_t><<<g.grid, dim3(32, 8), 0, stream>>>(reinterpret_cast<std::uint32_t const*>(in),
                                                                  reinterpret_cast<std::uint32_t*>(out), rows, cols, ld_in / 2,
                                                                  ld_out / 2, g.row_tiles);
  MEMLAB_CHECK_LAUNCH();
}

/// Step 7: 16-byte accesses on each side whose rows are 16-byte aligned.
template <class T>
void launch_vector_tiled(T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in,
                         std::size_t ld_out, cudaStream_t stream) {
  using S = vector_tile_shape<T>;
  std::size_t const col_tiles = (cols + S::tile - 1) / S::tile;
  std::size_t const row_tiles = (rows + S::tile - 1) / S::tile;
  MEMLAB_EXPECTS(col_tiles <= static_cast<std::size_t>(INT_MAX) && row_tiles <= UINT_MAX, "matrix too large");
  dim3 const grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<std::size_t>(row_tiles, 65535)));
  bool const vin = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && ld_in % S::vec == 0;
  bool const vout = reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && ld_out % S::vec == 0;
  auto const rt = static_cast<unsigned>(row_tiles);
  if (vin && vout) vector_tiled<T, true, true><<<grid, S::threads, 0, stream>>>(in, out, rows, cols, ld_in, ld_out, rt);
  else if (vin) vector_tiled<T, true, false><<<grid, S::threads, 0, stream>>>(in, out, rows, cols, ld_in, ld_out, rt);
  else if (vout) vector_tiled<T, false, true><<<grid, S::threads, 0, stream>>>(in, out, rows, cols, ld_in, ld_out, rt);
  else vector_tiled<T, false, false><<<grid, S::threads, 0, stream>>>(in, out, rows, cols, ld_in, ld_out, rt);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::kernels::transpose
