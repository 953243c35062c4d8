#pragma once
// Locating the levels in a latency-vs-footprint staircase: a plateau per level, a rise where
// the footprint outgrows it. Host code only (tests/cpu/test_hierarchy_steps.cpp).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace memlab::hierarchy {

struct level_step {
  double capacity_bytes = 0;  ///< the largest footprint still on the lower plateau (where misses begin)
  double below = 0;           ///< the lower plateau's latency (median of its points)
  double above = 0;           ///< the next plateau's latency (median of its points)
  /// Where the climb crosses halfway from `below` to `above` (linear between the two points
  /// around the crossing): half the loads miss there. A cache whose sets are not filled evenly
  /// (a hashed index) starts missing before it is full and misses everything only after, so
  /// this, not the first miss, is its size.
  double half_rise_bytes = 0;
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
  std::vector<std::size_t> starts;  // index of each step's last point on the lower plateau
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
      starts.push_back(i - 1);
      plateau.assign(1, latency[j]);
      i = j + 1;
    } else {
      plateau.push_back(latency[i]);
      ++i;
    }
  }
  if (!steps.empty()) steps.back().above = detail::median_of(plateau);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    double const half = 0.5 * (steps[s].below + steps[s].above);
    steps[s].half_rise_bytes = steps[s].capacity_bytes;
    for (std::size_t k = starts[s] + 1; k < n; ++k) {
      if (latency[k] < half) continue;
      double const f0 = footprints[k - 1], f1 = footprints[k], y0 = latency[k - 1], y1 = latency[k];
      steps[s].half_rise_bytes = y1 > y0 ? f0 + (f1 - f0) * std::max(0.0, half - y0) / (y1 - y0) : f1;
      break;
    }
  }
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

/// Up to two TLB-like levels at once: latency(F) = base + sum over levels of
/// miss_k * max(0, 1 - reach_k / F), reaches among the footprints (at least 2 points past
/// each), costs >= 0 by least squares, base the median of the points up to the first reach.
/// Two levels are reported only when their reaches are at least 4x apart, each costs at least
/// `min_rise` of base, and the pair at least halves the best single level's squared error (one
/// gradual climb would otherwise be split in two); else the best single level, if it costs
/// `min_rise` of base. Returned in order of reach; empty when no level is found.
inline std::vector<gradual_step> fit_gradual_levels(std::vector<double> const& footprints,
                                                    std::vector<double> const& latency, double min_rise = 0.015) {
  std::size_t const n = std::min(footprints.size(), latency.size());
  auto miss = [&](std::size_t k, std::size_t i) { return footprints[i] > footprints[k] ? 1 - footprints[k] / footprints[i] : 0.0; };
  double one_sse = std::numeric_limits<double>::infinity(), two_sse = one_sse;
  gradual_step one;
  std::vector<gradual_step> two;
  for (std::size_t k1 = 2; k1 + 2 < n; ++k1) {
    double const base = detail::median_of(std::vector<double>(latency.begin(), latency.begin() + static_cast<long>(k1) + 1));
    double s11 = 0, s1y = 0;
    for (std::size_t i = 0; i < n; ++i) {
      s11 += miss(k1, i) * miss(k1, i);
      s1y += miss(k1, i) * (latency[i] - base);
    }
    auto sse_of = [&](double c1, std::size_t k2, double c2) {
      double sse = 0;
      for (std::size_t i = 0; i < n; ++i) {
        double const e = latency[i] - (base + c1 * miss(k1, i) + c2 * miss(k2, i));
        sse += e * e;
      }
      return sse;
    };
    if (s11 > 0) {
      double const c = std::max(0.0, s1y / s11), sse = sse_of(c, k1, 0);
      if (sse < one_sse) one_sse = sse, one = {false, footprints[k1], base, c};
    }
    for (std::size_t k2 = k1 + 1; k2 + 2 < n; ++k2) {
      if (footprints[k2] < 4 * footprints[k1]) continue;
      double s12 = 0, s22 = 0, s2y = 0;
      for (std::size_t i = 0; i < n; ++i) {
        s12 += miss(k1, i) * miss(k2, i);
        s22 += miss(k2, i) * miss(k2, i);
        s2y += miss(k2, i) * (latency[i] - base);
      }
      double const det = s11 * s22 - s12 * s12;
      if (det <= 0) continue;
      double const c1 = (s1y * s22 - s2y * s12) / det, c2 = (s2y * s11 - s1y * s12) / det;
      if (c1 < 0 || c2 < 0) continue;
      double const sse = sse_of(c1, k2, c2);
      if (sse < two_sse) two_sse = sse, two = {{false, footprints[k1], base, c1}, {false, footprints[k2], base, c2}};
    }
  }
  std::vector<gradual_step> out;
  bool const pair = two.size() == 2 && two_sse * 2 <= one_sse && two[0].base > 0 &&
                    two[0].miss_cost >= min_rise * two[0].base && two[1].miss_cost >= min_rise * two[1].base;
  if (pair) {
    out = two;
  } else if (one.base > 0 && one.miss_cost >= min_rise * one.base) {
    out.push_back(one);
  }
  for (auto& g : out) g.found = true;
  return out;
}

}  // namespace memlab::hierarchy
