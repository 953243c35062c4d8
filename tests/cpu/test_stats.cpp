#include <gtest/gtest.h>

#include <cmath>

#include "bench/stats.hpp"

using memlab::bench::median;
using memlab::bench::summarize;

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({7.0}), 7.0);
  EXPECT_THROW(median({}), std::invalid_argument);
}

TEST(Stats, MedianIgnoresOneOutlier) {
  EXPECT_DOUBLE_EQ(median({1.0, 1.0, 1.0, 1.0, 1000.0}), 1.0);
}

TEST(Stats, SummaryMatchesHandComputedValues) {
  auto s = summarize({2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0});
  EXPECT_EQ(s.samples, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  EXPECT_DOUBLE_EQ(s.median, 4.5);
  EXPECT_DOUBLE_EQ(s.min, 2.0);
  EXPECT_DOUBLE_EQ(s.max, 9.0);
  EXPECT_NEAR(s.stdev, std::sqrt(32.0 / 7.0), 1e-12);  // sample (n-1) standard deviation
  EXPECT_NEAR(s.noise, std::sqrt(32.0 / 7.0) / 5.0, 1e-12);
}

TEST(Stats, OneSampleHasNoNoiseAndEmptyIsZero) {
  auto one = summarize({3.5});
  EXPECT_EQ(one.samples, 1);
  EXPECT_DOUBLE_EQ(one.median, 3.5);
  EXPECT_DOUBLE_EQ(one.noise, 0.0);
  auto none = summarize({});
  EXPECT_EQ(none.samples, 0);
}
