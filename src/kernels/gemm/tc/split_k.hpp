#pragma once
// Rung 5's split-K rule (04_warp_specialized.cu) and rung 2's (02_mma_sync.cu), host code only
// (tests/cpu/test_gemm_tc_select.cpp).
#include <algorithm>
#include <cstdint>

#include "kernels/gemm/tc/forced_scope.hpp"

namespace memlab::detail::gemm_tc {

/// How many CTAs of a cluster share each 128 x 128 tile's k-blocks: 1 (no split) unless the
/// tiles fill at most half the SMs. Then the largest S of 8, 4, 2 such that every CTA keeps at
/// least 4 k-blocks (a pipeline's worth), tiles x S blocks fit the SMs, and the device runs all
/// `tiles` clusters of S at once (`max_clusters(S)`: one wave, never a second one for a few
/// clusters).
template <class MaxClusters>
unsigned split_k_splits(std::int64_t tiles, int k_blocks, int sm_count, MaxClusters&& max_clusters) {
  if (tiles < 1 || 2 * tiles > sm_count) return 1;
  for (unsigned s : {8u, 4u, 2u})
    if (k_blocks >= 4 * static_cast<int>(s) && tiles * s <= static_cast<std::int64_t>(sm_count) &&
        tiles <= max_clusters(s))
      return s;
  return 1;
}

/// Whether rung 5's persistent grid (no split) runs an m x n problem in 128 x 256 tiles: where they
/// make two waves at least or whole waves; else 128 x 128 (twice the tiles, so the last wave idles
/// fewer SMs).
inline bool persistent_wide_tiles(std::int64_t m, std::int64_t n, int sm_count) {
  std::int64_t const tiles256 = ((m + 127) / 128) * ((n + 255) / 256);
  return tiles256 >= 2 * static_cast<std::int64_t>(sm_count) || tiles256 % std::max(sm_count, 1) == 0;
}

/// Rung 5's grids (04_warp_specialized.cu): persistent over 128 x 256, 128 x 128, 128 x 112 or 128 x 96
/// tiles (the last two for one row of tiles, m <= 128), or, where
/// the 128 x 128 tiles fill at most half the SMs, one 64 x 64, 128 x 64, 64 x 96 or 64 x 128 tile a CTA or
/// split-K inside a cluster on 128 x 64, 128 x 128 or 64 x 64 tiles.
enum class persistent_grid : int {
  tiles_128x256, tiles_128x128, tiles_64x64, split_128x64, tiles_128x64, split_128x128, split_64x64, tiles_64x128,
  tiles_64x96, tiles_128x96, tiles_128x112
};

struct persistent_plan {
  persistent_grid grid = persistent_grid::tiles_128x256;
  unsigned splits = 1;  ///< CTAs a tile (the split grids)
};

/// The most k-blocks a tile for which 128 x 64 tiles a CTA (one wave, no split) run instead of the
/// 128 x 128 split in two: 7-40% less time up to 64 (k = 768-4096), 7% more at 128 (1024x1024x8192,
/// where each CTA reads 1.5x the split's bytes through L2: 24 KB a k-block against 32 KB every other
/// one); H100, BF16, docs/tc-gemm.md, "Session 31".
constexpr int one_tile_128x64_max_kblocks = 64;

/// The fewest k-blocks for which one row of tiles takes 128 x 96 or 128 x 112 tiles (plan_persistent):
/// the measured decode batches have 32 (FP8 at k = 4096) to 128; shorter k keeps 128 x 128.
constexpr int narrow_tiles_min_kblocks = 32;

/// Rung 5's grid for an m x n problem of `nk` k-blocks (launch_persistent runs it; the records name
/// it). `max_clusters(bn, s)`: how many clusters of s split-K CTAs on 128 x bn tiles the device
/// runs at once (split_k_splits).
///  - Where split_k_splits splits the 128 x 128 tiles: 64 x 64 tiles, a CTA each with the whole k
///    and no reduction, where they make one wave over more than half the SMs (128 x 4096 x 4096 on
///    the H100: 12.2 us, against 13.7 for the 128 x 64 split and 18.0 for 64 x 128 tiles split in two;
///    docs/tc-gemm.md, "Decode batches"); else 128 x 64 tiles split where they still leave SMs for a
///    split (twice the tiles, so half the split and twice the k-blocks a CTA: 13.7 us there against
///    18.3 for 128 x 128 tiles split in four), or 64 x 64 tiles split where those run more CTAs than
///    that (256x1024x4096 on the H100, which holds fewer than 32 clusters of four: 128 CTAs against
///    64, 10.6 against 12.0 us; docs/tc-gemm.md, "Session 32"; a tie keeps 128 x 64, as at the decode
///    batches); else 128 x 64 tiles a CTA where they make one wave
///    and k is not long (one_tile_128x64_max_kblocks), but for a decode batch (m <= 128, B K-major)
///    whose 64 x 96 tiles make one wave and are more: those (session 40, H200: 128x6144x4096 96
///    CTAs -> 128, 4% less time in BF16 and FP16; FP8 128x5120x5120 80 -> 108, 13% less; FP8
///    128x6144x4096 4% less); else 64 x 128 tiles a CTA (one consumer
///    warpgroup, the whole k, no reduction) where they make one wave over more than half the SMs;
///    else the 128 x 128 split. 64 x 128 against the split it replaced (session 37, BF16 and FP16,
///    docs/tc-gemm.md): 128x5120x8192 11-14% less time, 128x6144x8192 9-11%, 256x3072x8192 13-17%,
///    128x8192x8192 2-5%, 128x8192x16384 1-4%, 1024x1024x8192 1-4% on the H100 and the H200; at
///    128x8192x28672 (448 MiB of B from DRAM) 2-3% less on the H200, 0-0.8% more on the H100, as
///    cuBLAS's own pick there (128 x 64 tiles in its column-major terms). It reads 1.5x the split's
///    bytes through L2 (24 KB a k-block against 32 KB every other one), which k <= 64 k-blocks does
///    not repay: 128 x 64 tiles a CTA stay faster there (128x8192x4096: 27.6 against 28.5 us, H100).
///    64 x 96 tiles a CTA (session 38) take the place of 64 x 128 where they too make one wave over
///    more than half the SMs and are more tiles: cuBLAS's own layout at 128x5120x8192 and
///    128x6144x8192 (96 x 64 in its column-major terms, 108 and 128 CTAs where 64 x 128 runs 80 and
///    96), which the 64 x 128 grid ran at 0.79-0.95 of it. Not where B is stored k x n (`b_kn`):
///    its MN-major boxes are 64 columns wide, so 64 x 128 tiles stay.
///  - Else persistent, 128 x 256 tiles where persistent_wide_tiles. Else, with one row of tiles (m <=
///    128, B K-major, at least narrow_tiles_min_kblocks) whose 128 x 128 tiles fill more than half the
///    SMs, 128 x 96 or 128 x 112 tiles where they take fewer waves times tile width than 128 x 128
///    (ties keep the wider): the same bytes of B spread over more SMs in one wave (128x11008x4096: 115
///    CTAs against 86), or whole waves where 128 x 128 leaves the second part empty (128x28672x8192:
///    256 tiles of 128 x 112, 1.94 waves, against 224 of 128 x 128, 1.70). Measured on the H200
///    (session 39, BF16, docs/tc-gemm.md), time against 128 x 128: 128x11008x4096 0.954 (128 x 96),
///    128x12288x4096 0.944, 128x10240x8192 0.912, 128x14336x4096 0.963 (128 x 112), 128x13824x5120
///    level (128 x 112), 128x28672x8192 0.957 (128 x 112); where both narrower widths need another wave
///    (128x15360x5120) they ran 1.3-1.5x slower, and 128 x 128 stays.
///  - Else persistent 128 x 128.
template <class MaxClusters>
persistent_plan plan_persistent(std::int64_t m, std::int64_t n, int nk, int sm_count, MaxClusters&& max_clusters,
                                bool b_kn = false) {
  std::int64_t const tiles_m = (m + 127) / 128;
  if (unsigned const splits = split_k_splits(tiles_m * ((n + 127) / 128), nk, sm_count, [&](unsigned s) { return max_clusters(128, s); });
      splits > 1) {
    std::int64_t const tiles_64x64 = ((m + 63) / 64) * ((n + 63) / 64);
    if (2 * tiles_64x64 > sm_count && tiles_64x64 <= sm_count) return {persistent_grid::tiles_64x64, 1};
    std::int64_t const tiles_128x64 = tiles_m * ((n + 63) / 64);
    unsigned const s64 = split_k_splits(tiles_128x64, nk, sm_count, [&](unsigned s) { return max_clusters(64, s); });
    if (unsigned const s6464 = split_k_splits(tiles_64x64, nk, sm_count, [&](unsigned s) { return max_clusters(64, s); });
        s6464 > 1 && tiles_64x64 * s6464 > tiles_128x64 * s64)
      return {persistent_grid::split_64x64, s6464};
    if (s64 > 1) return {persistent_grid::split_128x64, s64};
    std::int64_t const tiles_64x96 = ((m + 63) / 64) * ((n + 95) / 96);
    if (nk <= one_tile_128x64_max_kblocks && tiles_128x64 <= sm_count) {
      // A decode batch (one row of 128-row tiles) whose 64 x 96 tiles make one wave and are more:
      // those, so that more SMs read B (session 40).
      if (tiles_m == 1 && !b_kn && tiles_64x96 <= sm_count && tiles_64x96 > tiles_128x64)
        return {persistent_grid::tiles_64x96, 1};
      return {persistent_grid::tiles_128x64, 1};
    }
    // 64 x 96 where its tiles still make one wave and are more than 64 x 128's: more SMs read B.
    std::int64_t const tiles_64x128 = ((m + 63) / 64) * ((n + 127) / 128);
    if (!b_kn && 2 * tiles_64x96 > sm_count && tiles_64x96 <= sm_count && tiles_64x96 > tiles_64x128)
      return {persistent_grid::tiles_64x96, 1};
    if (2 * tiles_64x128 > sm_count && tiles_64x128 <= sm_count) return {persistent_grid::tiles_64x128, 1};
    return {persistent_grid::split_128x128, splits};
  }
  if (persistent_wide_tiles(m, n, sm_count)) return {persistent_grid::tiles_128x256, 1};
  // One row of tiles (m <= 128, a decode batch) over more than half the SMs: the tile width of the
  // fewest waves times width (session 39).
  if (int const sms = std::max(sm_count, 1);
      tiles_m == 1 && !b_kn && nk >= narrow_tiles_min_kblocks && 2 * ((n + 127) / 128) > sms) {
    auto cost = [&](int bn) { return ((n + bn - 1) / bn + sms - 1) / sms * bn; };
    if (cost(96) < cost(112) && cost(96) < cost(128)) return {persistent_grid::tiles_128x96, 1};
    if (cost(112) < cost(128)) return {persistent_grid::tiles_128x112, 1};
  }
  return {persistent_grid::tiles_128x128, 1};
}

/// Whether `automatic` runs a problem with m > 128 on rung 5 rather than rung 6: where rung 5's plan
/// (plan_persistent) takes one of its few-tile grids and the tiles have enough k-blocks (`nk`) for
/// that grid to run faster than rung 6's cooperative 128 x 128 kernel, one tile a CTA with the whole k.
/// Measured (29 shapes with 4-64 tiles of 128 x 128, BF16 and FP16, H100 and H200; docs/tc-gemm.md,
/// "Session 31"), time against rung 6's:
///  - 64 x 64 tiles a CTA, the whole k: 0.49-0.58 with 16-64 k-blocks (k = 1024-4096);
///  - the 128 x 64 split (in two on both cards): 0.75-0.79 with 16 k-blocks, 0.50-0.63 with 32-64;
///    level (H100) or 0.93 (H200) with 8 (512^3);
///  - 128 x 64 tiles a CTA (H100): 0.77-0.86 with 12-24 k-blocks, 0.76-0.78 with 32, 0.67-0.76 with
///    64 (768^3, 1024^3, 256x4096x{1024,2048,4096}, 1024x1024x{1536,2048,4096}, ...);
///  - the 128 x 128 split in two (now only past 64 k-blocks): 1.06-1.19 with 16 k-blocks and 24
///    (H100; level on the H200), level (H100) or 0.88 (H200) with 32, 0.74-0.92 with 48-64,
///    0.68-0.78 with 128;
///  - 64 x 128 tiles a CTA (session 37; only past 64 k-blocks, where it replaced the 128 x 128 split):
///    0.84-0.97 of the split's time at 1024x1024x8192 and 256x3072x8192 (128 k-blocks), so at least
///    the split's count;
///  - 64 x 96 tiles a CTA (session 38): where it replaces 64 x 128 (more tiles, one wave), 2.8-8% less
///    time than 64 x 128 at 128x{4608,5120,6144}x8192, 256x3072x8192 and longer k (H100), so 64 x
///    128's count;
///  - the 64 x 64 split in two (session 32, H100: 256x1024x{1024,2048,4096}, where the 128 x 64
///    split ran in two): 0.75, 0.56 and 0.44 of rung 6's cooperative 128 x 128 kernel with 16, 32 and
///    64 k-blocks, 0.86-0.88 of its own 128 x 64 split's time; 0.93 at 512^3 (8 k-blocks), where rung
///    6's 128 x 64 pairs (cluster_pick) ran faster still.
/// Fewer k-blocks than were measured winning or level keep rung 6, as does rung 5's persistent grid.
/// The count is the tile's, not a CTA's: gemm_tc_select asks plan_persistent without the device's
/// cluster occupancy, which may halve the split (the H100 and the H200 ran the 128 x 64 split in two
/// where the plan without it says four). The 128 x 128 split arises only with 34-66 such tiles on
/// 132 SMs, so in two.
struct few_tile_min_kblocks {
  static constexpr int tiles_64x64 = 16, split_128x64 = 16, tiles_128x64 = 12, split_128x128 = 32, split_64x64 = 16,
                       tiles_64x128 = 32, tiles_64x96 = 32;
};
inline bool persistent_takes_few_tiles(persistent_plan const& plan, int nk) {
  switch (plan.grid) {
    case persistent_grid::tiles_64x64: return nk >= few_tile_min_kblocks::tiles_64x64;
    case persistent_grid::split_128x64: return nk >= few_tile_min_kblocks::split_128x64;
    case persistent_grid::tiles_128x64: return nk >= few_tile_min_kblocks::tiles_128x64;
    case persistent_grid::split_128x128: return nk >= few_tile_min_kblocks::split_128x128;
    case persistent_grid::split_64x64: return nk >= few_tile_min_kblocks::split_64x64;
    case persistent_grid::tiles_64x128: return nk >= few_tile_min_kblocks::tiles_64x128;
    case persistent_grid::tiles_64x96: return nk >= few_tile_min_kblocks::tiles_64x96;
    default: return false;
  }
}

/// Rung 2's most splits: 16 partial tiles of 64 KB each a tile.
constexpr unsigned mma_sync_max_splits = 16;

/// Rung 2's partials may take this many bytes per flop of its tiles (2.5 per 1000): beyond it their
/// round trip through L2 costs more than about a third of the tiles' compute at rung 2's rate.
constexpr double mma_sync_partial_bytes_per_flop = 2.5e-3;

/// How many ways rung 2 (mma.sync, the default below sm_90a) splits K: 1 unless its 128 x 128
/// tiles fill at most half of `slots` (SMs x the blocks an SM holds at once); then as many
/// splits as one wave of slots takes, each keeping at least 8 k slices (two pipelines' worth),
/// at most mma_sync_max_splits, halved while the partials (`partial_bytes` a split: m x n x 4)
/// exceed mma_sync_partial_bytes_per_flop of the tiles' flops (`tile_flops`: tiles x 128 x 128
/// x 2k). A decode batch (m = 128, n = 4096: 32 tiles) otherwise runs on a quarter of an H100's
/// SMs, on a third of an A100's; and at 8 splits its 16 MB of partials made it 12% slower than
/// at 4 (docs/tc-gemm.md, "Session 21").
inline unsigned mma_sync_splits(std::int64_t tiles, int slices, int slots, double partial_bytes = 0.0,
                                double tile_flops = 0.0) {
  if (tiles < 1 || 2 * tiles > slots) return 1;
  std::int64_t s = std::min<std::int64_t>({slots / tiles, slices / 8, mma_sync_max_splits});
  while (s > 1 && static_cast<double>(s) * partial_bytes > mma_sync_partial_bytes_per_flop * tile_flops) s /= 2;
  return s > 1 ? static_cast<unsigned>(s) : 1u;
}

/// Forces rung 2's split count for the calls that follow (1..mma_sync_max_splits; 0 restores
/// the rule): gemm.tc_split_k's forced rows. Process-wide, not for concurrent use.
void set_mma_sync_splits(int splits);
int forced_mma_sync_splits();

/// Runs rung 2's FP16 calls on its Turing kernel (sm_75: register-staged loads, mma.sync m16n8k8)
/// on any device, for the calls that follow; false restores the choice by device and image. For
/// tests. Process-wide, not for concurrent use.
void set_mma_sync_turing(bool on);
bool forced_mma_sync_turing();

/// Which kernel of rung 2 a grid runs on the current device: its stages and the blocks of it an SM
/// holds. The rule takes the deepest candidate (the one-pass grid: one_pass_stages, 4, 3; the split
/// grid: split_stages, 4) that an SM holds as many of as the shallowest, up to 2: on sm_80 and
/// sm_90 the deepest; on sm_86/89 (100 KB an SM) the one-pass grid's 3 stages at two blocks, the
/// split grid's 5 at one. FP16 below sm_80 runs the Turing kernel: 2 stages.
struct mma_sync_pick {
  int stages = 0;
  int blocks = 0;
  int bn = 128;  ///< the tile's columns: 128, or 256 for the one-pass grid's wide kernel (mma_sync_takes_wide)
};

/// That rule on the blocks an SM holds of each candidate (0: it does not fit the device): `deep`
/// stages (5, or 4 for FP8), 4 and 3; `shallowest` is 3 for the one-pass grid and 4 for the split
/// grid, whose short blocks stream their k range from DRAM and need the depth. Returns the stages:
/// the deepest that an SM holds as many blocks of as the shallowest does, up to 2; 3 where nothing
/// deeper fits at all.
inline int mma_sync_depth(int deep, int deep_blocks, int blocks4, int blocks3, int shallowest) {
  int const want = std::min(2, shallowest == 4 ? blocks4 : blocks3);
  if (deep_blocks > 0 && deep_blocks >= want) return deep;
  if (blocks4 > 0 && (blocks4 >= want || shallowest == 4)) return 4;
  return 3;
}
template <class In>
mma_sync_pick mma_sync_kernel_pick(bool split_grid);

/// Forces the stages of rung 2's kernel (sm_80+) for the calls that follow: 3 or 4 (the loop that
/// refills after the barrier), 5 (the one-pass grid's early refill for BF16 and FP16, the split
/// grid's 5 stages); 0 restores the rule (the deepest kernel an SM holds two of). A count the grid
/// has no kernel for (5 for FP8), or whose kernel the device cannot hold, leaves the rule's pick.
/// For tests and gemm.tc_stages' forced rows. Process-wide, not for concurrent use.
void set_mma_sync_stages(int stages);
int forced_mma_sync_stages();

/// The shortest k at which rung 2's one-pass grid takes its wide kernel: 128 x 256 tiles, eight
/// warps of 64 x 64 in one block an SM, 5 stages of 24 KB (120 KB) refilled early. A quarter fewer
/// bytes a flop from L2 than two blocks of 128 x 128, and so less power: at the power cap, each
/// kernel timed at its own clock (pairs in blocks), 5-7% faster at 4096^3, 6144^3 and 2048x8192x8192
/// on the H100, 3-6% at 16384x4096x4096, 1-3% at 8192^3, level at 4096x11008x4096; below this k a
/// tile's fill and drain, which no second block covers, outweigh it (k = 1024: 2.5% slower).
/// docs/tc-gemm.md, "Session 35" (and "Session 29", where launch-by-launch pairing hid the gain).
inline constexpr std::int64_t mma_sync_wide_min_k = 2048;

/// Whether the one-pass grid takes the wide kernel: an SM holds as many warps of it (`wide_warps`:
/// 8 a block, 0 where its 120 KB do not fit, as on sm_86/89's 100 KB) as of the 128 x 128 kernel
/// the depth rule picked (`narrow_warps`: 4 a block), and k is at least mma_sync_wide_min_k.
inline bool mma_sync_takes_wide(std::int64_t k, int wide_warps, int narrow_warps) {
  return wide_warps > 0 && wide_warps >= narrow_warps && k >= mma_sync_wide_min_k;
}

/// Forces the columns of the one-pass grid's tiles for the calls that follow (16-bit inputs on
/// sm_80+): 128, or 256 (the wide kernel, where the device holds it); 0 restores the rule
/// (mma_sync_takes_wide). The split grid and FP8 keep 128. For tests and gemm.tc_wide's forced
/// rows. Process-wide, not for concurrent use.
void set_mma_sync_tile_n(int bn);
int forced_mma_sync_tile_n();

/// Rung 2's overrides held for a scope (forced_scope.hpp).
using mma_sync_splits_scope = forced_scope<int, set_mma_sync_splits, 0>;
using mma_sync_stages_scope = forced_scope<int, set_mma_sync_stages, 0>;
using mma_sync_tile_n_scope = forced_scope<int, set_mma_sync_tile_n, 0>;
/// The Turing kernel for the scope's lifetime.
class mma_sync_turing_scope : forced_scope<bool, set_mma_sync_turing, false> {
 public:
  mma_sync_turing_scope() : forced_scope(true) {}
};

}  // namespace memlab::detail::gemm_tc
