#pragma once
// Step 10: a 64x64 tile per block of 32x8 threads, moved as two 32-column halves through
// one [32][65] buffer. Each thread issues all 16 of its loads before the first barrier,
// and every output row of the tile is written as 256 contiguous bytes (two 128-byte warp
// stores), twice the run of the 32x32 steps. This is the shape ncu reports for
// cublasSgeam's transpose kernel on the H200 (256 threads, 8.3 KB of shared memory,
// a (n/64) x (n/64) grid); the code is ours.
#include "kernels/transpose/transpose_common.cuh"

namespace memlab::kernels::transpose {

/// Min blocks per SM: a full SM for floats (32 registers); half for doubles, whose 16
/// values alone take 32 registers.
template <class T>
__global__ void __launch_bounds__(256, sizeof(T) == 4 ? 8 : 4)
    tile64(T const* __restrict__ in, T* __restrict__ out, std::size_t rows, std::size_t cols, std::size_t ld_in,
           std::size_t ld_out, unsigned row_tiles) {
  __shared__ T buf[32 * 65];  // [column within the half][row within the tile]
  int const tx = threadIdx.x, ty = threadIdx.y;
  std::size_t const c0 = std::size_t(blockIdx.x) * 64;
  for (unsigned bt = blockIdx.y; bt < row_tiles; bt += gridDim.y) {
    std::size_t const r0 = std::size_t(bt) * 64;
    std::size_t const rem_r = rows - r0, rem_c = cols - c0;
    bool const full = rem_r >= 64 && rem_c >= 64;
    T v[2][8];
    T const* src = in + (r0 + ty) * ld_in + c0 + tx;
    std::size_t const in_pass = 8 * ld_in;
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < 8; ++j)
        v[h][j] = (full || (std::size_t(ty + 8 * j) < rem_r && std::size_t(tx + 32 * h) < rem_c))
                      ? src[j * in_pass + 32 * h]
                      : T(0);
    std::size_t const out_pass = 8 * ld_out;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
#pragma unroll
      for (int j = 0; j < 8; ++j) buf[tx * 65 + ty + 8 * j] = v[h][j];
      __syncthreads();
      // Output row c0 + 32h + ty + 8q holds input column c0 + 32h + ty + 8q: the buffer's row.
      T* dst = out + (c0 + 32 * h + ty) * ld_out + r0 + tx;
#pragma unroll
      for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int w = 0; w < 2; ++w)
          if (full || (std::size_t(ty + 8 * q + 32 * h) < rem_c && std::size_t(tx + 32 * w) < rem_r))
            dst[q * out_pass + 32 * w] = buf[(ty + 8 * q) * 65 + tx + 32 * w];
      __syncthreads();  // the next half (or tile) overwrites the buffer
    }
  }
}

}  // namespace memlab::kernels::transpose
