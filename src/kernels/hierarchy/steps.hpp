#pragma once
// Locating the levels in a latency-vs-footprint staircase: a plateau per level, a rise where
// the footprint outgrows it. Host code only (tests/cpu/test_hierarchy_steps.cpp).
#include <algorithm>
#include <cstddef>
#include <vector>

namespace memlab::hierarchy {

struct level_step {
  double capacity_bytes = 0;  ///< the largest footprint still on the lower plateau
  double below = 0;           ///< the lower plateau's latency (median of its points)
  double above = 0;           ///< the next plateau's latency (median of its points)
};

namespace detail {
inline double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t const n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
}  // namespace detail

/// `footprints` ascending, `latency` per footprint. A step starts where a point exceeds the
/// current plateau's median by more than `rise` (20%: an L2 hit after L1 is ~1.5-3x, device
/// memory after L2 ~2x); the climb continues while each point still rises by more than
/// rise / 2; the next plateau starts where it flattens.
inline std::vector<level_step> find_steps(std::vector<double> const& footprints, std::vector<double> const& latency,
                                          double rise = 0.2) {
  std::vector<level_step> steps;
  std::size_t const n = std::min(footprints.size(), latency.size());
  if (n < 2) return steps;
  std::vector<double> plateau{latency[0]};
  std::size_t i = 1;
  while (i < n) {
    double const base = detail::median_of(plateau);
    if (latency[i] > base * (1 + rise)) {
      std::size_t j = i;
      while (j + 1 < n && latency[j + 1] > latency[j] * (1 + rise / 2)) ++j;
      if (!steps.empty()) steps.back().above = base;
      steps.push_back({footprints[i - 1], base, latency[j]});
      plateau.assign(1, latency[j]);
      i = j + 1;
    } else {
      plateau.push_back(latency[i]);
      ++i;
    }
  }
  if (!steps.empty()) steps.back().above = detail::median_of(plateau);
  return steps;
}

}  // namespace memlab::hierarchy
