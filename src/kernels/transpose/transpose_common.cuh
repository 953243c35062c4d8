#pragma once
// Shared-memory tile layouts for the transpose ladder. A tile holds element (r, c) of a
// Tile x Tile block of the input; the load writes rows (lanes vary c), the store reads
// columns (lanes vary r). Which words those are decides the bank conflicts.
#include <cuda_runtime.h>

#include <cstddef>

namespace memlab::kernels::transpose {

/// Row-major, no padding: a column read hits words Tile apart, all in one bank
/// (Tile a multiple of 32): a 32-way conflict.
template <int Tile>
struct plain_layout {
  static constexpr int words = Tile * Tile;
  __host__ __device__ static constexpr int at(int r, int c) { return r * Tile + c; }
};

/// One word of padding per row (seed 004's [32][33]): row pitch Tile+1 = 1 mod 32, so
/// lane r of a column read lands in bank (r + c) mod 32: conflict-free.
template <int Tile>
struct padded_layout {
  static constexpr int words = Tile * (Tile + 1);
  __host__ __device__ static constexpr int at(int r, int c) { return r * (Tile + 1) + c; }
};

/// XOR swizzle: (r, c) at column c ^ (r mod 32) of row r. Rows are permuted within each
/// 32-word group (row writes stay conflict-free) and a column read lands in bank
/// (c ^ r) mod 32, distinct across the warp, with no padding words.
template <int Tile>
struct swizzled_layout {
  static constexpr int words = Tile * Tile;
  __host__ __device__ static constexpr int at(int r, int c) { return r * Tile + (c ^ (r & 31)); }
};

}  // namespace memlab::kernels::transpose
