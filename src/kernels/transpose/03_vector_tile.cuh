#pragma once
// Step 7: several elements per thread with 16-byte global accesses. A Tile x Tile block
// (64 x 64 floats, 32 x 32 doubles) is read with one 16-byte load per thread per pass and
// written with one 16-byte store per pass; the transposition happens in a [Tile][Tile+1]
// shared tile with scalar accesses (16-byte shared accesses would need a pitch that is a
// multiple of 4 words, which brings the column-read conflicts back). A quarter of step 5's
// memory instructions for the same bytes, and Passes 16-byte loads in flight per thread.
// Tiles cut by the matrix edge, and rows that are not 16-byte aligned (VecIn / VecOut
// false), fall back to element accesses.
#include "kernels/transpose/00_copy.cuh"

namespace memlab::kernels::transpose {

template <class T>
struct vector_tile_shape {
  static constexpr int threads = 256;
  static constexpr int vec = 16 / sizeof(T);                 ///< elements per 16-byte access
  static constexpr int tile = sizeof(T) == 4 ? 64 : 32;      ///< 16 KB of floats, 8 KB of doubles
  static constexpr int lanes = tile / vec;                   ///< threads across one tile row
  static constexpr int rows = threads / lanes;               ///< tile rows per pass
  static constexpr int passes = tile / rows;                 ///< 16-byte accesses per thread
  static constexpr int pitch = tile + 1;
  static_assert(threads % lanes == 0 && tile % rows == 0, "whole passes");
};

template <class T, bool VecIn, bool VecOut>
__global__ void __launch_bounds__(256, 6) vector_tiled(T const* __restrict__ in, T* __restrict__ out, std::size_t rows,
                                                       std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                                                       unsigned row_tiles) {
  using S = vector_tile_shape<T>;
  using V = typename vec16<T>::type;
  constexpr int Tile = S::tile, Vec = S::vec, Pitch = S::pitch;
  __shared__ T tile[Tile * Pitch];
  int const tx = threadIdx.x % S::lanes, ty = threadIdx.x / S::lanes;
  std::size_t const c0 = std::size_t(blockIdx.x) * Tile;
  for (unsigned bt = blockIdx.y; bt < row_tiles; bt += gridDim.y) {
    std::size_t const r0 = std::size_t(bt) * Tile;
    bool const full = r0 + Tile <= rows && c0 + Tile <= cols;
    if (full) {
      T v[S::passes][Vec];
      T const* src = in + (r0 + ty) * ld_in + c0 + Vec * tx;
#pragma unroll
      for (int p = 0; p < S::passes; ++p) {  // every load issued before the first use
        T const* q = src + std::size_t(p) * S::rows * ld_in;
        if constexpr (VecIn) {
          V const x = __ldg(reinterpret_cast<V const*>(q));
          T const* e = reinterpret_cast<T const*>(&x);
#pragma unroll
          for (int i = 0; i < Vec; ++i) v[p][i] = e[i];
        } else {
#pragma unroll
          for (int i = 0; i < Vec; ++i) v[p][i] = q[i];
        }
      }
#pragma unroll
      for (int p = 0; p < S::passes; ++p)
#pragma unroll
        for (int i = 0; i < Vec; ++i) tile[(ty + p * S::rows) * Pitch + Vec * tx + i] = v[p][i];
    } else {
#pragma unroll
      for (int p = 0; p < S::passes; ++p) {
        std::size_t const r = r0 + ty + p * S::rows;
#pragma unroll
        for (int i = 0; i < Vec; ++i) {
          std::size_t const c = c0 + Vec * tx + i;
          if (r < rows && c < cols) tile[(ty + p * S::rows) * Pitch + Vec * tx + i] = in[r * ld_in + c];
        }
      }
    }
    __syncthreads();
    // Output row c0 + j (input column) takes the tile's column j; this thread writes Vec
    // consecutive elements of it, input rows r0 + Vec*tx ...
#pragma unroll
    for (int p = 0; p < S::passes; ++p) {
      int const j = ty + p * S::rows;
      T v[Vec];
#pragma unroll
      for (int i = 0; i < Vec; ++i) v[i] = tile[(Vec * tx + i) * Pitch + j];
      std::size_t const orow = c0 + j, ocol = r0 + Vec * tx;
      if (full) {
        T* q = out + orow * ld_out + ocol;
        if constexpr (VecOut) {
          V x;
          T* e = reinterpret_cast<T*>(&x);
#pragma unroll
          for (int i = 0; i < Vec; ++i) e[i] = v[i];
          *reinterpret_cast<V*>(q) = x;
        } else {
#pragma unroll
          for (int i = 0; i < Vec; ++i) q[i] = v[i];
        }
      } else {
#pragma unroll
        for (int i = 0; i < Vec; ++i)
          if (orow < cols && ocol + i < rows) out[orow * ld_out + ocol + i] = v[i];
      }
    }
    __syncthreads();  // the next row tile overwrites the tile
  }
}

}  // namespace memlab::kernels::transpose
