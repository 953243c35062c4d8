#pragma once
// How far the tensor-core GEMM may sit from an exact (double or FP32-accumulated) reference,
// for inputs drawn uniformly from [-1, 1) (the tests' and gemm.tc_ladder's): |ours - ref| <=
// abs + unit(out) |ref|. docs/tc-gemm.md, "Verification" and "FP8".
#include <cmath>
#include <cstdint>

namespace memlab::detail::gemm_tc {

/// BF16/FP16 inputs: the products are exact in FP32; what differs is the order of the FP32
/// additions and the tensor cores' own alignment of the products, a few units of 2^-24 of
/// the partial sums per step: (k + 1) 2^-18 covers it with room.
inline double abs_tolerance_16bit(std::int64_t k) { return static_cast<double>(k + 1) * 0x1p-18; }

/// FP8 (E4M3) inputs: the products are exact too, but Hopper's FP8 wgmma adds each k32 slice
/// into the FP32 accumulators keeping about 13 bits below the largest term's exponent (the
/// "fast accumulation" cublasLt also offers): each of the k / 32 steps may drop up to 2^-13 of
/// the accumulator's size. A partial sum of products of uniform [-1, 1) values has standard
/// deviation sqrt(k) / 3; 4 of those (+1) bound the accumulator over millions of elements.
/// A bound, not the typical error: the runs record the largest |error| / tolerance they saw.
/// What it still catches: a k-block (128 products) left out of a sum moves that element by
/// about sqrt(128) / 3 = 3.8 (one standard deviation), 2.8x the bound at k = 4096; a wrong tile,
/// row or sign moves it by the whole sum.
inline double abs_tolerance_e4m3(std::int64_t k) {
  double const kd = static_cast<double>(k);
  return (kd / 32.0 + 1.0) * 0x1p-13 * (4.0 * std::sqrt(kd) / 3.0 + 1.0);
}

}  // namespace memlab::detail::gemm_tc
