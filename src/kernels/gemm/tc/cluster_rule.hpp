#pragma once
// Rung 6's tile width (05_cluster.cu), host code only (tests/cpu/test_gemm_tc_select.cpp).
#include <cstdint>

namespace memlab::detail::gemm_tc {

/// How many columns rung 6's tiles take, 256, 192 or 128, for an m x n problem, given how many
/// clusters of two CTAs the device runs at once with each width. 128 x 256 unless its pairs
/// of tiles leave clusters idle in a last, partial wave (then 128 x 128, twice the pairs);
/// 128 x 192 where it costs at least 4% fewer column-rounds than that choice: rounds (pairs
/// dealt to the clusters, the last one partial) times the tile's width, since a round of a
/// narrower tile is proportionally shorter. 192 is 4 x 48 (k-blocks of 16 KB A + 24 KB B):
/// it moves 7% more bytes per flop than 256, hence the margin.
inline int cluster_tile_n(std::int64_t m, std::int64_t n, std::int64_t clusters256, std::int64_t clusters192,
                          std::int64_t clusters128) {
  if (m < 1 || n < 1 || clusters256 < 1) return 256;
  std::int64_t const pair_rows = (m + 255) / 256;
  auto pairs = [&](std::int64_t width) { return pair_rows * ((n + width - 1) / width); };
  auto cost = [&](std::int64_t width, std::int64_t clusters) {
    return (pairs(width) + clusters - 1) / clusters * width;
  };
  std::int64_t const p256 = pairs(256);
  int const base = (p256 >= 2 * clusters256 || p256 % clusters256 == 0 || clusters128 < 1) ? 256 : 128;
  std::int64_t const base_cost = cost(base, base == 256 ? clusters256 : clusters128);
  if (clusters192 >= 1 && 100 * cost(192, clusters192) <= 96 * base_cost) return 192;
  return base;
}

}  // namespace memlab::detail::gemm_tc
