#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
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

}  // namespace memlab::bench
