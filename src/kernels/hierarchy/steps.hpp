#pragma once
// Locating the levels in a latency-vs-footprint staircase: a plateau per level, a rise where
// the footprint outgrows it. Host code only (tests/cpu/test_hierarchy_steps.cpp).
#include <algorithm>
#include <cstddef>
#include <limits>
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

/// A cache of `reach` bytes under uniformly random accesses over a footprint F misses a
/// fraction 1 - reach / F of them, so the mean latency climbs gradually past the reach toward
/// base + miss_cost instead of stepping: latency(F) = base + miss_cost * max(0, 1 - reach / F).
/// That is how a TLB level shows when its miss is cheap (a hit one level down).
struct gradual_step {
  bool found = false;
  double reach_bytes = 0;  ///< the footprint where the climb begins
  double base = 0;         ///< latency while every access hits (median of the points up to the reach)
  double miss_cost = 0;    ///< latency a miss adds (least squares over the points past the reach)
};

/// Fits latency(F) = base + miss_cost * max(0, 1 - reach / F) with `reach` one of the
/// footprints (at least 3 points on each side), by least squares; `found` when the best fit's
/// miss_cost is at least `min_rise` of base (1.5%: a few cycles on ~300, above the medians'
/// noise). Host code: `footprints` ascending.
inline gradual_step fit_gradual_step(std::vector<double> const& footprints, std::vector<double> const& latency,
                                     double min_rise = 0.015) {
  gradual_step best;
  std::size_t const n = std::min(footprints.size(), latency.size());
  double best_sse = std::numeric_limits<double>::infinity();
  for (std::size_t k = 2; k + 3 < n; ++k) {
    double const reach = footprints[k];
    double const base = detail::median_of(std::vector<double>(latency.begin(), latency.begin() + static_cast<long>(k) + 1));
    double sxy = 0, sxx = 0;
    for (std::size_t i = k + 1; i < n; ++i) {
      double const x = 1 - reach / footprints[i];
      sxy += x * (latency[i] - base);
      sxx += x * x;
    }
    double const cost = sxx > 0 ? std::max(0.0, sxy / sxx) : 0.0;
    double sse = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double const x = footprints[i] > reach ? 1 - reach / footprints[i] : 0.0;
      double const e = latency[i] - (base + cost * x);
      sse += e * e;
    }
    if (sse < best_sse) {
      best_sse = sse;
      best = {false, reach, base, cost};
    }
  }
  best.found = best.base > 0 && best.miss_cost >= min_rise * best.base;
  return best;
}

}  // namespace memlab::hierarchy
