#pragma once
// Rung 6's choice between its kernels (05_cluster.cu), host code only
// (tests/cpu/test_gemm_tc_select.cpp; the measurements behind the constants are in
// docs/tc-gemm.md, "Session 13: pingpong").
#include <cstdint>
#include <string>

namespace memlab::detail::gemm_tc {

/// Rung 6's kernels: both run in 2-CTA clusters along M sharing B by multicast.
enum class cluster_tile : int {
  coop_128x256,      ///< cooperative: both consumer warpgroups share a 128 x 256 tile (64 x 256 each)
  coop_128x128,      ///< the same on 128 x 128 tiles, where 128 x 256 pairs leave clusters idle
  pingpong_128x192,  ///< each consumer warpgroup owns whole 128 x 192 tiles; their k-loops alternate
  pingpong_128x160,  ///< the same on 128 x 160 tiles, where those make fuller waves
};

/// Which of rung 6's kernels may run: the rule's choice, or one family forced (GPU tests).
enum class cluster_family : int { automatic, cooperative, pingpong192, pingpong160 };

/// The cooperative kernel's tile: 128 x 256 unless its pairs leave clusters idle in the last
/// wave and there is less than two waves of them; then 128 x 128 (twice the pairs).
inline cluster_tile cluster_coop_tile(std::int64_t m, std::int64_t n, int clusters256) {
  std::int64_t const pairs = ((m + 255) / 256) * ((n + 255) / 256);
  return pairs >= 2 * clusters256 || pairs % clusters256 == 0 ? cluster_tile::coop_128x256 : cluster_tile::coop_128x128;
}

/// Rung 6's kernel for C (m x n) with k: the cheapest by a count of k-block times per cluster,
/// in units of one 128 x 256 k-block (64 deep) on one CTA:
///   cooperative 128 x 256: waves x (k-blocks + 2.5), the 2.5 being the epilogue the
///     tensor cores wait out (both warpgroups store C together);
///   pingpong 128 x BN:     waves x BN / 256 x (k-blocks + 1), a k-block taking its share of
///     a 256-wide one and the epilogue hidden under the other warpgroup's k-loop but one.
/// A wave is one tile pair per cluster (`clusters256`, `clusters192`, `clusters160`: how many
/// of each kernel the device runs at once). A pingpong kernel must win by 2%, and only where
/// the cooperative kernel runs 8 waves or more: at 4-5 waves the count promised pingpong 10-15%
/// and it measured level or up to 8% slower (3000x5000x2000, 4097^3), so few waves stay
/// cooperative, as do the cooperative kernel's 128 x 128 tiles (few pairs).
inline cluster_tile cluster_pick(std::int64_t m, std::int64_t n, std::int64_t k, int clusters256, int clusters192,
                                 int clusters160, cluster_family allowed = cluster_family::automatic) {
  if (allowed == cluster_family::pingpong192) return cluster_tile::pingpong_128x192;
  if (allowed == cluster_family::pingpong160) return cluster_tile::pingpong_128x160;
  cluster_tile const coop = cluster_coop_tile(m, n, clusters256);
  if (allowed == cluster_family::cooperative || coop != cluster_tile::coop_128x256) return coop;
  std::int64_t const pair_rows = (m + 255) / 256, nk = (k + 63) / 64;
  auto const waves = [&](int bn, int clusters) {
    return static_cast<double>((pair_rows * ((n + bn - 1) / bn) + clusters - 1) / clusters);
  };
  if (waves(256, clusters256) < 8) return cluster_tile::coop_128x256;
  double const coop_cost = waves(256, clusters256) * (static_cast<double>(nk) + 2.5);
  double const pp192 = waves(192, clusters192) * 0.75 * (static_cast<double>(nk) + 1.0);
  double const pp160 = waves(160, clusters160) * 0.625 * (static_cast<double>(nk) + 1.0);
  if (pp192 <= pp160 && pp192 < 0.98 * coop_cost) return cluster_tile::pingpong_128x192;
  if (pp160 < pp192 && pp160 < 0.98 * coop_cost) return cluster_tile::pingpong_128x160;
  return cluster_tile::coop_128x256;
}

inline char const* cluster_tile_name(cluster_tile t) {
  switch (t) {
    case cluster_tile::coop_128x256: return "cooperative 128x256";
    case cluster_tile::coop_128x128: return "cooperative 128x128";
    case cluster_tile::pingpong_128x192: return "pingpong 128x192";
    case cluster_tile::pingpong_128x160: return "pingpong 128x160";
  }
  return "?";
}

/// Forces rung 6's kernel family for the calls that follow (GPU tests); `automatic` restores
/// the rule. Process-wide, not for concurrent use.
void set_cluster_family(cluster_family k);
cluster_family current_cluster_family();

/// set_cluster_family(k) for the scope's lifetime, then the rule again (the GPU tests,
/// gemm.tc_cluster_kernels).
class cluster_family_scope {
 public:
  explicit cluster_family_scope(cluster_family k) { set_cluster_family(k); }
  ~cluster_family_scope() { set_cluster_family(cluster_family::automatic); }
  cluster_family_scope(cluster_family_scope const&) = delete;
  cluster_family_scope& operator=(cluster_family_scope const&) = delete;
};

/// The kernel rung 6 runs for this problem on the current device (for the ladder's rows).
std::string cluster_kernel_name(bool f16, std::int64_t m, std::int64_t n, std::int64_t k);

}  // namespace memlab::detail::gemm_tc
