// How many copies of a decode GEMM's weights the tensor-core ladder rotates through
// (docs/timing.md, "Streamed weights"), without a GPU.
#include <gtest/gtest.h>

#include <string>

#include "experiments/gemm_streamed_weights.hpp"

namespace {
using memlab::experiments::gemm::max_weight_copies;
using memlab::experiments::gemm::streamed_weights_text;
using memlab::experiments::gemm::weight_copies;

constexpr double mib = 1048576.0;

TEST(GemmStreamedWeights, DecodeBatchesSmallerThanTwiceTheL2AreCopied) {
  double const l2 = 50 * mib;  // an H100's or H200's
  // 128 x 4096 x 4096: 32 MiB of BF16 weights; 4 others (128 MiB) pass between two uses of one.
  EXPECT_EQ(weight_copies(128, 32 * mib, l2), 5);
  EXPECT_EQ(weight_copies(1, 32 * mib, l2), 5);
  // FP8: 16 MiB; 7 others (112 MiB).
  EXPECT_EQ(weight_copies(128, 16 * mib, l2), 8);
  // Exactly twice the L2 in the others.
  EXPECT_EQ(weight_copies(64, 25 * mib, l2), 5);
  // A 40 MiB L2 (an A100's): 3 others of 32 MiB.
  EXPECT_EQ(weight_copies(128, 32 * mib, 40 * mib), 4);
}

TEST(GemmStreamedWeights, OtherPointsAreNotCopied) {
  double const l2 = 50 * mib;
  EXPECT_EQ(weight_copies(129, 32 * mib, l2), 1);    // not a decode batch
  EXPECT_EQ(weight_copies(4096, 32 * mib, l2), 1);
  EXPECT_EQ(weight_copies(128, 100 * mib, l2), 1);   // twice the L2 already: DRAM by its size
  EXPECT_EQ(weight_copies(128, 448 * mib, l2), 1);   // 128 x 8192 x 28672
  EXPECT_EQ(weight_copies(128, 0.0, l2), 1);
  EXPECT_EQ(weight_copies(128, 32 * mib, 0.0), 1);   // no L2 size known
}

TEST(GemmStreamedWeights, TinyWeightsAreCappedAndTheTextSaysSo) {
  double const l2 = 50 * mib;
  EXPECT_EQ(weight_copies(16, 4096.0, l2), max_weight_copies);
  std::string const capped = streamed_weights_text(max_weight_copies, 4096.0, l2);
  EXPECT_NE(capped.find("may partly stay"), std::string::npos) << capped;
  std::string const full = streamed_weights_text(5, 32 * mib, l2);
  EXPECT_NE(full.find("5 copies"), std::string::npos) << full;
  EXPECT_NE(full.find("128 MiB"), std::string::npos) << full;
  EXPECT_NE(full.find("from DRAM"), std::string::npos) << full;
}

}  // namespace
