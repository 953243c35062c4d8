#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

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

TEST(HierarchySteps, HalfRiseIsWhereHalfTheLoadsMiss) {
  // A 224 KiB cache with hashed sets at 2 KiB steps: misses begin 6 KiB early and reach every
  // load 6 KiB late (a linear ramp from 40 to 286 cycles over 218..230 KiB), then a plateau.
  std::vector<double> fp, lat;
  for (double k = 2; k <= 300; k += 2) {
    fp.push_back(k * 1024);
    lat.push_back(k <= 218 ? 40 : k >= 230 ? 286 : 40 + (k - 218) / 12 * 246);
  }
  auto const steps = find_steps(fp, lat);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].capacity_bytes, 218 * 1024);
  EXPECT_NEAR(steps[0].half_rise_bytes, 224 * 1024, 1);
  // A sharp step: the half rise lies between the last point below and the first above.
  auto const sharp = find_steps({1024, 2048, 4096, 8192}, {30, 30, 300, 300});
  ASSERT_EQ(sharp.size(), 1u);
  EXPECT_GT(sharp[0].half_rise_bytes, 2048);
  EXPECT_LT(sharp[0].half_rise_bytes, 4096);
}

TEST(HierarchySteps, AFlatCurveHasNoStepAndNoiseIsNotOne) {
  auto const fp = pow2(10, 20);
  std::vector<double> lat;
  for (std::size_t i = 0; i < fp.size(); ++i) lat.push_back(100 * (1 + 0.08 * ((i % 3) - 1.0)));
  EXPECT_TRUE(find_steps(fp, lat).empty());
  EXPECT_TRUE(find_steps({1024}, {5}).empty());
}

// A TLB sweep's curve: quarter octaves from 8 MiB to `hi` bytes, latency(f, i) at each.
struct curve {
  std::vector<double> fp, lat;
};
template <class F>
curve sweep_to(double hi, F latency) {
  curve c;
  int i = 0;
  for (double f = 8.0 * (1 << 20); f <= hi; f *= std::pow(2.0, 0.25), ++i) {
    c.fp.push_back(f);
    c.lat.push_back(latency(f, i));
  }
  return c;
}
/// The fraction of a random chase's loads over f bytes that miss a level reaching `reach`.
double missed(double reach, double f) { return std::max(0.0, 1 - reach / f); }

TEST(HierarchySteps, GradualLevelsFindOneLevel) {
  // base ~292-302 cycles, a miss 10-10.5 more, reach 256 MiB, to 64 GiB (alternating noise of
  // +-0.6) and to 54 GiB (the H100's sweep; noise -0.5, 0, +0.5).
  double const reach = 256.0 * (1 << 20);
  curve const a = sweep_to(64.0 * (1ull << 30), [&](double f, int i) { return 292 + 10.5 * missed(reach, f) + (i % 2 ? 0.6 : -0.6); });
  curve const b = sweep_to(54.0 * (1ull << 30), [&](double f, int i) { return 302 + 10 * missed(reach, f) + (i % 3 - 1) * 0.5; });
  for (auto const& [c, base, cost] : {std::tuple{a, 292.0, 10.5}, std::tuple{b, 302.0, 10.0}}) {
    auto const levels = memlab::hierarchy::fit_gradual_levels(c.fp, c.lat);
    ASSERT_EQ(levels.size(), 1u);
    EXPECT_TRUE(levels[0].found);
    EXPECT_NEAR(std::log2(levels[0].reach_bytes / reach), 0.0, 0.26);  // within a quarter octave
    EXPECT_NEAR(levels[0].miss_cost, cost, 1.0);
    EXPECT_NEAR(levels[0].base, base, 1.0);
  }
}

TEST(HierarchySteps, GradualLevelsAreNotFoundOnAFlatCurve) {
  curve const c = sweep_to(16.0 * (1ull << 30), [](double, int i) { return 300 + (i % 3) * 0.8; });
  EXPECT_TRUE(memlab::hierarchy::fit_gradual_levels(c.fp, c.lat).empty());
}

TEST(HierarchySteps, GradualLevelsFindsTwoLevels) {
  // The H200's shape: 301.5 cycles, +10 past 256 MiB, +160 past 64 GiB, to 90 GiB.
  double const r1 = 256.0 * (1 << 20), r2 = 64.0 * (1ull << 30);
  curve const c = sweep_to(91.0 * (1ull << 30), [&](double f, int i) {
    return 301.5 + 10 * missed(r1, f) + 160 * missed(r2, f) + (i % 2 ? 0.4 : -0.4);
  });
  auto const g = memlab::hierarchy::fit_gradual_levels(c.fp, c.lat);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_NEAR(std::log2(g[0].reach_bytes / r1), 0.0, 0.26);
  EXPECT_NEAR(g[0].miss_cost, 10, 1.5);
  EXPECT_NEAR(std::log2(g[1].reach_bytes / r2), 0.0, 0.26);
  EXPECT_NEAR(g[1].miss_cost, 160, 15);
}
