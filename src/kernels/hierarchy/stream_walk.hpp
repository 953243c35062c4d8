#pragma once
// Where the pieces of a streamed tile live (stream.cu): host/device arithmetic, so the CPU
// tests check it against the plain formula without a GPU.
//
// The buffer is rows of stream_row_bytes (1024 words). A 1-D tile is tile_words contiguous
// words; a TMA box is w words (a power of two: widths divide 4096 bytes) by tile_words / w
// rows, and tile t is box t % (1024 / w) of row band t / (1024 / w). Every consumer thread
// reads pieces tid, tid + 256, ... of a tile (16 bytes each).
#include <cuda_runtime_api.h>

#include <cstdint>

namespace memlab::hierarchy::detail {

inline constexpr std::uint32_t walk_row_words = 1024;  ///< stream_row_bytes / 4
inline constexpr std::uint32_t walk_threads = 256;     ///< stream_threads (the consumers)

/// log2 of a power of two (__ffs on the device: one instruction).
__host__ __device__ inline std::uint32_t log2_pow2(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint32_t>(__ffs(static_cast<int>(x)) - 1);
#else
  std::uint32_t l = 0;
  while ((1u << l) < x) ++l;
  return l;
#endif
}

/// A consumer thread's pieces of tile t: its first piece (piece `tid`) at word `first`, each
/// next one (256 pieces on) `step` words further, both mod 2^32 (the pattern is checked mod
/// 2^32). 1-D (box_w_words 0): 1024 words a step. A box: 1024 words are 1024 / w whole rows.
/// Shifts and masks only: the 64-bit divisions this replaced were the ring's limit.
struct piece_walk {
  std::uint32_t first, step;
};
__host__ __device__ inline piece_walk walk_of(std::uint32_t tile_words, std::uint32_t box_w_words, std::uint64_t t,
                                              std::uint32_t tid) {
  std::uint32_t const j = 4 * tid;  // the thread's first word in the tile
  if (box_w_words == 0) return {static_cast<std::uint32_t>(t) * tile_words + j, 4u * walk_threads};
  std::uint32_t const lw = log2_pow2(box_w_words);
  std::uint32_t const lrow = log2_pow2(walk_row_words);
  std::uint32_t const per_row_shift = lrow - lw;  // boxes side by side in a row band
  std::uint32_t const tr = static_cast<std::uint32_t>(t >> per_row_shift);
  std::uint32_t const tc = static_cast<std::uint32_t>(t) & ((1u << per_row_shift) - 1);
  std::uint32_t const box_rows = tile_words >> lw;
  std::uint32_t const base = (tr * box_rows << lrow) + (tc << lw);
  return {base + ((j >> lw) << lrow) + (j & (box_w_words - 1)), ((4u * walk_threads) >> lw) << lrow};
}

/// The TMA coordinates of box t: x in words, y in rows of the tensor.
struct box_origin {
  std::uint32_t x, y;
};
__host__ __device__ inline box_origin box_of(std::uint32_t tile_words, std::uint32_t box_w_words, std::uint64_t t) {
  std::uint32_t const lw = log2_pow2(box_w_words);
  std::uint32_t const per_row_shift = log2_pow2(walk_row_words) - lw;
  return {(static_cast<std::uint32_t>(t) & ((1u << per_row_shift) - 1)) << lw,
          static_cast<std::uint32_t>(t >> per_row_shift) * (tile_words >> lw)};
}

/// The plain formula (divisions, 64 bits): the word index of word j of tile t.
inline std::uint64_t word_of_reference(std::uint32_t tile_words, std::uint32_t box_w_words, std::uint64_t t,
                                       std::uint32_t j) {
  if (box_w_words == 0) return t * tile_words + j;
  std::uint64_t const per_row = walk_row_words / box_w_words, box_rows = tile_words / box_w_words;
  std::uint64_t const tr = t / per_row, tc = t % per_row;
  return (tr * box_rows + j / box_w_words) * walk_row_words + tc * box_w_words + j % box_w_words;
}

}  // namespace memlab::hierarchy::detail
