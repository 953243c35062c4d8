// Rung 6: rung 5 (persistent, warp-specialized, grouped tile order) run in clusters of two
// CTAs along M, with TMA multicast of the operand they share and a TMA store epilogue.
//
// The two CTAs of a cluster take tiles (2 ctm, tn) and (2 ctm + 1, tn): the same 256 (or 128)
// rows of B. Each CTA loads its own 128 rows of A and HALF of the B slice, multicast into the
// same shared-memory offset of both CTAs, so B crosses L2 -> SM once per pair instead of twice
// (per k-block a CTA pulls 16 KB of A + 16 KB of B instead of 16 + 32 KB: a third less L2
// traffic at BN = 256). The pipeline's barriers become cluster-wide:
//  - full[s] (per CTA) expects the whole stage, A + both B halves; the peer's multicast
//    completes its half on our barrier (the tx count may dip below zero before our own
//    expect_tx lands: it is signed, and the phase cannot complete before our arrival);
//  - empty[s] counts 16 arrivals: every consumer warp of BOTH CTAs, since our producer's
//    multicast writes the peer's slot too (lane 0 arrives here, lane 1 on the peer's barrier).
// The barriers are initialised before a cluster-wide sync (no multicast may land on an
// uninitialised barrier), and a final cluster sync keeps each CTA's shared memory and
// barriers alive until the peer has stopped writing and arriving.
//
// Epilogue: each consumer warpgroup writes its 64 x BN accumulators, alpha applied (unless 1)
// and converted, box by box (64 rows x 128 bytes: 64 BF16/FP16 or 32 FP32 columns) into one of
// two 128-byte-swizzled staging buffers (16-bit C with stmatrix, FP32 with st.shared.v2;
// conflict-free: the 8 rows a warp writes at once land in 8 different 16-byte chunks), fences
// the generic-proxy writes for the async proxy, syncs the warpgroup on a named barrier, and one
// thread issues cp.async.bulk.tensor's store. A buffer
// is rewritten only after its store has finished reading it (cp.async.bulk.wait_group.read 1:
// the other buffer's store may still be in flight). TMA clips the boxes at the matrix edges.
// beta != 0 (C must be read) or a C that TMA cannot address (base not 16-byte aligned, ldc
// bytes not a multiple of 16) takes rung 5's register epilogue in the same kernel.
//
// Two kernels share all of the above (session 13, docs/tc-gemm.md): the cooperative one, whose
// two consumer warpgroups split each tile (64 x BN each), and the pingpong one, whose consumer
// warpgroups own whole 128 x BN tiles in turn (below, before its kernel). cluster_plan.hpp
// decides which runs for a shape.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <utility>

#include "kernels/gemm/tc/cluster_plan.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/gemm/tc/wgmma_ops.cuh"
#include "memlab/detail/per_device.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {
namespace {

constexpr int bm = 128, bk = 64, threads = 384, cluster_size = 2;
constexpr int epi_rows = 64, epi_box_bytes = epi_rows * 128, epi_bufs = 2;

template <int BN>
struct cl_config {
  static constexpr int a_bytes = bm * bk * 2, b_bytes = BN * bk * 2, b_half_bytes = b_bytes / 2;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static constexpr int stages = BN == 256 ? 4 : 6;                        // 192 KB of slots, as rung 5
  static constexpr int epi_bytes = 2 * epi_bufs * epi_box_bytes;          // 32 KB: 2 buffers per consumer
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * stage_bytes + epi_bytes + 1024;
};
// The peer's half of B must start on a 1024-byte swizzle atom: then the two TMA boxes lay out
// exactly like one box of BN rows, the layout the wgmma descriptor describes.
static_assert(cl_config<256>::b_half_bytes % 1024 == 0 && cl_config<128>::b_half_bytes % 1024 == 0,
              "B halves must be whole 128-byte-swizzle atoms");
static_assert(cl_config<256>::smem_bytes <= 232448 - 1152 && cl_config<128>::smem_bytes <= 232448 - 1152,
              "stages + staging + alignment + static barriers fit Hopper's 227 KB per block");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
template <class In, int BN>
__device__ __forceinline__ void cl_wgmma_k16(float (&acc)[BN / 2], std::uint64_t da, std::uint64_t db) {
  if constexpr (std::is_same_v<In, __half>) {
    if constexpr (BN == 256) wgmma_f16_m64n256k16(acc, da, db);
    else if constexpr (BN == 192) wgmma_f16_m64n192k16(acc, da, db);
    else if constexpr (BN == 160) wgmma_f16_m64n160k16(acc, da, db);
    else wgmma_f16_m64n128k16(acc, da, db);
  } else {
    if constexpr (BN == 256) wgmma_bf16_m64n256k16(acc, da, db);
    else if constexpr (BN == 192) wgmma_bf16_m64n192k16(acc, da, db);
    else if constexpr (BN == 160) wgmma_bf16_m64n160k16(acc, da, db);
    else wgmma_bf16_m64n128k16(acc, da, db);
  }
}

/// Stores one warpgroup's 64 x BN accumulator tile at (row0, col0) through the staging
/// buffers and TMA. `t` is the thread's index in the warpgroup, `bar_id` its named barrier,
/// `seq` the warpgroup's count of boxes stored so far (over all its tiles): box `seq` takes
/// buffer seq % epi_bufs, so buffers alternate across tiles too (with an odd number of boxes
/// a tile, restarting at buffer 0 would overwrite the previous tile's last box while its store
/// may still read it: a 128 x 192 trial stored 3 boxes of 16-bit C a tile and failed so).
/// Scale = false (alpha = 1) leaves the accumulators unscaled.
template <class Out, int BN, bool Scale, int BoxBytes = 128>
__device__ __forceinline__ void tma_store_epilogue(float const (&acc)[BN / 2], float alpha, void const* tmap_c,
                                                   std::uint32_t bufs, int t, int bar_id, int row0, int col0,
                                                   std::int64_t m, std::int64_t n, unsigned& seq) {
  static_assert(BoxBytes == 128 || BoxBytes == 64, "128-byte boxes, or 64-byte ones for 16-bit C a 64-column box does not divide");
  constexpr int box_cols = BoxBytes / static_cast<int>(sizeof(Out));  // 64 or 32 (16-bit), 32 (FP32)
  constexpr int boxes = BN / box_cols;
  static_assert(boxes * box_cols == BN, "the boxes tile the warpgroup's columns");
  auto const scaled = [alpha](float v) { return Scale ? alpha * v : v; };
  // The TMA swizzle of a box row: 16-byte chunk c of row r sits at chunk c ^ (r % 8) of a
  // 128-byte row, or c ^ ((r / 2) % 4) of a 64-byte one (the 8 rows one warp store touches
  // land in 8 different 16-byte bank groups either way).
  auto const swz = [](int row, int byte) {
    if constexpr (BoxBytes == 128) return row * 128 + ((((byte >> 4) ^ (row & 7)) << 4) | (byte & 15));
    else return row * 64 + ((((byte >> 4) ^ ((row >> 1) & 3)) << 4) | (byte & 15));
  };
#pragma unroll
  for (int bx = 0; bx < boxes; ++bx) {
    std::uint32_t const buf = bufs + (seq++ % epi_bufs) * epi_box_bytes;
    if (t == 0) bulk_wait_read<epi_bufs - 1>();  // the store that last read `buf` is done with it
    named_bar_sync(bar_id, 128);
    // The addresses below are recomputed each box rather than hoisted out of the caller's tile
    // loop: the pingpong kernel holds 192 accumulators here, and hoisted addresses spilled.
    int tb = t;
    asm volatile("" : "+r"(tb));
    if constexpr (std::is_same_v<Out, float>) {
#pragma unroll
      for (int jj = 0; jj < box_cols / 8; ++jj) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          int const r = 4 * (bx * (box_cols / 8) + jj) + 2 * h;
          int const row = wgmma_acc_row(tb, r);  // 0..63
          st_shared_v2_f32(buf + swz(row, (8 * jj + 2 * (tb % 4)) * 4), scaled(acc[r]), scaled(acc[r + 1]));
        }
      }
    } else {
      // 16-bit C: stmatrix.x4 writes two 8-column groups x both 8-row halves of the warp's 16
      // rows at once (4 instructions a box where st.shared.b32 took 16). Lane i addresses row
      // i % 8 of matrix q = i / 8: column group jj + q / 2, row half q % 2; each matrix row is
      // one 16-byte chunk, so the swizzle keeps the 8 rows of a matrix in 8 distinct chunks.
      int const lane = tb % 32, q = lane / 8;
      int const row = 16 * (tb / 32) + 8 * (q % 2) + lane % 8;
#pragma unroll
      for (int jj = 0; jj < box_cols / 8; jj += 2) {
        int const r = 4 * (bx * (box_cols / 8) + jj);
        stmatrix_x4(buf + swz(row, 16 * (jj + q / 2)), pack_pair<Out>(scaled(acc[r]), scaled(acc[r + 1])),
                    pack_pair<Out>(scaled(acc[r + 2]), scaled(acc[r + 3])), pack_pair<Out>(scaled(acc[r + 4]), scaled(acc[r + 5])),
                    pack_pair<Out>(scaled(acc[r + 6]), scaled(acc[r + 7])));
      }
    }
    fence_proxy_async_smem();  // each writer: its writes are visible to the TMA unit
    named_bar_sync(bar_id, 128);
    if (t == 0) {
      // A box wholly outside C is not issued; its (empty) group is still committed, so that
      // "all groups but the newest" above always means the other buffer's store.
      if (row0 < m && col0 + bx * box_cols < n) tma_store_2d(tmap_c, buf, col0 + bx * box_cols, row0);
      bulk_commit();
    }
  }
}
/// What both of rung 6's kernels derive from the problem: the tiles (BN wide) over pairs of M
/// tiles, the cluster's place in the persistent grid, and the grouped order over cluster rows
/// (runs of 8 pairs = 2048 rows of A, as rung 5).
template <int BN>
struct cl_grid {
  int tiles_m, tiles_n, ctiles_m, ctiles, nk, cluster, clusters;
  unsigned rank;
  __device__ explicit cl_grid(problem const& p)
      : tiles_m(static_cast<int>((p.m + bm - 1) / bm)),
        tiles_n(static_cast<int>((p.n + BN - 1) / BN)),
        ctiles_m((tiles_m + 1) / 2),
        ctiles(ctiles_m * tiles_n),
        nk(static_cast<int>((p.k + bk - 1) / bk)),
        cluster(static_cast<int>(blockIdx.x) / cluster_size),
        clusters(static_cast<int>(gridDim.x) / cluster_size),
        rank(cluster_ctarank()) {}
  /// This CTA's tile of cluster tile `ct`; false when its M tile lies past m (odd tiles_m: the
  /// last pair's second tile), which is then neither loaded nor computed nor stored.
  __device__ bool tile(int ct, int& tm, int& tn) const {
    int ctm;
    grouped_tile(ct, ctiles_m, tiles_n, 8, ctm, tn);
    tm = 2 * ctm + static_cast<int>(rank);
    return tm < tiles_m;
  }
};

/// Initialises the slot barriers (full: the producer's arrival plus the bytes; empty: `releases`
/// consumer-warp arrivals from both CTAs) and syncs the cluster, so that no multicast or remote
/// arrival reaches an uninitialised barrier.
template <int Stages>
__device__ __forceinline__ void init_slots(std::uint64_t (&full)[Stages], std::uint64_t (&empty)[Stages], unsigned releases) {
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], releases);
    }
    mbar_fence_init();
  }
  cluster_sync_all();
}

/// The producer thread of either kernel: for each of the cluster's tiles in order and each
/// k-block, waits until the slot is free in both CTAs, then loads this CTA's A rows and its half
/// of B's rows, multicast into both CTAs. No box is issued wholly outside its tensor: A past m
/// is not loaded (the tile is not computed), B's second half past n is not loaded (its columns
/// are never stored; the wgmma reads stale shared memory there, which only reaches those
/// columns). Both CTAs agree on b_halves, so each full barrier expects exactly the bytes that
/// arrive.
template <class Cfg, int BN>
__device__ __forceinline__ void produce(cl_grid<BN> const& g, problem const& p, CUtensorMap const* tmap_a,
                                        CUtensorMap const* tmap_b, std::uint32_t base, std::uint64_t* full,
                                        std::uint64_t* empty) {
  int s = 0;
  unsigned phase = 0;
  for (int ct = g.cluster; ct < g.ctiles; ct += g.clusters) {
    int tm, tn;
    bool const live = g.tile(ct, tm, tn);
    int const b_halves = tn * BN + BN / 2 < p.n ? 2 : 1;
    unsigned const bytes = (live ? Cfg::a_bytes : 0) + b_halves * Cfg::b_half_bytes;
    for (int kb = 0; kb < g.nk; ++kb) {
      mbar_wait(&empty[s], phase ^ 1);  // our slot AND the peer's are free
      std::uint32_t const sa = base + s * Cfg::stage_bytes, sb = sa + Cfg::a_bytes;
      mbar_arrive_expect_tx(&full[s], bytes);
      if (live) tma_load_2d(sa, tmap_a, &full[s], kb * bk, tm * bm);
      if (static_cast<int>(g.rank) < b_halves)
        tma_load_2d_multicast(sb + g.rank * Cfg::b_half_bytes, tmap_b, &full[s], kb * bk,
                              tn * BN + static_cast<int>(g.rank) * (BN / 2), (1u << cluster_size) - 1u);
      if (++s == Cfg::stages) {
        s = 0;
        phase ^= 1;
      }
    }
  }
}

/// Stores one warpgroup's 64 x BN accumulators at (row0, col0): through the staging buffers and
/// TMA (16-bit C in boxes of Box16 bytes a row, FP32 in 128), alpha applied unless it is 1; or,
/// where TMA cannot store C (beta != 0, C unaligned), from registers as rung 5 does.
template <class In, int BN, int Box16 = 128>
__device__ __forceinline__ void store_rows(float const (&acc)[BN / 2], problem const& p, bool tma_store,
                                           void const* tmap_c, std::uint32_t bufs, int t, int bar_id, int row0,
                                           int col0, unsigned& seq) {
  if (tma_store) {
    bool const scale = p.alpha != 1.f;  // alpha = 1 (the common case) skips the multiply
    if (p.c_f32) {
      if (scale) tma_store_epilogue<float, BN, true>(acc, p.alpha, tmap_c, bufs, t, bar_id, row0, col0, p.m, p.n, seq);
      else tma_store_epilogue<float, BN, false>(acc, p.alpha, tmap_c, bufs, t, bar_id, row0, col0, p.m, p.n, seq);
    } else {
      if (scale) tma_store_epilogue<In, BN, true, Box16>(acc, p.alpha, tmap_c, bufs, t, bar_id, row0, col0, p.m, p.n, seq);
      else tma_store_epilogue<In, BN, false, Box16>(acc, p.alpha, tmap_c, bufs, t, bar_id, row0, col0, p.m, p.n, seq);
    }
  } else {
#pragma unroll
    for (int r = 0; r < BN / 2; r += 2)
      store_pair<In>(p, static_cast<std::int64_t>(row0) + wgmma_acc_row(t, r), col0 + wgmma_acc_col(t, r), acc[r],
                     acc[r + 1]);
  }
}
#endif

template <class In, int BN>
__global__ void __launch_bounds__(threads, 1)
    cluster_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                   const __grid_constant__ CUtensorMap tmap_c, problem p, int tma_store) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using cfg = cl_config<BN>;
  constexpr int stages = cfg::stages;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ std::uint64_t full[stages], empty[stages];
  std::uint32_t const base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  std::uint32_t const epi_base = base + stages * cfg::stage_bytes;
  cl_grid<BN> const g(p);
  int const tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  init_slots(full, empty, 8 * cluster_size);  // every consumer warp of both CTAs releases a slot

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) produce<cfg>(g, p, &tmap_a, &tmap_b, base, full, empty);
  } else {
    setmaxnreg_inc<232>();
    int const c = wg - 1;  // rows c*64 .. c*64+63 of each tile
    int const lane = t % 32;
    int s = 0;
    unsigned phase = 0;
    float acc[BN / 2];
    unsigned epi_seq = 0;  // boxes this warpgroup has stored (tma_store_epilogue's buffer choice)
    auto release = [&](int slot) {
      if (lane < cluster_size) mbar_arrive_cluster(&empty[slot], static_cast<unsigned>(lane));
    };
    for (int ct = g.cluster; ct < g.ctiles; ct += g.clusters) {
      int tm, tn;
      bool const live = g.tile(ct, tm, tn);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc[i] = 0.f;
      int prev = -1;
      for (int kb = 0; kb < g.nk; ++kb) {
        mbar_wait(&full[s], phase);
        if (live) {
          std::uint32_t const sa = base + s * cfg::stage_bytes + c * 64 * 128;
          std::uint32_t const sb = base + s * cfg::stage_bytes + cfg::a_bytes;
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < bk / 16; ++kk) cl_wgmma_k16<In, BN>(acc, smem_desc(sa + kk * 32), smem_desc(sb + kk * 32));
          wgmma_commit();
          wgmma_wait<1>();  // the batch before this one is done: its slot can be refilled
          if (prev >= 0) release(prev);
          prev = s;
        } else {
          release(s);  // a tile past m: nothing to compute, the peer still needs the slot back
        }
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
      wgmma_wait<0>();
      fence_regs(acc);
      if (prev >= 0) release(prev);
      if (!live) continue;
      store_rows<In, BN>(acc, p, tma_store != 0, &tmap_c, epi_base + c * epi_bufs * epi_box_bytes, t, 1 + c,
                         tm * bm + c * 64, tn * BN, epi_seq);
    }
    if (t == 0) bulk_wait<0>();  // this warpgroup's stores are complete before the CTA may exit
  }
  cluster_sync_all();  // no CTA leaves while its peer may still write its slots or arrive on its barriers
#else
  __trap();  // clusters, TMA, wgmma and setmaxnreg need an sm_90a image: the host refuses first
#endif
}


// ---- Pingpong: the two consumer warpgroups take turns on the tensor cores -----------------
//
// The cooperative kernel above splits each tile between its two consumer warpgroups, so both
// finish the k-loop together and both write C while the tensor cores idle: at k = 1024 the
// tensor pipe is active 81.5% of the time (ncu, 8192x8192x1024), where cuBLAS's pingpong
// kernels (nvjet_sm90_tst_176x128_..._TNN, no "coop" in the name) hold it at 96%. Here each
// warpgroup owns whole 128 x BN tiles (two m64nBNk16 per k16 step sharing B's descriptor, BN
// accumulator registers) and a CTA's tiles alternate between them: while one writes its
// tile's C, the other runs its k-loop. An ordering barrier pair hands the tensor cores over:
// warpgroup c waits on named barrier 3 + c before its tile's first wgmma, and the other
// arrives there once it has issued its own tile's last one.
// Clusters, multicast and tile order are the cooperative kernel's (pairs along M share B's
// slice, each CTA loads half of it); empty[s] counts the owning warpgroup's 4 warps in both
// CTAs (both CTAs walk the same tile sequence, so the same warpgroup owns use u of slot s).
// A warpgroup skips the other's k-blocks by position: use u of the CTA's k-block sequence sits
// in slot u % stages at parity (u / stages) & 1. A parity wait cannot tell phases two apart,
// but the ordering makes it exact: when warpgroup c waits for use u, the fill of use u - stages
// has been waited for already (by c itself, or by the other warpgroup before it handed over).
template <int BN>
struct pp_config {
  static constexpr int a_bytes = bm * bk * 2, b_bytes = BN * bk * 2, b_half_bytes = b_bytes / 2;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static constexpr int epi_bytes = 2 * epi_bufs * epi_box_bytes;                        // 32 KB
  static constexpr int stages = (232448 - 1152 - 1024 - epi_bytes) / stage_bytes;       // 6 at BN = 128
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * stage_bytes + epi_bytes + 1024;
};
static_assert(pp_config<192>::b_half_bytes % 1024 == 0 && pp_config<160>::b_half_bytes % 1024 == 0,
              "B halves must be whole 128-byte-swizzle atoms");
static_assert(pp_config<192>::smem_bytes <= 232448 - 1152 && pp_config<160>::smem_bytes <= 232448 - 1152,
              "stages + staging + alignment + static barriers fit 227 KB");
/// The 16-bit C box row of a pingpong tile: 128 bytes (64 columns) where they divide BN, else 64.
template <int BN>
constexpr int pp_box_bytes16 = BN % 64 == 0 ? 128 : 64;

template <class In, int BN>
__global__ void __launch_bounds__(threads, 1)
    pingpong_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                    const __grid_constant__ CUtensorMap tmap_c, problem p, int tma_store) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using cfg = pp_config<BN>;
  constexpr int stages = cfg::stages;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ std::uint64_t full[stages], empty[stages];
  std::uint32_t const base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  std::uint32_t const epi_base = base + stages * cfg::stage_bytes;
  cl_grid<BN> const g(p);
  int const jobs = g.cluster < g.ctiles ? (g.ctiles - g.cluster + g.clusters - 1) / g.clusters : 0;  // tiles of this CTA
  int const tid = threadIdx.x, wg = tid / 128, t = tid % 128;
  init_slots(full, empty, 4 * cluster_size);  // the owning warpgroup's warps in both CTAs

  if (wg == 0) {
    setmaxnreg_dec<24>();  // 24 + 2 x 240 registers a thread: 192 accumulators and no spills
    if (t == 0) produce<cfg>(g, p, &tmap_a, &tmap_b, base, full, empty);
  } else {
    setmaxnreg_inc<240>();
    int const c = wg - 1;
    int const lane = t % 32;
    float acc0[BN / 2], acc1[BN / 2];  // rows 0-63 and 64-127 of the warpgroup's tile
    unsigned epi_seq = 0;
    auto release = [&](int slot) {
      if (lane < cluster_size) mbar_arrive_cluster(&empty[slot], static_cast<unsigned>(lane));
    };
    for (int j = c; j < jobs; j += 2) {
      int tm, tn;
      bool const live = g.tile(g.cluster + j * g.clusters, tm, tn);
      if (j > 0) named_bar_sync(3 + c, 256);  // the other warpgroup has issued tile j - 1
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) acc0[i] = acc1[i] = 0.f;
      std::int64_t const u0 = static_cast<std::int64_t>(j) * g.nk;  // the CTA's k-blocks before this tile
      int s = static_cast<int>(u0 % stages);
      unsigned phase = static_cast<unsigned>(u0 / stages) & 1u;
      int prev = -1;
      for (int kb = 0; kb < g.nk; ++kb) {
        mbar_wait(&full[s], phase);
        if (live) {
          std::uint32_t const sa = base + s * cfg::stage_bytes, sb = sa + cfg::a_bytes;
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < bk / 16; ++kk) {
            std::uint64_t const db = smem_desc(sb + kk * 32);
            cl_wgmma_k16<In, BN>(acc0, smem_desc(sa + kk * 32), db);
            cl_wgmma_k16<In, BN>(acc1, smem_desc(sa + 64 * 128 + kk * 32), db);
          }
          wgmma_commit();
          wgmma_wait<1>();
          if (prev >= 0) release(prev);
          prev = s;
        } else {
          release(s);
        }
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
      if (j + 1 < jobs) named_bar_arrive(3 + (1 - c), 256);  // the tensor cores are the other's
      wgmma_wait<0>();
      fence_regs(acc0);
      fence_regs(acc1);
      if (prev >= 0) release(prev);
      if (!live) continue;
      std::uint32_t const bufs = epi_base + c * epi_bufs * epi_box_bytes;
      store_rows<In, BN, pp_box_bytes16<BN>>(acc0, p, tma_store != 0, &tmap_c, bufs, t, 1 + c, tm * bm, tn * BN, epi_seq);
      store_rows<In, BN, pp_box_bytes16<BN>>(acc1, p, tma_store != 0, &tmap_c, bufs, t, 1 + c, tm * bm + 64, tn * BN, epi_seq);
    }
    if (t == 0) bulk_wait<0>();
  }
  cluster_sync_all();
#else
  __trap();
#endif
}

/// One of rung 6's kernels and what its launch needs: the kernel, its configuration (dynamic
/// shared memory) and the row bytes of its 16-bit C boxes (FP32 C always takes 128).
template <class In, int BN, bool Pingpong>
struct rung6 {
  using cfg = std::conditional_t<Pingpong, pp_config<BN>, cl_config<BN>>;
  static constexpr int box16 = Pingpong ? pp_box_bytes16<BN> : 128;
  static auto kernel() {
    if constexpr (Pingpong) return pingpong_kernel<In, BN>;
    else return cluster_kernel<In, BN>;
  }
};
template <class In, int BN>
using cooperative = rung6<In, BN, false>;
template <class In, int BN>
using pingpong = rung6<In, BN, true>;

/// How many clusters of kernel K the device runs at once (cached per device): the persistent
/// grid, since a GPC may not hold an even number of free SMs. Also where K's dynamic shared
/// memory limit is raised (once per device, before any launch of K).
template <class K>
int max_active_clusters() {
  return memlab::detail::per_device([] {
    auto kernel = K::kernel();
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(K::cfg::smem_bytes)));
    cudaLaunchAttribute attr[1];
    cudaLaunchConfig_t const cfg = cluster_launch_config(attr, cluster_size, cluster_size, threads, K::cfg::smem_bytes, nullptr);
    int n = 0;
    MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &cfg));
    if (n < 1) throw memlab::error("gemm_tc cluster rung: no cluster of 2 blocks fits on this device");
    return n;
  });
}

/// Launches kernel K (tiles 128 x BN in pairs along M) over min(cluster tiles, max active
/// clusters) clusters: A's and half of B's tensor maps, C's for the TMA store where C allows it.
template <class In, int BN, class K>
void launch(problem const& p, cudaStream_t st) {
  std::int64_t const ctiles = ((p.m + 2 * bm - 1) / (2 * bm)) * ((p.n + BN - 1) / BN);
  MEMLAB_EXPECTS(ctiles <= 0x3fffffff, "too many tiles for one grid");
  bool const f16 = std::is_same_v<In, __half>;
  CUtensorMap ta, tb, tc;
  make_tensor_map(&ta, p.a, f16, p.m, p.k, p.a_si, bm);
  make_tensor_map(&tb, p.b, f16, p.n, p.k, p.b_sj, BN / 2);  // each CTA of the pair loads half
  std::size_t const out_bytes = p.c_f32 ? 4 : 2;
  bool const tma_store = p.beta == 0.f && reinterpret_cast<std::uintptr_t>(p.c) % 16 == 0 &&
                         (static_cast<std::size_t>(p.ldc) * out_bytes) % 16 == 0;
  std::memset(&tc, 0, sizeof tc);
  if (tma_store) make_store_map(&tc, p.c, p.c_f32, f16, p.m, p.n, p.ldc, epi_rows, p.c_f32 ? 128 : K::box16);
  auto kernel = K::kernel();
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(K::cfg::smem_bytes)));
  std::int64_t const clusters = std::min<std::int64_t>(ctiles, max_active_clusters<K>());
  cudaLaunchAttribute attr[1];
  cudaLaunchConfig_t const cfg = cluster_launch_config(attr, cluster_size, static_cast<unsigned>(clusters * cluster_size),
                                                       threads, K::cfg::smem_bytes, st);
  MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, ta, tb, tc, p, tma_store ? 1 : 0));
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace

namespace {
std::atomic<int> forced_kernel{static_cast<int>(cluster_family::automatic)};

template <class In>
cluster_tile pick(std::int64_t m, std::int64_t n, std::int64_t k) {
  return cluster_pick(m, n, k, max_active_clusters<cooperative<In, 256>>(), max_active_clusters<pingpong<In, 192>>(),
                      max_active_clusters<pingpong<In, 160>>(), current_cluster_family());
}
}  // namespace

void set_cluster_family(cluster_family k) { forced_kernel.store(static_cast<int>(k)); }
cluster_family current_cluster_family() { return static_cast<cluster_family>(forced_kernel.load()); }

std::string cluster_kernel_name(bool f16, std::int64_t m, std::int64_t n, std::int64_t k) {
  return cluster_tile_name(f16 ? pick<__half>(m, n, k) : pick<__nv_bfloat16>(m, n, k));
}

template <class In>
void launch_cluster(problem const& p, cudaStream_t st) {
  switch (pick<In>(p.m, p.n, p.k)) {
    case cluster_tile::coop_128x256: launch<In, 256, cooperative<In, 256>>(p, st); break;
    case cluster_tile::coop_128x128: launch<In, 128, cooperative<In, 128>>(p, st); break;
    case cluster_tile::pingpong_128x192: launch<In, 192, pingpong<In, 192>>(p, st); break;
    case cluster_tile::pingpong_128x160: launch<In, 160, pingpong<In, 160>>(p, st); break;
  }
}

std::size_t smem_cluster() {
  return std::max({cl_config<256>::smem_bytes, cl_config<128>::smem_bytes, pp_config<192>::smem_bytes, pp_config<160>::smem_bytes});
}

template void launch_cluster<__half>(problem const&, cudaStream_t);
template void launch_cluster<__nv_bfloat16>(problem const&, cudaStream_t);

}  // namespace memlab::detail::gemm_tc
