#pragma once
// Rung 6's choice between its kernels (05_cluster.cu), host code only
// (tests/cpu/test_gemm_tc_select.cpp; the measurements behind the constants are in
// docs/tc-gemm.md, "Session 13: pingpong").
#include <cstdint>
#include <iterator>
#include <string>
#include <tuple>

#include "kernels/gemm/tc/forced_scope.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {

/// Rung 6's kernels, all in 2-CTA clusters: pairs along M sharing B by multicast, but for
/// 256 x 152, whose pairs run along N sharing A.
enum class cluster_tile : int {
  coop_128x256,      ///< cooperative: both consumer warpgroups share a 128 x 256 tile (64 x 256 each)
  coop_128x128,      ///< the same on 128 x 128 tiles, where they take fewer waves (cluster_coop_tile)
  coop_256x152,      ///< cooperative on 256 x 152 tiles (128 x 152 each), pairs along N sharing A: whole waves
                     ///< where 128 x 256 leaves a part
  pingpong_128x192,  ///< each consumer warpgroup owns whole 128 x 192 tiles; their k-loops alternate
  pingpong_128x160,  ///< the same on 128 x 160 tiles, where those make fuller waves
  /// The pingpong kernels on the swapped problem (C^T = B^T A^T): 192 x 128 and 160 x 128 tiles
  /// of C, whose waves come out fuller where m divides by 192 or 160 more nearly than n does
  /// (16384x4096x4096). They store C only through TMA (transposed in shared memory).
  pingpong_192x128_swapped,
  pingpong_160x128_swapped,
  /// Pingpong on 128 x 176 and 128 x 144 tiles (unswapped only: their 16 columns beyond whole
  /// 32-row boxes would need a tail box in the transposed store), for widths between the others.
  pingpong_128x176,
  pingpong_128x144,
  /// Cooperative on 128 x 64 tiles, pairs along N sharing A (each CTA loads 64 of its 128 rows): for
  /// one wave of few tiles (cluster_pick). It reads 16 KB a k-block through L2 against 24 for rung 5's
  /// 128 x 64 tiles a CTA, yet runs slower than those (docs/tc-gemm.md, "Session 32").
  coop_128x64,
};

/// Which of rung 6's kernels may run: the rule's choice, or one family forced (GPU tests,
/// gemm.tc_cluster_kernels, whose variants are the names below). The swapped pingpong families
/// run their unswapped kernel where C does not take the TMA store (beta != 0, C unaligned).
/// `cooperative` is the cooperative kernel at the tile cluster_coop_tile gives (128 x 256 or
/// 128 x 128); coop128x256 and coop128x128 force one of the two.
enum class cluster_family : int {
  automatic, cooperative, pingpong192, pingpong160, cooperative256, pingpong192s, pingpong160s, pingpong176, pingpong144,
  coop128x256, coop128x128, coop128x64
};
inline constexpr char const* cluster_family_names[] = {"auto",         "cooperative",  "pingpong192",  "pingpong160",
                                                       "cooperative256", "pingpong192s", "pingpong160s", "pingpong176",
                                                       "pingpong144",  "coop128x256",  "coop128x128",  "coop128x64"};
inline char const* cluster_family_name(cluster_family f) { return cluster_family_names[static_cast<int>(f)]; }
inline cluster_family cluster_family_from_name(std::string const& name) {
  for (int i = 0; i < static_cast<int>(std::size(cluster_family_names)); ++i)
    if (name == cluster_family_names[i]) return static_cast<cluster_family>(i);
  throw memlab::error("gemm_tc: no rung-6 kernel family named '" + name + "'");
}

/// How many clusters of each kernel the device runs at once (one wave of cluster tiles).
struct cluster_capacity {
  int coop, pp192, pp160, coop256, pp176, pp144;
  int coop64 = 0;  ///< the cooperative 128 x 64 kernel's; 0: not weighed (FP8, unmeasured)
};

/// The cluster tiles (pairs of bm x bn tiles) over an m x n C, in the two orders of cl_grid
/// (05_cluster.cu): pairs along M (two tile rows of a column; an odd last row pairs with nothing),
/// or row-major pairs that may wrap rows (`in_rows`; an odd count leaves the last tile alone).
/// The launch sizes its grid by it and the rule below counts waves by it.
inline std::int64_t cluster_pairs(std::int64_t m, std::int64_t n, int bm, int bn, bool in_rows) {
  std::int64_t const tiles_m = (m + bm - 1) / bm, tiles_n = (n + bn - 1) / bn;
  return in_rows ? (tiles_m * tiles_n + 1) / 2 : (tiles_m + 1) / 2 * tiles_n;
}

/// Whether C takes rung 6's TMA store epilogue: beta = 0 (C is not read), its base 16-byte
/// aligned, ldc times the element size a multiple of 16. Else the kernels store from registers,
/// and cluster_pick does not weigh pingpong (its `c_tma_store`).
inline bool cluster_c_tma_store(void const* c, std::int64_t ldc, int out_bytes, float beta) {
  return beta == 0.f && reinterpret_cast<std::uintptr_t>(c) % 16 == 0 && (ldc * out_bytes) % 16 == 0;
}

/// How the rows of A and B lie against 128-byte lines (base and row pitch in bytes):
///  - line: every row starts on a line;
///  - sector: every row starts on a 32-byte sector (so a 128-byte TMA box row spans two lines but
///    no more sectors than one on a line: k = 2000 in BF16, rows 4000 bytes apart);
///  - other: rows start at 16-byte steps (k = 1000 or 3000 in BF16, any odd multiple of 16 bytes),
///    and a box row touches 5 sectors.
/// The pingpong kernels ran 7-20% (BF16) and 33-56% (FP8) slower at k = 2000 with 16-byte than
/// with 128-byte pitch, the cooperative ones 1-4% and 11-19% (gemm.tc_row_pitch, session 16).
/// With A and B loaded at 128-byte L2 promotion (session 19) the cooperative kernels are level at
/// either pitch, and pingpong 128x192 loses 2-4% with rows on sectors and 10-12% with rows at
/// 16-byte steps: cluster_pick weighs pingpong with rows on sectors only where it counts well
/// under the rest (`sector_margin`), and not at all with `other`. FP8 rows on sectors count as
/// `other`: their pingpong cost was not measured again.
enum class row_alignment : int { line, sector, other };
inline row_alignment cluster_row_alignment(void const* a, std::int64_t lda_bytes, void const* b, std::int64_t ldb_bytes,
                                           int elem_bytes) {
  auto const on = [&](std::uintptr_t unit) {
    return reinterpret_cast<std::uintptr_t>(a) % unit == 0 && static_cast<std::uintptr_t>(lda_bytes) % unit == 0 &&
           reinterpret_cast<std::uintptr_t>(b) % unit == 0 && static_cast<std::uintptr_t>(ldb_bytes) % unit == 0;
  };
  if (on(128)) return row_alignment::line;
  return on(32) && elem_bytes == 2 ? row_alignment::sector : row_alignment::other;
}

/// The cooperative kernel's tile where its 128 x 256 pairs make fewer than two waves: 128 x 128
/// (twice the pairs, each half the work) where those take fewer than twice the waves, else
/// 128 x 256 (a tie keeps the wider tile). From two waves on, 128 x 256.
/// Until session 20 any partial wave took 128 x 128: forced side by side at 11 few-tile shapes
/// (H100, BF16, paired with cuBLAS), 128 x 256 ran 5-16% faster wherever this count ties
/// (2048^3 25.7 against 28.7 us, 1792^3, 1536^3, 2560^3, 1024x8192x8192, 1024x4096x4096,
/// 3072x1024x2048, 2048x1536x4096) and 128 x 128 12-23% faster where it counts fewer
/// (5120x1024x2048, 2304^3, 2048x3072x4096).
inline cluster_tile cluster_coop_tile(std::int64_t m, std::int64_t n, int clusters) {
  std::int64_t const pairs256 = cluster_pairs(m, n, 128, 256, false);
  if (pairs256 >= 2 * static_cast<std::int64_t>(clusters)) return cluster_tile::coop_128x256;
  auto const waves = [&](std::int64_t pairs) { return (pairs + clusters - 1) / clusters; };
  return waves(cluster_pairs(m, n, 128, 128, false)) < 2 * waves(pairs256) ? cluster_tile::coop_128x128
                                                                           : cluster_tile::coop_128x256;
}

/// Rung 6's kernel for C (m x n) with k: the cheapest by a count of k-block times per cluster,
/// in units of one 128 x 256 k-block (64 deep) on one CTA:
///   cooperative BM x BN: waves x BM BN / (128 x 256) x (k-blocks + 2.5), the 2.5 being the
///     epilogue the tensor cores wait out (both warpgroups store C together);
///   pingpong 128 x BN:   waves x BN / 256 x (k-blocks + 1), a k-block taking its share of
///     a 256-wide one and the epilogue hidden under the other warpgroup's k-loop but one
///     (k-blocks + 2.5 where the pairs fit one wave: one tile a CTA, nothing to hide it under).
///     Swapped (BN x 128 tiles of C, the kernel computing C^T), the same count over n x m.
/// A wave is one tile pair per cluster (`cap`: how many of each kernel the device runs at
/// once; the 256 x 152 tiles pair in row-major order, cl_grid in 05_cluster.cu). Another kernel
/// must win by 2% against the cooperative one (128 x 256, or 128 x 128 below two waves where
/// its pairs take fewer than twice the waves: cluster_coop_tile). One correction, from a measured miss (docs/tc-gemm.md,
/// session 14): the 256 x 152 kernel counts 5% slow (`wide_slowdown`): it measured 5.6% and 7.3%
/// below its count at 3000x5000x2000 and 3072^3, 0.5% at 4097^3.
/// Pingpong only where C takes the TMA store (`c_tma_store`): its k-loops hide a TMA store
/// epilogue, not the register stores of beta != 0 or an unaligned C (4097^3, ldc = 4097: both
/// pingpong kernels measured 1-8% slower than the cooperative one there); and only where the rows
/// of A and B start on 128-byte lines, or on 32-byte sectors where it counts `sector_margin` under
/// the rest (`rows`, cluster_row_alignment above).
/// Session 15's second correction (pingpong 5% slow below 8 of its own waves) was fitted on
/// 3000x5000x2000, whose 4000-byte rows straddle lines; with the line condition in its place the
/// rule's choice over the survey's 27 shapes is as close to the fastest kernel in BF16 (geometric
/// mean 0.998 of it, 26 shapes within 1.5%, with or without it) and closer in FP8 (0.998 and 24
/// against 0.996 and 23), so it is gone (session 16).
constexpr double wide_slowdown = 1.05;

/// The pingpong kernels at 128 x 176 and 128 x 144 (session 18) are weighed only where their
/// pairs make two waves or more and they count 5% under the best other kernel. At nine survey
/// shapes where they counted 1-11% under it (H100, BF16, paired with cuBLAS) they measured +4.6%
/// (2560^3, counted 11%) and +6% (3840^3, 9%), and between -4% and +1.4% where they counted 1-4%
/// (5120^3, 6144^3, 5120x5120x2560, 10240x2560x2048, ...: the paired ratios' run-to-run noise at
/// the power cap); at 1536^3 (one wave) the count promised 11% and the kernel measured 3% slower.
constexpr double narrow_margin = 0.95;

/// With rows on 32-byte sectors but not on lines, a 192-wide pingpong kernel must count 8% under the
/// best other kernel (session 19, H100, BF16, 128-byte L2 promotion: at k = 2000, where straddling
/// costs pingpong 2-4%, it counted 10-16% under the cooperative kernels at 6000x3000x2000 and
/// 5000x6000x2000 and ran 6-7% faster; 4% under at 3000x5000x2000 and ran 4% slower; 5 shapes
/// held out: +3-7% where it took pingpong, within 1.7% of the fastest where it did not).
constexpr double sector_margin = 0.92;

inline cluster_tile cluster_pick(std::int64_t m, std::int64_t n, std::int64_t k, cluster_capacity cap,
                                 cluster_family allowed = cluster_family::automatic, bool c_tma_store = true,
                                 row_alignment rows = row_alignment::line) {
  if (allowed == cluster_family::pingpong192) return cluster_tile::pingpong_128x192;
  if (allowed == cluster_family::pingpong160) return cluster_tile::pingpong_128x160;
  if (allowed == cluster_family::cooperative256) return cluster_tile::coop_256x152;
  if (allowed == cluster_family::pingpong192s)
    return c_tma_store ? cluster_tile::pingpong_192x128_swapped : cluster_tile::pingpong_128x192;
  if (allowed == cluster_family::pingpong160s)
    return c_tma_store ? cluster_tile::pingpong_160x128_swapped : cluster_tile::pingpong_128x160;
  if (allowed == cluster_family::pingpong176) return cluster_tile::pingpong_128x176;
  if (allowed == cluster_family::pingpong144) return cluster_tile::pingpong_128x144;
  if (allowed == cluster_family::coop128x256) return cluster_tile::coop_128x256;
  if (allowed == cluster_family::coop128x128) return cluster_tile::coop_128x128;
  if (allowed == cluster_family::coop128x64) return cluster_tile::coop_128x64;
  cluster_tile const coop = cluster_coop_tile(m, n, cap.coop);
  if (allowed == cluster_family::cooperative) return coop;
  // Where the 128 x 64 pairs (along N, sharing A) fit one wave, each CTA has one tile, and the
  // kernel on half the tile ran faster than the cooperative 128 x 128 (the rule's pick at each) and
  // 128 x 256 kernels at all 28 such shapes measured (256^3 .. 1024x1024x8192, 4-128 k-blocks:
  // 0.80-0.98 of the faster one's time; H100, BF16 and FP16; docs/tc-gemm.md, "Session 32").
  if (cap.coop64 > 0 && cluster_pairs(m, n, 128, 64, true) <= cap.coop64) return cluster_tile::coop_128x64;
  double const nk = static_cast<double>((k + 63) / 64);
  // The pairs of bm x bn tiles over C, or over C^T for a swapped kernel, and their waves.
  auto const pairs = [&](int bm, int bn, bool in_rows = false, bool swap = false) {
    return swap ? cluster_pairs(n, m, bm, bn, in_rows) : cluster_pairs(m, n, bm, bn, in_rows);
  };
  auto const waves = [&](int bm, int bn, int clusters, bool in_rows = false, bool swap = false) {
    return static_cast<double>((pairs(bm, bn, in_rows, swap) + clusters - 1) / clusters);
  };
  double const coop_cost = coop == cluster_tile::coop_128x256 ? waves(128, 256, cap.coop) * (nk + 2.5)
                                                              : waves(128, 128, cap.coop) * 0.5 * (nk + 2.5);
  cluster_tile best = coop;
  double best_cost = 0.98 * coop_cost;
  auto const consider = [&](cluster_tile t, double cost) {
    if (cost < best_cost) {
      best = t;
      best_cost = cost;
    }
  };
  consider(cluster_tile::coop_256x152,
           wide_slowdown * waves(256, 152, cap.coop256, true) * (256.0 * 152 / (128 * 256)) * (nk + 2.5));
  if (c_tma_store && rows != row_alignment::other) {
    // Rows on sectors, not lines: pingpong must win by `sector_margin`, as any kernel must win
    // against the cooperative one by 2%.
    if (rows == row_alignment::sector) best_cost *= sector_margin;
    // Where the pairs fit one wave each CTA has one tile: no second warpgroup's k-loop hides the
    // epilogue, which then counts as the cooperative kernel's does (256^3: pingpong 128 x 160 5.5 us
    // against 4.4 for the cooperative 128 x 128 kernel, which the count had 4% behind; 1536^3, one
    // wave at 24 k-blocks, still takes pingpong, 15.1 against 18.6 us; docs/tc-gemm.md, "Session 31").
    auto const pingpong = [&](int bn, int clusters, bool swap) {
      double const epilogue = pairs(128, bn, false, swap) <= clusters ? 2.5 : 1.0;
      return waves(128, bn, clusters, false, swap) * (bn / 256.0) * (nk + epilogue);
    };
    // With rows on sectors only the 192-wide kernels: at 12 k = 2000-class shapes with 16-byte
    // pitch 128x160 ran 3-10% below 128x192 (session 19; 20-25% below its count in session 16).
    bool const all_widths = rows == row_alignment::line;
    consider(cluster_tile::pingpong_128x192, pingpong(192, cap.pp192, false));
    if (all_widths) consider(cluster_tile::pingpong_128x160, pingpong(160, cap.pp160, false));
    // The same kernels swapped (their capacity is the unswapped one's: same shared memory and
    // threads). They must count less, or the same over at least 2% fewer pairs: the same waves
    // with less of their tiles past C's edge, so less work at the power cap (12288x2048x4096: 512
    // pairs of 192 x 128 against 528 of 128 x 192, both 8 waves: 3.8-3.9% faster in two survey runs,
    // 0.4-0.5% in two more; 6144x4096x2048, the same pairs: -0.2% to +0.8%). Else a tie (every
    // square) keeps the unswapped kernel.
    for (auto [t, u, bn, clusters] : {std::tuple{cluster_tile::pingpong_192x128_swapped, cluster_tile::pingpong_128x192, 192, cap.pp192},
                                      std::tuple{cluster_tile::pingpong_160x128_swapped, cluster_tile::pingpong_128x160, 160, cap.pp160}}) {
      if (bn != 192 && !all_widths) continue;
      double const cost = pingpong(bn, clusters, true);
      bool const fewer_pairs = pairs(128, bn, false, true) <= 0.98 * pairs(128, bn);
      if (best == u && cost == best_cost && fewer_pairs) best = t;
      else consider(t, cost);
    }
    // 128 x 176 and 128 x 144 only where their pairs make two waves or more and they count 5%
    // under the best of the rest (`narrow_margin`).
    for (auto [t, bn, clusters] : {std::tuple{cluster_tile::pingpong_128x176, 176, cap.pp176},
                                   std::tuple{cluster_tile::pingpong_128x144, 144, cap.pp144}}) {
      if (!all_widths || waves(128, bn, clusters) < 2) continue;
      double const cost = pingpong(bn, clusters, false);
      if (cost < narrow_margin * best_cost) {
        best = t;
        best_cost = cost;
      }
    }
  }
  return best;
}

/// Rung 6's kernel for a B stored k x n or an A stored k x m (BF16, FP16), which only the cooperative
/// 128-row kernels sharing B read as they are (their halves of B are whole boxes of 64 columns, their
/// A tiles two of 64 rows; docs/tc-gemm.md, "Session 30"): 128 x 256 or 128 x 128 as
/// cluster_coop_tile gives them, or as forced (`allowed`: coop128x256, coop128x128). Any other
/// family forced runs the cooperative kernel too.
inline cluster_tile cluster_pick_mn(std::int64_t m, std::int64_t n, int coop_clusters,
                                    cluster_family allowed = cluster_family::automatic) {
  if (allowed == cluster_family::coop128x256) return cluster_tile::coop_128x256;
  if (allowed == cluster_family::coop128x128) return cluster_tile::coop_128x128;
  return cluster_coop_tile(m, n, coop_clusters);
}

/// Stream-K for the cooperative 128-row kernels (05_cluster.cu, sk_args): the rule's choice, or
/// forced off or on (GPU tests, gemm.tc_stream_k).
enum class cluster_stream_k_mode : int { automatic, off, on };

/// Stream-K pays where the partial wave leaves clusters idle for at least this many k-blocks
/// each, averaged over the clusters: balancing saves that much a cluster's time, and the split
/// costs the slowest bin about 18 k-blocks on the H200 (docs/tc-gemm.md, "Session 28": a second
/// pipeline fill, a partial's 128 KB written, up to two read back by a finisher). Measured, split
/// against whole, paired with cuBLAS: +5% at 4097^3 (40 k-blocks idle a cluster), +1% at 6144^3
/// (26) and 4096x4096x14336 (27), level at 16384x4096x4096 (31); -4% at 4096^3 (7.8), -3% at
/// 1024x8192x8192 (7.8), -6% at 3000x4000x3000 (4.3).
constexpr std::int64_t stream_k_min_idle_kblocks = 24;

/// Of `ctiles` cluster tiles on `clusters` clusters with `nk` k-blocks a tile, how many the
/// cooperative kernel walks whole (the first, in its order: the full waves); the partial wave's
/// tiles are split into one equal run of k-blocks a cluster. `ctiles` (none split) where the waves
/// are whole, there is no full wave, the idle k-blocks of the partial wave are fewer than
/// stream_k_min_idle_kblocks a cluster (automatic), or the split k-blocks would not fit an int.
inline std::int64_t cluster_stream_k_dp(std::int64_t ctiles, std::int64_t clusters, std::int64_t nk,
                                        cluster_stream_k_mode mode) {
  std::int64_t const waves = ctiles / clusters, rest = ctiles % clusters;
  if (mode == cluster_stream_k_mode::off || waves < 1 || rest == 0 || nk < 2) return ctiles;
  std::int64_t const dp = waves * clusters;
  if ((ctiles - dp) * nk > 0x7fffffff) return ctiles;
  if (mode == cluster_stream_k_mode::automatic && (clusters - rest) * nk < stream_k_min_idle_kblocks * clusters) return ctiles;
  return dp;
}

inline char const* cluster_tile_name(cluster_tile t) {
  switch (t) {
    case cluster_tile::coop_128x256: return "cooperative 128x256";
    case cluster_tile::coop_128x128: return "cooperative 128x128";
    case cluster_tile::coop_256x152: return "cooperative 256x152";
    case cluster_tile::pingpong_128x192: return "pingpong 128x192";
    case cluster_tile::pingpong_128x160: return "pingpong 128x160";
    case cluster_tile::pingpong_192x128_swapped: return "pingpong 192x128 (swapped)";
    case cluster_tile::pingpong_160x128_swapped: return "pingpong 160x128 (swapped)";
    case cluster_tile::pingpong_128x176: return "pingpong 128x176";
    case cluster_tile::pingpong_128x144: return "pingpong 128x144";
    case cluster_tile::coop_128x64: return "cooperative 128x64 (pairs along N)";
  }
  return "?";
}

/// Forces rung 6's kernel family for the calls that follow (GPU tests); `automatic` restores
/// the rule. Process-wide, not for concurrent use.
void set_cluster_family(cluster_family k);
cluster_family current_cluster_family();

/// Forces stream-K off or on for the calls that follow (GPU tests, gemm.tc_stream_k); `automatic`
/// restores the rule. Process-wide, not for concurrent use.
void set_cluster_stream_k(cluster_stream_k_mode m);
cluster_stream_k_mode current_cluster_stream_k();

/// set_cluster_stream_k(m) for the scope's lifetime, then the rule again.
using cluster_stream_k_scope = forced_scope<cluster_stream_k_mode, set_cluster_stream_k, cluster_stream_k_mode::automatic>;

/// set_cluster_family(k) for the scope's lifetime, then the rule again (the GPU tests,
/// gemm.tc_cluster_kernels).
using cluster_family_scope = forced_scope<cluster_family, set_cluster_family, cluster_family::automatic>;

/// The kernel rung 6 runs for this problem on the current device (for the ladder's rows);
/// `c_tma_store`: cluster_c_tma_store of the call's C; `rows`: cluster_row_alignment of its A and B;
/// `b_kn`, `a_km`: B stored k x n, A stored k x m, read as they are (cluster_pick_mn).
std::string cluster_kernel_name(bool f16, std::int64_t m, std::int64_t n, std::int64_t k, bool c_tma_store,
                                row_alignment rows, bool b_kn = false, bool a_km = false);

}  // namespace memlab::detail::gemm_tc
