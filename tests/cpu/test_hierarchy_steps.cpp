#include <gtest/gtest.h>

#include <cmath>

#include "kernels/hierarchy/steps.hpp"

using memlab::hierarchy::find_steps;

namespace {
std::vector<double> pow2(int lo, int hi) {
  std::vector<double> v;
  for (int e = lo; e <= hi; ++e) v.push_back(std::ldexp(1.0, e));
  return v;
}
}  // namespace

TEST(HierarchySteps, FindsEachLevelOfAStaircase) {
  // 32-cycle L1 up to 128 KiB, 260-cycle L2 up to 32 MiB, 700-cycle DRAM beyond; a
  // two-point climb into DRAM (partition effects) and a little noise.
  auto const fp = pow2(10, 30);
  std::vector<double> lat;
  for (double f : fp) {
    double l = f <= 131072 ? 32 : f <= 33554432 ? 260 : f == 67108864 ? 520 : 700;
    lat.push_back(l * (1 + 0.01 * std::sin(f)));
  }
  auto const steps = find_steps(fp, lat);
  ASSERT_EQ(steps.size(), 2u);
  EXPECT_EQ(steps[0].capacity_bytes, 131072);
  EXPECT_NEAR(steps[0].below, 32, 1);
  EXPECT_NEAR(steps[0].above, 260, 5);
  EXPECT_EQ(steps[1].capacity_bytes, 33554432);
  EXPECT_NEAR(steps[1].above, 700, 10);
}

TEST(HierarchySteps, AFlatCurveHasNoStepAndNoiseIsNotOne) {
  auto const fp = pow2(10, 20);
  std::vector<double> lat;
  for (std::size_t i = 0; i < fp.size(); ++i) lat.push_back(100 * (1 + 0.08 * ((i % 3) - 1.0)));
  EXPECT_TRUE(find_steps(fp, lat).empty());
  EXPECT_TRUE(find_steps({1024}, {5}).empty());
}

TEST(HierarchySteps, GradualStepFindsTheReachAndTheMissCost) {
  // base 292 cycles, a miss 10.5 more, reach 256 MiB; quarter octaves from 8 MiB to 64 GiB,
  // with +-0.6 cycles of alternating noise.
  std::vector<double> fp, lat;
  double const reach = 256.0 * (1 << 20);
  int i = 0;
  for (double f = 8.0 * (1 << 20); f <= 64.0 * (1u << 30); f *= std::pow(2.0, 0.25), ++i) {
    fp.push_back(f);
    lat.push_back(292 + 10.5 * std::max(0.0, 1 - reach / f) + (i % 2 ? 0.6 : -0.6));
  }
  auto const levels = memlab::hierarchy::fit_gradual_levels(fp, lat);
  ASSERT_EQ(levels.size(), 1u);
  auto const& g = levels[0];
  EXPECT_TRUE(g.found);
  EXPECT_NEAR(std::log2(g.reach_bytes / reach), 0.0, 0.26);  // within a quarter octave
  EXPECT_NEAR(g.miss_cost, 10.5, 1.0);
  EXPECT_NEAR(g.base, 292, 1.0);
}

TEST(HierarchySteps, GradualStepIsNotFoundOnAFlatCurve) {
  std::vector<double> fp, lat;
  int i = 0;
  for (double f = 8.0 * (1 << 20); f <= 16.0 * (1u << 30); f *= std::pow(2.0, 0.25), ++i) {
    fp.push_back(f);
    lat.push_back(300 + (i % 3) * 0.8);
  }
  EXPECT_TRUE(memlab::hierarchy::fit_gradual_levels(fp, lat).empty());
}

TEST(HierarchySteps, GradualLevelsFindsTwoLevels) {
  // The H200's shape: 301.5 cycles, +10 past 256 MiB, +160 past 64 GiB, to 90 GiB.
  std::vector<double> fp, lat;
  double const r1 = 256.0 * (1 << 20), r2 = 64.0 * (1ull << 30);
  int i = 0;
  for (double f = 8.0 * (1 << 20); f <= 91.0 * (1ull << 30); f *= std::pow(2.0, 0.25), ++i) {
    fp.push_back(f);
    lat.push_back(301.5 + 10 * std::max(0.0, 1 - r1 / f) + 160 * std::max(0.0, 1 - r2 / f) + (i % 2 ? 0.4 : -0.4));
  }
  auto const g = memlab::hierarchy::fit_gradual_levels(fp, lat);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_NEAR(std::log2(g[0].reach_bytes / r1), 0.0, 0.26);
  EXPECT_NEAR(g[0].miss_cost, 10, 1.5);
  EXPECT_NEAR(std::log2(g[1].reach_bytes / r2), 0.0, 0.26);
  EXPECT_NEAR(g[1].miss_cost, 160, 15);
}

TEST(HierarchySteps, GradualLevelsKeepsOneLevelWhenThereIsOne) {
  std::vector<double> fp, lat;
  double const r1 = 256.0 * (1 << 20);
  int i = 0;
  for (double f = 8.0 * (1 << 20); f <= 54.0 * (1ull << 30); f *= std::pow(2.0, 0.25), ++i) {
    fp.push_back(f);
    lat.push_back(302 + 10 * std::max(0.0, 1 - r1 / f) + (i % 3 - 1) * 0.5);
  }
  auto const g = memlab::hierarchy::fit_gradual_levels(fp, lat);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_NEAR(std::log2(g[0].reach_bytes / r1), 0.0, 0.26);
  EXPECT_NEAR(g[0].miss_cost, 10, 1.5);
}
