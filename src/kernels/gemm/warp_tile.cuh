#pragma once
// The warp-tiled core shared by 08 (register-staged loads) and 09 (cp.async pipeline).
//
// Block tile BM x BN x BK; warps tile it WM x WN; inside a warp the 32 lanes form an
// 8 (rows) x 4 (cols) grid and each lane owns MI x NI sub-tiles of 4x4 outputs spaced 32
// rows and 16 columns apart. Per k step a lane loads MI + NI float4 from shared memory and
// does 16*MI*NI FFMAs; the 8 distinct A addresses and 4 distinct B addresses a warp reads
// are contiguous 128- and 64-byte runs (no bank conflicts, the rest are broadcasts).
// A is stored transposed ([k][m], rows padded by 4 floats) so its reads are LDS.128 too.
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MIN_BLOCKS_>
struct warp_tile_config {
  static constexpr int bm = BM_, bn = BN_, bk = BK_, wm = WM_, wn = WN_, stages = STAGES_;
  static constexpr int min_blocks = MIN_BLOCKS_;
  static constexpr int warps_m = bm / wm, warps_n = bn / wn;
  static constexpr int threads = 32 * warps_m * warps_n;
  static constexpr int mi = wm / 32, ni = wn / 16;  // 4x4 sub-tiles per lane
  static constexpr int lda_s = bm + 4;              // transposed A row, padded (see load_a)
  static constexpr int ldb_s = bn;
  static constexpr int a_stage = bk * lda_s, b_stage = bk * ldb_s;
  static constexpr int smem_bytes = stages * (a_stage + b_stage) * 4;
  static constexpr int a_loads = bm * bk / threads;       // 4-byte elements of A per thread
  static constexpr int b_loads_vec = bk * bn / 4 / threads;  // float4 of B per thread
  static constexpr int b_loads_scalar = bk * bn / threads;
  static_assert(bm % wm == 0 && bn % wn == 0 && wm % 32 == 0 && wn % 16 == 0, "warp tile shape");
  static_assert(bm * bk % threads == 0 && (bk * bn / 4) % threads == 0, "loads divide evenly");
  static_assert(threads % bk == 0, "a thread's A elements keep one k column");
};

/// Lane position inside a warp tile: 8 rows x 4 columns of lanes.
__device__ __forceinline__ int lane_row(int lane) { return lane / 4; }
__device__ __forceinline__ int lane_col(int lane) { return lane % 4; }

/// A lane's fragments for k step kk of one slice: MI float4 of A (32 rows apart) and NI
/// float4 of B (16 columns apart).
template <class Cfg>
__device__ __forceinline__ void load_fragments(float const* __restrict__ as, float const* __restrict__ bs, int a_off,
                                               int b_off, int kk, float (&a)[Cfg::mi * 4], float (&b)[Cfg::ni * 4]) {
#pragma unroll
  for (int i = 0; i < Cfg::mi; ++i)
    *reinterpret_cast<float4*>(&a[i * 4]) = *reinterpret_cast<float4 const*>(&as[kk * Cfg::lda_s + a_off + i * 32]);
#pragma unroll
  for (int j = 0; j < Cfg::ni; ++j)
    *reinterpret_cast<float4*>(&b[j * 4]) = *reinterpret_cast<float4 const*>(&bs[kk * Cfg::ldb_s + b_off + j * 16]);
}

/// acc += A_s[k][rows] (x) B_s[k][cols] over one BK slice held in shared memory.
template <class Cfg>
__device__ __forceinline__ void warp_tile_mma(float const* __restrict__ as, float const* __restrict__ bs, int a_off,
                                              int b_off, float (&acc)[Cfg::mi * 4][Cfg::ni * 4]) {
#pragma unroll
  for (int kk = 0; kk < Cfg::bk; ++kk) {
    float a[Cfg::mi * 4], b[Cfg::ni * 4];
    load_fragments<Cfg>(as, bs, a_off, b_off, kk, a, b);
#pragma unroll
    for (int i = 0; i < Cfg::mi * 4; ++i)
#pragma unroll
      for (int j = 0; j < Cfg::ni * 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
  }
}

/// Writes a lane's outputs: alpha * acc + beta * C, guarded at the edges; 16-byte
/// stores when every row of C is 16-byte aligned.
template <class Cfg, bool kVec>
__device__ __forceinline__ void warp_tile_epilogue(problem const& p, int row0, int col0,
                                                   float const (&acc)[Cfg::mi * 4][Cfg::ni * 4]) {
#pragma unroll
  for (int i = 0; i < Cfg::mi * 4; ++i) {
    int const r = row0 + (i / 4) * 32 + i % 4;
    if (r >= p.m) continue;
    float* const crow = p.c + static_cast<long long>(r) * p.ldc;
#pragma unroll
    for (int j = 0; j < Cfg::ni; ++j) {
      int const c = col0 + j * 16;
      if (kVec && c + 3 < p.n) {
        float4 v = make_float4(p.alpha * acc[i][j * 4 + 0], p.alpha * acc[i][j * 4 + 1],
                               p.alpha * acc[i][j * 4 + 2], p.alpha * acc[i][j * 4 + 3]);
        if (p.beta != 0.f) {
          float4 const old = *reinterpret_cast<float4 const*>(crow + c);
          v.x += p.beta * old.x; v.y += p.beta * old.y; v.z += p.beta * old.z; v.w += p.beta * old.w;
        }
        *reinterpret_cast<float4*>(crow + c) = v;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q)
          if (c + q < p.n) store_c(p.c, p.ldc, r, c + q, acc[i][j * 4 + q], p.alpha, p.beta);
      }
    }
  }
}

/// B and C rows 16-byte aligned: the kernels take the 16-byte load/store path.
inline bool bc_vector_aligned(problem const& p) {
  return p.ldb % 4 == 0 && p.ldc % 4 == 0 && reinterpret_cast<std::uintptr_t>(p.b) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(p.c) % 16 == 0;
}

}  // namespace memlab::detail::gemm
