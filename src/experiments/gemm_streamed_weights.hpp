#pragma once
// How many copies of a decode GEMM's weights a batched timing rotates through so that every launch
// reads them from DRAM (docs/timing.md, "Streamed weights"). Host code only
// (tests/cpu/test_gemm_streamed_weights.cpp); the copies themselves are gemm_tc_ladder.cu's weight_ring.
#include <algorithm>
#include <cmath>
#include <string>

namespace memlab::experiments::gemm {

/// A point with at most this many rows of A is a decode batch: a few tokens times a weight matrix B.
inline constexpr long long decode_max_m = 128;
/// Copies are cheap (a device-to-device copy each), but a B of a few KiB would ask for thousands.
inline constexpr int max_weight_copies = 64;

/// 1 unless the point is a decode batch whose B (`b_bytes`) is smaller than twice the L2; then
/// enough copies that the others read between two uses of one are at least twice the L2 (5 for
/// a 32 MiB B on a 50 MiB L2), at most max_weight_copies.
inline int weight_copies(long long m, double b_bytes, double l2_bytes) {
  if (m > decode_max_m || !(b_bytes > 0.0) || !(l2_bytes > 0.0) || b_bytes >= 2.0 * l2_bytes) return 1;
  double const others = std::ceil(2.0 * l2_bytes / b_bytes);
  return static_cast<int>(std::min(others + 1.0, static_cast<double>(max_weight_copies)));
}

/// What a batched launch of such a point finds in L2, for its row's timing.cache.
inline std::string streamed_weights_text(int copies, double b_bytes, double l2_bytes) {
  double const others = (copies - 1) * b_bytes;
  return "weights streamed: launches back to back, each on the next of " + std::to_string(copies) +
         " copies of B, " + std::to_string(static_cast<long long>(std::llround(others / 1048576.0))) +
         " MiB of other copies read between two uses of one against an L2 of " +
         std::to_string(static_cast<long long>(std::llround(l2_bytes / 1048576.0))) +
         " MiB" + (others >= 2.0 * l2_bytes ? ", so B comes from DRAM" : " (fewer than twice the L2: B may partly stay there)") +
         "; A and C stay in L2";
}

}  // namespace memlab::experiments::gemm
