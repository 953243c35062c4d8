#include "bench/verify.hpp"

#include <cmath>
#include <sstream>

namespace memlab::bench {

char const* to_string(verdict v) noexcept {
  switch (v) {
    case verdict::passed: return "passed";
    case verdict::failed: return "failed";
    default: return "not_verified";
  }
}

namespace {
template <class T>
bool same(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return !std::isnan(a) && a == b;
  } else {
    return a == b;
  }
}
}  // namespace

template <class T>
verification compare_exact(std::vector<T> const& got, std::vector<T> const& ref) {
  verification v;
  v.metric = "mismatches";
  v.tolerance = 0;
  if (got.size() != ref.size()) {
    v.status = verdict::failed;
    v.error = static_cast<double>(ref.size());
    v.detail = "size " + std::to_string(got.size()) + " != reference size " + std::to_string(ref.size());
    return v;
  }
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (!same(got[i], ref[i])) {
      if (bad == 0) first = i;
      ++bad;
    }
  }
  v.error = static_cast<double>(bad);
  v.status = bad == 0 ? verdict::passed : verdict::failed;
  if (bad > 0) {
    std::ostringstream os;
    os << bad << " of " << got.size() << " differ; first at " << first << ": got " << +got[first] << ", expected "
       << +ref[first];
    v.detail = os.str();
  }
  return v;
}

template <class T>
verification compare_close(std::vector<T> const& got, std::vector<double> const& ref, double rel_tol, double abs_tol) {
  verification v;
  v.metric = "max_scaled_err";
  v.tolerance = 1.0;
  if (got.size() != ref.size()) {
    v.status = verdict::failed;
    v.error = INFINITY;
    v.detail = "size " + std::to_string(got.size()) + " != reference size " + std::to_string(ref.size());
    return v;
  }
  double worst = 0.0;
  std::size_t worst_i = 0;
  bool nonfinite = false;
  for (std::size_t i = 0; i < got.size(); ++i) {
    double const g = static_cast<double>(got[i]);
    if (!std::isfinite(g)) {
      if (!nonfinite) worst_i = i;
      nonfinite = true;
      continue;
    }
    double const bound = abs_tol + rel_tol * std::fabs(ref[i]);
    double const scaled = std::fabs(g - ref[i]) / (bound > 0 ? bound : 1e-300);
    if (scaled > worst && !nonfinite) {
      worst = scaled;
      worst_i = i;
    }
  }
  v.error = nonfinite ? INFINITY : worst;
  v.status = (!nonfinite && worst <= 1.0) ? verdict::passed : verdict::failed;
  if (v.status == verdict::failed && !got.empty()) {
    std::ostringstream os;
    os << (nonfinite ? "non-finite value" : "largest error") << " at " << worst_i << ": got "
       << static_cast<double>(got[worst_i]) << ", expected " << ref[worst_i] << " (rel_tol " << rel_tol
       << ", abs_tol " << abs_tol << ")";
    v.detail = os.str();
  }
  return v;
}

template <class T>
void fill_random(std::vector<T>& v, std::uint64_t seed, double lo, double hi) {
  std::mt19937_64 gen(seed);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> dist(lo, hi);
    for (auto& x : v) x = static_cast<T>(dist(gen));
  } else {
    std::uniform_int_distribution<long long> dist(static_cast<long long>(lo), static_cast<long long>(hi));
    for (auto& x : v) x = static_cast<T>(dist(gen));
  }
}

#define MEMLAB_INSTANTIATE(T)                                                                           \
  template verification compare_exact<T>(std::vector<T> const&, std::vector<T> const&);                  \
  template void fill_random<T>(std::vector<T>&, std::uint64_t, double, double);
MEMLAB_INSTANTIATE(float)
MEMLAB_INSTANTIATE(double)
MEMLAB_INSTANTIATE(int)
MEMLAB_INSTANTIATE(unsigned)
MEMLAB_INSTANTIATE(std::int8_t)
MEMLAB_INSTANTIATE(std::uint8_t)
MEMLAB_INSTANTIATE(std::int16_t)
MEMLAB_INSTANTIATE(std::int64_t)
MEMLAB_INSTANTIATE(std::uint64_t)
#undef MEMLAB_INSTANTIATE
template verification compare_close<float>(std::vector<float> const&, std::vector<double> const&, double, double);
template verification compare_close<double>(std::vector<double> const&, std::vector<double> const&, double, double);

}  // namespace memlab::bench
