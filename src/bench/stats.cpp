#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

namespace memlab::bench {

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty set");
  std::size_t const mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  double const upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  double const lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

sample_summary summarize(std::vector<double> samples) {
  sample_summary s;
  s.samples = static_cast<int>(samples.size());
  if (samples.empty()) return s;
  auto const [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  s.min = *lo;
  s.max = *hi;
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size();
  if (samples.size() > 1) {
    double ss = 0.0;
    for (double v : samples) ss += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(ss / (samples.size() - 1));
    s.noise = s.mean > 0.0 ? s.stdev / s.mean : 0.0;
  }
  s.median = median(std::move(samples));
  return s;
}

double bootstrap_median_halfwidth(std::vector<double> const& samples, int resamples, std::uint64_t seed) {
  std::size_t const n = samples.size();
  if (n < 2 || resamples < 2) return 0.0;
  double const m = median(samples);
  if (!(m > 0.0)) return 0.0;
  // mt19937_64's sequence is fixed by the standard; `% n` (not uniform_int_distribution,
  // whose mapping differs between standard libraries) keeps the result identical everywhere.
  // The modulo bias is below n / 2^64.
  std::mt19937_64 rng(seed);
  std::vector<double> draw(n), medians(static_cast<std::size_t>(resamples));
  for (auto& med : medians) {
    for (auto& d : draw) d = samples[rng() % n];
    med = median(draw);
  }
  std::sort(medians.begin(), medians.end());
  auto at = [&](double p) { return medians[static_cast<std::size_t>(p * (medians.size() - 1) + 0.5)]; };
  return (at(0.975) - at(0.025)) / 2.0 / m;
}

std::optional<double> chunk_median_spread(std::vector<double> const& samples_in_order, int chunks) {
  std::size_t const n = samples_in_order.size();
  if (chunks < 2 || n < 2 * static_cast<std::size_t>(chunks)) return std::nullopt;
  double const m = median(samples_in_order);
  if (!(m > 0.0)) return std::nullopt;
  double lo = INFINITY, hi = -INFINITY;
  for (int c = 0; c < chunks; ++c) {
    auto const b = samples_in_order.begin() + static_cast<std::ptrdiff_t>(n * c / chunks);
    auto const e = samples_in_order.begin() + static_cast<std::ptrdiff_t>(n * (c + 1) / chunks);
    double const cm = median(std::vector<double>(b, e));
    lo = std::min(lo, cm);
    hi = std::max(hi, cm);
  }
  return (hi - lo) / m;
}

noise_estimate estimate_noise(std::vector<double> const& samples_in_order, double floor) {
  noise_estimate e;
  e.floor = floor;
  e.bootstrap = bootstrap_median_halfwidth(samples_in_order);
  // The half-width bounds where the true median lies; a second run's median scatters as much
  // again, so the bound on the difference between two runs is sqrt(2) times wider (about 2.8
  // standard errors). Without it, a second run lands outside the noise 7-10% of the time.
  e.noise = std::sqrt(2.0) * e.bootstrap;
  // Three chunks: for stationary samples the range of three chunk medians is on average about
  // 2.9 standard errors of the full median, near the same bound; when the samples drift (clocks, another process), the
  // chunks disagree and this is what a second run would see, which the bootstrap misses.
  e.chunk_spread = chunk_median_spread(samples_in_order, 3);
  if (e.chunk_spread) {
    e.chunks = 3;
    if (*e.chunk_spread > e.noise) {
      e.noise = *e.chunk_spread;
      e.method = "chunks";
    }
  }
  // Both estimates describe one process's samples; a second process also draws new pages and
  // a new placement in L2, which neither sees (between_run_noise_floor).
  if (samples_in_order.size() >= 2 && floor > e.noise) {
    e.noise = floor;
    e.method = "floor";
  }
  return e;
}

}  // namespace memlab::bench
