#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "bench/verify.hpp"

using namespace memlab::bench;

TEST(Verify, ExactComparisonCountsMismatchesAndRejectsNaN) {
  std::vector<float> ref{1.f, 2.f, 3.f};
  EXPECT_EQ(compare_exact(ref, ref).status, verdict::passed);
  auto bad = ref;
  bad[1] = 2.5f;
  auto v = compare_exact(bad, ref);
  EXPECT_EQ(v.status, verdict::failed);
  EXPECT_EQ(v.error, 1.0);
  EXPECT_NE(v.detail.find("first at 1"), std::string::npos);
  std::vector<float> nan_ref{std::nanf("")}, nan_got{std::nanf("")};
  EXPECT_EQ(compare_exact(nan_got, nan_ref).status, verdict::failed) << "NaN must never pass";
  EXPECT_EQ(compare_exact(std::vector<int>{1, 2}, std::vector<int>{1}).status, verdict::failed);
}

TEST(Verify, CloseComparisonScalesWithTolerance) {
  std::vector<double> ref{100.0, -1.0, 0.0};
  std::vector<float> got{100.001f, -1.0f, 1e-7f};
  auto v = compare_close(got, ref, 1e-4, 1e-6);
  EXPECT_EQ(v.status, verdict::passed) << v.detail;
  EXPECT_LE(v.error, 1.0);
  auto strict = compare_close(got, ref, 1e-9, 1e-9);
  EXPECT_EQ(strict.status, verdict::failed);
  EXPECT_GT(strict.error, 1.0);
}

TEST(Verify, CloseComparisonRejectsNaNAndInfWhateverTheTolerance) {
  std::vector<double> ref{1.0, 2.0};
  std::vector<float> nan_got{1.0f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> inf_got{std::numeric_limits<float>::infinity(), 2.0f};
  EXPECT_EQ(compare_close(nan_got, ref, 1e30, 1e30).status, verdict::failed);
  EXPECT_EQ(compare_close(inf_got, ref, 1e30, 1e30).status, verdict::failed);
}

TEST(Verify, RandomFillIsSeededAndNotZero) {
  std::vector<float> a(1000), b(1000), c(1000);
  fill_random(a, 42);
  fill_random(b, 42);
  fill_random(c, 43);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  int zeros = 0;
  for (float x : a) {
    zeros += x == 0.f;
    EXPECT_GE(x, -1.f);
    EXPECT_LT(x, 1.f);
  }
  EXPECT_LT(zeros, 2);
  std::vector<int> ints(1000);
  fill_random(ints, 7, -5, 5);
  for (int x : ints) {
    EXPECT_GE(x, -5);
    EXPECT_LE(x, 5);
  }
}
