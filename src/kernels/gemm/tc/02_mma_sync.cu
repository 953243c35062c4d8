// Rung 2: mma.sync m16n8k16 (m16n8k32 for FP8 E4M3, sm_89+) fed by ldmatrix from a 5-stage
// cp.async pipeline (4 for FP8; 3 where 100 KB an SM holds two blocks of no more, sm_86/89) that
// refills each slot before the slice's mma (after the barrier below 5 stages). 128 x 128 tiles,
// k slices of 64 bytes (32 BF16/FP16 or 64 FP8 elements: the same bytes, so the same shared
// layout, fragments and ldmatrix addresses), four warps (2 x 2) of 64 x 64 and two blocks per SM:
// per k16 step a warp issues 8 ldmatrix.x4 for 32 mma (4 per ldmatrix), its fragments double-buffered in
// registers so that each step's ldmatrix (and the slice's barrier) overlap the previous step's
// mma, and while one block waits at its barrier the other's warps keep the tensor pipe busy
// (docs/tc-gemm.md, "Rung 2: two blocks per SM", "Session 12"). Where k >= 2048 and an SM holds as
// many warps of it, the one-pass grid runs 128 x 256 tiles instead, eight such warps in one block an
// SM: a quarter fewer L2 bytes a flop, which at the power cap buys clock (mma_sync_takes_wide;
// docs/tc-gemm.md, "Session 35"). Interior tiles copy without
// bounds checks from one pointer per operand. Shared rows are 64 bytes (four 16-byte chunks);
// chunk c of row r lives at c ^ ((r >> 1) & 3), so
// the eight rows one ldmatrix phase reads (and the eight chunks a cp.async phase writes) hit
// eight different 16-byte bank groups: no conflicts without padding. Needs the canonical
// K-major layout and 16-byte aligned rows (docs/tc-gemm.md); the k tail is zero-filled by
// cp.async's src-size. Where the tiles fill at most half the device (decode batches: m = 128),
// K is split (split_k.hpp): each split's block writes its raw FP32 partial tile to a workspace
// and a second kernel adds the partials in split order and applies alpha, beta and C's type,
// so the result does not depend on which block finished first. The split grid's blocks are short
// and stream their k range from DRAM: for BF16 and FP16 they run 5 stages (split_stages), on
// sm_86/89 at one block an SM, where 3 stages at two measured slower (pick_stages). FP16 below
// sm_80 (Turing: no cp.async) runs mma_sync_turing_kernel: the same tiles, loads staged through
// registers, mma.sync m16n8k8.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "kernels/gemm/tc/split_k.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "memlab/arch.hpp"
#include "memlab/detail/per_device.hpp"
#include "memlab/detail/stream_scratch.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {

/// Byte offset of (row, 16-byte chunk) in a tile of 64-byte rows, swizzled.
__host__ __device__ constexpr int mma_sync_swizzle(int row, int chunk) { return row * 64 + ((chunk ^ ((row >> 1) & 3)) * 16); }

namespace {

/// The rung's configuration: 128 x 128 tiles, k slices of 64 bytes, `Stages` stages of 16 KB,
/// four warps (2 x 2) of 64 x 64, at least two blocks per SM. docs/tc-gemm.md, "Rung 2: two
/// blocks per SM", has the alternatives measured against it. Sizes in bytes where they are the
/// same for every input type. Which stage count a grid runs: pick_stages (5 or 4 on sm_80 and
/// sm_90, where two blocks of them fit; 3 for the one-pass grid on sm_86/89's 100 KB).
template <int Stages, int BN = 128>
struct rung_config_t {
  static constexpr int bm = 128, bn = BN, row_bytes = 64, stages = Stages;
  static constexpr int warp_n = 64, n8_per_warp = warp_n / 8;  // m16n8 column blocks per warp
  // 2 x (bn / 64) warps of 64 x 64: two blocks of four an SM at 128 x 128, one of eight at 128 x 256.
  static constexpr int threads = 32 * 2 * (bn / warp_n), min_blocks = bn == 128 ? 2 : 1;
  static constexpr int tile_bytes = (bm + bn) * row_bytes;  // one stage: A tile then B tile
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * tile_bytes;
  // 16-byte chunks a thread copies per stage: rows tid / 4 + i threads / 4, chunk tid % 4.
  static constexpr int chunks = row_bytes / 16;
  static constexpr int a_iters = bm * chunks / threads, b_iters = bn * chunks / threads;
  static constexpr int rows_per_iter = threads / chunks;
  static_assert(n8_per_warp % 2 == 0 && (threads / 64) * warp_n == bn,
                "ldmatrix.x4 loads B fragments in pairs; the warps span bn");
  static_assert(row_bytes == 64, "mma_sync_swizzle assumes 64-byte rows");
  static_assert(bm * chunks % threads == 0 && bn * chunks % threads == 0, "each thread copies whole 16-byte chunks");
  // A thread's rows step by a multiple of 8: its chunk's swizzle ((row >> 1) & 3) is the same
  // for every chunk it copies, so one shared offset and one pointer per operand serve them all.
  static_assert(rows_per_iter % 8 == 0, "a thread's rows keep one swizzle phase");
  static_assert(stages >= 3, "the pipeline keeps two slices in flight beyond the one in use");
};
using rung_config = rung_config_t<4>;
/// Stages of the one-pass grid's kernel for BF16 and FP16: 5 (80 KB) with the refill issued before
/// each slice's mma (the `Early` loop), which keeps 3 slices ahead, as 4 stages refilled after the
/// barrier do: +3-13% on the H200 at 3000x5000x2000, 8192x8192x1024 and 4096x11008x4096, the other
/// shapes level within the power cap's spread (docs/tc-gemm.md, "Session 24"). Two blocks of
/// 80 KB still fit an A100's 164 KB; where they would not, the launch takes the deepest kernel an
/// SM holds two of (pick_stages: 3 stages on sm_86/89). FP8 keeps 4 stages and the old loop: on
/// Hopper its mma.sync unpacks to FP16 HMMA and the kernel spills 116 bytes (none for sm_89, Ada,
/// its own target), so no Hopper timing speaks for the cards that run it.
template <class In>
constexpr int one_pass_stages = sizeof(In) == 1 ? 4 : 5;
template <class In>
constexpr bool one_pass_early = sizeof(In) == 2;

/// Stages of the split grid: 5 (80 KB), which still fits two blocks on an A100's 164 KB and the
/// H100's 228 KB, for BF16 and FP16 (+1.5-8% on the H100 against 4; 6 no better); FP8 keeps 4
/// (its 5-stage kernel spills and measured 1-2% slower). docs/tc-gemm.md, "Session 21". The early
/// refill measured mixed here on the H100 (5 stages: -5% at 64x14336x4096, +2% at 128x4096x4096;
/// 6: -3% to -6.5% and +1.5% at 128x8192x28672, and 96 KB holds one block on an A100): "Session 25".
template <class In>
constexpr int split_stages = sizeof(In) == 1 ? 4 : 5;

/// K split `splits` ways (1: the kernel writes C itself). Split s of a tile runs the k slices
/// [s nk / splits, (s + 1) nk / splits) and writes its raw sums to ws + s * m * ws_ld (row-major,
/// ws_ld a multiple of 32 floats).
struct mma_split {
  int splits = 1;
  float* ws = nullptr;
  std::int64_t ws_ld = 0;
};

/// M tiles a group walks before moving right (grouped_tile): 8 x 128 rows of A stay in L2 while
/// the group sweeps B's columns, where walking down M first (one column of B at a time) streams
/// all of A again for every few columns once A outgrows L2 (8192^3: 128 MiB).
inline constexpr int mma_sync_group_m = 8;

/// This block's tile origin (row0, col0) and split: block x runs split x / tiles of tile x % tiles,
/// the tiles in mma_sync_group_m-tall groups (Grouped), or down M first, one column of B at a
/// time: the FP8 kernel, which measured 2-5% slower grouped at 4096³, 8192³, 3000x5000x2000 and
/// 128x8192x28672 on the H200 (docs/tc-gemm.md, "Session 23"; it spills 108-116 bytes on sm_90a
/// in either order).
template <bool Grouped>
__device__ __forceinline__ int mma_sync_tile(problem const& p, int bm, int bn, std::int64_t& row0, std::int64_t& col0) {
  std::int64_t const tiles_m = (p.m + bm - 1) / bm, tiles_n = (p.n + bn - 1) / bn, tiles = tiles_m * tiles_n;
  std::int64_t const tile = static_cast<std::int64_t>(blockIdx.x) % tiles;
  if constexpr (Grouped) {
    int tm = 0, tn = 0;
    grouped_tile(static_cast<int>(tile), static_cast<int>(tiles_m), static_cast<int>(tiles_n), mma_sync_group_m, tm, tn);
    row0 = static_cast<std::int64_t>(tm) * bm;
    col0 = static_cast<std::int64_t>(tn) * bn;
  } else {
    row0 = (tile % tiles_m) * bm;
    col0 = (tile / tiles_m) * bn;
  }
  return static_cast<int>(static_cast<std::int64_t>(blockIdx.x) / tiles);
}

/// A warp's 64 x (8 N8) accumulators out: each m16n8 block holds the pairs (r, c) and (r + 8, c) of
/// C. With K split, the raw partial sums go to the split's slice of the workspace (ws_ld rounds n up
/// to 32, so a pair starting inside n fits its row); otherwise alpha, beta and C's type apply.
template <class In, int N8>
__device__ __forceinline__ void store_warp_tile(problem const& p, mma_split const& sp, int split, float (&acc)[4][N8][4],
                                                std::int64_t row0, std::int64_t col0, int lane) {
  int const g = lane / 4, t4 = lane % 4;
  auto const each_pair = [&](auto&& put) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < N8; ++j) {
        std::int64_t const r = row0 + 16 * i + g, c = col0 + 8 * j + 2 * t4;
        put(r, c, acc[i][j][0], acc[i][j][1]);
        put(r + 8, c, acc[i][j][2], acc[i][j][3]);
      }
  };
  if (sp.splits > 1) {
    float* const w = sp.ws + static_cast<std::int64_t>(split) * p.m * sp.ws_ld;
    each_pair([&](std::int64_t r, std::int64_t c, float v0, float v1) {
      if (r < p.m && c < p.n) *reinterpret_cast<float2*>(w + r * sp.ws_ld + c) = make_float2(v0, v1);
    });
  } else {
    each_pair([&](std::int64_t r, std::int64_t c, float v0, float v1) {
      store_pair<typename operand_traits<In>::c16>(p, r, c, v0, v1);
    });
  }
}

template <class In, int Stages = 4, bool Early = false, int BN = 128>
__global__ void __launch_bounds__(rung_config_t<Stages, BN>::threads, rung_config_t<Stages, BN>::min_blocks)
    mma_sync_kernel(problem p, mma_split sp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  using Cfg = rung_config_t<Stages, BN>;
  constexpr int bm = Cfg::bm, bn = Cfg::bn, stages = Cfg::stages, threads = Cfg::threads;
  constexpr int e = static_cast<int>(sizeof(In));                       // bytes an element
  constexpr int bk = Cfg::row_bytes / e, chunk_elems = 16 / e;          // elements a row, a chunk
  constexpr int tile_elems = Cfg::tile_bytes / e, n8_per_warp = Cfg::n8_per_warp, warps_n = bn / Cfg::warp_n;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  In* smem = reinterpret_cast<In*>(smem_raw);
  // Blocks walk the tiles in groups of mma_sync_group_m along M (mma_sync_tile). With K split,
  // block x runs split x / tiles of tile x % tiles (neighbours share A's k range).
  std::int64_t row0, col0;
  int const split = mma_sync_tile<sizeof(In) == 2>(p, bm, bn, row0, col0);
  int const tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  int const wm = (warp / warps_n) * 64, wn = (warp % warps_n) * Cfg::warp_n;
  In const* a = static_cast<In const*>(p.a);
  In const* b = static_cast<In const*>(p.b);
  int const nk_all = static_cast<int>((p.k + bk - 1) / bk);
  int const kb0 = static_cast<int>(static_cast<std::int64_t>(split) * nk_all / sp.splits);
  int const nk = static_cast<int>(static_cast<std::int64_t>(split + 1) * nk_all / sp.splits) - kb0;  // this block's slices

  // The copy plan, fixed for the block: this thread's first row and chunk, its shared offset
  // (the same swizzle phase for all its rows) and its first source element in A and in B.
  int const r_first = tid / Cfg::chunks, ch = tid % Cfg::chunks;
  int const s_first = mma_sync_swizzle(r_first, ch) / e;
  In const* a_first = a + (row0 + r_first) * p.a_si + ch * chunk_elems;
  In const* b_first = b + (col0 + r_first) * p.b_sj + ch * chunk_elems;
  std::int64_t const a_step = Cfg::rows_per_iter * p.a_si, b_step = Cfg::rows_per_iter * p.b_sj;
  bool const interior = row0 + bm <= p.m && col0 + bn <= p.n;

  auto load_stage = [&](int slot, int kb) {  // kb: this block's slice number
    In* sa = smem + slot * tile_elems;
    In* sb = sa + bm * bk;
    std::int64_t const k0 = static_cast<std::int64_t>(kb0 + kb) * bk;
    if (interior && k0 + bk <= p.k) {  // the common case: every chunk whole, no checks
#pragma unroll
      for (int i = 0; i < Cfg::a_iters; ++i)
        cp_async_16_l2_128(smem_addr(sa + s_first + i * threads * chunk_elems), a_first + i * a_step + k0, 16);
#pragma unroll
      for (int i = 0; i < Cfg::b_iters; ++i)
        cp_async_16_l2_128(smem_addr(sb + s_first + i * threads * chunk_elems), b_first + i * b_step + k0, 16);
      return;
    }
    std::int64_t const left = p.k - (k0 + ch * chunk_elems);
    int const kbytes = left > 0 ? static_cast<int>(left >= chunk_elems ? 16 : left * e) : 0;
#pragma unroll
    for (int i = 0; i < Cfg::a_iters; ++i) {
      bool const ok = row0 + r_first + i * Cfg::rows_per_iter < p.m && kbytes > 0;
      cp_async_16_l2_128(smem_addr(sa + s_first + i * threads * chunk_elems), ok ? a_first + i * a_step + k0 : a, ok ? kbytes : 0);
    }
#pragma unroll
    for (int i = 0; i < Cfg::b_iters; ++i) {
      bool const ok = col0 + r_first + i * Cfg::rows_per_iter < p.n && kbytes > 0;
      cp_async_16_l2_128(smem_addr(sb + s_first + i * threads * chunk_elems), ok ? b_first + i * b_step + k0 : b, ok ? kbytes : 0);
    }
  };

  float acc[4][n8_per_warp][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < n8_per_warp; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

  // Fragment addresses. The swizzle phase ((row >> 1) & 3) of every row this lane addresses
  // depends on the lane alone (the rows step by 16 across m16 / n16 blocks), so one shared
  // address per operand serves a slice: m16 block i is +i * 16 rows (1 KB), n16 block j
  // likewise, and the second k16 step's chunk is the first's with bit 1 flipped, i.e. the
  // address XOR 32 (bits 4-5 of a row's 64 bytes hold the chunk; the stage bases are 1 KB apart).
  std::uint32_t const smem0 = smem_addr(smem);
  std::uint32_t const a_lane = static_cast<std::uint32_t>(mma_sync_swizzle(wm + lane % 16, lane / 16));
  std::uint32_t const b_lane =
      static_cast<std::uint32_t>(bm * Cfg::row_bytes + mma_sync_swizzle(wn + (lane / 16) * 8 + lane % 8, (lane / 8) % 2));
  constexpr std::uint32_t stage_bytes = Cfg::tile_bytes, block16_bytes = 16 * Cfg::row_bytes;
  auto const stage_of = [&](int slice) { return smem0 + static_cast<std::uint32_t>(slice % stages) * stage_bytes; };
  // Two register sets of one k step's fragments (32 bytes of K: k16, or k32 for FP8): A's four
  // m16 blocks, B's four n16 pairs.
  std::uint32_t fa[2][4][4], fb[2][n8_per_warp / 2][4];
  auto load_frags = [&](int set, std::uint32_t stage, int step) {
    std::uint32_t const flip = step ? 32u : 0u;
#pragma unroll
    for (int i = 0; i < 4; ++i) ldmatrix_x4(fa[set][i], ((stage + a_lane) ^ flip) + i * block16_bytes);
#pragma unroll
    for (int j = 0; j < n8_per_warp / 2; ++j) ldmatrix_x4(fb[set][j], ((stage + b_lane) ^ flip) + j * block16_bytes);
  };
  auto mma_step = [&](int set) {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < n8_per_warp; ++j)
        mma_sync_step<In>(acc[i][j], fa[set][i], fb[set][j / 2][2 * (j % 2)], fb[set][j / 2][2 * (j % 2) + 1]);
  };

  if constexpr (Early) {
    // The one-pass grid's pipeline (docs/tc-gemm.md, "Session 24"): D = stages - 2 slices in
    // flight ahead of the one in use. Each slice starts by refilling the slot of slice kb - 2,
    // which the previous slice's barrier already freed, with slice kb + D, before its own mma:
    // the copies' address arithmetic no longer sits between the barrier and the second step's
    // mma, where it held the warp ~10% of the time (a register rewritten while the copy before
    // still read it). Then the first k16 step (its fragments in one register set, the second
    // step's loading into the other), the wait for slice kb + 1 and the barrier, the next
    // slice's first fragments, the second step: double-buffered fragments as in CUTLASS's sm80
    // mainloop. Five stages keep three slices ahead, as the 4-stage refill-after-barrier loop below.
    constexpr int D = stages - 2;
    static_assert(D >= 2, "the early refill keeps at least two slices in flight");
#pragma unroll
    for (int s = 0; s < D; ++s) {
      if (s < nk) load_stage(s, s);
      cp_async_commit();
    }
    cp_async_wait<D - 1>();  // slice 0 has landed
    __syncthreads();
    load_frags(0, smem0, 0);
    int rd = 0, wr = D;  // the slots of slice kb and of slice kb + D, counted round
    for (int kb = 0; kb < nk; ++kb) {
      // The refill's shared destination is computed here and held live past the first step's mma
      // (the empty asm below). Otherwise the compiler gives its register to the fragment address
      // computed next, and that write waits until the LDGSTS before it have read their operands:
      // 6.6% of the warps' stall samples on the H100 (long scoreboard), and 1.5-5% of the time
      // at 4096³, 8192³ and 8192x8192x1024 (docs/tc-gemm.md, "Session 25"). So the whole-slice
      // copy is written out here against dst rather than called through load_stage (which its
      // other callers keep: routing them through dst's arithmetic changed their PTX); edge tiles
      // and a slice past k's end take load_stage's checked copy.
      std::uint32_t const dst = smem0 + static_cast<std::uint32_t>(wr) * stage_bytes + static_cast<std::uint32_t>(s_first * e);
      std::int64_t const k0 = static_cast<std::int64_t>(kb0 + kb + D) * bk;
      if (kb + D < nk && interior && k0 + bk <= p.k) {
#pragma unroll
        for (int i = 0; i < Cfg::a_iters; ++i) cp_async_16_l2_128(dst + i * threads * 16, a_first + i * a_step + k0, 16);
#pragma unroll
        for (int i = 0; i < Cfg::b_iters; ++i)
          cp_async_16_l2_128(dst + bm * Cfg::row_bytes + i * threads * 16, b_first + i * b_step + k0, 16);
      } else if (kb + D < nk) {
        load_stage(wr, kb + D);
      }
      cp_async_commit();
      int const nx = rd + 1 == stages ? 0 : rd + 1;
      load_frags(1, smem0 + static_cast<std::uint32_t>(rd) * stage_bytes, 1);
      mma_step(0);
      asm volatile("" ::"r"(dst));  // dst's register stays taken until here
      cp_async_wait<D - 1>();  // slice kb + 1 has landed (this thread's copies)
      __syncthreads();         // ... everyone's; and everyone is done with slice kb - 1
      if (kb + 1 < nk) load_frags(0, smem0 + static_cast<std::uint32_t>(nx) * stage_bytes, 0);
      mma_step(1);
      rd = nx;
      wr = wr + 1 == stages ? 0 : wr + 1;
    }
  } else {
    // The split grid's and the FP8 kernel's pipeline: slices 0 .. stages - 2 in flight before the
    // loop; each slice's second k16 step starts by waiting for the NEXT slice and syncing (after
    // which nobody reads slice kb - 1, whose slot the refill takes), refills, and loads the next
    // slice's first fragments into the other register set before its own 32 mma.
#pragma unroll
    for (int s = 0; s < stages - 1; ++s) {
      if (s < nk) load_stage(s, s);
      cp_async_commit();
    }
    cp_async_wait<stages - 2>();  // slice 0 has landed
    __syncthreads();
    load_frags(0, stage_of(0), 0);
    // Two copies of one loop on purpose: slots by a mask where the stage count is a power of two
    // (the round counter of the other copy makes the 4-stage kernel spill 8 bytes), counted round
    // where it is not (a modulo by 5 spilled more).
    if constexpr ((stages & (stages - 1)) == 0) {
      for (int kb = 0; kb < nk; ++kb) {
        load_frags(1, stage_of(kb), 1);
        mma_step(0);
        cp_async_wait<stages - 3>();  // slice kb + 1 has landed (this thread's copies)
        __syncthreads();              // ... everyone's; and everyone is done with slice kb - 1
        if (kb + stages - 1 < nk) load_stage((kb + stages - 1) % stages, kb + stages - 1);
        cp_async_commit();
        if (kb + 1 < nk) load_frags(0, stage_of(kb + 1), 0);
        mma_step(1);
      }
    } else {
      int rd = 0;  // slice kb's slot; kb + 1's is the next, kb + stages - 1's (kb - 1's) the one before
      for (int kb = 0; kb < nk; ++kb) {
        int const nx = rd + 1 == stages ? 0 : rd + 1, wr = rd == 0 ? stages - 1 : rd - 1;
        load_frags(1, smem0 + static_cast<std::uint32_t>(rd) * stage_bytes, 1);
        mma_step(0);
        cp_async_wait<stages - 3>();
        __syncthreads();
        if (kb + stages - 1 < nk) load_stage(wr, kb + stages - 1);
        cp_async_commit();
        if (kb + 1 < nk) load_frags(0, smem0 + static_cast<std::uint32_t>(nx) * stage_bytes, 0);
        mma_step(1);
        rd = nx;
      }
    }
  }
  cp_async_wait<0>();

  store_warp_tile<In>(p, sp, split, acc, row0 + wm, col0 + wn, lane);
#else
  __trap();  // cp.async, ldmatrix and BF16 mma.sync need sm_80 (FP8 sm_89): the host refuses first
#endif
}

/// Rung 2 on Turing (sm_75: T4, RTX 20), FP16 only (Turing has no BF16 tensor cores). Turing has
/// ldmatrix and mma.sync m16n8k8 but no cp.async: each k slice's 16-byte chunks are loaded into
/// registers one slice ahead, under the current slice's mma, and stored to shared memory after it;
/// two stages (32 KB, static) so that two blocks share a T4's 64 KB. The tiles, the swizzle, the
/// ldmatrix fragments, the K split and the epilogue are rung 2's; each m16n8k16 of sm_80 is two
/// m16n8k8 here (the k16's two halves, from the same fragment registers).
struct turing_config {
  static constexpr int bm = 128, bn = 128, bk = 32, threads = 128, chunk_elems = 8;
  static constexpr int tile_elems = (bm + bn) * bk;  // one stage of 16-bit elements
  static constexpr int a_iters = bm * (bk / chunk_elems) / threads, b_iters = bn * (bk / chunk_elems) / threads;
  static constexpr int rows_per_iter = threads / (bk / chunk_elems);
};

template <class In>
__global__ void __launch_bounds__(turing_config::threads, 2) mma_sync_turing_kernel(problem p, mma_split sp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  static_assert(sizeof(In) == 2, "the Turing kernel takes FP16");
  using Cfg = turing_config;
  constexpr int bm = Cfg::bm, bn = Cfg::bn, bk = Cfg::bk, threads = Cfg::threads, chunk_elems = Cfg::chunk_elems;
  constexpr int tile_elems = Cfg::tile_elems, a_iters = Cfg::a_iters, b_iters = Cfg::b_iters;
  __shared__ __align__(128) std::uint16_t smem[2 * tile_elems];
  std::int64_t row0, col0;
  int const split = mma_sync_tile<true>(p, bm, bn, row0, col0);
  int const tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  int const wm = (warp / 2) * 64, wn = (warp % 2) * 64;
  auto const* a = static_cast<std::uint16_t const*>(p.a);
  auto const* b = static_cast<std::uint16_t const*>(p.b);
  int const nk_all = static_cast<int>((p.k + bk - 1) / bk);
  int const kb0 = static_cast<int>(static_cast<std::int64_t>(split) * nk_all / sp.splits);
  int const nk = static_cast<int>(static_cast<std::int64_t>(split + 1) * nk_all / sp.splits) - kb0;

  int const r_first = tid / (bk / chunk_elems), ch = tid % (bk / chunk_elems);
  int const s_first = mma_sync_swizzle(r_first, ch) / 2;
  std::uint16_t const* a_first = a + (row0 + r_first) * p.a_si + ch * chunk_elems;
  std::uint16_t const* b_first = b + (col0 + r_first) * p.b_sj + ch * chunk_elems;
  std::int64_t const a_step = Cfg::rows_per_iter * p.a_si, b_step = Cfg::rows_per_iter * p.b_sj;
  bool const interior = row0 + bm <= p.m && col0 + bn <= p.n;

  // One slice's chunks in registers. A chunk past k is zero; a chunk that k cuts is read element by
  // element (the row may end at k: its last chunk is not necessarily readable whole).
  uint4 staged[a_iters + b_iters];
  auto chunk = [&](std::uint16_t const* src, bool row_ok, std::int64_t left) {
    if (!row_ok || left <= 0) return make_uint4(0u, 0u, 0u, 0u);
    if (left >= chunk_elems) return *reinterpret_cast<uint4 const*>(src);
    std::uint16_t v[chunk_elems];
#pragma unroll
    for (int i = 0; i < chunk_elems; ++i) v[i] = i < left ? src[i] : std::uint16_t{0};
    return make_uint4(v[0] | (std::uint32_t{v[1]} << 16), v[2] | (std::uint32_t{v[3]} << 16), v[4] | (std::uint32_t{v[5]} << 16),
                      v[6] | (std::uint32_t{v[7]} << 16));
  };
  auto fetch = [&](int kb) {
    std::int64_t const k0 = static_cast<std::int64_t>(kb0 + kb) * bk;
    if (interior && k0 + bk <= p.k) {
#pragma unroll
      for (int i = 0; i < a_iters; ++i) staged[i] = *reinterpret_cast<uint4 const*>(a_first + i * a_step + k0);
#pragma unroll
      for (int i = 0; i < b_iters; ++i) staged[a_iters + i] = *reinterpret_cast<uint4 const*>(b_first + i * b_step + k0);
      return;
    }
    std::int64_t const left = p.k - (k0 + ch * chunk_elems);
#pragma unroll
    for (int i = 0; i < a_iters; ++i)
      staged[i] = chunk(a_first + i * a_step + k0, row0 + r_first + i * Cfg::rows_per_iter < p.m, left);
#pragma unroll
    for (int i = 0; i < b_iters; ++i)
      staged[a_iters + i] = chunk(b_first + i * b_step + k0, col0 + r_first + i * Cfg::rows_per_iter < p.n, left);
  };
  auto store = [&](int slot) {
    std::uint16_t* sa = smem + slot * tile_elems;
    std::uint16_t* sb = sa + bm * bk;
#pragma unroll
    for (int i = 0; i < a_iters; ++i) *reinterpret_cast<uint4*>(sa + s_first + i * threads * chunk_elems) = staged[i];
#pragma unroll
    for (int i = 0; i < b_iters; ++i) *reinterpret_cast<uint4*>(sb + s_first + i * threads * chunk_elems) = staged[a_iters + i];
  };

  float acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

  std::uint32_t const smem0 = smem_addr(smem);
  std::uint32_t const a_lane = static_cast<std::uint32_t>(mma_sync_swizzle(wm + lane % 16, lane / 16));
  std::uint32_t const b_lane = static_cast<std::uint32_t>(bm * 64 + mma_sync_swizzle(wn + (lane / 16) * 8 + lane % 8, (lane / 8) % 2));
  constexpr std::uint32_t stage_bytes = tile_elems * 2, block16_bytes = 16 * 64;

  fetch(0);
  store(0);
  __syncthreads();
  for (int kb = 0; kb < nk; ++kb) {
    if (kb + 1 < nk) fetch(kb + 1);  // in flight under this slice's mma
    std::uint32_t const stage = smem0 + static_cast<std::uint32_t>(kb & 1) * stage_bytes;
#pragma unroll
    for (int step = 0; step < 2; ++step) {
      std::uint32_t const flip = step ? 32u : 0u;
      std::uint32_t fa[4][4], fb[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i) ldmatrix_x4(fa[i], ((stage + a_lane) ^ flip) + i * block16_bytes);
#pragma unroll
      for (int j = 0; j < 4; ++j) ldmatrix_x4(fb[j], ((stage + b_lane) ^ flip) + j * block16_bytes);
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          mma_m16n8k8_f16(acc[i][j], fa[i][0], fa[i][1], fb[j / 2][2 * (j % 2)]);
          mma_m16n8k8_f16(acc[i][j], fa[i][2], fa[i][3], fb[j / 2][2 * (j % 2) + 1]);
        }
    }
    if (kb + 1 < nk) store((kb + 1) & 1);  // that stage was last read a slice ago, before the barrier
    __syncthreads();
  }

  store_warp_tile<In>(p, sp, split, acc, row0 + wm, col0 + wn, lane);
#else
  __trap();  // ldmatrix and mma.sync m16n8k8 need sm_75: the host refuses first
#endif
}

/// C = alpha * (the splits' partials added in split order) + beta * C. A thread owns four
/// consecutive columns of a row: one 16-byte load of each partial, all issued before the adds.
template <class C16>
__global__ void __launch_bounds__(256) mma_sync_reduce_kernel(problem p, float const* __restrict__ ws, std::int64_t ws_ld,
                                                              int splits) {
  std::int64_t const vcols = (p.n + 3) / 4, total = p.m * vcols, slice = p.m * ws_ld;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t const r = e / vcols, c = (e % vcols) * 4;
    float const* const src = ws + r * ws_ld + c;
    float4 v[mma_sync_max_splits];
#pragma unroll
    for (int s = 0; s < static_cast<int>(mma_sync_max_splits); ++s)
      if (s < splits) v[s] = __ldcs(reinterpret_cast<float4 const*>(src + s * slice));
    float4 sum = v[0];
#pragma unroll
    for (int s = 1; s < static_cast<int>(mma_sync_max_splits); ++s)
      if (s < splits) {
        sum.x += v[s].x;
        sum.y += v[s].y;
        sum.z += v[s].z;
        sum.w += v[s].w;
      }
    store_pair<C16>(p, r, c, sum.x, sum.y);
    store_pair<C16>(p, r, c + 2, sum.z, sum.w);
  }
}

}  // namespace

namespace {
std::atomic<int> forced_splits{0};
std::atomic<bool> forced_turing{false};
std::atomic<int> forced_stages{0};
std::atomic<int> forced_tile_n{0};

/// Rung 2 runs its Turing kernel where the device or the image is below sm_80 (FP16 only: the
/// host refuses BF16 there), or where a test forces it.
template <class In>
bool turing_path() {
  if constexpr (!std::is_same_v<In, __half>) {
    return false;
  } else {
    if (forced_turing.load()) return true;
    return detail::per_device([] {
      int dev = 0, major = 0;
      MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
      MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
      return major < 8 || compiled_arch(reinterpret_cast<void const*>(mma_sync_kernel<__nv_bfloat16>)) < 80;
    });
  }
}
}  // namespace

void set_mma_sync_turing(bool on) { forced_turing.store(on); }
bool forced_mma_sync_turing() { return forced_turing.load(); }

void set_mma_sync_splits(int splits) {
  MEMLAB_EXPECTS(splits >= 0 && splits <= static_cast<int>(mma_sync_max_splits),
                 "rung 2 splits K 1 to " + std::to_string(mma_sync_max_splits) + " ways (0: the rule); got " + std::to_string(splits));
  forced_splits.store(splits);
}
int forced_mma_sync_splits() { return forced_splits.load(); }

void set_mma_sync_stages(int stages) {
  MEMLAB_EXPECTS(stages == 0 || stages == 3 || stages == 4 || stages == 5,
                 "rung 2 runs 3, 4 or 5 stages (0: the rule); got " + std::to_string(stages));
  forced_stages.store(stages);
}
int forced_mma_sync_stages() { return forced_stages.load(); }

void set_mma_sync_tile_n(int bn) {
  MEMLAB_EXPECTS(bn == 0 || bn == 128 || bn == 256, "rung 2's tiles are 128 or 256 columns wide (0: the rule); got " + std::to_string(bn));
  forced_tile_n.store(bn);
}
int forced_mma_sync_tile_n() { return forced_tile_n.load(); }

/// Blocks of the rung's kernel at `Stages` (`Early`: the one-pass loop) an SM holds, once per device
/// (raising the kernel's shared-memory limit there first, which its launches rely on); 0 where the
/// device's opt-in limit is below the kernel's shared memory.
template <class In, int Stages, bool Early = false, int BN = 128>
int blocks_per_sm() {
  return detail::per_device([] {
    auto const kernel = mma_sync_kernel<In, Stages, Early, BN>;
    std::size_t const smem = rung_config_t<Stages, BN>::smem_bytes;
    int dev = 0, optin = 0;
    MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
    MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (smem > static_cast<std::size_t>(optin)) return 0;
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    int blocks = 0;
    MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, rung_config_t<Stages, BN>::threads, smem));
    return blocks;
  });
}

/// The one-pass grid's wide kernel (mma_sync_takes_wide): 128 x 256 tiles, eight warps, 5 stages
/// refilled early, for BF16 and FP16.
constexpr int wide_bn = 256, wide_stages = 5;
using wide_config = rung_config_t<wide_stages, wide_bn>;

/// Blocks of the Turing kernel an SM holds, once per device.
int turing_blocks_per_sm() {
  return detail::per_device([] {
    int blocks = 0;
    MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, mma_sync_turing_kernel<__half>, turing_config::threads, 0));
    return blocks;
  });
}

/// The kernel a grid of rung 2 runs, by its stages (mma_sync_kernel_pick): the deepest of `Deep`
/// (`DeepEarly`: the refill before the mma), 4 and 3 (down to `Shallowest`) that an SM holds as many
/// blocks of as the `Shallowest`-stage kernel, up to the two the rung is built for (min_blocks). The
/// second block hides each block's slice barrier (docs/tc-gemm.md, "Rung 2: two blocks per SM"; a
/// persistent one-block pipeline with no fill or drain between tiles recovered none of it, "Session
/// 26"): on sm_80 and sm_90 the deep kernels keep two. On sm_86/89 (100 KB of shared memory an
/// SM) only the 3-stage kernel's 48 KB does; the one-pass grid takes it there, the split grid
/// (Shallowest = 4: its short blocks stream their k range from DRAM and need the depth) keeps one
/// block of 5 stages ("Session 26": on the H100 held to 100 KB an SM, 3 stages at two blocks ran
/// 8192x8192x1024 13-18% and 8192^3 9-10% faster than 5 at one, two FP16 LLM shapes 4-6% slower,
/// and the decode batch's split grid took 29% longer). set_mma_sync_stages overrides it where the
/// grid has that kernel.
template <class In, int Deep, bool DeepEarly, int Shallowest>
mma_sync_pick pick_stages() {
  static_assert(Shallowest == 3 || Shallowest == 4, "the candidates are Deep, 4 and 3");
  static_assert(rung_config::min_blocks == 2, "mma_sync_depth wants up to two blocks an SM");
  struct candidates {
    int deep, four, three;
  };
  // One lookup a launch for the three (each blocks_per_sm is its own per-device cache).
  candidates const c = detail::per_device(
      [] { return candidates{blocks_per_sm<In, Deep, DeepEarly>(), blocks_per_sm<In, 4>(), blocks_per_sm<In, 3>()}; });
  auto const blocks_of = [&](int stages) { return stages == Deep ? c.deep : stages == 4 ? c.four : c.three; };
  int const forced = forced_stages.load();  // set_mma_sync_stages, where the grid has that kernel and it fits
  if ((forced == Deep || forced == 4 || forced == 3) && blocks_of(forced) > 0) return {forced, blocks_of(forced)};
  int const stages = mma_sync_depth(Deep, c.deep, c.four, c.three, Shallowest);
  return {stages, blocks_of(stages)};
}

template <class In>
mma_sync_pick mma_sync_kernel_pick(bool split_grid) {
  if (turing_path<In>()) return {2, turing_blocks_per_sm()};  // FP16 below sm_80: the Turing kernel's two stages
  return split_grid ? pick_stages<In, split_stages<In>, false, 4>() : pick_stages<In, one_pass_stages<In>, one_pass_early<In>, 3>();
}

/// What rung 2 runs for a problem: the K split, and the kernel of that grid (mma_sync_kernel_pick;
/// the Turing kernel below sm_80). Each launch plans once.
struct mma_sync_plan {
  int splits = 1;
  bool turing = false;  ///< FP16 below sm_80 (turing_path): mma_sync_turing_kernel
  mma_sync_pick kernel;
};
template <class In>
mma_sync_plan plan_mma_sync(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count) {
  using Cfg = rung_config;
  std::int64_t const tiles = ((m + Cfg::bm - 1) / Cfg::bm) * ((n + Cfg::bn - 1) / Cfg::bn);
  // The split grid's slots: SMs x the blocks an SM holds of its kernel (2 on sm_80, sm_86/89 and
  // sm_90; the Turing kernel 2 on a T4).
  mma_sync_pick const split_kernel = mma_sync_kernel_pick<In>(true);
  std::int64_t const bk = Cfg::row_bytes / static_cast<int>(sizeof(In));
  int const slices = static_cast<int>((k + bk - 1) / bk);
  mma_sync_plan plan;
  plan.turing = turing_path<In>();
  if (int const forced = forced_splits.load(); forced > 0) {
    plan.splits = std::max(1, std::min(forced, slices));  // a slice each at least
  } else {
    double const partial_bytes = 4.0 * static_cast<double>(m) * static_cast<double>(n);
    double const tile_flops = 2.0 * static_cast<double>(tiles) * Cfg::bm * Cfg::bn * static_cast<double>(slices) * static_cast<double>(bk);
    plan.splits = static_cast<int>(mma_sync_splits(tiles, slices, sm_count * split_kernel.blocks, partial_bytes, tile_flops));
  }
  plan.kernel = plan.splits > 1 ? split_kernel : mma_sync_kernel_pick<In>(false);
  if constexpr (sizeof(In) == 2) {
    if (plan.splits == 1 && !plan.turing) {
      int const forced = forced_tile_n.load();
      int const wide = blocks_per_sm<In, wide_stages, true, wide_bn>();
      // The rule's pick only where no depth is forced (gemm.tc_stages' rows run the depth they name).
      bool const take = forced == 0 ? forced_stages.load() == 0 &&
                                          mma_sync_takes_wide(k, wide * wide_config::threads / 32, plan.kernel.blocks * Cfg::threads / 32)
                                    : forced == wide_bn && wide > 0;
      if (take) plan.kernel = {wide_stages, wide, wide_bn};
    }
  }
  return plan;
}

template <class In>
int mma_sync_split_count(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count) {
  return plan_mma_sync<In>(m, n, k, sm_count).splits;
}

template <class In>
std::string mma_sync_kernel_name(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count) {
  mma_sync_plan const plan = plan_mma_sync<In>(m, n, k, sm_count);
  std::string name = "128x" + std::to_string(plan.kernel.bn) + ", " + std::to_string(plan.kernel.stages) + " stages, " + std::to_string(plan.kernel.blocks) + " blocks/SM";
  if (plan.splits > 1) name += ", K split " + std::to_string(plan.splits) + " ways";
  return name;
}

/// Launches rung 2's `stages`-stage kernel for a grid whose deepest candidate is `Deep` stages
/// (`DeepEarly`: the refill before the mma); pick_stages chose it, and blocks_per_sm raised each
/// kernel's shared-memory limit on this device.
template <class In, int Deep, bool DeepEarly>
void launch_stages(int stages, problem const& p, mma_split const& sp, unsigned grid, cudaStream_t st) {
  constexpr int threads = rung_config::threads;
  if (stages == Deep)
    mma_sync_kernel<In, Deep, DeepEarly><<<grid, threads, rung_config_t<Deep>::smem_bytes, st>>>(p, sp);
  else if (stages == 4)
    mma_sync_kernel<In, 4><<<grid, threads, rung_config_t<4>::smem_bytes, st>>>(p, sp);
  else
    mma_sync_kernel<In, 3><<<grid, threads, rung_config_t<3>::smem_bytes, st>>>(p, sp);
}

template <class In>
void launch_mma_sync(problem const& p, cudaStream_t st, int sm_count) {
  using Cfg = rung_config;
  mma_sync_plan const plan = plan_mma_sync<In>(p.m, p.n, p.k, sm_count);
  if constexpr (sizeof(In) == 2) {
    if (plan.kernel.bn == wide_bn) {  // the one-pass grid's wide kernel (plan_mma_sync: 16-bit, sm_80+, no split)
      std::int64_t const wide_tiles = ((p.m + wide_config::bm - 1) / wide_config::bm) * ((p.n + wide_bn - 1) / wide_bn);
      MEMLAB_EXPECTS(wide_tiles <= 0x7fffffff, "too many mma_sync tiles for one grid");
      mma_sync_kernel<In, wide_stages, true, wide_bn>
          <<<static_cast<unsigned>(wide_tiles), wide_config::threads, wide_config::smem_bytes, st>>>(p, mma_split{});
      MEMLAB_CHECK_LAUNCH();
      return;
    }
  }
  std::int64_t const tiles = ((p.m + Cfg::bm - 1) / Cfg::bm) * ((p.n + Cfg::bn - 1) / Cfg::bn);
  mma_split sp;
  sp.splits = plan.splits;
  std::int64_t const blocks = tiles * sp.splits;
  MEMLAB_EXPECTS(blocks <= 0x7fffffff, "too many mma_sync tiles for one grid");
  auto const grid = static_cast<unsigned>(blocks);
  std::optional<detail::stream_scratch> ws;  // the splits' partials
  if (sp.splits > 1) {
    sp.ws_ld = (p.n + 31) / 32 * 32;  // 128-byte rows; > n when n is odd, so the last pair stays in its row
    ws.emplace(static_cast<std::size_t>(sp.splits) * static_cast<std::size_t>(p.m * sp.ws_ld) * sizeof(float), st, scratch_pool());
    sp.ws = static_cast<float*>(ws->get());
  }
  if (plan.turing) {  // FP16 below sm_80 (no cp.async): the Turing kernel, static shared memory
    if constexpr (std::is_same_v<In, __half>) mma_sync_turing_kernel<In><<<grid, turing_config::threads, 0, st>>>(p, sp);
  } else if (sp.splits > 1) {  // the split grid's short blocks (split_stages, down to 4)
    launch_stages<In, split_stages<In>, false>(plan.kernel.stages, p, sp, grid, st);
  } else {  // the one-pass grid (one_pass_stages, down to 3)
    launch_stages<In, one_pass_stages<In>, one_pass_early<In>>(plan.kernel.stages, p, sp, grid, st);
  }
  MEMLAB_CHECK_LAUNCH();
  if (sp.splits == 1) return;
  std::int64_t const vectors = p.m * ((p.n + 3) / 4);
  unsigned const reduce_grid = static_cast<unsigned>(std::min<std::int64_t>((vectors + 255) / 256, std::int64_t{sm_count} * 16));
  mma_sync_reduce_kernel<typename operand_traits<In>::c16><<<reduce_grid, 256, 0, st>>>(p, sp.ws, sp.ws_ld, sp.splits);
  MEMLAB_CHECK_LAUNCH();
}

void const* kernel_mma_sync() { return reinterpret_cast<void const*>(mma_sync_kernel<__nv_bfloat16>); }
std::size_t smem_mma_sync() { return rung_config_t<3>::smem_bytes; }  // the shallowest kernel

template int mma_sync_split_count<__half>(std::int64_t, std::int64_t, std::int64_t, int);
template int mma_sync_split_count<__nv_bfloat16>(std::int64_t, std::int64_t, std::int64_t, int);
template int mma_sync_split_count<__nv_fp8_e4m3>(std::int64_t, std::int64_t, std::int64_t, int);
template std::string mma_sync_kernel_name<__half>(std::int64_t, std::int64_t, std::int64_t, int);
template std::string mma_sync_kernel_name<__nv_bfloat16>(std::int64_t, std::int64_t, std::int64_t, int);
template std::string mma_sync_kernel_name<__nv_fp8_e4m3>(std::int64_t, std::int64_t, std::int64_t, int);
template mma_sync_pick mma_sync_kernel_pick<__half>(bool);
template mma_sync_pick mma_sync_kernel_pick<__nv_bfloat16>(bool);
template mma_sync_pick mma_sync_kernel_pick<__nv_fp8_e4m3>(bool);
template void launch_mma_sync<__half>(problem const&, cudaStream_t, int);
template void launch_mma_sync<__nv_bfloat16>(problem const&, cudaStream_t, int);
template void launch_mma_sync<__nv_fp8_e4m3>(problem const&, cudaStream_t, int);

}  // namespace memlab::detail::gemm_tc
