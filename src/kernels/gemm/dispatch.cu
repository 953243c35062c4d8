// memlab::gemm_ex: the BLAS interface (order, transposes, batches, workspace), the
// dispatcher's cost model and the execution of a plan. The model and the candidate list
// are pure functions of the shape and the device's limits (tests/cpu/test_gemm_select.cpp).
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernels/gemm/cp_async_configs.cuh"
#include "memlab/arch.hpp"
#include "memlab/detail/per_device.hpp"
#include "memlab/detail/stream_scratch.hpp"
#include "memlab/device.hpp"
#include "memlab/gemm.hpp"

namespace memlab {
namespace {
using namespace detail::gemm;

// ---- the cost model (docs/gemm-notes.md, "Every shape: the model") ------------------------
// Per SM FFMA rate at the clock an H100/H200 holds under a full FFMA load (~1.75 GHz):
// 128 lanes x 2 FLOP. DRAM bandwidth a streaming kernel reaches on an H100 SXM. Only
// ratios between candidates matter for the choice; the absolute figures are predictions.
constexpr double kSmFlops = 128 * 2 * 1.75e9;
constexpr double kDramBytesPerS = 3.0e12;
constexpr double kLaunchUs = 2.5;       // a kernel launch in a stream of launches
constexpr double kUnitFixedUs = 0.6;    // pipeline fill + epilogue of one tile, per wave
constexpr int kMaxSplits = 512;         // tiles; the GEMV kernels' partials are small: up to 1024
constexpr int kGemvMaxSmallWithTiles = 8;   // see gemm_candidates: the stream kernel's fit
constexpr int kDotMaxBothWithTiles = 16;    // the dot kernel against tiles: both sides at most this
// Was 1.24 (the skinny kernels' measured / modelled time on the first H200 run, when the
// model took one block an SM as a full SM): the in-flight fill below now accounts for it.
constexpr double kGemvModelFit = 1.0;
constexpr double kTile32x64ModelFit = 0.84;
constexpr double kTile64x64ModelFit = 1.1;
// tile_64x16 on the H200: 4096x16x4096 on s8 took 38.6 us against the model's 29.9, a
// memory-bound run (each of A's rows gives a block 64 bytes a k step). The fit scales its DRAM
// time only: at 128x128x128, where the k loop's latency decides, the whole-model fit kept it
// out at 11.5 us modelled against 3.9 us measured (H100), the fastest of every candidate.
constexpr double kTile64x16MemoryFit = 1.38;
constexpr int kMinChunk = 64;           // no tile split walks fewer k than this (gemv: 128)
// No split whose partials exceed this (splits x m x n floats): the workspace stays bounded
// for huge outputs with deep K, where the model would trade 512 splits for a few percent.
constexpr std::size_t kMaxPartialBytes = std::size_t(256) << 20;
// Bytes in flight per SM that reach the DRAM bandwidth (hierarchy.inflight: plain loads
// need ~64 KB on an H100/H200; cp.async copies, all outstanding, about 48 KB). A kernel's
// fill is its resident bytes in flight over this; below 1 the DRAM time stretches by 1/fill.
constexpr double kInflightFullBytes = 48.0 * 1024;
constexpr double kSkinnyInflightFullBytes = 64.0 * 1024;
// Effective bytes a skinny block keeps in flight, fitted on the H200 (gemm.shapes, 867908a):
// one stream block an SM reached 1.3 TB/s (the 1024-output block), two ~2.7 TB/s (m = 1,
// 256 blocks); one dot block an SM 1.0 TB/s (4096x8x4096: 128 blocks, 67 us). So ~3 stream
// blocks or ~4 dot blocks an SM reach the DRAM rate.
constexpr double kStreamInflightBytes = 24.0 * 1024;
constexpr double kDotInflightBytes = 16.0 * 1024;
// One dependent L2 round trip of the split-K reduction (8 loads in flight a thread).
constexpr double kReduceTripUs = 0.5;
constexpr int kSplitChoices[] = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024};

long long round4(long long x) { return (x + 3) / 4 * 4; }
std::size_t round256(std::size_t x) { return (x + 255) / 256 * 256; }

bool has_cp_async_tiles(gemm_target const& t) { return gemm_variant_unavailable("cp_async_64x64", t).empty(); }

/// The gemv kernels' roles: which side is small (S) and the big operand's contiguity.
struct skinny_roles {
  bool m_small;  ///< S = rows of op(A) (else S = columns of op(B))
  int s_count, x_count;
};
skinny_roles roles_of(gemm_shape const& s) {
  bool m_small = s.m <= 16 && (s.m <= s.n || s.n > 16);
  // Both sides small (16 x 16 x 131072): the side whose big operand is contiguous along k
  // runs the dot kernel, which reads X a row at a time at any x_count; the stream kernel
  // would give a 256-output block 16 outputs.
  if (s.m <= 16 && s.n <= 16) {
    bool const dot_n_small = !s.trans_a, dot_m_small = s.trans_b;
    if (dot_n_small != dot_m_small) m_small = dot_m_small;
  }
  return {m_small, static_cast<int>(m_small ? s.m : s.n), static_cast<int>(m_small ? s.n : s.m)};
}
bool skinny_eligible(gemm_shape const& s) { return std::min(s.m, s.n) <= 16; }
/// The dot kernel (X contiguous in k) rather than the stream kernel (X contiguous in j).
bool skinny_is_dot(gemm_shape const& s) {
  skinny_roles const r = roles_of(s);
  return r.m_small ? s.trans_b : !s.trans_a;
}

/// The fixed-order split-K reduction: a launch, its bytes, and its dependent round trips
/// (a thread of group g walks splits / groups partials, 8 loads in flight).
double reduce_model_us(double outputs, int splits) {
  int const groups = splitk_reduce_groups(static_cast<long long>(outputs), splits);
  double const per_thread = std::ceil(double(splits) / groups);
  double const trips = std::ceil(per_thread / 8.0) + (groups > 1 ? 1.0 : 0.0);
  double const bytes = 4.0 * outputs * splits + 8.0 * outputs;
  return kLaunchUs + std::max(bytes / kDramBytesPerS * 1e6, trips * kReduceTripUs);
}

double tile_model_us(tile_info const& t, gemm_shape const& s, int splits, int sms, double memory_fit = 1.0) {
  int const chunk = split_chunk(static_cast<int>(s.k), splits, t.bk);
  int const se = effective_splits(static_cast<int>(s.k), chunk);
  double tiles = std::ceil(double(s.m) / t.bm) * std::ceil(double(s.n) / t.bn) * double(s.batch);
  // One matrix, no split: the ladder's launchers run thin remainder strips (<= a quarter
  // tile) as a separate 32x32 launch when that saves a wave (launch_any in 09_*.cu).
  double strip_us = 0.0;
  bool const ladder_launch = s.batch == 1 && se == 1 &&
                             (t.kind == tile_kind::t128x256 || t.kind == tile_kind::t128x128 || t.kind == tile_kind::t64x64);
  if (ladder_launch) {
    long long const m_main = s.m / t.bm * t.bm, n_main = s.n / t.bn * t.bn;
    long long const rem_m = s.m - m_main, rem_n = s.n - n_main;
    if (m_main > 0 && n_main > 0 && (rem_m > 0 || rem_n > 0) && rem_m <= t.bm / 4 && rem_n <= t.bn / 4) {
      double const slots = double(t.blocks_per_sm) * sms;
      double const main = double(s.m / t.bm) * double(s.n / t.bn);
      if (std::ceil(main / slots) < std::ceil(tiles / slots)) {
        tiles = main;
        double const strip_flops = 2.0 * 32.0 * (double(s.n) + double(m_main)) * double(s.k);  // rows padded to 32
        strip_us = strip_flops / (kSmFlops * 0.3 * sms) * 1e6 + kLaunchUs;
      }
    }
  }
  double const units = tiles * se;
  double const per_sm = std::ceil(units / sms);
  double const active = std::min<double>(per_sm, t.blocks_per_sm);
  double const occupancy = std::min(1.0, active * t.threads / 32.0 / 8.0);  // 8 warps hide the latency
  double const unit_flops = 2.0 * t.bm * t.bn * std::max(chunk, t.bk);
  double const compute_us = per_sm * unit_flops / (kSmFlops * t.efficiency * occupancy) * 1e6;
  double const waves = std::ceil(per_sm / t.blocks_per_sm);
  double const operand_bytes = 4.0 * double(s.batch) * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
  double const partial_bytes = se > 1 ? 4.0 * double(s.batch) * s.m * round4(s.n) * se : 0.0;
  // Bytes in flight: stages - 1 copies of the A and B tiles (their rows inside the matrix)
  // per resident block. A 16 x 16 output in a 32 x 64 tile keeps 3 KB in flight a block.
  double const inflight = (t.stages - 1) * double(t.bk) * 4.0 *
                          (double(std::min<std::int64_t>(t.bm, s.m)) + double(std::min<std::int64_t>(t.bn, s.n)));
  double const resident = std::min<double>(units / sms, t.blocks_per_sm);
  double const fill = std::min(1.0, resident * inflight / kInflightFullBytes);
  double const memory_us = memory_fit * (operand_bytes + partial_bytes) / (kDramBytesPerS * fill) * 1e6;
  double us = std::max(compute_us, memory_us) + waves * kUnitFixedUs + kLaunchUs + strip_us;
  if (se > 1) us += reduce_model_us(double(s.batch) * s.m * s.n, se);
  // Transposed operands are packed first: one read and one write of each.
  if (s.trans_a) us += kLaunchUs + 8.0 * double(s.batch) * s.m * s.k / kDramBytesPerS * 1e6;
  if (s.trans_b) us += kLaunchUs + 8.0 * double(s.batch) * s.k * s.n / kDramBytesPerS * 1e6;
  return us;
}

/// Blocks of the skinny kernels along the big side, per split and batch.
long long skinny_blocks(gemm_shape const& s) {
  skinny_roles const r = roles_of(s);
  long long const per = skinny_is_dot(s) ? 8 * 4 : 64 * 4;  // general.cu: dot 8 warps x 4 rows, kStreamOut
  return (r.x_count + per - 1) / per;
}

/// Blocks of 256 threads an SM holds, by the registers of the sm_90a build (dot<S>: 64, 64,
/// 64, 80, 128 registers for S = 1, 2, 4, 8, 16; stream<S>: 42, 48, 64, 114, 186).
int skinny_resident(bool dot, int s_count) {
  if (dot) return s_count <= 4 ? 4 : s_count <= 8 ? 3 : 2;
  return s_count <= 2 ? 5 : s_count <= 4 ? 4 : s_count <= 8 ? 2 : 1;
}

double skinny_model_us(gemm_shape const& s, int splits, int sms) {
  int const chunk = split_chunk(static_cast<int>(s.k), splits, gemv_k_granule);
  int const se = effective_splits(static_cast<int>(s.k), chunk);
  skinny_roles const r = roles_of(s);
  bool const dot = skinny_is_dot(s);
  double const blocks = double(skinny_blocks(s)) * se * s.batch;
  // Bytes in flight: each resident block keeps its effective share outstanding; the SM
  // needs kInflightFullBytes to reach the DRAM bandwidth (4096x8x4096 on one dot block an SM:
  // 1.0 TB/s; four blocks an SM are needed).
  double const resident = std::min<double>(blocks / sms, skinny_resident(dot, r.s_count));
  double const fill =
      std::min(1.0, resident * (dot ? kDotInflightBytes : kStreamInflightBytes) / kSkinnyInflightFullBytes);
  double const bytes = 4.0 * double(s.batch) * (double(s.m) * s.k + double(s.k) * s.n + double(s.m) * s.n);
  double const partial = se > 1 ? 4.0 * double(s.batch) * se * r.s_count * r.x_count : 0.0;
  // Wave quantization: blocks beyond the resident slots run as a tail at a fraction of the
  // fill (640 dot blocks on 4 x 132 slots: a tail of 112 blocks at one an SM), modelled as a
  // whole extra wave, as for the tiles.
  double const slots = double(sms) * skinny_resident(dot, r.s_count);
  double const quant = blocks > slots ? std::ceil(blocks / slots) * slots / blocks : 1.0;
  double const memory_us = (bytes + partial) * quant / (kDramBytesPerS * fill) * 1e6;
  // FFMA with S from shared memory (one 16-byte LDS per 16 FFMA): ~half the peak at best.
  double const compute_us = 2.0 * double(s.batch) * s.m * s.n * s.k / (0.5 * kSmFlops * sms) * 1e6;
  // A block walks its chunk serially, one DRAM round trip (~0.6 us) per batch of loads in
  // flight: 32 k values per block step in the stream kernel (4 groups x 8), 128 in the dot
  // kernel (whose step also waits for S's staging: ~2 trips). Blocks beyond the resident
  // ones run in later waves.
  double const steps = dot ? std::ceil(double(chunk) / 128.0) * 2.0 : std::ceil(double(chunk) / 32.0);
  double const waves = std::ceil(blocks / (double(sms) * skinny_resident(dot, r.s_count)));
  double const chain_us = steps * 0.6 * waves;
  double us = std::max({memory_us, compute_us, chain_us}) + kLaunchUs;
  if (se > 1) us += reduce_model_us(double(s.batch) * s.m * s.n, se);
  return us;
}

/// The distinct split counts worth modelling: each choice rounded to the count its chunk
/// (a multiple of `granule`) really gives, so 11008 / 64 (chunk 172 -> 256) is offered as 43.
/// A plan named with that count gets the same chunk back (split_chunk is stable on it).
std::vector<int> split_options(long long k, int granule, int min_chunk, int max_splits) {
  std::vector<int> out{1};
  for (int sp : kSplitChoices) {
    if (sp == 1) continue;
    if (sp > max_splits || k / sp < min_chunk) break;
    int const se = effective_splits(static_cast<int>(k), split_chunk(static_cast<int>(k), sp, granule));
    if (std::find(out.begin(), out.end(), se) == out.end()) out.push_back(se);
  }
  return out;
}

/// The internal row-major problem gemm_ex runs (order folded in, see gemm_shape).
struct normalized {
  int m = 0, n = 0, k = 0, batch = 1;
  bool ta = false, tb = false;
  float alpha = 1.f, beta = 0.f;
  float const* a = nullptr;
  long long lda = 0, sa = 0;
  float const* b = nullptr;
  long long ldb = 0, sb = 0;
  float* c = nullptr;
  long long ldc = 0, sc = 0;
};
normalized normalize(gemm_params const& p) {
  normalized q;
  q.k = static_cast<int>(p.k);
  q.batch = static_cast<int>(p.batch);
  q.alpha = p.alpha;
  q.beta = p.beta;
  q.c = p.c;
  q.ldc = p.ldc;
  q.sc = p.stride_c;
  if (p.order == gemm_order::row_major) {
    q.m = static_cast<int>(p.m), q.n = static_cast<int>(p.n);
    q.a = p.a, q.lda = p.lda, q.sa = p.stride_a, q.ta = p.op_a == gemm_op::t;
    q.b = p.b, q.ldb = p.ldb, q.sb = p.stride_b, q.tb = p.op_b == gemm_op::t;
  } else {  // column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T
    q.m = static_cast<int>(p.n), q.n = static_cast<int>(p.m);
    q.a = p.b, q.lda = p.ldb, q.sa = p.stride_b, q.ta = p.op_b == gemm_op::t;
    q.b = p.a, q.ldb = p.lda, q.sb = p.stride_a, q.tb = p.op_a == gemm_op::t;
  }
  return q;
}

/// Scratch layout of a plan: packed op(A), packed op(B), split partials (256-byte aligned).
struct workspace_layout {
  std::size_t pack_a = 0, pack_b = 0, partials = 0;
  int splits = 1, kchunk = 0;
  std::size_t total() const { return pack_a + pack_b + partials; }
};
workspace_layout layout_of(gemm_shape const& s, gemm_plan const& plan) {
  workspace_layout w;
  int const k = static_cast<int>(s.k);
  auto const bytes = [](double elems) { return round256(static_cast<std::size_t>(elems) * 4); };
  if (plan.kernel == "gemv" || plan.kernel == "gemv_v4") {
    w.kchunk = split_chunk(k, plan.splits, gemv_k_granule);
    w.splits = effective_splits(k, w.kchunk);
    skinny_roles const r = roles_of(s);
    if (w.splits > 1) w.partials = bytes(double(s.batch) * w.splits * r.s_count * r.x_count);
    return w;
  }
  if (s.trans_a) w.pack_a = bytes(double(s.batch) * s.m * round4(s.k));
  if (s.trans_b) w.pack_b = bytes(double(s.batch) * s.k * round4(s.n));
  if (tile_info const* t = find_tile(plan.kernel)) {
    w.kchunk = split_chunk(k, plan.splits, t->bk);
    w.splits = effective_splits(k, w.kchunk);
    if (w.splits > 1) w.partials = bytes(double(s.batch) * w.splits * s.m * round4(s.n));
  }
  return w;
}

}  // namespace

// ---- plans --------------------------------------------------------------------------------

std::string gemm_plan::name() const { return splits > 1 ? kernel + "/s" + std::to_string(splits) : kernel; }

gemm_plan gemm_parse_plan(std::string const& name) {
  gemm_plan p;
  auto const slash = name.find("/s");
  p.kernel = name.substr(0, slash);
  if (slash != std::string::npos) {
    std::string const num = name.substr(slash + 2);
    MEMLAB_EXPECTS(!num.empty() && num.size() <= 4 && num.find_first_not_of("0123456789") == std::string::npos,
                   "plan '" + name + "': the split after '/s' must be a number");
    p.splits = std::stoi(num);
    MEMLAB_EXPECTS(p.splits >= 1 && p.splits <= 4096, "plan '" + name + "': splits must be in 1..4096");
  }
  bool const known = find_tile(p.kernel) != nullptr || p.kernel == "gemv" || p.kernel == "gemv_v4" ||
                     find_variant(p.kernel) != nullptr;
  MEMLAB_EXPECTS(known, "unknown gemm plan '" + name + "' (tile_*, gemv, gemv_v4 or a gemm_variants() name)");
  MEMLAB_EXPECTS(p.splits == 1 || find_variant(p.kernel) == nullptr,
                 "plan '" + name + "': ladder variants do not split K");
  return p;
}

std::string gemm_plan_unavailable(gemm_plan const& plan, gemm_shape const& s, gemm_target const& t) {
  if (plan.kernel == "gemv" || plan.kernel == "gemv_v4") {
    if (!skinny_eligible(s)) return "gemv needs m or n <= 16";
    if (plan.kernel == "gemv_v4" && !s.aligned) return "gemv_v4 needs 16-byte aligned rows (pointers, ld and strides)";
    return {};
  }
  if (tile_info const* ti = find_tile(plan.kernel)) {
    if (!has_cp_async_tiles(t)) return gemm_variant_unavailable("cp_async_64x64", t);
    if (static_cast<std::size_t>(ti->smem_bytes) > t.smem_per_block_optin_bytes)
      return std::to_string(ti->smem_bytes) + " bytes of shared memory per block; this device allows " +
             std::to_string(t.smem_per_block_optin_bytes);
    return {};
  }
  if (find_variant(plan.kernel) != nullptr) {
    if (gemm_variant_needs_alignment(plan.kernel) && !s.aligned)
      return "variant '" + plan.kernel + "' needs 16-byte aligned rows of A and B";
    return gemm_variant_unavailable(plan.kernel, t);
  }
  return "unknown plan '" + plan.kernel + "'";
}

namespace {
double tile_fit(tile_info const& ti) {
  switch (ti.kind) {
    case tile_kind::t32x64: return kTile32x64ModelFit;
    case tile_kind::t64x64: return kTile64x64ModelFit;
    default: return 1.0;
  }
}
double tile_memory_fit(tile_info const& ti) { return ti.kind == tile_kind::t64x16 ? kTile64x16MemoryFit : 1.0; }
}  // namespace

double gemm_plan_model_us(gemm_plan const& plan, gemm_shape const& s, gemm_target const& t) {
  int const sms = std::max(1, t.sm_count);
  if (s.m <= 0 || s.n <= 0 || s.batch <= 0) return 0.0;
  if (plan.kernel == "gemv" || plan.kernel == "gemv_v4") return kGemvModelFit * skinny_model_us(s, plan.splits, sms);
  if (tile_info const* ti = find_tile(plan.kernel)) return tile_fit(*ti) * tile_model_us(*ti, s, plan.splits, sms, tile_memory_fit(*ti));
  tile_info const ladder{tile_kind::t128x128, "ladder", 128, 128, 8, 256, 1, 0, 0.45, 3};
  return tile_model_us(ladder, s, 1, sms);
}

std::vector<gemm_plan> gemm_candidates(gemm_shape const& s, gemm_target const& t) {
  std::vector<gemm_plan> out;
  int const sms = std::max(1, t.sm_count);
  if (s.m <= 0 || s.n <= 0 || s.batch <= 0) return {gemm_plan{"gemv", 1, 0.0}};
  // Refit on the first H200 run of gemm.shapes (docs/gemm-notes.md, "Every shape: first run"):
  // the skinny kernels took 1.24x their modelled time (median over 15 shapes) and lost to a
  // split tile_32x64 whenever the small side was 16 (1.4-21x their model), so with cp.async
  // tiles in the image they compete only up to 8; tile_32x64 ran at 0.84 of its model and
  // tile_64x64 at 0.99 but lost most near ties to tile_32x64.
  bool const tiles = has_cp_async_tiles(t);
  // The dot kernel (the big operand contiguous along k) also competes when both sides are
  // at most 16: 16x16x131072 on 256 splits ran at 1.64x cuBLAS (H200), where a 32 x 64
  // tile keeps an eighth of its copies useful. With one side 16 and the other large it
  // lost: 4096x16x4096 on gemv/s2 ran at 0.45 of cuBLAS, 1.73x its model (the 16-wide dot
  // holds 2 blocks an SM), against 0.60 for tile_32x64/s4.
  bool const tiny_output = std::max(s.m, s.n) <= kDotMaxBothWithTiles;
  if (skinny_eligible(s) &&
      (!tiles || std::min(s.m, s.n) <= kGemvMaxSmallWithTiles || (skinny_is_dot(s) && tiny_output))) {
    gemm_plan best{"gemv", 1, 1e300};
    for (int sp : split_options(s.k, gemv_k_granule, gemv_k_granule, 1024)) {
      if (sp > 1 && layout_of(s, gemm_plan{"gemv", sp, 0.0}).partials > kMaxPartialBytes) break;
      double const us = kGemvModelFit * skinny_model_us(s, sp, sms);
      if (us < best.predicted_us) best = {"gemv", sp, us};
    }
    out.push_back(best);
  }
  if (tiles) {
    for (auto const& ti : tile_table()) {
      if (static_cast<std::size_t>(ti.smem_bytes) > t.smem_per_block_optin_bytes) continue;
      gemm_plan best{ti.name, 1, 1e300};
      double const fit = tile_fit(ti);
      for (int sp : split_options(s.k, ti.bk, kMinChunk, kMaxSplits)) {
        if (sp > 1 && layout_of(s, gemm_plan{ti.name, sp, 0.0}).partials > kMaxPartialBytes) break;
        double const us = fit * tile_model_us(ti, s, sp, sms, tile_memory_fit(ti));
        if (us < best.predicted_us * 0.98) best = {ti.name, sp, us};  // fewer splits on a near tie
      }
      out.push_back(best);
    }
  } else {
    // No cp.async in this binary's code: the ladder's best single kernel, one per batch.
    std::string const v = gemm_select_variant(s.m, s.n, std::max<std::int64_t>(s.k, 1), t);
    tile_info const ladder{tile_kind::t128x128, "ladder", 128, 128, 8, 256, 1, 0, 0.45, 3};
    out.push_back({v, 1, tile_model_us(ladder, s, 1, sms)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](gemm_plan const& x, gemm_plan const& y) { return x.predicted_us < y.predicted_us; });
  return out;
}

gemm_plan gemm_select(gemm_shape const& s, gemm_target const& t) { return gemm_candidates(s, t).front(); }

std::size_t gemm_workspace_bytes(gemm_shape const& s, gemm_plan const& plan) { return layout_of(s, plan).total(); }

gemm_shape gemm_shape_of(gemm_params const& p) {
  normalized const q = normalize(p);
  gemm_shape s;
  s.m = q.m, s.n = q.n, s.k = q.k, s.batch = p.batch;
  s.trans_a = q.ta, s.trans_b = q.tb;
  auto al = [](void const* x) { return reinterpret_cast<std::uintptr_t>(x) % 16 == 0; };
  s.aligned = al(p.a) && al(p.b) && al(p.c) && p.lda % 4 == 0 && p.ldb % 4 == 0 && p.ldc % 4 == 0 &&
              (p.batch <= 1 || (p.stride_a % 4 == 0 && p.stride_b % 4 == 0 && p.stride_c % 4 == 0));
  return s;
}

// ---- gemm_ex --------------------------------------------------------------------------------

namespace {

constexpr int kMaxGridZ = 65535;

/// The autotune cache's plan for `shape` on the current device, when the cache has one this
/// device can run. The file is read once per process; a fault is one line on stderr, once.
std::optional<gemm_plan> autotuned_plan(gemm_shape const& shape, gemm_target const& target) {
  static std::once_flag loaded;
  static gemm_autotune_cache cache;
  std::call_once(loaded, [] {
    std::string warning;
    cache = gemm_autotune_cache::load(gemm_autotune_path(), &warning);
    if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
  });
  std::string const name = detail::per_device([] {
    int dev = 0;
    MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
    cudaDeviceProp prop{};
    MEMLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    return std::string(prop.name);
  });
  auto const it = cache.plans.find(gemm_autotune_key(name, shape));
  if (it == cache.plans.end()) return std::nullopt;
  gemm_plan plan = gemm_parse_plan(it->second.plan);  // checked when the file was read
  if (!gemm_plan_unavailable(plan, shape, target).empty()) return std::nullopt;
  plan.predicted_us = 0.0;
  return plan;
}

bool env_on(char const* name) {
  char const* v = std::getenv(name);
  return v != nullptr && std::string(v) == "1";
}

/// gemm_current_target() once per device ordinal: the SM count, shared memory and image
/// do not change while the process runs, and each call would cost five attribute reads.
gemm_target cached_target() { return detail::per_device([] { return gemm_current_target(); }); }

/// The row-major problem the tiled and ladder kernels read: op(A) = A^T and op(B) = B^T are
/// first packed row-major into the workspace (its pack_a and pack_b regions). Returns the
/// problem and the batch strides of A and B as the kernels see them.
struct packed {
  problem p;
  long long sa, sb;
};
packed packed_problem(normalized const& q, workspace_layout const& w, char* ws, cudaStream_t st) {
  packed r{problem{}, q.sa, q.sb};
  problem& p = r.p;
  p.m = q.m, p.n = q.n, p.k = q.k, p.alpha = q.alpha, p.beta = q.beta;
  p.a = q.a, p.lda = q.lda, p.b = q.b, p.ldb = q.ldb, p.c = q.c, p.ldc = q.ldc;
  if (q.ta) {  // op(A) = A^T: pack it row-major m x k
    float* dst = reinterpret_cast<float*>(ws);
    long long const ld = round4(q.k);
    launch_pack_transpose(q.a, q.lda, q.sa, q.m, q.k, dst, ld, q.m * ld, q.batch, st);
    p.a = dst, p.lda = ld, r.sa = q.m * ld;
  }
  if (q.tb) {  // op(B) = B^T: pack it row-major k x n
    float* dst = reinterpret_cast<float*>(ws + w.pack_a);
    long long const ld = round4(q.n);
    launch_pack_transpose(q.b, q.ldb, q.sb, q.k, q.n, dst, ld, q.k * ld, q.batch, st);
    p.b = dst, p.ldb = ld, r.sb = q.k * ld;
  }
  return r;
}

void run_tiles(tile_info const& ti, normalized const& q, workspace_layout const& w, char* ws, cudaStream_t st) {
  auto [p, sa, sb] = packed_problem(q, w, ws, st);
  // One matrix, no split: the ladder's launchers, which also move thin remainder strips to
  // a small-tile kernel when that saves a wave (4097^3).
  if (q.batch == 1 && w.splits == 1) {
    int dev = 0, optin = 0;
    switch (ti.kind) {
      case tile_kind::t128x256:
        if (q.k % 8 != 0) {
          MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
          MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
          if (optin >= cfg_128x256_k16::smem_bytes) return launch_cp_async_128x256_k16_db(p, st);
        }
        return launch_cp_async_128x256_db(p, st);
      case tile_kind::t128x128: return launch_cp_async_128x128_w64x64_db(p, st);
      case tile_kind::t64x64: return launch_cp_async_64x64(p, st);
      default: break;
    }
  }
  tiled_args args;
  args.stride_a = sa, args.stride_b = sb, args.stride_c = q.sc;
  args.splits = w.splits, args.kchunk = w.kchunk;
  args.ws = reinterpret_cast<float*>(ws + w.pack_a + w.pack_b);
  args.ws_ld = round4(q.n);
  long long const slice = static_cast<long long>(q.m) * args.ws_ld;
  for (int z0 = 0; z0 < q.batch; z0 += kMaxGridZ) {
    problem pz = p;
    pz.a += z0 * sa, pz.b += z0 * sb, pz.c += z0 * q.sc;
    tiled_args az = args;
    az.batch = std::min(kMaxGridZ, q.batch - z0);
    launch_tiled(ti.kind, pz, az, st);
    if (w.splits > 1)
      launch_splitk_reduce(az.ws, slice, az.ws_ld, w.splits, q.m, q.n, az.batch, q.alpha, q.beta, pz.c, q.ldc, 1, q.sc,
                           st);
  }
}

void run_skinny(normalized const& q, gemm_shape const& s, workspace_layout const& w, bool force_vec, char* ws,
                cudaStream_t st) {
  skinny_roles const r = roles_of(s);
  skinny_args a;
  a.s_count = r.s_count, a.x_count = r.x_count, a.k = q.k;
  a.alpha = q.alpha, a.beta = q.beta;
  if (r.m_small) {  // S = rows of op(A), X = columns of op(B), O(i, j) = C(i, j)
    a.s = q.a, a.s_vec = q.ta ? 1 : q.lda, a.s_k = q.ta ? q.lda : 1, a.s_batch = q.sa;
    a.x = q.b, a.x_pos = q.tb ? q.ldb : 1, a.x_k = q.tb ? 1 : q.ldb, a.x_batch = q.sb;
    a.o = q.c, a.o_s = q.ldc, a.o_x = 1;
  } else {  // S = columns of op(B), X = rows of op(A), O(i, j) = C(j, i)
    a.s = q.b, a.s_vec = q.tb ? q.ldb : 1, a.s_k = q.tb ? 1 : q.ldb, a.s_batch = q.sb;
    a.x = q.a, a.x_pos = q.ta ? 1 : q.lda, a.x_k = q.ta ? q.lda : 1, a.x_batch = q.sa;
    a.o = q.c, a.o_s = 1, a.o_x = q.ldc;
  }
  a.o_batch = q.sc;
  a.splits = w.splits, a.kchunk = w.kchunk;
  a.ws = reinterpret_cast<float*>(ws);
  long long const slice = static_cast<long long>(a.s_count) * a.x_count;
  for (int z0 = 0; z0 < q.batch; z0 += kMaxGridZ) {
    skinny_args az = a;
    az.batch = std::min(kMaxGridZ, q.batch - z0);
    az.s += z0 * a.s_batch, az.x += z0 * a.x_batch, az.o += z0 * a.o_batch;
    bool const vec = skinny_vector_ok(az);
    MEMLAB_EXPECTS(vec || !force_vec, "plan gemv_v4 needs 16-byte aligned rows of the large operand");
    launch_skinny(az, vec, st);
    if (w.splits > 1)
      launch_splitk_reduce(az.ws, slice, a.x_count, w.splits, a.s_count, a.x_count, az.batch, q.alpha, q.beta, az.o,
                           a.o_s, a.o_x, a.o_batch, st);
  }
}

void run_variant(variant_entry const& v, normalized const& q, workspace_layout const& w, char* ws, cudaStream_t st) {
  auto [p, sa, sb] = packed_problem(q, w, ws, st);
  for (int z = 0; z < q.batch; ++z) {
    problem pz = p;
    pz.a += z * sa, pz.b += z * sb, pz.c += z * q.sc;
    v.launch(pz, st);
  }
}

}  // namespace

void gemm_ex(gemm_params const& p) {
  using detail::gemm::find_variant;
  bool const row = p.order == gemm_order::row_major;
  MEMLAB_EXPECTS(p.m >= 0 && p.n >= 0 && p.k >= 0, "m, n and k must be >= 0");
  MEMLAB_EXPECTS(p.m <= INT_MAX && p.n <= INT_MAX && p.k <= INT_MAX, "m, n and k must fit in 32 bits");
  MEMLAB_EXPECTS(p.batch >= 1, "batch must be >= 1 (got " + std::to_string(p.batch) + ")");
  MEMLAB_EXPECTS(p.batch <= INT_MAX, "batch must fit in 32 bits");
  // The stored matrices: op(X) = X^T stores X with its dimensions swapped.
  auto const need_ld = [&](std::int64_t rows, std::int64_t cols) { return std::max<std::int64_t>(1, row ? cols : rows); };
  bool const ta = p.op_a == gemm_op::t, tb = p.op_b == gemm_op::t;
  std::int64_t const lda_min = ta ? need_ld(p.k, p.m) : need_ld(p.m, p.k);
  std::int64_t const ldb_min = tb ? need_ld(p.n, p.k) : need_ld(p.k, p.n);
  std::int64_t const ldc_min = need_ld(p.m, p.n);
  std::string const order = row ? "row-major" : "column-major";
  MEMLAB_EXPECTS(p.lda >= lda_min, "lda must be >= " + std::to_string(lda_min) + " (" + order + " A" +
                                       (ta ? "^T" : "") + "), got " + std::to_string(p.lda));
  MEMLAB_EXPECTS(p.ldb >= ldb_min, "ldb must be >= " + std::to_string(ldb_min) + " (" + order + " B" +
                                       (tb ? "^T" : "") + "), got " + std::to_string(p.ldb));
  MEMLAB_EXPECTS(p.ldc >= ldc_min, "ldc must be >= " + std::to_string(ldc_min) + " (" + order + " C), got " +
                                       std::to_string(p.ldc));
  if (p.batch > 1) {
    MEMLAB_EXPECTS(p.stride_a >= 0 && p.stride_b >= 0, "stride_a and stride_b must be >= 0");
    std::int64_t const c_extent = p.m == 0 || p.n == 0 ? 0 : (row ? (p.m - 1) * p.ldc + p.n : (p.n - 1) * p.ldc + p.m);
    MEMLAB_EXPECTS(p.stride_c >= c_extent, "stride_c must be >= " + std::to_string(c_extent) +
                                               " (the batches of C would overlap), got " + std::to_string(p.stride_c));
  }
  gemm_plan plan;
  bool const named = !p.plan.empty();
  if (named) plan = gemm_parse_plan(p.plan);
  if (p.m == 0 || p.n == 0) return;
  MEMLAB_EXPECTS(p.c != nullptr, "C is null");
  MEMLAB_EXPECTS(p.k == 0 || (p.a != nullptr && p.b != nullptr), "A or B is null");
  MEMLAB_EXPECTS(((p.m + 31) / 32) * ((p.n + 31) / 32) <= INT_MAX, "m x n too large for one launch");
  gemm_shape const shape = gemm_shape_of(p);
  gemm_target const target = cached_target();
  if (!named) plan = gemm_select(shape, target);
  if (!named && (p.autotune || env_on("MEMLAB_GEMM_AUTOTUNE"))) {
    // A caller's workspace sized for the dispatcher's plan (gemm_workspace_bytes of
    // gemm_select) must not become a throw when the cached plan needs more: it is ignored.
    auto const tuned = autotuned_plan(shape, target);
    if (tuned && (p.workspace == nullptr || p.workspace_bytes >= layout_of(shape, *tuned).total())) plan = *tuned;
  }
  std::string const why = gemm_plan_unavailable(plan, shape, target);
  MEMLAB_EXPECTS(why.empty(), "plan '" + plan.name() + "': " + why);
  normalized const q = normalize(p);
  workspace_layout const w = layout_of(shape, plan);
  bool const is_gemv = plan.kernel == "gemv" || plan.kernel == "gemv_v4";
  if (is_gemv && plan.kernel == "gemv_v4") {
    // Checked here, before any work: the batch chunks only shift by multiples of stride.
    skinny_roles const r = roles_of(shape);
    skinny_args a;
    a.x = r.m_small ? q.b : q.a;
    a.x_batch = r.m_small ? q.sb : q.sa;
    a.batch = q.batch;
    a.x_count = r.x_count;
    bool const xt = r.m_small ? q.tb : !q.ta;  // X contiguous in k
    a.x_pos = xt ? (r.m_small ? q.ldb : q.lda) : 1;
    a.x_k = xt ? 1 : (r.m_small ? q.ldb : q.lda);
    a.splits = w.splits, a.kchunk = w.kchunk;
    MEMLAB_EXPECTS(skinny_vector_ok(a), "plan gemv_v4 needs 16-byte aligned rows of the large operand");
  }
  if (!is_gemv) {  // the packing transpose's grid: 32-row tiles in gridDim.y (<= 65535)
    long long const rows_a = q.ta ? q.m : 0, rows_b = q.tb ? q.k : 0;
    MEMLAB_EXPECTS((std::max(rows_a, rows_b) + 31) / 32 <= 65535,
                   "a transposed operand with more than 2097120 rows of op(X) is not supported by plan '" +
                       plan.name() + "'");
  }
  std::size_t const need = w.total();
  MEMLAB_EXPECTS(p.workspace == nullptr || p.workspace_bytes >= need,
                 "workspace of " + std::to_string(p.workspace_bytes) + " bytes; plan '" + plan.name() + "' needs " +
                     std::to_string(need));
  if (auto const* v = find_variant(plan.kernel)) {
    if (v->needs_arch > 0) require_arch(v->kernel(), v->needs_arch, "cp.async");
  }
  memlab::detail::stream_scratch const scratch(p.workspace == nullptr ? need : 0, p.stream);  // the default pool
  char* const ws = static_cast<char*>(p.workspace != nullptr ? p.workspace : scratch.get());
  if (is_gemv) return run_skinny(q, shape, w, plan.kernel == "gemv_v4", ws, p.stream);
  if (tile_info const* ti = find_tile(plan.kernel)) return run_tiles(*ti, q, w, ws, p.stream);
  run_variant(*find_variant(plan.kernel), q, w, ws, p.stream);
}

void gemm_strided_batched(gemm_order order, gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                          float alpha, float const* a, std::int64_t lda, std::int64_t stride_a, float const* b,
                          std::int64_t ldb, std::int64_t stride_b, float beta, float* c, std::int64_t ldc,
                          std::int64_t stride_c, std::int64_t batch, cudaStream_t stream) {
  gemm_params p;
  p.order = order, p.op_a = op_a, p.op_b = op_b;
  p.m = m, p.n = n, p.k = k, p.alpha = alpha, p.beta = beta;
  p.a = a, p.lda = lda, p.stride_a = stride_a;
  p.b = b, p.ldb = ldb, p.stride_b = stride_b;
  p.c = c, p.ldc = ldc, p.stride_c = stride_c;
  p.batch = batch, p.stream = stream;
  gemm_ex(p);
}

}  // namespace memlab
