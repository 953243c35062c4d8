// 08: warp tiling (see warp_tile.cuh) with the classic register-staged double buffer:
// the next slice is loaded into registers before the current one is multiplied and
// stored to the other shared buffer after, so global latency hides behind the FFMAs.
#include "kernels/gemm/warp_tile.cuh"

namespace memlab::detail::gemm {
namespace {
using cfg = warp_tile_config<128, 128, 8, 64, 32, 2, 2>;

template <bool kVec>
__global__ void __launch_bounds__(cfg::threads, cfg::min_blocks) warp_tiled_kernel(problem p, int tiles_m, int tiles_n) {
  __shared__ __align__(16) float as[2 * cfg::a_stage];
  __shared__ __align__(16) float bs[2 * cfg::b_stage];
  int const tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  tile_coord const t = swizzle_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, 8);
  int const m0 = t.m * cfg::bm, n0 = t.n * cfg::bn;
  constexpr int a_step = cfg::threads / cfg::bk;
  constexpr int b_regs = kVec ? cfg::b_loads_vec * 4 : cfg::b_loads_scalar;
  int const a_k = tid % cfg::bk, a_m = tid / cfg::bk;
  float ra[cfg::a_loads], rb[b_regs];

  auto load_regs = [&](int kt) {
    int const k0 = kt * cfg::bk;
#pragma unroll
    for (int i = 0; i < cfg::a_loads; ++i) {
      int const r = m0 + a_m + i * a_step, c = k0 + a_k;
      ra[i] = (r < p.m && c < p.k) ? p.a[static_cast<long long>(r) * p.lda + c] : 0.f;
    }
    if constexpr (kVec) {
#pragma unroll
      for (int i = 0; i < cfg::b_loads_vec; ++i) {
        int const e = tid + i * cfg::threads, k = e / (cfg::bn / 4), n = (e % (cfg::bn / 4)) * 4;
        int const r = k0 + k, c = n0 + n;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r < p.k) {
          float const* src = p.b + static_cast<long long>(r) * p.ldb + c;
          if (c + 3 < p.n) {
            v = *reinterpret_cast<float4 const*>(src);
          } else {
            if (c < p.n) v.x = src[0];
            if (c + 1 < p.n) v.y = src[1];
            if (c + 2 < p.n) v.z = src[2];
          }
        }
        rb[i * 4 + 0] = v.x; rb[i * 4 + 1] = v.y; rb[i * 4 + 2] = v.z; rb[i * 4 + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < cfg::b_loads_scalar; ++i) {
        int const e = tid + i * cfg::threads, k = e / cfg::bn, n = e % cfg::bn;
        int const r = k0 + k, c = n0 + n;
        rb[i] = (r < p.k && c < p.n) ? p.b[static_cast<long long>(r) * p.ldb + c] : 0.f;
      }
    }
  };
  auto store_regs = [&](int slot) {
    float* const as_s = as + slot * cfg::a_stage;
    float* const bs_s = bs + slot * cfg::b_stage;
#pragma unroll
    for (int i = 0; i < cfg::a_loads; ++i) as_s[a_k * cfg::lda_s + a_m + i * a_step] = ra[i];
    if constexpr (kVec) {
#pragma unroll
      for (int i = 0; i < cfg::b_loads_vec; ++i) {
        int const e = tid + i * cfg::threads, k = e / (cfg::bn / 4), n = (e % (cfg::bn / 4)) * 4;
        *reinterpret_cast<float4*>(&bs_s[k * cfg::ldb_s + n]) =
            make_float4(rb[i * 4 + 0], rb[i * 4 + 1], rb[i * 4 + 2], rb[i * 4 + 3]);
      }
    } else {
#pragma unroll
      for (int i = 0; i < cfg::b_loads_scalar; ++i) {
        int const e = tid + i * cfg::threads;
        bs_s[(e / cfg::bn) * cfg::ldb_s + e % cfg::bn] = rb[i];
      }
    }
  };

  float acc[cfg::mi * 4][cfg::ni * 4];
#pragma unroll
  for (int i = 0; i < cfg::mi * 4; ++i)
#pragma unroll
    for (int j = 0; j < cfg::ni * 4; ++j) acc[i][j] = 0.f;

  int const warp_m = warp % cfg::warps_m, warp_n = warp / cfg::warps_m;
  int const a_off = warp_m * cfg::wm + lane_row(lane) * 4;
  int const b_off = warp_n * cfg::wn + lane_col(lane) * 4;
  int const ktiles = ceil_div(p.k, cfg::bk);
  if (ktiles > 0) {
    load_regs(0);
    store_regs(0);
    __syncthreads();
  }
  for (int kt = 0; kt < ktiles; ++kt) {
    bool const more = kt + 1 < ktiles;
    if (more) load_regs(kt + 1);  // in flight during the FFMAs below
    int const slot = kt % 2;
    warp_tile_mma<cfg>(as + slot * cfg::a_stage, bs + slot * cfg::b_stage, a_off, b_off, acc);
    if (more) store_regs(1 - slot);  // that buffer was last read before the previous barrier
    __syncthreads();
  }
  warp_tile_epilogue<cfg, kVec>(p, m0 + a_off, n0 + b_off, acc);
}
}  // namespace

void launch_warp_tiled(problem const& p, cudaStream_t s) {
  int const tm = ceil_div(p.m, cfg::bm), tn = ceil_div(p.n, cfg::bn);
  unsigned const grid = static_cast<unsigned>(tm) * tn;
  if (bc_vector_aligned(p))
    warp_tiled_kernel<true><<<grid, cfg::threads, 0, s>>>(p, tm, tn);
  else
    warp_tiled_kernel<false><<<grid, cfg::threads, 0, s>>>(p, tm, tn);
  MEMLAB_CHECK_LAUNCH();
}
cudaFuncAttributes attributes_warp_tiled(bool v) {
  return v ? func_attributes(warp_tiled_kernel<true>) : func_attributes(warp_tiled_kernel<false>);
}

}  // namespace memlab::detail::gemm
