#include "bench/sampling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "bench/stats.hpp"

namespace memlab::bench {

std::vector<double> sample_until_stable(std::function<double()> const& one_sample, timing_options const& t,
                                        int launches_per_sample) {
  std::vector<double> samples;
  if (t.profile) {
    samples.push_back(one_sample());
    return samples;
  }
  for (int i = 0; i < t.warmup; ++i) (void)one_sample();
  auto const t0 = std::chrono::steady_clock::now();
  double sampled_s = 0.0;
  for (;;) {
    samples.push_back(one_sample());
    sampled_s += samples.back() * 1e-3 * std::max(launches_per_sample, 1);
    int const n = static_cast<int>(samples.size());
    if (n >= t.max_samples) break;
    if (n >= t.min_samples && sampled_s >= t.min_time_s && summarize(samples).noise <= t.max_noise) break;
    double const wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wall > t.timeout_s && n >= 3) break;  // out of budget: at least 3 for a meaningful median
  }
  return samples;
}

int batch_size_for(double per_launch_ms) {
  if (!(per_launch_ms > 0.0) || !std::isfinite(per_launch_ms) || per_launch_ms >= batch_below_ms) return 1;
  double const n = std::ceil(batch_target_ms / per_launch_ms);
  return static_cast<int>(std::clamp(n, 2.0, static_cast<double>(max_batch)));
}

int pow2_at_least(int n) {
  int p = 1;
  while (p < n && p < (1 << 30)) p <<= 1;
  return p;
}

timing_options capped(timing_options t, double wall_s, int min_samples) {
  t.timeout_s = std::min(t.timeout_s, wall_s);
  t.min_samples = std::min(t.min_samples, min_samples);
  return t;
}

}  // namespace memlab::bench
