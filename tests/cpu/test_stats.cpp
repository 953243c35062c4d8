#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

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

// ---- the reported noise: bootstrap of the median and chunk medians ----------------------

namespace {

using memlab::bench::bootstrap_median_halfwidth;
using memlab::bench::chunk_median_spread;
using memlab::bench::estimate_noise;

/// n samples around `center`, relative spread `rel` (uniform in [-rel, rel]); seeded, fixed.
std::vector<double> spread_around(double center, double rel, int n, unsigned seed = 7) {
  std::mt19937 rng(seed);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(center * (1.0 + rel * (2.0 * (rng() / 4294967296.0) - 1.0)));
  return v;
}

}  // namespace

TEST(Noise, TightSamplesGiveSmallNoise) {
  auto const s = spread_around(1.0, 0.002, 200);
  auto const e = estimate_noise(s, 0.0);
  EXPECT_GT(e.noise, 0.0);
  EXPECT_LT(e.noise, 0.002) << "the median of 200 samples within 0.2% is known to well under 0.2%";
  EXPECT_EQ(e.chunks, 3);
}

TEST(Noise, BootstrapHalfWidthMatchesTheMediansStandardError) {
  // Uniform on [-r, r]: sd = r / sqrt(3); the median's standard error is 1 / (2 f(m) sqrt(n))
  // with f = 1 / (2r), i.e. r / sqrt(n). A 95% half-width is about 1.96 of those.
  double const r = 0.05;
  for (int n : {100, 900}) {
    auto const s = spread_around(1.0, r, n, 11);
    double const expected = 1.96 * r / std::sqrt(static_cast<double>(n));
    EXPECT_NEAR(bootstrap_median_halfwidth(s), expected, 0.35 * expected) << "n = " << n;
  }
}

TEST(Noise, InterleavedBimodalSamplesReportAtLeastHalfTheGap) {
  // Two launch paths, 1.0 and 1.1 ms, taken in random order, half each: a second run's
  // median can land on either mode, so the noise must cover half the gap at least.
  std::mt19937 rng(3);
  std::vector<double> s;
  for (int i = 0; i < 40; ++i) {
    s.push_back(1.0);
    s.push_back(1.1);
  }
  std::shuffle(s.begin(), s.end(), rng);
  auto const e = estimate_noise(s, 0.0);
  double const median_value = median(s);
  EXPECT_GE(e.noise, 0.05 / median_value * 0.99) << "method " << e.method;
}

TEST(Noise, ContiguousModesReportAtLeastTheGap) {
  // First half fast, second half slow (clocks dropped mid-row): the chunks disagree by the gap.
  std::vector<double> s = spread_around(1.0, 0.001, 30, 1);
  auto const slow = spread_around(1.1, 0.001, 30, 2);
  s.insert(s.end(), slow.begin(), slow.end());
  auto const e = estimate_noise(s, 0.0);
  EXPECT_GE(e.noise, 0.09);
  EXPECT_EQ(e.method, "chunks");
}

TEST(Noise, ASlowPhaseAtTheEndIsCaughtByTheChunksNotTheBootstrap) {
  // 75 fast samples, then 25 slow ones: the median is the fast mode and the bootstrap sees
  // a tight median, but a run that had started 25 samples later would not.
  std::vector<double> s = spread_around(1.0, 0.001, 75, 4);
  auto const slow = spread_around(1.1, 0.001, 25, 5);
  s.insert(s.end(), slow.begin(), slow.end());
  auto const e = estimate_noise(s, 0.0);
  EXPECT_LT(e.bootstrap, 0.01);
  ASSERT_TRUE(e.chunk_spread.has_value());
  EXPECT_GE(*e.chunk_spread, 0.09);
  EXPECT_DOUBLE_EQ(e.noise, *e.chunk_spread);
  EXPECT_EQ(e.method, "chunks");
}

TEST(Noise, NeverReportsLessThanTheBetweenRunFloor) {
  // Samples tight to 0.01%: one process's estimates say ~0.005%, but a second process lands
  // up to ~0.4% away (other pages, other L2 slices), so the reported noise is the floor.
  auto const s = spread_around(1.0, 0.0001, 200, 8);
  auto const e = estimate_noise(s);
  EXPECT_DOUBLE_EQ(e.noise, memlab::bench::between_run_noise_floor);
  EXPECT_EQ(e.method, "floor");
  EXPECT_DOUBLE_EQ(e.floor, memlab::bench::between_run_noise_floor);
  // A wide spread is reported as measured, above the floor.
  auto const wide = estimate_noise(spread_around(1.0, 0.2, 40, 8));
  EXPECT_GT(wide.noise, memlab::bench::between_run_noise_floor);
  EXPECT_NE(wide.method, "floor");
}

TEST(Noise, IsDeterministicAndUsesItsSeed) {
  auto const s = spread_around(2.0, 0.03, 57, 9);
  EXPECT_EQ(estimate_noise(s, 0.0).noise, estimate_noise(s, 0.0).noise);
  EXPECT_EQ(bootstrap_median_halfwidth(s), bootstrap_median_halfwidth(s));
  EXPECT_NE(bootstrap_median_halfwidth(s, 1000, 1), bootstrap_median_halfwidth(s, 1000, 2));
}

TEST(Noise, FewSamples) {
  EXPECT_EQ(estimate_noise({}, 0.0).noise, 0.0);
  EXPECT_EQ(estimate_noise({1.0}, 0.0).noise, 0.0);
  auto const five = estimate_noise({1.0, 1.2, 1.1, 1.3, 1.0}, 0.0);
  EXPECT_FALSE(five.chunk_spread.has_value()) << "chunks need 2 samples each";
  EXPECT_EQ(five.method, "bootstrap");
  EXPECT_GT(five.noise, 0.0);
  EXPECT_TRUE(chunk_median_spread({1.0, 1.0, 2.0, 2.0, 3.0, 3.0}, 3).has_value());
  EXPECT_NEAR(*chunk_median_spread({1.0, 1.0, 2.0, 2.0, 3.0, 3.0}, 3), 1.0, 1e-12);  // (3 - 1) / 2
}

TEST(Noise, IsAtLeastTheBootstrapBoundOnTwoRunsDifference) {
  auto const s = spread_around(1.0, 0.05, 200, 21);
  auto const e = estimate_noise(s, 0.0);
  EXPECT_GE(e.noise, std::sqrt(2.0) * e.bootstrap * (1 - 1e-12));
  if (e.chunk_spread) EXPECT_GE(e.noise, *e.chunk_spread);
}

TEST(Noise, ASecondRunLandsWithinTheNoiseAboutNineteenTimesInTwenty) {
  // The promise rows make: for steady samples, a second run's median differs from this one's
  // by more than this run's noise about 5% of the time. 400 pairs of runs, 40 samples each,
  // normal (5%) and skewed (a launch-gap tail) timings.
  std::mt19937 rng(2026);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::exponential_distribution<double> tail(1.0);
  for (bool skewed : {false, true}) {
    auto run = [&] {
      std::vector<double> v;
      for (int i = 0; i < 40; ++i)
        v.push_back(skewed ? 1.0 + 0.02 * tail(rng) + 0.005 * normal(rng) : 1.0 + 0.05 * normal(rng));
      return v;
    };
    int outside = 0;
    int const pairs = 400;
    for (int p = 0; p < pairs; ++p) {
      auto const a = run(), b = run();
      if (std::fabs(median(b) / median(a) - 1.0) > estimate_noise(a, 0.0).noise) ++outside;
    }
    double const frac = static_cast<double>(outside) / pairs;
    EXPECT_LE(frac, 0.09) << (skewed ? "skewed" : "normal") << ": the noise understates the spread";
    EXPECT_GE(frac, 0.005) << (skewed ? "skewed" : "normal") << ": the noise is far wider than the spread";
  }
}
