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
// bytes not a multiple of 16) stages C through the same buffers and stores it with the threads'
// own coalesced stores (staged_register_store) in the same kernel. The cooperative kernels
// defer 16-bit C's last m64 block of a tile (store_packed_box): packed to 16 bits, it is stored
// one box per k-block of the next tile, under that k-block's wgmmas (not at 128 x 128 tiles).
//
// Two kernels share all of the above (sessions 13-14, docs/tc-gemm.md): the cooperative one,
// whose two consumer warpgroups split each tile (64 x BN each at BM = 128; at 256 x 152, 128 x
// 152 each as two m64 blocks, the pair along N sharing A instead of B, C in 64-byte boxes plus
// an unswizzled tail box; at 128 x 64 the pair along N sharing A too, for one wave of few tiles),
// and the pingpong one, whose consumer warpgroups own whole 128 x BN
// tiles in turn (below, before its kernel). cluster_plan.hpp decides which runs for a shape.
//
// Stream-K (cl_units; sessions 27-28): where the cooperative 128-row kernel's cluster tiles leave
// the last wave part full and the idle k-blocks are worth it (cluster_stream_k_dp), a separate
// instance of the kernel splits the partial wave's tiles into one equal run of k-blocks a
// cluster, pieces of a tile meeting in global memory (FP32 partials, a flag each). That instance
// stores C at a tile's end rather than deferring it: its run state and the partials beside the
// 64 registers of packed C would spill.
//
// Operands stored transposed (session 30): the cooperative 128-row kernels also read a B stored
// k x n and an A stored k x m (16-bit inputs) as they are, in TMA boxes of 64 k-rows x 64
// columns laid where the K-major tile's rows go, with wgmma's transposed-operand bits (produce's
// Bkn and Akm; cluster_pick_mn picks the tile). Whole tiles only.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <utility>

#include "kernels/gemm/tc/cluster_plan.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/gemm/tc/wgmma_ops.cuh"
#include "memlab/detail/per_device.hpp"
#include "memlab/detail/stream_scratch.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {
namespace {

// A k-block is one 128-byte swizzled row of K per operand row (64 BF16/FP16 or 128 FP8
// elements, operand_traits::k_block), consumed as 4 wgmma slices of 32 bytes.
constexpr int row_bytes = 128, slices = row_bytes / 32, threads = 384, cluster_size = 2;
constexpr int epi_rows = 64, epi_bufs = 2;
constexpr int smem_limit = 232448 - 1152;  // Hopper's 227 KB a block, less the static barriers

/// What a tile BM x BN takes a stage: A (BM rows) and B (BN rows) of one 128-byte k-block, each CTA of
/// a pair loading half of the shared operand (see pair_share).
template <int BM, int BN>
struct tile_bytes {
  static constexpr int a_bytes = BM * row_bytes, b_bytes = BN * row_bytes, b_half_bytes = b_bytes / 2;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static_assert(BN % 8 == 0 && a_bytes % 2048 == 0 && b_bytes % 1024 == 0, "slots start on 1024-byte swizzle atoms");
};

/// The cooperative kernel's shared memory: slots, and two staging buffers a consumer warpgroup
/// for its C boxes (64 rows of Box16 bytes for 16-bit C, of Box32 for FP32). 128 x 256 and
/// 128 x 128 keep 192 KB of slots (4 and 6 stages) and 128-byte boxes; 256 x 152 takes 4
/// stages of 51 KB and so stages C in 64-byte boxes (16 KB in all).
template <int BM, int BN>
struct cl_config : tile_bytes<BM, BN> {
  using tile = tile_bytes<BM, BN>;
  static constexpr int box16 = BM == 128 ? 128 : 64, box32 = box16;
  static constexpr int epi_buf_bytes = epi_rows * box32;
  static constexpr int epi_bytes = 2 * epi_bufs * epi_buf_bytes;
  static constexpr int stages = BM == 128 ? (BN == 256 ? 4 : 6) : (smem_limit - 1024 - epi_bytes) / tile::stage_bytes;
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * tile::stage_bytes + epi_bytes + 1024;
  static_assert(BM == 128 || BM == 256, "each consumer warpgroup computes one or two m64 blocks");
  static_assert(stages >= 4 && smem_bytes <= smem_limit, "stages + staging + alignment fit 227 KB");
};

/// What the two CTAs of a cluster share by multicast: B, with their tiles a pair along M (every
/// kernel but one), or A, with their tiles a pair along N (the 256-row tiles, whose A slice is
/// the larger operand: 32 KB a k-block against B's 19 KB at BN = 152). Each CTA loads half of
/// the shared slice into the same offset of both CTAs; the peer's half must start on a
/// 1024-byte swizzle atom, so that the two TMA boxes lay out exactly like one box, the layout
/// the wgmma descriptor describes (76 rows, BN = 152's half of B, would not: so A is shared there;
/// sharing B split 80 + 72 rows measured level at 3000x5000x2000 and 12% slower at 4097^3).
enum class pair_share { b, a };

/// The maps a rung-6 kernel takes: the shared operand in half boxes (BN / 2 rows of B, or BM / 2
/// of A), the other in whole ones, C and C's tail box (one map where there is no tail) for the
/// TMA store.
struct cl_maps {
  CUtensorMap a, b, c, c_tail;
};

/// What a cooperative kernel's stream-K needs (cl_units below).
struct sk_args {
  float* partials = nullptr;            ///< a BM x BN FP32 slot per CTA (blockIdx.x), in the consumers' register order
  unsigned long long* flags = nullptr;  ///< a flag per CTA: `token` once its slot holds its partial
  unsigned long long token = 0;         ///< this launch's (no earlier launch's flag holds it)
  int dp = 0;                           ///< cluster tiles walked whole (the first dp in order); the rest are split
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// The byte offset of byte `byte` of row `row` in a staging box of BoxBytes-byte rows, as TMA's
/// swizzle lays it out: 16-byte chunk c of row r sits at chunk c ^ (r % 8) of a 128-byte row, or
/// c ^ ((r / 2) % 4) of a 64-byte one.
template <int BoxBytes>
__device__ __forceinline__ int epi_swizzle(int row, int byte) {
  if constexpr (BoxBytes == 128) return row * 128 + ((((byte >> 4) ^ (row & 7)) << 4) | (byte & 15));
  else return row * 64 + ((((byte >> 4) ^ ((row >> 1) & 3)) << 4) | (byte & 15));
}

/// One box of a TMA store epilogue: takes the next of the warpgroup's staging buffers (box `seq`
/// takes buffer seq % epi_bufs, BufBytes apart from `bufs`) once the store that last read it is
/// done, lets `write(buf, tb)` stage the box (`tb`: the thread's index in the warpgroup, hidden
/// from the compiler so that the box's addresses are recomputed rather than hoisted out of the
/// caller's tile loop: the pingpong kernel holds 192 accumulators there, and hoisted addresses
/// spilled), fences the writes for the async proxy, syncs the warpgroup on named barrier `bar_id`,
/// and one thread stores the box through `tmap` at (x, y). A box wholly outside C is not issued;
/// its (empty) group is still committed, so that "all groups but the newest" always means the
/// other buffer's store.
template <int BufBytes, class Write>
__device__ __forceinline__ void staged_store_box(std::uint32_t bufs, unsigned& seq, int t, int bar_id, Write&& write,
                                                 void const* tmap, int x, int y, std::int64_t m, std::int64_t n) {
  std::uint32_t const buf = bufs + (seq++ % epi_bufs) * BufBytes;
  if (t == 0) bulk_wait_read<epi_bufs - 1>();  // the store that last read `buf` is done with it
  named_bar_sync(bar_id, 128);
  int tb = t;
  asm volatile("" : "+r"(tb));
  write(buf, tb);
  fence_proxy_async_smem();  // each writer: its writes are visible to the TMA unit
  named_bar_sync(bar_id, 128);
  if (t == 0) {
    if (y < m && x < n) tma_store_2d(tmap, buf, x, y);
    bulk_commit();
  }
}

/// Stages box `bx` of a 64 x BN block of 16-bit C (BoxBytes-byte swizzled rows) from its packed
/// pairs, pair(i) holding accumulators 2 i and 2 i + 1; at bx == BN / box columns, the tail box
/// (BN % box columns, unswizzled). stmatrix.x4 writes two 8-column groups x both 8-row halves
/// of the warp's 16 rows at once (4 instructions a 128-byte box where st.shared.b32 took 16).
/// Lane i addresses row i % 8 of matrix q = i / 8: column group jj + q / 2, row half q % 2; each
/// matrix row is one 16-byte chunk, so the swizzle keeps the 8 rows of a matrix in 8 distinct
/// chunks. `bx` must be a constant after unrolling where `pair` reads registers.
template <int BN, int BoxBytes, class Pair>
__device__ __forceinline__ void write_box16(std::uint32_t buf, int tb, int bx, Pair&& pair) {
  constexpr int box_cols = BoxBytes / 2, boxes = BN / box_cols, tail_bytes = BN % box_cols * 2;
  if (bx == boxes) {
    if constexpr (tail_bytes > 0) {  // each thread's column pairs, one 4-byte store each
#pragma unroll
      for (int r = 4 * (boxes * box_cols / 8); r < BN / 2; r += 2)
        st_shared_b32(buf + wgmma_acc_row(tb, r) * tail_bytes + (wgmma_acc_col(tb, r) - boxes * box_cols) * 2, pair(r / 2));
    }
  } else {
    int const lane = tb % 32, q = lane / 8;
    int const row = 16 * (tb / 32) + 8 * (q % 2) + lane % 8;
#pragma unroll
    for (int jj = 0; jj < box_cols / 8; jj += 2) {
      int const i = 2 * (bx * (box_cols / 8) + jj);  // the pair of accumulator 4 (bx box_cols / 8 + jj)
      stmatrix_x4(buf + epi_swizzle<BoxBytes>(row, 16 * (jj + q / 2)), pair(i), pair(i + 1), pair(i + 2), pair(i + 3));
    }
  }
}

/// Stores one warpgroup's 64 x BN accumulator tile at (row0, col0) through the staging
/// buffers and TMA, box by box (staged_store_box). `t` is the thread's index in the warpgroup,
/// `bar_id` its named barrier, `seq` the warpgroup's count of boxes stored so far (over all its
/// tiles): buffers alternate across tiles too (with an odd number of boxes a tile, restarting at
/// buffer 0 would overwrite the previous tile's last box while its store may still read it: a
/// 128 x 192 trial stored 3 boxes of 16-bit C a tile and failed so). Where BoxBytes does not
/// divide BN's row, the last BN % box_cols columns go in one more, unswizzled box through
/// `tmap_tail` (BN = 152: 4 boxes of 32 columns + one of 24 for 16-bit C, 9 of 16 + one of 8 for
/// FP32). Scale = false (alpha = 1) leaves the accumulators unscaled.
template <class Out, int BN, bool Scale, int BoxBytes>
__device__ __forceinline__ void tma_store_epilogue(float const (&acc)[BN / 2], float alpha, void const* tmap_c,
                                                   void const* tmap_tail, std::uint32_t bufs, int t, int bar_id,
                                                   int row0, int col0, std::int64_t m, std::int64_t n, unsigned& seq) {
  static_assert(BoxBytes == 128 || BoxBytes == 64, "128- or 64-byte swizzled boxes");
  constexpr bool f32 = std::is_same_v<Out, float>;
  constexpr int box_cols = BoxBytes / static_cast<int>(sizeof(Out));  // 64 or 32 (16-bit), 32 or 16 (FP32)
  constexpr int boxes = BN / box_cols, tail_cols = BN % box_cols;
  constexpr int tail_bytes = tail_cols * static_cast<int>(sizeof(Out));  // a multiple of 16: BN % 8 == 0
  auto const scaled = [alpha](float v) { return Scale ? alpha * v : v; };
  // The TMA swizzle of a box row: 16-byte chunk c of row r sits at chunk c ^ (r % 8) of a
  // 128-byte row, or c ^ ((r / 2) % 4) of a 64-byte one (the 8 rows one warp store touches
  // land in 8 different 16-byte bank groups either way). The tail box is unswizzled (its map too,
  // even at 64 bytes: make_store_map's `tail`): at BN = 152 its rows, tail_bytes apart, are an odd
  // number of 16-byte chunks for 16-bit C (8 rows, 8 bank groups) and exactly the bytes one FP32
  // store covers (8 rows x 32 bytes, contiguous); at BN = 144 and 176 (16 tail columns: 32 or 64
  // bytes a row) a warp's 8 rows share 4 or 2 bank groups, a 2- or 4-way conflict on 1/9 to 1/11
  // of the epilogue's stores.
#pragma unroll
  for (int bx = 0; bx < boxes + (tail_cols > 0 ? 1 : 0); ++bx) {
    auto const write = [&](std::uint32_t buf, int tb) {
      if constexpr (f32) {
        if (bx == boxes) {
#pragma unroll
          for (int r = 4 * (boxes * box_cols / 8); r < BN / 2; r += 2)
            st_shared_v2_f32(buf + wgmma_acc_row(tb, r) * tail_bytes + (wgmma_acc_col(tb, r) - boxes * box_cols) * 4,
                             scaled(acc[r]), scaled(acc[r + 1]));
        } else {
#pragma unroll
          for (int jj = 0; jj < box_cols / 8; ++jj) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              int const r = 4 * (bx * (box_cols / 8) + jj) + 2 * h;
              st_shared_v2_f32(buf + epi_swizzle<BoxBytes>(wgmma_acc_row(tb, r), (8 * jj + 2 * (tb % 4)) * 4), scaled(acc[r]),
                               scaled(acc[r + 1]));
            }
          }
        }
      } else {
        write_box16<BN, BoxBytes>(buf, tb, bx, [&](int i) { return pack_pair<Out>(scaled(acc[2 * i]), scaled(acc[2 * i + 1])); });
      }
    };
    staged_store_box<epi_rows * BoxBytes>(bufs, seq, t, bar_id, write, bx == boxes ? tmap_tail : tmap_c, col0 + bx * box_cols,
                                          row0, m, n);
  }
}
/// The swapped pingpong kernels' epilogue (they compute C^T = B^T A^T, so that a tile's BN runs
/// along C's rows; docs/tc-gemm.md, "Session 18"): the warpgroup's 64 x BN accumulators are a block
/// of C^T, i.e. C's rows row0 .. row0 + BN - 1 by its columns col0 .. col0 + 63. Each step writes
/// part of them into one 8 KB staging buffer as C lays them out, in boxes of 32 rows of 128 bytes
/// (128-byte swizzle), and one thread stores the step's boxes with TMA (one bulk group a step;
/// buffers alternate by `seq` as in tma_store_epilogue):
///  - 16-bit C: a step is 64 rows of C, two boxes of 32 rows x 64 columns one above the other.
///    stmatrix .trans stores each 8 x 8 block of accumulators transposed, so the 8 values one C row
///    takes from a warp's 8 C^T rows form one 16-byte chunk; the 8 chunks of a matrix lie in 8
///    rows, at 8 different swizzled offsets (conflict-free).
///  - FP32 C: a step is 32 rows of C, two boxes side by side (columns 0-31 and 32-63), written with
///    scalar stores: a warp instruction covers 4 rows x 8 consecutive columns, 8 distinct chunks.
/// BN is a whole number of 32-row boxes: TMA clips a box only at C's edges, so a box reaching past
/// the tile would overwrite the next tile's rows.
template <class Out, int BN, bool Scale>
__device__ __forceinline__ void tma_store_epilogue_t(float const (&acc)[BN / 2], float alpha, void const* tmap_c,
                                                     std::uint32_t bufs, int t, int bar_id, int row0, int col0,
                                                     std::int64_t m, std::int64_t n, unsigned& seq) {
  constexpr bool f32 = std::is_same_v<Out, float>;
  constexpr int box_rows = 32, box_bytes = box_rows * 128;
  constexpr int step_rows = f32 ? 32 : 64, steps = (BN + step_rows - 1) / step_rows;
  constexpr int buf_bytes = epi_rows * 128;  // two boxes
  static_assert(BN % box_rows == 0, "whole 32-row boxes");
  auto const scaled = [alpha](float v) { return Scale ? alpha * v : v; };
#pragma unroll
  for (int st = 0; st < steps; ++st) {
    std::uint32_t const buf = bufs + (seq++ % epi_bufs) * buf_bytes;
    if (t == 0) bulk_wait_read<epi_bufs - 1>();  // the store that last read `buf` is done with it
    named_bar_sync(bar_id, 128);
    int tb = t;
    asm volatile("" : "+r"(tb));
    int const w = tb / 32, lane = tb % 32;
    if constexpr (f32) {
      // Accumulator 4 j8 + 2 h + e: C^T row 16 w + 8 h + lane / 4 (C's column, in box w / 2),
      // C^T column 8 j8 + 2 (lane % 4) + e (C's row).
#pragma unroll
      for (int jj = 0; jj < 4; ++jj)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            int const r = 4 * (4 * st + jj) + 2 * h + e;
            int const row = 8 * jj + 2 * (lane % 4) + e, col = (16 * w + 8 * h + lane / 4) % 32;
            st_shared_f32(buf + (w / 2) * box_bytes + epi_swizzle<128>(row, 4 * col), scaled(acc[r]));
          }
    } else {
      // Matrix q of a stmatrix: column block j8 = jj + q / 2 of the step, row half h = q % 2;
      // lane 8 q + i addresses C row 8 (jj + q / 2) + i of the step, columns 16 w + 8 h ...
      int const q = lane / 8, i = lane % 8;
#pragma unroll
      for (int jj = 0; jj < 8; jj += 2) {
        if (8 * st + jj < BN / 8) {
          int const r = 4 * (8 * st + jj);
          int const row = 8 * (jj + q / 2) + i;
          std::uint32_t const at = buf + (row / box_rows) * box_bytes + epi_swizzle<128>(row % box_rows, 32 * w + 16 * (q % 2));
          stmatrix_x4_trans(at, pack_pair<Out>(scaled(acc[r]), scaled(acc[r + 1])),
                            pack_pair<Out>(scaled(acc[r + 2]), scaled(acc[r + 3])),
                            pack_pair<Out>(scaled(acc[r + 4]), scaled(acc[r + 5])),
                            pack_pair<Out>(scaled(acc[r + 6]), scaled(acc[r + 7])));
        }
      }
    }
    fence_proxy_async_smem();
    named_bar_sync(bar_id, 128);
    if (t == 0) {
      // Boxes wholly outside C (or past the tile's BN rows) are not issued; the group is still
      // committed, so that "all groups but the newest" always means the other buffer's store.
#pragma unroll
      for (int b = 0; b < 2; ++b) {
        int const row = row0 + st * step_rows + (f32 ? 0 : box_rows * b), col = col0 + (f32 ? 32 * b : 0);
        bool const in_tile = f32 || st * step_rows + box_rows * b < BN;
        if (in_tile && row < m && col < n) tma_store_2d(tmap_c, buf + b * box_bytes, col, row);
      }
      bulk_commit();
    }
  }
}

/// What rung 6's kernels derive from the problem: the tiles (BM x BN), how the cluster pairs
/// them, and the cluster's place in the persistent grid.
///  - Share b: cluster tile ct holds M tiles 2 ctm and 2 ctm + 1 of column tn, in the grouped
///    order over cluster rows (runs of 8 pairs: 2048 rows of A at BM = 128, as rung 5).
///  - Share a: the tiles in row-major order, cluster tile ct the tiles 2 ct and 2 ct + 1. Two
///    tiles of one row share A's slice; a pair that wraps onto the next row (an odd number of
///    tile columns) or whose second tile lies past the last loads its own A. The pairs thus
///    cover the tiles without a hole: 3000x5000 at 256 x 152 is 12 x 33 tiles, 198 pairs, 3
///    waves of 66 clusters, where pairing within rows would take 12 x 17 = 204.
/// KB: the elements of K in one k-block (operand_traits<In>::k_block).
template <int BM, int BN, pair_share Share = pair_share::b, int KB = 64>
struct cl_grid {
  static constexpr int k_block = KB;
  int tiles_m, tiles_n, ctiles, nk, cluster, clusters;
  unsigned rank;
  __device__ explicit cl_grid(problem const& p)
      : tiles_m(static_cast<int>((p.m + BM - 1) / BM)),
        tiles_n(static_cast<int>((p.n + BN - 1) / BN)),
        ctiles(Share == pair_share::b ? (tiles_m + 1) / 2 * tiles_n : (tiles_m * tiles_n + 1) / 2),
        nk(static_cast<int>((p.k + KB - 1) / KB)),
        cluster(static_cast<int>(blockIdx.x) / cluster_size),
        clusters(static_cast<int>(gridDim.x) / cluster_size),
        rank(cluster_ctarank()) {}
  /// This CTA's tile of cluster tile `ct`; false when it lies past m (share b, odd tiles_m: the
  /// last pair's second tile) or past the last tile (share a, an odd count), which is then
  /// neither loaded nor computed nor stored.
  __device__ bool tile(int ct, int& tm, int& tn) const {
    if constexpr (Share == pair_share::b) {
      int ctm;
      grouped_tile(ct, (tiles_m + 1) / 2, tiles_n, 8, ctm, tn);
      tm = 2 * ctm + static_cast<int>(rank);
      return tm < tiles_m;
    } else {
      int const i = 2 * ct + static_cast<int>(rank);
      tm = i / tiles_n;
      tn = i % tiles_n;
      return tm < tiles_m;
    }
  }
  /// Share a: whether both tiles of cluster tile `ct` exist and lie in one row (then they share A).
  __device__ bool shares_a(int ct) const {
    int const i = 2 * ct;
    return i + 1 < tiles_m * tiles_n && i / tiles_n == (i + 1) / tiles_n;
  }
};

/// Stream-K (docs/tc-gemm.md, "Session 27", "Session 28"): where the cooperative kernel's cluster
/// tiles leave the last wave part full, the partial wave's tiles are not walked whole; their
/// k-blocks, numbered tile by tile, are split into one equal run a cluster (a "bin", shorter than a
/// tile), so no cluster idles while others finish a tile. A tile whose k-blocks fall in several bins
/// is computed in pieces: the piece holding its last k-block (the finisher) adds the other pieces'
/// FP32 partials and stores C; every other piece writes its partial to its CTA's slot and publishes
/// a flag. A bin crosses at most one tile boundary, so it holds at most one piece that is not a
/// finisher (one slot a CTA).
///
/// The order within a bin keeps the clusters in step along K: a bin that crosses a boundary
/// computes the next tile's head (k-blocks from 0) first and its own first tile's tail after. Every
/// cluster then reads k-block j of its tiles within (1 - bin / tile) of a tile of the others, so
/// the A and B slices the partial wave's tiles share can still be in L2 when the next cluster
/// wants them. Session 27's order (each bin's k-blocks in sequence, the split tiles being the last
/// full wave's and the partial wave's) put the clusters at evenly spread k: under ncu at
/// 4096x4096x14336 the tensor pipe was busy 85% of the active cycles against 98% whole; in step,
/// 97%, with DRAM reads 5% above the whole kernel's. The head first also means a finisher waits
/// only on pieces computed first in their bins, or on whole bins inside its tile, which end when
/// it does.

/// One cluster's work: its whole tiles (cluster tiles c, c + clusters, ... below dp), then bin c
/// of the split tiles' k-blocks, as units (cluster tile ct, k-blocks kb0 .. kb1 - 1).
/// Split = false: every tile whole (dp = ctiles), the loop every kernel ran before stream-K.
template <bool Split>
struct cl_units {
  int ct = 0, kb0 = 0, kb1 = 0;
  int next_dp, clusters, dp, nk, split, pos = 0, end = 0;  // split: the split tiles' k-blocks (fits an int: the host checks)
  __device__ cl_units(int cluster, int clusters_, int ctiles, int dp_, int nk_)
      : kb1(nk_), next_dp(cluster), clusters(clusters_), dp(Split ? dp_ : ctiles), nk(nk_), split((ctiles - dp) * nk_) {
    if constexpr (Split) {
      pos = bin_begin(cluster);
      end = bin_begin(cluster + 1);
    }
  }
  /// The first split k-block of bin b.
  __device__ int bin_begin(int b) const {
    return static_cast<int>(static_cast<long long>(split) * b / clusters);
  }
  __device__ bool next() {
    if (next_dp < dp) {
      ct = next_dp;
      kb0 = 0;
      kb1 = nk;
      next_dp += clusters;
      return true;
    }
    if (!Split || pos >= end) return false;
    int const tile = pos / nk, boundary = (tile + 1) * nk;
    if (boundary < end) {  // the bin crosses into the next tile: that tile's head first, then [pos, boundary)
      ct = dp + tile + 1;
      kb0 = 0;
      kb1 = end - boundary;
      end = boundary;
      return true;
    }
    ct = dp + tile;
    kb0 = pos - tile * nk;
    kb1 = end - tile * nk;
    pos = end;
    return true;
  }
  __device__ bool more() const { return next_dp < dp || (Split && pos < end); }
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
  grid_dependency_wait();  // the previous kernel's writes are visible (programmatic launch)
}

/// The producer thread of each kernel: for each of the cluster's tiles in order and each
/// k-block, waits until the slot is free in both CTAs (a multicast writes both), then loads:
///  - share b: this CTA's A rows and its half of B's rows, multicast into both CTAs. No box is
///    issued wholly outside its tensor: A past m is not loaded (the tile is not computed), B's
///    second half past n is not loaded (its columns are never stored; the wgmma reads stale
///    shared memory there, which only reaches those columns). Both CTAs agree on `both`, so each
///    full barrier expects exactly the bytes that arrive.
///  - share a: its half of A's rows multicast into both CTAs where the pair shares A, else all
///    of its own A (through the same half-box map, twice); its own B. A live CTA expects A and B
///    whole either way, a dead one nothing.
/// Bkn (share b, 16-bit inputs): B is stored k x n and its map is k rows of n (boxes of 64 k-rows x
/// 64 columns, 8 KB). A CTA's half of B is then BN / 128 such boxes, box j of the slot at sb + j x
/// 8 KB, which puts each half at the K-major half's offset with the same bytes: the layout rung 5's
/// Bkn kernels read (smem_desc_mn), the pipeline and the barriers' byte counts unchanged.
/// Akm (likewise): A is stored k x m, loaded as BM / 64 boxes of 64 k-rows x 64 rows of A, box j at
/// sa + j x 8 KB: where the K-major tile's rows 64 j .. 64 j + 63 start.
template <class Cfg, bool Split = false, bool Bkn = false, bool Akm = false, pair_share Share, int BM, int BN, int KB>
__device__ __forceinline__ void produce(cl_grid<BM, BN, Share, KB> const& g, problem const& p, cl_maps const& maps,
                                        std::uint32_t base, std::uint64_t* full, std::uint64_t* empty, int dp = 0) {
  static_assert(Share == pair_share::a || Cfg::b_half_bytes % 1024 == 0, "B halves are whole swizzle atoms");
  static_assert(!Bkn || (Share == pair_share::b && BN % 128 == 0), "B stored k x n: halves of whole 64-column boxes");
  static_assert(!Akm || Share == pair_share::b, "A stored k x m: each CTA loads its own A");
  int s = 0;
  unsigned phase = 0;
  int const rank = static_cast<int>(g.rank);
  cl_units<Split> u(g.cluster, g.clusters, g.ctiles, dp, g.nk);
  while (u.next()) {
    int const ct = u.ct;
    int tm, tn;
    bool const live = g.tile(ct, tm, tn);
    bool const both = tn * BN + BN / 2 < p.n;  // share b: else only rank 0's half of B
    bool const share_a = Share == pair_share::a && g.shares_a(ct);
    unsigned const bytes = Share == pair_share::a ? (live ? Cfg::a_bytes + Cfg::b_bytes : 0)
                                                  : (live ? Cfg::a_bytes : 0) + (both ? 2 : 1) * Cfg::b_half_bytes;
    for (int kb = u.kb0; kb < u.kb1; ++kb) {
      mbar_wait(&empty[s], phase ^ 1);  // our slot AND the peer's are free
      std::uint32_t const sa = base + s * Cfg::stage_bytes, sb = sa + Cfg::a_bytes;
      mbar_arrive_expect_tx(&full[s], bytes);
      if constexpr (Share == pair_share::a) {
        if (share_a) {
          tma_load_2d_multicast(sa + rank * (Cfg::a_bytes / 2), &maps.a, &full[s], kb * g.k_block, tm * BM + rank * (BM / 2),
                                (1u << cluster_size) - 1u);
        } else if (live) {
          tma_load_2d(sa, &maps.a, &full[s], kb * g.k_block, tm * BM);
          tma_load_2d(sa + Cfg::a_bytes / 2, &maps.a, &full[s], kb * g.k_block, tm * BM + BM / 2);
        }
        if (live) tma_load_2d(sb, &maps.b, &full[s], kb * g.k_block, tn * BN);
      } else {
        if (live) {
          if constexpr (Akm) {
            tma_load_mn<BM / 64>(sa, &maps.a, &full[s], tm * BM, kb * g.k_block);
          } else {
            tma_load_2d(sa, &maps.a, &full[s], kb * g.k_block, tm * BM);
          }
        }
        if (rank == 0 || both) {
          if constexpr (Bkn) {  // this CTA's half: boxes rank BN / 128 .. of the slot
            tma_load_mn<BN / 128>(sb, &maps.b, &full[s], tn * BN, kb * g.k_block, rank * (BN / 128), (1u << cluster_size) - 1u);
          } else {
            tma_load_2d_multicast(sb + rank * Cfg::b_half_bytes, &maps.b, &full[s], kb * g.k_block, tn * BN + rank * (BN / 2),
                                  (1u << cluster_size) - 1u);
          }
        }
      }
      if (++s == Cfg::stages) {
        s = 0;
        phase ^= 1;
      }
    }
  }
}

/// Stores one warpgroup's 64 x BN accumulators at (row0, col0) where TMA cannot (beta != 0 reads
/// C; a C base or ldc that is not 16-byte addressable): in chunks of BoxBytes / 4 FP32 columns
/// (32 or 16) through the staging buffers (the FP32 TMA path's swizzled layout, conflict-free
/// both ways), then each warp writes whole row segments of C, 32 or 16 consecutive columns an
/// instruction (64 contiguous bytes of 16-bit C), whatever ldc's alignment, reading C alike for
/// beta. The accumulators' own layout (8 rows x 4 column pairs a warp instruction) wrote 8
/// scattered pieces of 4 or 2 bytes. Chunk `seq` takes buffer seq % 2 and `seq` runs on across
/// calls, so one barrier a chunk suffices: a thread writes buffer b again only after the barrier
/// that every thread reaches once done reading b's previous chunk.
template <class C16, int BN, int BoxBytes>
__device__ __forceinline__ void staged_register_store(float const (&acc)[BN / 2], problem const& p, std::uint32_t bufs,
                                                      int t, int bar_id, int row0, int col0, unsigned& seq) {
  constexpr int cc = BoxBytes / 4;               // FP32 columns a chunk
  constexpr int chunks = (BN + cc - 1) / cc;
  constexpr int buf_bytes = epi_rows * BoxBytes;
  constexpr int rows_per_warp = 32 / cc;         // rows one warp instruction covers
  int const warp = t / 32, lane = t % 32, sub = lane / cc, col_in = lane % cc;
#pragma unroll
  for (int ch = 0; ch < chunks; ++ch) {
    std::uint32_t const buf = bufs + (seq++ % 2) * buf_bytes;
#pragma unroll
    for (int jj = 0; jj < cc / 8; ++jj) {
      int const j8 = ch * (cc / 8) + jj;  // the tile's 8-column block
      if (j8 * 8 < BN) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          int const r = 4 * j8 + 2 * h;
          st_shared_v2_f32(buf + epi_swizzle<BoxBytes>(wgmma_acc_row(t, r), (8 * jj + 2 * (t % 4)) * 4), acc[r], acc[r + 1]);
        }
      }
    }
    named_bar_sync(bar_id, 128);
    std::int64_t const col = static_cast<std::int64_t>(col0) + ch * cc + col_in;
    bool const col_ok = ch * cc + col_in < BN && col < p.n;
#pragma unroll 1
    for (int rr = warp * rows_per_warp + sub; rr < epi_rows; rr += 4 * rows_per_warp) {
      float const v = ld_shared_f32(buf + epi_swizzle<BoxBytes>(rr, col_in * 4));
      std::int64_t const row = static_cast<std::int64_t>(row0) + rr;
      if (col_ok && row < p.m) store_one<C16>(p, row, col, v);
    }
  }
}

/// Stores one warpgroup's 64 x BN accumulators at (row0, col0): through the staging buffers and
/// TMA (16-bit C, of type C16, in boxes of Box16 bytes a row, FP32 in Box32), alpha applied unless
/// it is 1; or, where TMA cannot store C (beta != 0, C unaligned), through the same buffers with
/// the threads' own coalesced stores (staged_register_store).
/// Calls f(Out* tag, std::bool_constant<Scale>) for C's element type (FP32, or C16) and whether
/// alpha scales the accumulators (alpha = 1, the common case, skips the multiply): the four
/// instantiations each TMA store epilogue takes.
template <class C16, class F>
__device__ __forceinline__ void with_c_type(problem const& p, F&& f) {
  bool const scale = p.alpha != 1.f;
  if (p.c_f32) {
    if (scale) f(static_cast<float*>(nullptr), std::true_type{});
    else f(static_cast<float*>(nullptr), std::false_type{});
  } else {
    if (scale) f(static_cast<C16*>(nullptr), std::true_type{});
    else f(static_cast<C16*>(nullptr), std::false_type{});
  }
}

template <class C16, int BN, int Box16, int Box32>
__device__ __forceinline__ void store_rows(float const (&acc)[BN / 2], problem const& p, bool tma_store,
                                           void const* tmap_c, void const* tmap_tail, std::uint32_t bufs, int t,
                                           int bar_id, int row0, int col0, unsigned& seq) {
  if (tma_store) {
    with_c_type<C16>(p, [&](auto* out, auto scale) {
      using Out = std::remove_pointer_t<decltype(out)>;
      constexpr int box = std::is_same_v<Out, float> ? Box32 : Box16;
      tma_store_epilogue<Out, BN, decltype(scale)::value, box>(acc, p.alpha, tmap_c, tmap_tail, bufs, t, bar_id, row0, col0,
                                                                p.m, p.n, seq);
    });
  } else {
    staged_register_store<C16, BN, Box32>(acc, p, bufs, t, bar_id, row0, col0, seq);
  }
}
/// The swapped pingpong kernels' store of one 64 x BN block of C^T (C's rows row0 .., columns
/// col0 ..), alpha applied unless it is 1. `p` is the swapped problem: C is p.n x p.m.
template <class C16, int BN>
__device__ __forceinline__ void store_rows_t(float const (&acc)[BN / 2], problem const& p, void const* tmap_c,
                                             std::uint32_t bufs, int t, int bar_id, int row0, int col0, unsigned& seq) {
  with_c_type<C16>(p, [&](auto* out, auto scale) {
    using Out = std::remove_pointer_t<decltype(out)>;
    tma_store_epilogue_t<Out, BN, decltype(scale)::value>(acc, p.alpha, tmap_c, bufs, t, bar_id, row0, col0, p.n, p.m, seq);
  });
}

/// The cooperative kernel's deferred epilogue (16-bit C through TMA; docs/tc-gemm.md, "Session
/// 19"). A consumer warpgroup's last m64 block of a tile, alpha applied, is converted into BN / 4
/// packed pairs as soon as the tile's last wgmma is done; that frees its accumulators for the next
/// tile, and one box of the packed pairs is staged and stored per k-block of the next tile, while
/// that k-block's wgmmas run (the other m64 block, at BM = 256, is stored as before: 76 more
/// registers do not fit). Without it the whole box chain ran while the tensor cores idled.
template <class C16, int BN>
__device__ __forceinline__ void pack_rows(float const (&acc)[BN / 2], float alpha, std::uint32_t (&pk)[BN / 4]) {
  if (alpha != 1.f) {
#pragma unroll
    for (int i = 0; i < BN / 4; ++i) pk[i] = pack_pair<C16>(alpha * acc[2 * i], alpha * acc[2 * i + 1]);
  } else {
#pragma unroll
    for (int i = 0; i < BN / 4; ++i) pk[i] = pack_pair<C16>(acc[2 * i], acc[2 * i + 1]);
  }
}
/// Box `bx` of a warpgroup's packed 64 x BN block of 16-bit C at (row0, col0): tma_store_epilogue's
/// 16-bit box from the packed pairs. `bx` must be a constant after unrolling: it indexes registers.
template <int BN, int BoxBytes>
__device__ __forceinline__ void store_packed_box(std::uint32_t const (&pk)[BN / 4], int bx, void const* tmap_c,
                                                 void const* tmap_tail, std::uint32_t bufs, int t, int bar_id, int row0,
                                                 int col0, std::int64_t m, std::int64_t n, unsigned& seq) {
  constexpr int box_cols = BoxBytes / 2, boxes = BN / box_cols;
  staged_store_box<epi_rows * BoxBytes>(
      bufs, seq, t, bar_id, [&](std::uint32_t buf, int tb) { write_box16<BN, BoxBytes>(buf, tb, bx, [&](int i) { return pk[i]; }); },
      bx == boxes ? tmap_tail : tmap_c, col0 + bx * box_cols, row0, m, n);
}
#endif

/// Split: the stream-K instance (sk.dp of the cluster tiles whole, the rest split); else every tile
/// whole and `sk` unused. Bkn, Akm: B stored k x n, A stored k x m, read as they are (produce's Bkn,
/// Akm; wgmma's MN-major operands), every tile whole.
template <class In, int BM, int BN, pair_share Share, bool Split, bool Bkn = false, bool Akm = false>
__global__ void __launch_bounds__(threads, 1)
    cluster_kernel(const __grid_constant__ cl_maps maps, problem p, int tma_store, sk_args sk) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using cfg = cl_config<BM, BN>;
  static_assert(!Split || (BM == 128 && Share == pair_share::b), "stream-K: one m64 block a warpgroup, pairs along M");
  static_assert(!(Bkn || Akm) || (sizeof(In) == 2 && !Split && BM == 128),
                "wgmma reads MN-major operands in BF16 and FP16 only; whole 128-row tiles");
  constexpr int stages = cfg::stages;
  constexpr int mw = BM / 128;  // m64 blocks a consumer warpgroup computes: its BM / 2 rows of the tile
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ std::uint64_t full[stages], empty[stages];
  std::uint32_t const base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  std::uint32_t const epi_base = base + stages * cfg::stage_bytes;
  cl_grid<BM, BN, Share, operand_traits<In>::k_block> const g(p);
  int const tid = threadIdx.x, wg = warpgroup_index(), t = tid % 128;
  init_slots(full, empty, 8 * cluster_size);  // every consumer warp of both CTAs releases a slot

  if (wg == 0) {
    setmaxnreg_dec<40>();
    if (t == 0) produce<cfg, Split, Bkn, Akm>(g, p, maps, base, full, empty, sk.dp);
  } else {
    setmaxnreg_inc<232>();
    int const c = wg - 1;  // rows c * BM / 2 .. (c + 1) * BM / 2 - 1 of each tile
    int const lane = t % 32;
    int s = 0;
    unsigned phase = 0;
    float acc[mw][BN / 2];
    unsigned epi_seq = 0;  // boxes this warpgroup has stored (tma_store_epilogue's buffer choice)
    auto release = [&](int slot) {
      if (lane < cluster_size) mbar_arrive_cluster(&empty[slot], static_cast<unsigned>(lane));
    };
    std::uint32_t const bufs = epi_base + c * epi_bufs * cfg::epi_buf_bytes;
    // The deferred epilogue (store_packed_box): 16-bit C through TMA, the warpgroup's last m64
    // block. `pend` boxes of the last tile's packed C (at prow, pcol) are still to store. Not at
    // 128 x 128, where it measured 0.5-4% slower (2048^3, 1024x8192x8192; H100, session 19). Nor
    // in the stream-K instance: its run state and the partial's stores and loads beside 64 registers
    // of packed C spilled 104 bytes at 128 x 256 (docs/tc-gemm.md, "Session 27"); storing C at the
    // tile's end, as cuBLAS's kernel does, measured level with the deferral (ibid.) and spills none.
    constexpr bool can_defer = BN != 128 && !Split;
    constexpr int box_cols = cfg::box16 / 2, pboxes = BN / box_cols + (BN % box_cols != 0 ? 1 : 0);
    bool const defer = can_defer && tma_store != 0 && !p.c_f32;
    std::uint32_t pk[can_defer ? BN / 4 : 1];
    int pend = 0, prow = 0, pcol = 0;
    auto store_pending = [&] {
      if constexpr (can_defer) {
        int const bx = pboxes - pend;
#pragma unroll
        for (int b = 0; b < pboxes; ++b)
          if (b == bx)
            store_packed_box<BN, cfg::box16>(pk, b, &maps.c, &maps.c_tail, bufs, t, 1 + c, prow, pcol, p.m, p.n, epi_seq);
        --pend;
      }
    };
    cl_units<Split> u(g.cluster, g.clusters, g.ctiles, sk.dp, g.nk);
    // Stream-K: this CTA's partial is written and the consumers have met since (named barrier 3),
    // but its flag is not yet published. Consumer thread 0 fences and publishes.
    [[maybe_unused]] bool publish = false;
    [[maybe_unused]] auto const publish_partial = [&] {
      if (c == 0 && t == 0) {
        __threadfence();
        st_release_gpu(sk.flags + blockIdx.x, sk.token);
      }
      publish = false;
    };
    while (u.next()) {
      int const ct = u.ct;
      int tm, tn;
      bool const live = g.tile(ct, tm, tn);
#pragma unroll
      for (int i = 0; i < mw; ++i)
#pragma unroll
        for (int j = 0; j < BN / 2; ++j) acc[i][j] = 0.f;
      int prev = -1;
      for (int kb = u.kb0; kb < u.kb1; ++kb) {
        if constexpr (Split) {
          // The bin's head piece's partial, published under this unit's third k-block: its stores
          // have drained by now, so the fence no longer holds the warpgroup at the head's end.
          if (publish && kb == u.kb0 + 2) publish_partial();
        }
        mbar_wait(&full[s], phase);
        if (live) {
          std::uint32_t const sa = base + s * cfg::stage_bytes + c * (BM / 2) * 128;
          std::uint32_t const sb = base + s * cfg::stage_bytes + cfg::a_bytes;
          // K-major: the slice's 32 bytes of each row; MN-major: its 16 k-rows, 2 KB (A: the
          // warpgroup's box of 64 rows, at sa). One add a descriptor (smem_desc_lo).
          std::uint32_t const la = smem_desc_lo(sa, Akm ? 8192 : 16), lb = smem_desc_lo(sb, Bkn ? 8192 : 16);
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < slices; ++kk) {
            std::uint64_t const db = smem_desc_of(lb + (Bkn ? kk * 16 * row_bytes : kk * 32) / 16);
#pragma unroll
            for (int i = 0; i < mw; ++i) {
              std::uint64_t const da = smem_desc_of(la + (Akm ? kk * 16 * row_bytes : i * 64 * 128 + kk * 32) / 16);
              wgmma_slice<In, BN, Bkn ? 1 : 0, Akm ? 1 : 0>(acc[i], da, db);
            }
          }
          wgmma_commit();
          wgmma_wait<1>();  // the batch before this one is done: its slot can be refilled
          if (prev >= 0) release(prev);
          prev = s;
        } else {
          release(s);  // a tile past m: nothing to compute, the peer still needs the slot back
        }
        if (pend > 0) store_pending();  // one box of the last tile's C under this k-block's wgmmas
        if (++s == stages) {
          s = 0;
          phase ^= 1;
        }
      }
      while (pend > 0) store_pending();  // fewer k-blocks than boxes: the rest, before pk is reused
      if constexpr (Split) {
        if (publish) publish_partial();  // a unit of fewer than three k-blocks
      }
      wgmma_wait<0>();
#pragma unroll
      for (int i = 0; i < mw; ++i) fence_regs(acc[i]);
      if (prev >= 0) release(prev);
      if (!u.more() && t == 0) launch_dependents();  // the last tile's MMAs are done
      if (!live) continue;
      if constexpr (Split) {
        // Stream-K: a piece short of its tile's last k-block publishes its partial; the piece
        // holding that k-block (the finisher) adds the earlier bins' partials of its tile.
        int const T = c * 128 + t;  // the consumer thread: its float4 j of a slot sits at j * 256 + T
        constexpr int slot4 = BM * BN / 4;
        if (u.kb1 < g.nk) {
          float4* const slot = reinterpret_cast<float4*>(sk.partials) + static_cast<std::size_t>(blockIdx.x) * slot4;
#pragma unroll
          for (int j = 0; j < BN / 8; ++j)
            __stcg(slot + j * 256 + T, make_float4(acc[0][4 * j], acc[0][4 * j + 1], acc[0][4 * j + 2], acc[0][4 * j + 3]));
          named_bar_sync(3, 256);  // every consumer thread's part is written
          publish = true;
          if (!u.more()) publish_partial();  // no next unit to publish it under
          continue;
        }
        if (u.kb0 > 0) {
          // The earlier bins reaching into this tile (an empty bin holds nothing and publishes nothing).
          int const tile_begin = (ct - u.dp) * g.nk;
          for (int b = g.cluster - 1; b >= 0 && u.bin_begin(b + 1) > tile_begin; --b) {
            if (u.bin_begin(b) == u.bin_begin(b + 1)) continue;
            int const cta = b * cluster_size + static_cast<int>(g.rank);
            if (T == 0)
              while (ld_acquire_gpu(sk.flags + cta) != sk.token) __nanosleep(64);
            named_bar_sync(3, 256);  // the partial is published
            float4 const* const slot = reinterpret_cast<float4 const*>(sk.partials) + static_cast<std::size_t>(cta) * slot4;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
              float4 const v = __ldcg(slot + j * 256 + T);
              acc[0][4 * j] += v.x;
              acc[0][4 * j + 1] += v.y;
              acc[0][4 * j + 2] += v.z;
              acc[0][4 * j + 3] += v.w;
            }
          }
        }
      }
      if constexpr (can_defer) {
        if (defer) {
          // Its own copy of the loop below, short of the last block: one loop with the last
          // block's store under `!defer` kept that store's registers live beside pk and spilled
          // 96 bytes at 128 x 256 (session 19's review).
#pragma unroll
          for (int i = 0; i + 1 < mw; ++i)
            store_rows<typename operand_traits<In>::c16, BN, cfg::box16, cfg::box32>(acc[i], p, true, &maps.c, &maps.c_tail, bufs, t,
                                                                                   1 + c, tm * BM + c * (BM / 2) + i * 64, tn * BN, epi_seq);
          pack_rows<typename operand_traits<In>::c16, BN>(acc[mw - 1], p.alpha, pk);
          pend = pboxes;
          prow = tm * BM + c * (BM / 2) + (mw - 1) * 64;
          pcol = tn * BN;
          continue;
        }
      }
#pragma unroll
      for (int i = 0; i < mw; ++i)
        store_rows<typename operand_traits<In>::c16, BN, cfg::box16, cfg::box32>(acc[i], p, tma_store != 0, &maps.c, &maps.c_tail,
                                                   bufs, t, 1 + c, tm * BM + c * (BM / 2) + i * 64, tn * BN, epi_seq);
    }
    while (pend > 0) store_pending();  // the last tile's C
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
struct pp_config : tile_bytes<128, BN> {
  using tile = tile_bytes<128, BN>;
  /// 16-bit C boxes: 128 bytes (64 columns) where they divide BN, else 64; FP32 always 128.
  static constexpr int box16 = BN % 64 == 0 ? 128 : 64, box32 = 128;
  static constexpr int epi_buf_bytes = epi_rows * box32;
  static constexpr int epi_bytes = 2 * epi_bufs * epi_buf_bytes;                            // 32 KB
  static constexpr int stages = (smem_limit - 1024 - epi_bytes) / tile::stage_bytes;        // 4 at 192, 5 at 176, 160, 144
  static constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * tile::stage_bytes + epi_bytes + 1024;
  static_assert(stages >= 4 && smem_bytes <= smem_limit, "stages + staging + alignment fit 227 KB");
};

// Swap: the kernel runs on the swapped problem (C^T = B^T A^T: m and n, A and B exchanged, both
// still K-major), so its 128 x BN tiles are BN x 128 tiles of C, and stores C through
// tma_store_epilogue_t (TMA only: the host runs it only where C takes the TMA store). Where
// BN does not divide n but does divide m nearly whole, that turns a partial last wave into a full
// one (16384x4096x4096: 25 waves of 160 x 128 tiles where 128 x 160 makes 25.2, so 26).
template <class In, int BN, bool Swap>
__global__ void __launch_bounds__(threads, 1)
    pingpong_kernel(const __grid_constant__ cl_maps maps, problem p, int tma_store) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using cfg = pp_config<BN>;
  constexpr int stages = cfg::stages;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ std::uint64_t full[stages], empty[stages];
  std::uint32_t const base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  std::uint32_t const epi_base = base + stages * cfg::stage_bytes;
  cl_grid<128, BN, pair_share::b, operand_traits<In>::k_block> const g(p);
  int const jobs = g.cluster < g.ctiles ? (g.ctiles - g.cluster + g.clusters - 1) / g.clusters : 0;  // tiles of this CTA
  int const tid = threadIdx.x, wg = warpgroup_index(), t = tid % 128;
  init_slots(full, empty, 4 * cluster_size);  // the owning warpgroup's warps in both CTAs

  if (wg == 0) {
    setmaxnreg_dec<24>();  // 24 + 2 x 240 registers a thread: 192 accumulators and no spills
    if (t == 0) produce<cfg>(g, p, maps, base, full, empty);
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
          std::uint32_t const la = smem_desc_lo(sa), lb = smem_desc_lo(sb);  // one add a descriptor
          wgmma_fence();
#pragma unroll
          for (int kk = 0; kk < slices; ++kk) {
            std::uint64_t const db = smem_desc_of(lb + kk * 2);
            wgmma_slice<In, BN>(acc0, smem_desc_of(la + kk * 2), db);
            wgmma_slice<In, BN>(acc1, smem_desc_of(la + (64 * 128) / 16 + kk * 2), db);
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
      if (j + 1 == jobs && t == 0) launch_dependents();  // the CTA's last tile's MMAs are done
      if (!live) continue;
      std::uint32_t const bufs = epi_base + c * epi_bufs * cfg::epi_buf_bytes;
      if constexpr (Swap) {  // C^T's tile (tm, tn): C's rows tn * BN .., columns tm * 128 ..
        store_rows_t<typename operand_traits<In>::c16, BN>(acc0, p, &maps.c, bufs, t, 1 + c, tn * BN, tm * 128, epi_seq);
        store_rows_t<typename operand_traits<In>::c16, BN>(acc1, p, &maps.c, bufs, t, 1 + c, tn * BN, tm * 128 + 64, epi_seq);
      } else {
        store_rows<typename operand_traits<In>::c16, BN, cfg::box16, cfg::box32>(acc0, p, tma_store != 0, &maps.c, &maps.c_tail, bufs, t, 1 + c,
                                                                               tm * 128, tn * BN, epi_seq);
        store_rows<typename operand_traits<In>::c16, BN, cfg::box16, cfg::box32>(acc1, p, tma_store != 0, &maps.c, &maps.c_tail, bufs, t, 1 + c,
                                                                               tm * 128 + 64, tn * BN, epi_seq);
      }
    }
    if (t == 0) bulk_wait<0>();
  }
  cluster_sync_all();
#else
  __trap();
#endif
}

/// One of rung 6's kernels and what its launch needs: the kernel, its tile (BM x BN) and its
/// configuration (dynamic shared memory, C box row bytes).
/// `Swap`: the kernel runs on the swapped problem (pingpong only; pingpong_kernel).
/// `Bkn`, `Akm`: B stored k x n, A stored k x m, read as they are (the cooperative kernels sharing
/// B, 16-bit inputs).
template <class In, int BM, int BN, bool Pingpong, pair_share Share = pair_share::b, bool Swap = false, bool Bkn = false,
          bool Akm = false>
struct rung6 {
  using in = In;
  static constexpr int bm = BM, bn = BN;
  static constexpr pair_share share = Share;
  static constexpr bool swap = Swap, pingpong = Pingpong, b_kn = Bkn, a_km = Akm;
  /// Whether the kernel can split its partial wave's tiles (stream-K: the cooperative kernel at 128
  /// rows, 16-bit inputs, both operands K-major; FP8's split has not run on a GPU, so FP8 keeps its
  /// tiles whole, and nor has a split reading an operand stored transposed).
  static constexpr bool stream_k() { return !Pingpong && BM == 128 && Share == pair_share::b && sizeof(In) == 2 && !Bkn && !Akm; }
  using cfg = std::conditional_t<Pingpong, pp_config<BN>, cl_config<BM, BN>>;
  static_assert(!Pingpong || BM == 128, "pingpong tiles are 128 rows, one a consumer warpgroup");
  static_assert(Pingpong || !Swap, "only the pingpong kernels run swapped");
  static_assert(!(Bkn || Akm) || (!Pingpong && Share == pair_share::b && BM == 128),
                "operands stored transposed: the cooperative 128-row kernels sharing B");
  static auto kernel() {
    if constexpr (Pingpong) return pingpong_kernel<In, BN, Swap>;
    else return cluster_kernel<In, BM, BN, Share, false, Bkn, Akm>;
  }
  /// The stream-K instance (stream_k kernels only): the same shared memory and threads.
  static auto split_kernel() { return cluster_kernel<In, BM, BN, Share, stream_k(), Bkn, Akm>; }
};
template <class In, int BM, int BN, pair_share Share = pair_share::b>
using cooperative = rung6<In, BM, BN, false, Share>;
/// The cooperative kernels reading B stored k x n (Bkn) and/or A stored k x m (Akm) as they are
/// (128 x 256 and 128 x 128, BF16, FP16).
template <class In, int BN, bool Bkn, bool Akm>
using cooperative_mn = rung6<In, 128, BN, false, pair_share::b, false, Bkn, Akm>;
template <class In, int BN, bool Swap = false>
using pingpong = rung6<In, 128, BN, true, pair_share::b, Swap>;

/// The problem with m and n, A and B exchanged: C^T = B^T A^T, both operands still K-major.
problem swapped(problem const& p) {
  problem q = p;
  q.m = p.n;
  q.n = p.m;
  q.a = p.b;
  q.a_si = p.b_sj;
  q.a_sk = p.b_sk;
  q.b = p.a;
  q.b_sj = p.a_si;
  q.b_sk = p.a_sk;
  return q;
}

/// How many clusters of kernel K the device runs at once (cached per device): the persistent
/// grid, since a GPC may not hold an even number of free SMs. Also where K's dynamic shared
/// memory limit is raised (once per device, before any launch of K).
template <class K>
int max_active_clusters() {
  return memlab::detail::per_device([] {
    auto kernel = K::kernel();
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(K::cfg::smem_bytes)));
    cudaLaunchAttribute attr[2];
    cudaLaunchConfig_t const cfg = cluster_launch_config(attr, cluster_size, cluster_size, threads, K::cfg::smem_bytes, nullptr);
    int n = 0;
    MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &cfg));
    if (n < 1) throw memlab::error("gemm_tc cluster rung: no cluster of 2 blocks fits on this device");
    return n;
  });
}

/// A token no earlier launch in this process gave its stream-K flags (a split of a counter, so that
/// whatever a recycled scratch block held is not mistaken for this launch's flag).
unsigned long long stream_k_token() {
  static std::atomic<unsigned long long> launches{0};
  unsigned long long z = launches.fetch_add(1, std::memory_order_relaxed) + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (z ^ (z >> 31)) | 1ull;
}

/// Of K's `ctiles` cluster tiles on `clusters` clusters, how many it walks whole for a problem of
/// depth k: all of them, but where K has stream-K and the rule (or a forced mode) splits the
/// partial wave (cluster_stream_k_dp). The launch and the row's kernel name both ask here.
template <class K>
std::int64_t whole_cluster_tiles(std::int64_t ctiles, std::int64_t clusters, std::int64_t k) {
  if constexpr (!K::stream_k()) {
    return ctiles;
  } else {
    using In = typename K::in;
    std::int64_t const nk = (k + operand_traits<In>::k_block - 1) / operand_traits<In>::k_block;
    return cluster_stream_k_dp(ctiles, clusters, nk, current_cluster_stream_k());
  }
}

/// Whether C takes the TMA store (cluster_c_tma_store), from the problem's fields.
bool c_takes_tma_store(problem const& p) { return cluster_c_tma_store(p.c, p.ldc, p.c_f32 ? 4 : 2, p.beta); }

/// Launches kernel K (tiles BM x BN in pairs, cluster_pairs) over min(cluster tiles, max active
/// clusters) clusters: A's and B's two parts' tensor maps, C's (and its tail box's) for the TMA
/// store where C takes it (`tma_store`: c_takes_tma_store, as the choice of K saw it).
template <class K>
void launch(problem const& call, cudaStream_t st, bool tma_store) {
  MEMLAB_EXPECTS(!K::swap || tma_store, "gemm_tc: a swapped kernel stores C only through TMA");
  problem const p = K::swap ? swapped(call) : call;  // the problem the kernel computes
  using In = typename K::in;
  constexpr int BM = K::bm, BN = K::bn;
  std::int64_t const ctiles = cluster_pairs(p.m, p.n, BM, BN, K::share == pair_share::a);
  MEMLAB_EXPECTS(ctiles <= 0x3fffffff, "too many tiles for one grid");
  bool const f16 = std::is_same_v<typename operand_traits<In>::c16, __half>;  // 16-bit C: FP16, else BF16
  cl_maps maps;
  std::memset(&maps, 0, sizeof maps);
  bool const share_a = K::share == pair_share::a;  // each CTA of a pair loads half of the shared operand
  if constexpr (K::a_km)  // k rows of m: boxes of 64 k-rows x 64 rows of A (produce's Akm)
    make_tensor_map(&maps.a, p.a, operand_traits<In>::type, p.k, p.m, p.a_sk, operand_traits<In>::k_block);
  else
    make_tensor_map(&maps.a, p.a, operand_traits<In>::type, p.m, p.k, p.a_si, share_a ? BM / 2 : BM);
  if constexpr (K::b_kn)  // k rows of n: boxes of 64 k-rows x 64 columns (128 bytes; produce's Bkn)
    make_tensor_map(&maps.b, p.b, operand_traits<In>::type, p.k, p.n, p.b_sk, operand_traits<In>::k_block);
  else
    make_tensor_map(&maps.b, p.b, operand_traits<In>::type, p.n, p.k, p.b_sj, share_a ? BN : BN / 2);
  int const out_bytes = p.c_f32 ? 4 : 2;
  if (tma_store && K::swap) {
    // C itself (call's m x n), in boxes of 32 rows x 128 bytes (tma_store_epilogue_t).
    make_store_map(&maps.c, call.c, call.c_f32, f16, call.m, call.n, call.ldc, 32, 128);
    maps.c_tail = maps.c;
  } else if (tma_store) {
    int const box_bytes = p.c_f32 ? K::cfg::box32 : K::cfg::box16;
    int const tail_bytes = BN * out_bytes % box_bytes;
    make_store_map(&maps.c, p.c, p.c_f32, f16, p.m, p.n, p.ldc, epi_rows, box_bytes);
    if (tail_bytes == 0) maps.c_tail = maps.c;
    else make_store_map(&maps.c_tail, p.c, p.c_f32, f16, p.m, p.n, p.ldc, epi_rows, tail_bytes, true);
  }
  // max_active_clusters<K> has raised K's shared-memory limit on this device, once.
  std::int64_t const clusters = std::min<std::int64_t>(ctiles, max_active_clusters<K>());
  cudaLaunchAttribute attr[2];
  cudaLaunchConfig_t const cfg = cluster_launch_config(attr, cluster_size, static_cast<unsigned>(clusters * cluster_size),
                                                       threads, K::cfg::smem_bytes, st, true);
  if constexpr (K::pingpong) {
    MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, K::kernel(), maps, p, tma_store ? 1 : 0));
  } else {
    sk_args sk;
    sk.dp = static_cast<int>(ctiles);
    std::optional<detail::stream_scratch> ws;  // the split tiles' partials and flags, freed after the kernel in stream order
    if (std::int64_t const dp = whole_cluster_tiles<K>(ctiles, clusters, p.k); dp < ctiles) {
      std::size_t const ctas = static_cast<std::size_t>(clusters) * cluster_size;
      std::size_t const slots = ctas * BM * BN * sizeof(float);
      ws.emplace(slots + ctas * sizeof(unsigned long long), st, scratch_pool(), std::nothrow);
      if (ws->get() != nullptr) {  // no room: the tiles stay whole
        sk.partials = static_cast<float*>(ws->get());
        sk.flags = reinterpret_cast<unsigned long long*>(static_cast<char*>(ws->get()) + slots);
        sk.token = stream_k_token();
        sk.dp = static_cast<int>(dp);
      }
    }
    if (sk.dp < ctiles) {
      (void)memlab::detail::per_device([] {  // once per device, as max_active_clusters does for K::kernel()
        MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(K::split_kernel(), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(K::cfg::smem_bytes)));
        return true;
      });
      MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, K::split_kernel(), maps, p, tma_store ? 1 : 0, sk));
    } else {
      MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, K::kernel(), maps, p, tma_store ? 1 : 0, sk));
    }
  }
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace

namespace {
std::atomic<int> forced_kernel{static_cast<int>(cluster_family::automatic)};
std::atomic<int> forced_stream_k{static_cast<int>(cluster_stream_k_mode::automatic)};

template <class In>
cluster_tile pick(std::int64_t m, std::int64_t n, std::int64_t k, bool c_tma_store, row_alignment rows) {
  cluster_capacity const cap{max_active_clusters<cooperative<In, 128, 256>>(), max_active_clusters<pingpong<In, 192>>(),
                             max_active_clusters<pingpong<In, 160>>(), max_active_clusters<cooperative<In, 256, 152, pair_share::a>>(),
                             max_active_clusters<pingpong<In, 176>>(), max_active_clusters<pingpong<In, 144>>(),
                             sizeof(In) == 2 ? max_active_clusters<cooperative<In, 128, 64, pair_share::a>>() : 0};
  return cluster_pick(m, n, k, cap, current_cluster_family(), c_tma_store, rows);
}
/// Rung 6's kernel for an operand stored transposed (B k x n or A k x m): the cooperative tile
/// cluster_pick_mn gives.
template <class In>
cluster_tile pick_mn(std::int64_t m, std::int64_t n) {
  return cluster_pick_mn(m, n, max_active_clusters<cooperative<In, 128, 256>>(), current_cluster_family());
}
}  // namespace

void set_cluster_family(cluster_family k) { forced_kernel.store(static_cast<int>(k)); }
void set_cluster_stream_k(cluster_stream_k_mode m) { forced_stream_k.store(static_cast<int>(m)); }
cluster_stream_k_mode current_cluster_stream_k() { return static_cast<cluster_stream_k_mode>(forced_stream_k.load()); }
cluster_family current_cluster_family() { return static_cast<cluster_family>(forced_kernel.load()); }

namespace {
/// The kernel's name, and where it splits its last waves (stream-K), how many of its cluster tiles.
template <class In>
std::string kernel_name(std::int64_t m, std::int64_t n, std::int64_t k, bool c_tma_store, row_alignment rows, bool b_kn,
                        bool a_km) {
  cluster_tile const t = b_kn || a_km ? pick_mn<In>(m, n) : pick<In>(m, n, k, c_tma_store, rows);
  std::string name = cluster_tile_name(t);
  if (a_km && b_kn) return name + ", A and B read as stored (k x m, k x n)";  // whole tiles (no stream-K)
  if (a_km) return name + ", A read as stored (k x m)";
  if (b_kn) return name + ", B read as stored (k x n)";
  auto const split = [&](auto kernel) {
    using K = decltype(kernel);
    std::int64_t const ctiles = cluster_pairs(m, n, K::bm, K::bn, false);
    std::int64_t const dp = whole_cluster_tiles<K>(ctiles, std::min<std::int64_t>(ctiles, max_active_clusters<K>()), k);
    if (dp < ctiles) name += ", stream-K over " + std::to_string(ctiles - dp) + " of " + std::to_string(ctiles) + " pairs";
  };
  if (t == cluster_tile::coop_128x256) split(cooperative<In, 128, 256>{});
  if (t == cluster_tile::coop_128x128) split(cooperative<In, 128, 128>{});
  return name;
}
}  // namespace

std::string cluster_kernel_name(bool f16, std::int64_t m, std::int64_t n, std::int64_t k, bool c_tma_store,
                                row_alignment rows, bool b_kn, bool a_km) {
  return f16 ? kernel_name<__half>(m, n, k, c_tma_store, rows, b_kn, a_km)
             : kernel_name<__nv_bfloat16>(m, n, k, c_tma_store, rows, b_kn, a_km);
}

namespace {
/// The cooperative kernel reading what the problem stores transposed (a_stored_km, b_stored_kn)
/// as it is, at the tile cluster_pick_mn gives.
template <class In, bool Bkn, bool Akm>
void launch_mn(problem const& p, cudaStream_t st, bool tma_store) {
  if (pick_mn<In>(p.m, p.n) == cluster_tile::coop_128x256)
    launch<cooperative_mn<In, 256, Bkn, Akm>>(p, st, tma_store);
  else
    launch<cooperative_mn<In, 128, Bkn, Akm>>(p, st, tma_store);
}
}  // namespace

template <class In>
void launch_cluster(problem const& p, cudaStream_t st) {
  bool const tma_store = c_takes_tma_store(p);
  auto const row_bytes = [](std::int64_t ld) { return ld * static_cast<std::int64_t>(sizeof(In)); };
  if constexpr (sizeof(In) == 2) {  // gemm_tc_unavailable lets rung 6 take these for BF16 and FP16 only
    bool const bkn = b_stored_kn(p), akm = a_stored_km(p);
    if (bkn && akm) return launch_mn<In, true, true>(p, st, tma_store);
    if (bkn) return launch_mn<In, true, false>(p, st, tma_store);
    if (akm) return launch_mn<In, false, true>(p, st, tma_store);
  }
  row_alignment const rows =
      cluster_row_alignment(p.a, row_bytes(p.a_si), p.b, row_bytes(p.b_sj), static_cast<int>(sizeof(In)));
  switch (pick<In>(p.m, p.n, p.k, tma_store, rows)) {
    case cluster_tile::coop_128x256: launch<cooperative<In, 128, 256>>(p, st, tma_store); break;
    case cluster_tile::coop_128x128: launch<cooperative<In, 128, 128>>(p, st, tma_store); break;
    case cluster_tile::coop_256x152: launch<cooperative<In, 256, 152, pair_share::a>>(p, st, tma_store); break;
    case cluster_tile::pingpong_128x192: launch<pingpong<In, 192>>(p, st, tma_store); break;
    case cluster_tile::pingpong_128x160: launch<pingpong<In, 160>>(p, st, tma_store); break;
    case cluster_tile::pingpong_192x128_swapped: launch<pingpong<In, 192, true>>(p, st, tma_store); break;
    case cluster_tile::pingpong_160x128_swapped: launch<pingpong<In, 160, true>>(p, st, tma_store); break;
    case cluster_tile::pingpong_128x176: launch<pingpong<In, 176>>(p, st, tma_store); break;
    case cluster_tile::pingpong_128x144: launch<pingpong<In, 144>>(p, st, tma_store); break;
    case cluster_tile::coop_128x64: launch<cooperative<In, 128, 64, pair_share::a>>(p, st, tma_store); break;
  }
}

std::size_t smem_cluster() {
  return std::max({cl_config<128, 256>::smem_bytes, cl_config<128, 128>::smem_bytes, cl_config<256, 152>::smem_bytes,
                   pp_config<192>::smem_bytes, pp_config<160>::smem_bytes, pp_config<176>::smem_bytes,
                   pp_config<144>::smem_bytes, cl_config<128, 64>::smem_bytes});
}

template void launch_cluster<__half>(problem const&, cudaStream_t);
template void launch_cluster<__nv_bfloat16>(problem const&, cudaStream_t);
template void launch_cluster<__nv_fp8_e4m3>(problem const&, cudaStream_t);

}  // namespace memlab::detail::gemm_tc
