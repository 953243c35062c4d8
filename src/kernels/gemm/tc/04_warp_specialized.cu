// Rungs 4 and 5: warp specialization. Warpgroup 0 is the producer: it gives registers back
// (setmaxnreg.dec) and one thread streams A and B slices through a ring of `stages` slots
// with TMA, each slot guarded by a `full` mbarrier (TMA bytes landed) and an `empty` one
// (both consumers finished reading it). Warpgroups 1 and 2 are consumers: they take the
// registers (setmaxnreg.inc), each owns 64 rows of a 128 x BN tile in FP32 accumulators
// (m64nBNk16), keeps one wgmma batch in flight and releases the slot of the batch before.
//
// Rung 4 launches one block per tile. Rung 5 (`persistent`) launches one block per SM that
// walks tiles in grouped order (runs of 16 M tiles share B's column and keep A in L2): the
// producer runs on into the next tile while the consumers are still in the epilogue, so
// the loads of tile i + 1 overlap the stores of tile i.
#include <cuda.h>

#include <algorithm>

#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/gemm/tc/wgmma_ops.cuh"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {
namespace {

constexpr int bm = 128, bk = 64, threads = 384;

template <int BN>
struct ws_config {
  static constexpr int a_bytes = bm * bk * 2, b_bytes = BN * bk * 2, stage_bytes = a_bytes + b_bytes;
  static constexpr int stages = BN == 256 ? 4 : 6;  // 192 KB of slots either way
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * stage_bytes + 1024;
};

template <class In, int BN>
__device__ __forceinline__ void wgmma_tile_k16(float (&acc)[BN / 2], std::uint64_t da, std::uint64_t db) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (std::is_same_v<In, __half>) {
    if constexpr (BN == 256) wgmma_f16_m64n256k16(acc, da, db);
    else wgmma_f16_m64n128k16(acc, da, db);
  } else {
    if constexpr (BN == 256) wgmma_bf16_m64n256k16(acc, da, db);
    else wgmma_bf16_m64n128k16(acc, da, db);
  }
#endif
}

template <class In, int BN, bool Persistent>
__global__ void __launch_bounds__(threads, 1) ws_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                                        const __grid_constant__ CUtensorMap tmap_b, problem p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using cfg = ws_config<BN>;
  constexpr int stages = cfg::stages;
  constexpr int group_m = 16;  // grouped order: runs of 16 M tiles (2048 rows of A stay in L2)
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ std::uint64_t full[stages], empty[stages];
  std::uint32_t const base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  int const tiles_m = static_cast<int>((p.m + bm - 1) / bm);
  int const tiles_n = static_cast<int>((p.n + BN - 1) / BN);
  int const tiles = tiles_m * tiles_n;
  int const nk = static_cast<int>((p.k + bk - 1) / bk);
  int const tid = threadIdx.x, wg = tid / 128, t = tid % 128;

  if (tid == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 8);  // one arrival per consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();

  auto tile_coords = [&](int tile, int& tm, int& tn) {
    if constexpr (Persistent) {
      grouped_tile(tile, tiles_m, tiles_n, group_m, tm, tn);
    } else {
      tm = tile % tiles_m;
      tn = tile / tiles_m;
    }
  };
  int const first = blockIdx.x, step = Persistent ? gridDim.x : tiles;

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int s = 0;
      unsigned phase = 0;
      for (int tile = first; tile < tiles; tile += step) {
        int tm, tn;
        tile_coords(tile, tm, tn);
        for (int kb = 0; kb < nk; ++kb) {
          mbar_wait(&empty[s], phase ^ 1);
          std::uint32_t const sa = base + s * cfg::stage_bytes, sb = sa + cfg::a_bytes;
          mbar_arrive_expect_tx(&full[s], cfg::stage_bytes);
          tma_load_2d(sa, &tmap_a, &full[s], kb * bk, tm * bm);
          tma_load_2d(sb, &tmap_b, &full[s], kb * bk, tn * BN);
          if (++s == stages) {
            s = 0;
            phase ^= 1;
          }
        }
      }
    }
  } else {
    setmaxnreg_inc<232>();
    int const c = wg - 1;  // rows c*64 .. c*64+63 of each tile
    int const lane = t % 32;
    int s = 0;
    unsigned phase = 0;
    float acc[BN / 2];
    for (int tile = first; tile < tiles; tile += step) {
      int tm, tn;
      tile_coords(tile, tm, tn);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
      int prev = -1;
      for (int kb = 0; kb < nk; ++kb) {
        mbar_wait(&full[s], phase);
        std::uint32_t const sa = base + s * cfg::stage_bytes + c * 64 * 128;
        std::uint32_t const sb = base + s * cfg::stage_bytes + cfg::a_bytes;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < bk / 16; ++kk) wgmma_tile_k16<In, BN>(acc, smem_desc(sa + kk * 32), smem_desc(sb + kk * 32));
        wgmma_commit();
        wgmma_wait<1>();  // the batch before this one is done: its slot can be refilled
        if (prev >= 0 && lane == 0) mbar_arrive(&empty[prev]);
        prev = s;
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (prev >= 0 && lane == 0) mbar_arrive(&empty[prev]);
      std::int64_t const row0 = static_cast<std::int64_t>(tm) * bm + c * 64;
      std::int64_t const col0 = static_cast<std::int64_t>(tn) * BN;
#pragma unroll
      for (int r = 0; r < BN / 2; r += 2)
        store_pair<In>(p, row0 + wgmma_acc_row(t, r), col0 + wgmma_acc_col(t, r), acc[r], acc[r + 1]);
    }
  }
#else
  __trap();  // TMA, wgmma and setmaxnreg need an sm_90a image: the host refuses first
#endif
}

template <class In, int BN, bool Persistent>
void launch_ws(problem const& p, cudaStream_t st, int sm_count) {
  using cfg = ws_config<BN>;
  std::int64_t const tiles = ((p.m + bm - 1) / bm) * ((p.n + BN - 1) / BN);
  MEMLAB_EXPECTS(tiles <= 0x7fffffff, "too many tiles for one grid");
  bool const f16 = std::is_same_v<In, __half>;
  CUtensorMap ta, tb;
  make_tensor_map(&ta, p.a, f16, p.m, p.k, p.a_si, bm);
  make_tensor_map(&tb, p.b, f16, p.n, p.k, p.b_sj, BN);
  auto kernel = ws_kernel<In, BN, Persistent>;
  MEMLAB_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(cfg::smem_bytes)));
  std::int64_t const grid = Persistent ? std::min<std::int64_t>(tiles, std::max(sm_count, 1)) : tiles;
  kernel<<<static_cast<unsigned>(grid), threads, cfg::smem_bytes, st>>>(ta, tb, p);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace

template <class In>
void launch_warp_specialized(problem const& p, cudaStream_t st) {
  launch_ws<In, 256, false>(p, st, 0);
}

template <class In>
void launch_persistent(problem const& p, cudaStream_t st, int sm_count) {
  // 128 x 256 tiles unless that leaves SMs idle in the last wave; then 128 x 128 (twice the tiles).
  std::int64_t const tiles256 = ((p.m + bm - 1) / bm) * ((p.n + 255) / 256);
  if (tiles256 >= 2 * sm_count || tiles256 % sm_count == 0)
    launch_ws<In, 256, true>(p, st, sm_count);
  else
    launch_ws<In, 128, true>(p, st, sm_count);
}

std::size_t smem_warp_specialized() { return ws_config<256>::smem_bytes; }

template void launch_warp_specialized<__half>(problem const&, cudaStream_t);
template void launch_warp_specialized<__nv_bfloat16>(problem const&, cudaStream_t);
template void launch_persistent<__half>(problem const&, cudaStream_t, int);
template void launch_persistent<__nv_bfloat16>(problem const&, cudaStream_t, int);

}  // namespace memlab::detail::gemm_tc
