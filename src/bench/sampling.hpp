#pragma once
// The harness's one sampling policy, over any sampler: state::exec's event-timed launches
// and the timings experiments take themselves (host clock, several streams) alike.
// No CUDA here, so the rule is unit-tested on the CPU.
#include <functional>
#include <vector>

namespace memlab::bench {

struct timing_options {
  bool cold = true;          ///< flush L2 before every sample
  double max_noise = 0.01;   ///< stop once the relative standard deviation is below this
  double min_time_s = 0.02;  ///< at least this much sampled time ...
  int min_samples = 10;      ///< ... and at least this many samples
  int max_samples = 1000;
  double timeout_s = 1.0;    ///< wall-clock budget per measurement
  int warmup = 1;            ///< untimed calls first
  bool profile = false;      ///< one sample, no warm-up (for ncu)
};

/// Calls one_sample() (returns milliseconds) `warmup` times and discards the results, then
/// samples until at least min_samples and min_time_s are collected and the relative standard
/// deviation is at most max_noise, or max_samples are taken, or timeout_s of wall time has
/// passed with at least 3 samples. Profile mode: one sample, no warm-up.
std::vector<double> sample_until_stable(std::function<double()> const& one_sample, timing_options const& t);

/// `t` for slow or inherently noisy measurements: at most `wall_s` seconds of sampling and
/// no more than `min_samples` required samples.
timing_options capped(timing_options t, double wall_s, int min_samples = 5);

}  // namespace memlab::bench
