#pragma once
// Pieces shared by the reduction ladder: the accumulator type, warp and block sums,
// 16-byte vector types.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace memlab::kernels::reduce {

/// What a sum of T accumulates in. int sums accumulate as unsigned so that overflow
/// wraps modulo 2^32 (defined) instead of being undefined signed overflow; the result is
/// the exact sum whenever that fits in an int, in any summation order.
template <class T>
struct accum {
  using type = T;
};
template <>
struct accum<int> {
  using type = unsigned;
};
template <class T>
using accum_t = typename accum<T>::type;

/// Threads per block of every ladder step (8 warps: enough warps per SM at full occupancy).
inline constexpr int block_threads = 256;

template <class A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

/// Sum over the block, valid in thread 0. Registers and shuffles inside each warp, one
/// shared word per warp between them: two __syncthreads-free warp trees and one barrier.
template <int Block, class A>
__device__ __forceinline__ A block_sum(A v) {
  static_assert(Block % 32 == 0 && Block <= 1024, "block must be whole warps");
  __shared__ A warp_partials[Block / 32];
  int const lane = threadIdx.x & 31;
  int const warp = threadIdx.x >> 5;
  v = warp_sum(v);
  if (lane == 0) warp_partials[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < Block / 32 ? warp_partials[lane] : A(0);
    v = warp_sum(v);
  }
  return v;
}

/// The 16-byte vector of T (one LDG.128 per thread per load).
template <class T>
struct vec16;
template <>
struct vec16<float> {
  using type = float4;
};
template <>
struct vec16<double> {
  using type = double2;
};
template <>
struct vec16<int> {
  using type = int4;
};

template <class A>
__device__ __forceinline__ A lane_sum(float4 v) { return A(v.x) + A(v.y) + (A(v.z) + A(v.w)); }
template <class A>
__device__ __forceinline__ A lane_sum(double2 v) { return A(v.x) + A(v.y); }
template <class A>
__device__ __forceinline__ A lane_sum(int4 v) { return A(v.x) + A(v.y) + (A(v.z) + A(v.w)); }

__host__ __device__ constexpr std::size_t ceil_div(std::size_t a, std::size_t b) { return (a + b - 1) / b; }

}  // namespace memlab::kernels::reduce
