#pragma once
// Grid set-up shared by the ladder and the library: grid.x covers column tiles, grid.y
// row tiles up to the 65535 limit (the kernels stride over the rest).
#include <algorithm>
#include <climits>

#include "kernels/transpose/02_tiled.cuh"
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

}  // namespace memlab::kernels::transpose
