#pragma once
// Verification of a kernel's output against an independent reference.
#include <cstdint>
#include <cstddef>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace memlab::bench {

enum class verdict { passed, failed, not_verified };
char const* to_string(verdict v) noexcept;  ///< "passed", "failed", "not_verified"

struct verification {
  verdict status = verdict::not_verified;
  double error = -1.0;      ///< the measured error (see `metric`); -1 when not measured
  double tolerance = -1.0;  ///< the bound it was held to; -1 when not applicable
  std::string metric;       ///< what `error` is, e.g. "max_abs", "rel_l2", "mismatches"
  std::string detail;       ///< first offending element, or why not verified

  static verification not_verified(std::string why) {
    verification v;
    v.detail = std::move(why);
    return v;
  }
};

/// A count of wrong items (mismatched words, bad pieces) held to zero: passes iff `bad` is 0.
inline verification zero_mismatches(std::string metric, std::size_t bad, std::string detail = {}) {
  verification v;
  v.metric = std::move(metric);
  v.tolerance = 0;
  v.error = static_cast<double>(bad);
  v.status = bad == 0 ? verdict::passed : verdict::failed;
  if (bad != 0) v.detail = std::move(detail);
  return v;
}

/// Element-exact comparison (copies, transposes, integer sums). `error` counts mismatches;
/// a NaN in `got` never matches.
template <class T>
verification compare_exact(std::vector<T> const& got, std::vector<T> const& ref);

/// Floating comparison against a double-precision reference: every element must satisfy
/// |got - ref| <= abs_tol + rel_tol * |ref|, and no NaN or Inf may appear.
/// `error` is the largest |got - ref| / (abs_tol + rel_tol * |ref|) (<= 1 passes).
template <class T>
verification compare_close(std::vector<T> const& got, std::vector<double> const& ref, double rel_tol, double abs_tol);

/// Seeded uniform random fill in [lo, hi) (integers: inclusive range). Never all zeros.
template <class T>
void fill_random(std::vector<T>& v, std::uint64_t seed, double lo = -1.0, double hi = 1.0);

}  // namespace memlab::bench
