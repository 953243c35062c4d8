#pragma once
// The library's transpose for 16-bit elements (memlab::transpose on BF16 / FP16, and the
// tensor-core GEMM's copy of an operand stored the other way): the 64x64 tile of step 10 moved as
// 32-bit words, two elements each, so that every warp access is a whole 128-byte row segment
// (tile64 on 16-bit elements reads and writes 64 bytes a warp instruction). A tile is read as 64
// rows of 32 words into a [64][33] word buffer; an output word holds one input column at two
// consecutive input rows, assembled from the two buffer words that hold them (__byte_perm). It
// needs even rows and columns, even leading dimensions and 4-byte aligned matrices (a word never
// straddles a row); launch_transpose_16bit takes tile64 otherwise.
#include <cstddef>
#include <cstdint>

namespace memlab::kernels::transpose {

/// `T`: the 16-bit element type whose pairs the words hold (a template, as the other steps are, so
/// that every file including this one shares one kernel).
template <class T>
__global__ void __launch_bounds__(256) tile64_pairs(std::uint32_t const* __restrict__ in, std::uint32_t* __restrict__ out,
                                                   std::size_t rows, std::size_t cols, std::size_t ld_in_words,
                                                   std::size_t ld_out_words, unsigned row_tiles) {
  static_assert(sizeof(T) == 2, "pairs of 16-bit elements in a 32-bit word");
  __shared__ std::uint32_t buf[64 * 33];  // [input row within the tile][word = input column pair]
  int const tx = threadIdx.x, ty = threadIdx.y;
  std::size_t const c0 = std::size_t(blockIdx.x) * 64;  // first input column (even)
  for (unsigned bt = blockIdx.y; bt < row_tiles; bt += gridDim.y) {
    std::size_t const r0 = std::size_t(bt) * 64;  // first input row (even)
    std::size_t const rem_r = rows - r0, rem_c = cols - c0;
    bool const full = rem_r >= 64 && rem_c >= 64;
    // Read: warp ty + 8j takes input row r0 + ty + 8j, word tx = columns c0 + 2tx, c0 + 2tx + 1.
    std::uint32_t const* src = in + (r0 + ty) * ld_in_words + c0 / 2 + tx;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      int const r = ty + 8 * j;
      buf[r * 33 + tx] = (full || (std::size_t(r) < rem_r && std::size_t(2 * tx) < rem_c)) ? src[j * 8 * ld_in_words] : 0u;
    }
    __syncthreads();
    // Write: output row c0 + oc (input column), word tx = input rows r0 + 2tx and r0 + 2tx + 1.
    std::uint32_t* dst = out + (c0 + ty) * ld_out_words + r0 / 2 + tx;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      int const oc = ty + 8 * j;
      if (full || (std::size_t(oc) < rem_c && std::size_t(2 * tx) < rem_r)) {
        std::uint32_t const lo = buf[(2 * tx) * 33 + oc / 2], hi = buf[(2 * tx + 1) * 33 + oc / 2];
        // Column oc is the low half of its word when even, the high half when odd.
        dst[j * 8 * ld_out_words] = (oc & 1) ? __byte_perm(lo, hi, 0x7632) : __byte_perm(lo, hi, 0x5410);
      }
    }
    __syncthreads();  // the next tile overwrites the buffer
  }
}

}  // namespace memlab::kernels::transpose
