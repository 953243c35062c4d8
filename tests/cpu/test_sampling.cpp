// The harness's stopping rule, driven by fake samplers (no GPU).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "bench/sampling.hpp"

using namespace memlab::bench;

TEST(Sampling, StableSamplesStopOnceMinimumCountAndTimeAreReached) {
  timing_options t;
  t.warmup = 2;
  t.min_samples = 10;
  t.min_time_s = 0.02;  // 20 ms of 1 ms samples
  int calls = 0;
  auto ms = sample_until_stable([&] { ++calls; return 1.0; }, t);
  EXPECT_EQ(ms.size(), 20u) << "min_time_s, not min_samples, is the binding minimum here";
  EXPECT_EQ(calls, 22) << "warm-up calls are made and discarded";
}

TEST(Sampling, NoisySamplesRunToMaxSamples) {
  timing_options t;
  t.max_samples = 40;
  t.timeout_s = 60;
  int i = 0;
  auto ms = sample_until_stable([&] { return (i++ % 2) ? 1.0 : 3.0; }, t);  // noise about 50%
  EXPECT_EQ(ms.size(), 40u);
}

TEST(Sampling, TimeoutStopsWithAtLeastThreeSamples) {
  timing_options t;
  t.warmup = 0;
  t.timeout_s = 0.005;
  int i = 0;
  auto ms = sample_until_stable(
      [&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(4));
        return (i++ % 2) ? 1.0 : 3.0;
      },
      t);
  EXPECT_GE(ms.size(), 3u);
  EXPECT_LE(ms.size(), 4u);
}

TEST(Sampling, ProfileModeTakesExactlyOneSampleWithoutWarmup) {
  timing_options t;
  t.profile = true;
  t.warmup = 5;
  int calls = 0;
  auto ms = sample_until_stable([&] { ++calls; return 2.0; }, t);
  EXPECT_EQ(ms.size(), 1u);
  EXPECT_EQ(calls, 1);
}

TEST(Sampling, CappedLowersTheBudgetButNeverRaisesIt) {
  timing_options t;
  t.timeout_s = 1.0;
  t.min_samples = 10;
  auto c = capped(t, 0.3);
  EXPECT_DOUBLE_EQ(c.timeout_s, 0.3);
  EXPECT_EQ(c.min_samples, 5);
  auto loose = capped(t, 5.0, 50);
  EXPECT_DOUBLE_EQ(loose.timeout_s, 1.0);
  EXPECT_EQ(loose.min_samples, 10);
}

TEST(Sampling, BatchedSamplesCountEveryLaunchTowardMinTime) {
  timing_options t;
  t.warmup = 0;
  t.min_samples = 2;
  t.min_time_s = 0.02;
  // 1 ms per launch, 5 launches a sample: 5 ms of GPU time each, so 4 samples reach 20 ms.
  auto batched = sample_until_stable([] { return 1.0; }, t, 5);
  EXPECT_EQ(batched.size(), 4u);
  auto single = sample_until_stable([] { return 1.0; }, t);
  EXPECT_EQ(single.size(), 20u);
}

TEST(Sampling, BatchSizeReachesTheTargetForShortKernelsOnly) {
  EXPECT_EQ(batch_size_for(0.2), 1) << "long kernels: one launch per sample";
  EXPECT_EQ(batch_size_for(batch_below_ms), 1);
  EXPECT_EQ(batch_size_for(0.0), 1);
  EXPECT_EQ(batch_size_for(-1.0), 1);
  EXPECT_EQ(batch_size_for(0.002), 50);  // 2 us: 50 launches make 100 us
  EXPECT_EQ(batch_size_for(0.003), 34);  // rounds up: 34 x 3 us >= 100 us
  EXPECT_EQ(batch_size_for(0.049), 3);
  EXPECT_GE(batch_size_for(0.049) * 0.049, batch_target_ms);
  EXPECT_EQ(batch_size_for(1e-7), max_batch);
}

TEST(Sampling, BatchSizesArePowersOfTwoSoNearbyProbesAgree) {
  using memlab::bench::pow2_at_least;
  EXPECT_EQ(pow2_at_least(-3), 1);
  EXPECT_EQ(pow2_at_least(1), 1);
  EXPECT_EQ(pow2_at_least(2), 2);
  EXPECT_EQ(pow2_at_least(3), 4);
  EXPECT_EQ(pow2_at_least(33), 64);
  EXPECT_EQ(pow2_at_least(64), 64);
  EXPECT_EQ(pow2_at_least(max_batch), max_batch);
  // Probes of 2.9 and 3.1 us ask for 35 and 33 launches: both time 64.
  EXPECT_EQ(pow2_at_least(batch_size_for(0.0029)), pow2_at_least(batch_size_for(0.0031)));
}
