#pragma once
// Rung 5's split-K rule (04_warp_specialized.cu), host code only
// (tests/cpu/test_gemm_tc_select.cpp).
#include <cstdint>

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

}  // namespace memlab::detail::gemm_tc
