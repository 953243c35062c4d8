// The L2-intake experiment's host checksum (intake.cu, intake_expected_sums) against a plain
// replay of what each block's consumer adds, without a GPU: the formula that checks every
// intake row could otherwise pass a kernel that reads the wrong rows.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/hierarchy/hierarchy.hpp"

namespace mh = memlab::hierarchy;

namespace {

/// Block b, step i: box i % 8 across row block (b / share) % row_blocks; the consumer adds word
/// r % 32 of each of the box's rows r, word g holding g * stream_pattern (mod 2^32).
std::vector<std::uint32_t> replay(mh::intake_plan const& p, int blocks) {
  std::uint32_t const row_words = static_cast<std::uint32_t>(mh::intake_row_bytes / 4), across = row_words / 32;
  std::uint32_t const row_blocks = static_cast<std::uint32_t>((blocks + p.share - 1) / p.share);
  std::vector<std::uint32_t> out;
  for (int b = 0; b < blocks; ++b) {
    std::uint32_t sum = 0;
    std::uint32_t const y0 = static_cast<std::uint32_t>(b / p.share) % row_blocks * static_cast<std::uint32_t>(p.box_rows);
    for (std::uint32_t i = 0; i < p.steps; ++i)
      for (int r = 0; r < p.box_rows; ++r) {
        std::uint32_t const g = (y0 + static_cast<std::uint32_t>(r)) * row_words + 32 * (i % across) + static_cast<std::uint32_t>(r % 32);
        sum += g * mh::stream_pattern;
      }
    out.push_back(sum);
  }
  return out;
}

}  // namespace

TEST(HierarchyIntake, HostSumsAreWhatEachBlocksConsumerAdds) {
  for (int blocks : {1, 2, 7, 16, 132})
    for (int share : {1, 2, 16})
      for (int rows : {16, 64, 256})
        for (std::uint32_t steps : {1u, 7u, 8u, 37u}) {
          mh::intake_plan p;
          p.share = share;
          p.box_rows = rows;
          p.steps = steps;
          EXPECT_EQ(mh::intake_expected_sums(p, blocks), replay(p, blocks))
              << blocks << " blocks, share " << share << ", " << rows << " rows, " << steps << " steps";
        }
}

TEST(HierarchyIntake, BlocksThatShareRowsExpectTheSameSumAndOthersDoNot) {
  mh::intake_plan p;
  p.share = 4;
  p.box_rows = 32;
  p.steps = 100;
  auto const s = mh::intake_expected_sums(p, 8);
  EXPECT_EQ(s[0], s[3]);
  EXPECT_NE(s[3], s[4]);  // the next row block
  EXPECT_EQ(s[4], s[7]);
}

TEST(HierarchyIntake, FootprintIsTheRowBlocksTheBlocksRead) {
  mh::intake_plan p;
  p.box_rows = 128;
  p.share = 16;
  EXPECT_EQ(mh::intake_footprint_bytes(p, 128), std::size_t{8} * 128 * mh::intake_row_bytes);
  EXPECT_EQ(mh::intake_footprint_bytes(p, 132), std::size_t{9} * 128 * mh::intake_row_bytes);  // a last, partial group
  p.share = 1;
  EXPECT_EQ(mh::intake_footprint_bytes(p, 132), std::size_t{132} * 128 * mh::intake_row_bytes);
}

TEST(HierarchyIntake, ConsumerWarpsDivideTheRingSoEachKeepsToItsOwnSlots) {
  // A warp that shared a slot with another would wait on a parity naming two phases (session 36's
  // lost call): the count must divide the slots, and be the most of 4 that does.
  for (int stages = 1; stages <= mh::intake_max_stages; ++stages) {
    int const c = mh::intake_consumers(stages);
    EXPECT_EQ(stages % c, 0) << stages;
    EXPECT_TRUE(c == 1 || c == 2 || c == 4) << stages;
    if (stages % 4 == 0) EXPECT_EQ(c, 4) << stages;
  }
  EXPECT_EQ(mh::intake_consumers(6), 2);
  EXPECT_EQ(mh::intake_consumers(3), 1);
}
