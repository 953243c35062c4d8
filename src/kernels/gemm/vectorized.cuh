#pragma once
// The 128x128x8, 8x8-per-thread kernel with 16-byte global loads and A stored transposed
// in shared memory (06), and its bank-conflict-free layout (07). Needs every row of A and
// B to start on a 16-byte boundary (lda, ldb multiples of 4, aligned pointers).
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {

template <bool kConflictFree>
struct vectorized_config {
  static constexpr int bm = 128, bn = 128, bk = 8, threads = 256;
  // 07 pads each transposed A row by 4 floats: the two threads that store one A row
  // (k4 = 0 and k4 = 4) then land 16 banks apart instead of on the same bank.
  static constexpr int pad_a = kConflictFree ? 4 : 0;
  static_assert(bm * bk / 4 == threads && bk * bn / 4 == threads, "one float4 of A and of B per thread");
};

/// Offsets of the two 4-wide halves of a thread's 8 rows (or columns). 06 takes 8
/// consecutive (two LDS.128 eight threads apart land on the same banks: 2-way conflicts
/// on B); 07 takes 4 at t*4 and 4 at 64 + t*4, so a quarter-warp reads 128 contiguous bytes.
template <bool kConflictFree>
__device__ __forceinline__ int half_offset(int t, int h) {
  return kConflictFree ? h * 64 + t * 4 : t * 8 + h * 4;
}

template <bool kConflictFree>
__global__ void __launch_bounds__(256) vectorized_kernel(problem p, int tiles_n, bool c_vec) {
  using cfg = vectorized_config<kConflictFree>;
  constexpr int bm = cfg::bm, bn = cfg::bn, bk = cfg::bk, lda_s = bm + cfg::pad_a;
  __shared__ __align__(16) float as[bk * lda_s];
  __shared__ __align__(16) float bs[bk * bn];
  int const tid = static_cast<int>(threadIdx.x);
  int const tn = static_cast<int>(blockIdx.x) % tiles_n, tm = static_cast<int>(blockIdx.x) / tiles_n;
  int const m0 = tm * bm, n0 = tn * bn;
  int const a_m = tid / 2, a_k = (tid % 2) * 4;
  int const b_k = tid / (bn / 4), b_n = (tid % (bn / 4)) * 4;
  int const trow = tid / 16, tcol = tid % 16;
  float acc[8][8] = {};
  for (int k0 = 0; k0 < p.k; k0 += bk) {
    {
      int const r = m0 + a_m, c = k0 + a_k;
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      float const* src = p.a + static_cast<long long>(r) * p.lda + c;
      if (r < p.m) {
        if (c + 3 < p.k) {
          v = *reinterpret_cast<float4 const*>(src);
        } else {
          if (c < p.k) v.x = src[0];
          if (c + 1 < p.k) v.y = src[1];
          if (c + 2 < p.k) v.z = src[2];
        }
      }
      as[(a_k + 0) * lda_s + a_m] = v.x;
      as[(a_k + 1) * lda_s + a_m] = v.y;
      as[(a_k + 2) * lda_s + a_m] = v.z;
      as[(a_k + 3) * lda_s + a_m] = v.w;
    }
    {
      int const r = k0 + b_k, c = n0 + b_n;
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      float const* src = p.b + static_cast<long long>(r) * p.ldb + c;
      if (r < p.k) {
        if (c + 3 < p.n) {
          v = *reinterpret_cast<float4 const*>(src);
        } else {
          if (c < p.n) v.x = src[0];
          if (c + 1 < p.n) v.y = src[1];
          if (c + 2 < p.n) v.z = src[2];
        }
      }
      *reinterpret_cast<float4*>(&bs[b_k * bn + b_n]) = v;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < bk; ++kk) {
      float a[8], b[8];
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        *reinterpret_cast<float4*>(&a[h * 4]) =
            *reinterpret_cast<float4 const*>(&as[kk * lda_s + half_offset<kConflictFree>(trow, h)]);
        *reinterpret_cast<float4*>(&b[h * 4]) =
            *reinterpret_cast<float4 const*>(&bs[kk * bn + half_offset<kConflictFree>(tcol, h)]);
      }
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    int const r = m0 + half_offset<kConflictFree>(trow, i / 4) + i % 4;
    if (r >= p.m) continue;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      int const c = n0 + half_offset<kConflictFree>(tcol, h);
      float* dst = p.c + static_cast<long long>(r) * p.ldc + c;
      if (c_vec && c + 3 < p.n) {
        float4 v = make_float4(p.alpha * acc[i][h * 4 + 0], p.alpha * acc[i][h * 4 + 1], p.alpha * acc[i][h * 4 + 2],
                               p.alpha * acc[i][h * 4 + 3]);
        if (p.beta != 0.f) {
          float4 const old = *reinterpret_cast<float4 const*>(dst);
          v.x += p.beta * old.x; v.y += p.beta * old.y; v.z += p.beta * old.z; v.w += p.beta * old.w;
        }
        *reinterpret_cast<float4*>(dst) = v;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (c + q < p.n) store_c(p.c, p.ldc, r, c + q, acc[i][h * 4 + q], p.alpha, p.beta);
      }
    }
  }
}

inline bool c_vector_aligned(problem const& p) {
  return p.ldc % 4 == 0 && reinterpret_cast<std::uintptr_t>(p.c) % 16 == 0;
}

template <bool kConflictFree>
void launch_vectorized_impl(problem const& p, cudaStream_t s) {
  int const tm = ceil_div(p.m, 128), tn = ceil_div(p.n, 128);
  vectorized_kernel<kConflictFree><<<static_cast<unsigned>(tm) * tn, 256, 0, s>>>(p, tn, c_vector_aligned(p));
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::detail::gemm
