// Where the streaming rings' consumers and producer look for each tile (stream_walk.hpp):
// the shift-and-mask walk against the plain formula with divisions, for every 1-D tile and
// every box shape the experiments and GPU tests use, without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/hierarchy/stream_walk.hpp"

namespace mhd = memlab::hierarchy::detail;

namespace {

/// Every piece of tile t, as each of the 256 consumer threads walks it, against the reference.
void expect_walk_matches(std::uint32_t tile_words, std::uint32_t box_w_words, std::uint64_t t) {
  std::uint32_t const pieces = tile_words / 4;
  for (std::uint32_t tid = 0; tid < mhd::walk_threads; ++tid) {
    mhd::piece_walk const w = mhd::walk_of(tile_words, box_w_words, t, tid);
    std::uint32_t g = w.first;
    for (std::uint32_t v = tid; v < pieces; v += mhd::walk_threads, g += w.step)
      ASSERT_EQ(g, static_cast<std::uint32_t>(mhd::word_of_reference(tile_words, box_w_words, t, 4 * v)))
          << "tile " << tile_words << " words, box width " << box_w_words << ", tile " << t << ", piece " << v;
  }
}

std::vector<std::uint64_t> const tiles = {0, 1, 2, 3, 4, 5, 7, 31, 32, 33, 131, 1000, 123457, (std::uint64_t{1} << 32) + 9};

}  // namespace

TEST(HierarchyWalk, ContiguousTilesStepOneThousandWords) {
  for (std::uint32_t tile_words : {4u, 16u, 256u, 1024u, 4000u, 4096u, 16384u, 262140u})
    for (std::uint64_t t : tiles) expect_walk_matches(tile_words, 0, t);
}

TEST(HierarchyWalk, EveryBoxShapeMatchesThePlainFormula) {
  // Widths 16 B to 1024 B (4 to 256 words), 1 to 256 rows: every shape check_stream_plan allows
  // that a 4096-byte-row tensor holds, the square boxes and the 1024-byte-wide ones among them.
  for (std::uint32_t w = 4; w <= 256; w *= 2)
    for (std::uint32_t rows : {1u, 2u, 3u, 4u, 8u, 16u, 32u, 64u, 128u, 256u})
      for (std::uint64_t t : tiles) expect_walk_matches(w * rows, w, t);
}

TEST(HierarchyWalk, BoxOriginIsTheTilesFirstWord) {
  for (std::uint32_t w = 4; w <= 256; w *= 2)
    for (std::uint32_t rows : {1u, 4u, 64u, 256u})
      for (std::uint64_t t : tiles) {
        if (t >> 26) continue;  // tensors have at most 2^22 rows (16 GiB of 4 KiB rows): y fits 32 bits
        mhd::box_origin const o = mhd::box_of(w * rows, w, t);
        EXPECT_EQ(std::uint64_t{o.y} * mhd::walk_row_words + o.x, mhd::word_of_reference(w * rows, w, t, 0))
            << "width " << w << " rows " << rows << " tile " << t;
        EXPECT_EQ(o.x % w, 0u);
        EXPECT_LT(o.x, mhd::walk_row_words);
      }
}

TEST(HierarchyWalk, Log2OfPowersOfTwo) {
  for (std::uint32_t l = 0; l < 31; ++l) EXPECT_EQ(mhd::log2_pow2(1u << l), l);
}
