// Rungs 4 and 5: warp specialization. Warpgroup 0 is the producer: it gives registers back
// (setmaxnreg.dec) and one thread streams A and B slices through a ring of `stages` slots
// with TMA, each slot guarded by a `full` mbarrier (TMA bytes landed) and an `empty` one
// (every consumer finished reading it). Warpgroups 1 and 2 (1 only for BM = 64) are consumers:
// they take the registers (setmaxnreg.inc), each owns 64 rows of a BM x BN tile in FP32 accumulators
// (m64nBNk16, or k32 for FP8), keeps one wgmma batch in flight and releases the slot of the batch
// before. A slot holds one 128-byte row of K per operand row: 64 BF16/FP16 or 128 FP8 elements.
//
// Rung 4 launches one block per tile. Rung 5 (`persistent`) launches one block per SM that
// walks tiles in grouped order (runs of 16 M tiles share B's column and keep A in L2): the
// producer runs on into the next tile while the consumers are still in the epilogue, so
// the loads of tile i + 1 overlap the stores of tile i.
//
// Where the tiles cannot fill the GPU (m = 128 decode batches: 32 tiles of 128 x 128 for 132
// SMs), rung 5 instead takes 64 x 64 tiles, one per CTA with a single consumer warpgroup,
// where those make one wave over more than half the SMs. Otherwise it splits K inside a
// cluster, on 128 x 64 tiles where those still leave room for a split (or 64 x 64 where those
// run more CTAs), or runs one 128 x 64 tile a CTA (k up to 64 k-blocks) or one 64 x 96 or
// 64 x 128 tile a CTA (longer k; 64 x 96 where its tiles make one wave over more than half the
// SMs and outnumber 64 x 128's, B K-major), else splits 128 x 128 tiles (split_k.hpp,
// plan_persistent). In a split the
// S CTAs of a cluster (S = 2, 4 or 8) take the same tile and every S-th k-block (CTA r: r,
// r + S, ...), park their FP32 partial tiles in their own shared memory (the drained stage
// slots), and after a cluster barrier CTA r sums rows [r BM/S, (r + 1) BM/S) of all S
// partials through distributed shared memory (ld.shared::cluster, always in rank order:
// bit-identical run to run) and stores them. No workspace in global memory, no second
// kernel, nothing shared between concurrent calls.
#include <cuda.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "kernels/gemm/tc/split_k.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/gemm/tc/wgmma_ops.cuh"
#include "memlab/detail/per_device.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {
namespace {

constexpr int row_bytes = 128;  // a k-block: operand_traits<In>::k_block elements a row

/// one_tile: rung 4, a block per tile; persistent: rung 5, a block per SM walking tiles;
/// split_k: a cluster per tile, each CTA a range of k-blocks, reduced through DSM.
enum class ws_mode { one_tile, persistent, split_k };

/// The FP32 partial tile of split_k, parked row-major in the drained stage slots with rows
/// 16 bytes longer than the tile: the 8 rows a warp's accumulator pairs hit at once then fall
/// in different banks.
template <int BN>
constexpr int partial_ld = BN + 4;

/// BM x BN tiles: BM / 64 consumer warpgroups of 64 rows each, after the producer warpgroup.
template <int BN, int BM = 128>
struct ws_config {
  static constexpr int consumers = BM / 64, threads = 128 * (1 + consumers);
  static constexpr int a_bytes = BM * row_bytes, b_bytes = BN * row_bytes, stage_bytes = a_bytes + b_bytes;
  static constexpr int stages = 196608 / stage_bytes;  // 192 KB of slots: 4 at 128 x 256 .. 12 at 64 x 64
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * stage_bytes + 1024;
  static_assert(BM == 64 || BM == 128, "one or two consumer warpgroups");
  static_assert(stages >= 4 && BM * partial_ld<BN> * 4 <= stages * stage_bytes, "the FP32 partial tile fits the stage slots");
};

/// `Bkn`: B stored k x n (op_b = n, BF16 and FP16), read as it is: TMA loads each stage's B as
/// BN / 64 boxes of 64 k-rows x 64 columns (128-byte rows along N, swizzled), and wgmma reads them
/// MN-major (its transposed-B form, smem_desc_mn). No copy of B into K-major rows first.
template <class In, int BN, ws_mode Mode, int BM = 128, bool Bkn = false>
__global__ void __launch_bounds__(ws_config<BN, BM>::threads, 1)
    ws_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b, problem p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(!Bkn || sizeof(In) == 2, "wgmma reads an MN-major B in BF16 and FP16 only");
  using cfg = ws_config<BN, BM>;
  constexpr int stages = cfg::stages;
  constexpr int group_m = 16;  // grouped order: runs of 16 M tiles (2048 rows of A stay in L2)
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ std::uint64_t full[stages], empty[stages];
  std::uint32_t const base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  int const tiles_m = static_cast<int>((p.m + BM - 1) / BM);
  int const tiles_n = static_cast<int>((p.n + BN - 1) / BN);
  int const tiles = tiles_m * tiles_n;
  constexpr int bk = operand_traits<In>::k_block;
  int const nk = static_cast<int>((p.k + bk - 1) / bk);
  int const tid = threadIdx.x, wg = warpgroup_index(), t = tid % 128;

  if (tid == 0) {
    for (int s = 0; s < stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 4 * cfg::consumers);  // one arrival per consumer warp
    }
    mbar_fence_init();
  }
  __syncthreads();
  grid_dependency_wait();  // the previous kernel's writes are visible (programmatic launch)

  auto tile_coords = [&](int tile, int& tm, int& tn) {
    if constexpr (Mode == ws_mode::persistent) {
      grouped_tile(tile, tiles_m, tiles_n, group_m, tm, tn);
    } else {
      tm = tile % tiles_m;
      tn = tile / tiles_m;
    }
  };
  constexpr bool split = Mode == ws_mode::split_k;
  // split_k: cluster blockIdx.x / S owns one tile; CTA r of it the k-blocks [r nk / S, (r + 1) nk / S).
  unsigned const splits = split ? cluster_nctarank() : 1u, rank = split ? cluster_ctarank() : 0u;
  int const first = split ? static_cast<int>(blockIdx.x / splits) : static_cast<int>(blockIdx.x);
  int const step = Mode == ws_mode::persistent ? static_cast<int>(gridDim.x) : tiles;
  // CTA r of a split takes k-blocks r, r + S, r + 2S, ...: the S CTAs of a cluster read
  // neighbouring 128-byte pieces of the same rows at the same time (measured 0.5-3.9% faster at
  // the decode shape than S contiguous ranges; docs/tc-gemm.md).
  int const kb_step = static_cast<int>(splits);

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) {
      int s = 0;
      unsigned phase = 0;
      for (int tile = first; tile < tiles; tile += step) {
        int tm, tn;
        tile_coords(tile, tm, tn);
        for (int kb = static_cast<int>(rank); kb < nk; kb += kb_step) {
          mbar_wait(&empty[s], phase ^ 1);
          std::uint32_t const sa = base + s * cfg::stage_bytes, sb = sa + cfg::a_bytes;
          mbar_arrive_expect_tx(&full[s], cfg::stage_bytes);
          tma_load_2d(sa, &tmap_a, &full[s], kb * bk, tm * BM);
          if constexpr (Bkn) {
            tma_load_mn<BN / 64>(sb, &tmap_b, &full[s], tn * BN, kb * bk);
          } else {
            tma_load_2d(sb, &tmap_b, &full[s], kb * bk, tn * BN);
          }
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
      for (int kb = static_cast<int>(rank); kb < nk; kb += kb_step) {
        mbar_wait(&full[s], phase);
        std::uint32_t const sa = base + s * cfg::stage_bytes + c * 64 * 128;
        std::uint32_t const sb = base + s * cfg::stage_bytes + cfg::a_bytes;
        std::uint32_t const la = smem_desc_lo(sa), lb = smem_desc_lo(sb, Bkn ? 8192 : 16);  // one add a descriptor
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < row_bytes / 32; ++kk) {
          // K-major B: the slice's 32 bytes of each row; MN-major B: its 16 k-rows, 2 KB.
          std::uint64_t const db = smem_desc_of(lb + (Bkn ? kk * 16 * row_bytes : kk * 32) / 16);
          wgmma_slice<In, BN, Bkn ? 1 : 0>(acc, smem_desc_of(la + kk * 2), db);
        }
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
      if (tile + step >= tiles && t == 0) launch_dependents();  // the last tile's MMAs are done
      if constexpr (split) {
        // Every slot is drained (each load was waited for) once both consumers are past their
        // last wgmma: then the partial tile overwrites the slots.
        named_bar_sync(1, 128 * cfg::consumers);
#pragma unroll
        for (int r = 0; r < BN / 2; r += 2) {
          int const row = c * 64 + wgmma_acc_row(t, r), col = wgmma_acc_col(t, r);
          st_shared_v2_f32(base + static_cast<std::uint32_t>(row * partial_ld<BN> + col) * 4u, acc[r], acc[r + 1]);
        }
      } else {
        std::int64_t const row0 = static_cast<std::int64_t>(tm) * BM + c * 64;
        std::int64_t const col0 = static_cast<std::int64_t>(tn) * BN;
#pragma unroll
        for (int r = 0; r < BN / 2; r += 2)
          store_pair<typename operand_traits<In>::c16>(p, row0 + wgmma_acc_row(t, r), col0 + wgmma_acc_col(t, r), acc[r], acc[r + 1]);
      }
    }
  }
  if constexpr (split) {
    cluster_sync_all();  // every CTA's partial tile is in its shared memory
    if (wg > 0) {
      int tm, tn;
      tile_coords(first, tm, tn);
      int const rows = BM / static_cast<int>(splits), row_base = static_cast<int>(rank) * rows;
      for (int i = tid - 128; i < rows * (BN / 4); i += 128 * cfg::consumers) {
        int const row = row_base + i / (BN / 4), col = (i % (BN / 4)) * 4;
        std::uint32_t const at = base + static_cast<std::uint32_t>(row * partial_ld<BN> + col) * 4u;
        float4 sum = ld_shared_cluster_v4(cluster_map(at, 0));
        for (unsigned q = 1; q < splits; ++q) {
          float4 const v = ld_shared_cluster_v4(cluster_map(at, q));
          sum.x += v.x;
          sum.y += v.y;
          sum.z += v.z;
          sum.w += v.w;
        }
        std::int64_t const gr = static_cast<std::int64_t>(tm) * BM + row, gc = static_cast<std::int64_t>(tn) * BN + col;
        store_pair<typename operand_traits<In>::c16>(p, gr, gc, sum.x, sum.y);
        store_pair<typename operand_traits<In>::c16>(p, gr, gc + 2, sum.z, sum.w);
      }
    }
    cluster_sync_all();  // no CTA leaves while the others read its shared memory
  }
#else
  __trap();  // TMA, wgmma and setmaxnreg need an sm_90a image: the host refuses first
#endif
}

template <class In, int BN, ws_mode Mode, int BM = 128, bool Bkn = false>
void launch_ws_layout(problem const& p, cudaStream_t st, int sm_count, unsigned splits) {
  using cfg = ws_config<BN, BM>;
  std::int64_t const tiles = ((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  MEMLAB_EXPECTS(tiles * splits <= 0x7fffffff, "too many tiles for one grid");
  CUtensorMap ta, tb;
  make_tensor_map(&ta, p.a, operand_traits<In>::type, p.m, p.k, p.a_si, BM);
  if constexpr (Bkn)  // k rows of n: boxes of 64 k-rows x 64 columns (128 bytes)
    make_tensor_map(&tb, p.b, operand_traits<In>::type, p.k, p.n, p.b_sk, operand_traits<In>::k_block);
  else
    make_tensor_map(&tb, p.b, operand_traits<In>::type, p.n, p.k, p.b_sj, BN);
  auto kernel = ws_kernel<In, BN, Mode, BM, Bkn>;
  MEMLAB_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(cfg::smem_bytes)));
  std::int64_t const grid = Mode == ws_mode::persistent ? std::min<std::int64_t>(tiles, std::max(sm_count, 1)) : tiles * splits;
  cudaLaunchAttribute attr[2];
  cudaLaunchConfig_t const lc = cluster_launch_config(attr, Mode == ws_mode::split_k ? splits : 1u,
                                                      static_cast<unsigned>(grid), cfg::threads, cfg::smem_bytes, st, true);
  MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&lc, kernel, ta, tb, p));
  MEMLAB_CHECK_LAUNCH();
}

/// launch_ws_layout for B as the problem stores it: K-major, or k x n (16-bit inputs only, and tiles a
/// multiple of 64 wide: B's MN-major boxes are 64 columns; the plan keeps narrower grids off it).
template <class In, int BN, ws_mode Mode, int BM = 128>
void launch_ws(problem const& p, cudaStream_t st, int sm_count, unsigned splits = 1) {
  if constexpr (sizeof(In) == 2) {
    if (b_stored_kn(p)) {
      MEMLAB_EXPECTS(BN % 64 == 0, "rung 5: B stored k x n takes tiles a multiple of 64 wide");
      if constexpr (BN % 64 == 0) {
        launch_ws_layout<In, BN, Mode, BM, true>(p, st, sm_count, splits);
        return;
      }
    }
  }
  launch_ws_layout<In, BN, Mode, BM, false>(p, st, sm_count, splits);
}

/// How many clusters of `splits` split-K CTAs (128 x BN tiles) the device runs at once
/// (cached per device and cluster size): a GPC holds only whole clusters.
template <class In, int BN>
int split_k_max_clusters(unsigned splits) {
  using cfg = ws_config<BN>;
  auto query = [](unsigned s) {
    auto kernel = ws_kernel<In, BN, ws_mode::split_k>;
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(cfg::smem_bytes)));
    cudaLaunchAttribute attr[2];
    cudaLaunchConfig_t const lc = cluster_launch_config(attr, s, s, cfg::threads, cfg::smem_bytes, nullptr);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &lc) != cudaSuccess) {
      (void)cudaGetLastError();  // a cluster size the device cannot run: never chosen
      n = 0;
    }
    return n;
  };
  auto const counts = memlab::detail::per_device([&] { return std::array<int, 3>{query(2), query(4), query(8)}; });
  return counts[splits == 2 ? 0 : splits == 4 ? 1 : 2];
}

/// Rung 5's grid for this problem on the current device (split_k.hpp). Both 64-wide split grids
/// (128 x 64 and 64 x 64 tiles) ask the 128 x 64 instance's cluster capacity: the 64 x 64 one has
/// the same shared memory (192 KB of slots) and fewer threads (256 against 384), so the device holds
/// at least as many of its clusters, and the plan never splits it into more than run at once.
template <class In>
persistent_plan persistent_plan_for(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count, bool b_kn = false) {
  constexpr int bk = operand_traits<In>::k_block;
  return plan_persistent(
      m, n, static_cast<int>((k + bk - 1) / bk), sm_count,
      [](int bn, unsigned s) { return bn == 64 ? split_k_max_clusters<In, 64>(s) : split_k_max_clusters<In, 128>(s); }, b_kn);
}

}  // namespace

template <class In>
void launch_warp_specialized(problem const& p, cudaStream_t st) {
  launch_ws<In, 256, ws_mode::one_tile>(p, st, 0);
}

template <class In>
void launch_persistent(problem const& p, cudaStream_t st, int sm_count) {
  persistent_plan const plan = persistent_plan_for<In>(p.m, p.n, p.k, sm_count, b_stored_kn(p));
  switch (plan.grid) {
    case persistent_grid::tiles_64x64: launch_ws<In, 64, ws_mode::one_tile, 64>(p, st, sm_count); return;
    case persistent_grid::split_128x64: launch_ws<In, 64, ws_mode::split_k>(p, st, sm_count, plan.splits); return;
    case persistent_grid::split_64x64: launch_ws<In, 64, ws_mode::split_k, 64>(p, st, sm_count, plan.splits); return;
    case persistent_grid::tiles_128x64: launch_ws<In, 64, ws_mode::one_tile>(p, st, sm_count); return;
    case persistent_grid::tiles_64x128: launch_ws<In, 128, ws_mode::one_tile, 64>(p, st, sm_count); return;
    case persistent_grid::tiles_64x96: launch_ws<In, 96, ws_mode::one_tile, 64>(p, st, sm_count); return;
    case persistent_grid::split_128x128: launch_ws<In, 128, ws_mode::split_k>(p, st, sm_count, plan.splits); return;
    case persistent_grid::tiles_128x256: launch_ws<In, 256, ws_mode::persistent>(p, st, sm_count); return;
    case persistent_grid::tiles_128x128: launch_ws<In, 128, ws_mode::persistent>(p, st, sm_count); return;
    case persistent_grid::tiles_128x112: launch_ws<In, 112, ws_mode::persistent>(p, st, sm_count); return;
    case persistent_grid::tiles_128x96: launch_ws<In, 96, ws_mode::persistent>(p, st, sm_count); return;
  }
}

template <class In>
std::string persistent_kernel_name(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count, bool b_kn) {
  persistent_plan const plan = persistent_plan_for<In>(m, n, k, sm_count, b_kn);
  std::string const s = std::to_string(plan.splits);
  switch (plan.grid) {
    case persistent_grid::tiles_64x64: return "64x64, a tile a CTA";
    case persistent_grid::split_128x64: return "128x64, K split " + s + " ways in a cluster";
    case persistent_grid::split_64x64: return "64x64, K split " + s + " ways in a cluster";
    case persistent_grid::tiles_128x64: return "128x64, a tile a CTA";
    case persistent_grid::tiles_64x128: return "64x128, a tile a CTA";
    case persistent_grid::tiles_64x96: return "64x96, a tile a CTA";
    case persistent_grid::split_128x128: return "128x128, K split " + s + " ways in a cluster";
    case persistent_grid::tiles_128x256: return "persistent 128x256";
    case persistent_grid::tiles_128x128: return "persistent 128x128";
    case persistent_grid::tiles_128x112: return "persistent 128x112";
    case persistent_grid::tiles_128x96: return "persistent 128x96";
  }
  return "?";
}

std::size_t smem_warp_specialized() { return ws_config<256>::smem_bytes; }

template void launch_warp_specialized<__half>(problem const&, cudaStream_t);
template void launch_warp_specialized<__nv_bfloat16>(problem const&, cudaStream_t);
template void launch_persistent<__half>(problem const&, cudaStream_t, int);
template void launch_persistent<__nv_bfloat16>(problem const&, cudaStream_t, int);
template void launch_warp_specialized<__nv_fp8_e4m3>(problem const&, cudaStream_t);
template void launch_persistent<__nv_fp8_e4m3>(problem const&, cudaStream_t, int);
template std::string persistent_kernel_name<__half>(std::int64_t, std::int64_t, std::int64_t, int, bool);
template std::string persistent_kernel_name<__nv_bfloat16>(std::int64_t, std::int64_t, std::int64_t, int, bool);
template std::string persistent_kernel_name<__nv_fp8_e4m3>(std::int64_t, std::int64_t, std::int64_t, int, bool);

}  // namespace memlab::detail::gemm_tc
