// memlab::gemm_bf16 / gemm_f16 / gemm_e4m3: every rung at awkward shapes against a
// double-precision host reference (the inputs are exact in BF16/FP16/E4M3, so both sides
// multiply the same numbers).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "kernels/gemm/tc/cluster_plan.hpp"
#include "kernels/gemm/tc/repack.hpp"
#include "kernels/gemm/tc/split_k.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/gemm/tc/tc_common.cuh"
#include "kernels/gemm/tc/tolerance.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"
#include "memlab/gemm_tc.hpp"

namespace {
using memlab::gemm_op;
using memlab::gemm_tc_rung;

using e4m3 = __nv_fp8_e4m3;

template <class T>
float to_f(T v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, e4m3>) return static_cast<float>(v);
  else return __bfloat162float(v);
}
template <class T>
T from_f(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, e4m3>) return e4m3(v);
  else return __float2bfloat16_rn(v);
}

/// Elements of In in 16 bytes: lda and ldb must be multiples of it for rungs 2-6.
template <class In>
constexpr std::int64_t per16 = 16 / static_cast<std::int64_t>(sizeof(In));

/// Why rung `r` cannot run an m x n x k problem of In on this device ("" when it can).
/// The shape of an m x n x k problem of In in layout (op_a, op_b), aligned (gemm_tc_select's view).
template <class In>
memlab::gemm_tc_shape shape_of(std::int64_t m, std::int64_t n, std::int64_t k, gemm_op op_a = gemm_op::n,
                               gemm_op op_b = gemm_op::t) {
  memlab::gemm_tc_shape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.op_a = op_a;
  s.op_b = op_b;
  s.input = memlab::detail::gemm_tc::operand_traits<In>::type;
  s.aligned = true;
  return s;
}

template <class In>
std::string unavailable(gemm_tc_rung r, std::int64_t m, std::int64_t n, std::int64_t k) {
  return memlab::gemm_tc_unavailable(r, shape_of<In>(m, n, k), memlab::gemm_tc_current_target());
}

/// |ours - ref| may reach this much (tolerance.hpp) besides one unit of the output per |ref|.
template <class In>
double abs_tolerance(std::int64_t k, float alpha) {
  double const t = std::is_same_v<In, e4m3> ? memlab::detail::gemm_tc::abs_tolerance_e4m3(k)
                                            : memlab::detail::gemm_tc::abs_tolerance_16bit(k);
  return std::fabs(alpha) * t + 1e-6;
}

template <class T>
std::vector<T> random_matrix(std::size_t count, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<T> v(count);
  for (auto& x : v) x = from_f<T>(dist(gen));
  return v;
}

template <class T>
memlab::device_buffer<T> upload(std::vector<T> const& h, std::size_t extra = 0) {
  memlab::device_buffer<T> d(h.size() + extra + 1);
  MEMLAB_CUDA_CHECK(cudaMemcpy(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

template <class T>
std::vector<T> download(T const* d, std::size_t count) {
  std::vector<T> h(count);
  MEMLAB_CUDA_CHECK(cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

/// Calls that must throw memlab::error before any work: C (FP32 here) keeps what it held.
struct untouched_c {
  memlab::device_buffer<float> const& c;
  std::vector<float> before;
  explicit untouched_c(memlab::device_buffer<float> const& c_) : c(c_), before(download(c_.data(), c_.size())) {}
  template <class F>
  void expect_throw(F&& f) const {
    EXPECT_THROW(f(), memlab::error);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const after = download(c.data(), c.size());
    EXPECT_EQ(0, std::memcmp(before.data(), after.data(), before.size() * sizeof(float)));
  }
};

template <class In, class Out>
void call(gemm_op oa, gemm_op ob, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, In const* a,
          std::int64_t lda, In const* b, std::int64_t ldb, float beta, Out* c, std::int64_t ldc, gemm_tc_rung rung) {
  if constexpr (std::is_same_v<In, __half>) memlab::gemm_f16(oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nullptr, rung);
  else if constexpr (std::is_same_v<In, e4m3>) memlab::gemm_e4m3(oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nullptr, rung);
  else memlab::gemm_bf16(oa, ob, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, nullptr, rung);
}

struct case_t;
template <class In>
void pad_rows_to_16_bytes(case_t& c);

struct case_t {
  std::int64_t m, n, k;
  gemm_op oa = gemm_op::n, ob = gemm_op::t;
  std::int64_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0;
  std::int64_t a_offset = 0, b_offset = 0;  ///< elements: a misaligned base pointer
  float alpha = 1.f, beta = 0.f;
  std::int64_t c_offset = 0;  ///< elements: C's base pointer moved (1: not 16-byte aligned)
};

/// Pads a case's rows of A and B to whole 16-byte units (what rungs 2-6 need), as its layout stores
/// them: A's rows k long (m where oa = t), B's k long (n where ob = n).
template <class In>
void pad_rows_to_16_bytes(case_t& c) {
  auto const pad = [](std::int64_t row, std::int64_t& extra) { extra += (per16<In> - (row + extra) % per16<In>) % per16<In>; };
  pad(c.oa == gemm_op::n ? c.k : c.m, c.lda_pad);
  pad(c.ob == gemm_op::t ? c.k : c.n, c.ldb_pad);
}

std::string describe(case_t const& c, gemm_tc_rung r) {
  return memlab::gemm_tc_rung_name(r) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) +
         " op " + static_cast<char>(c.oa) + static_cast<char>(c.ob) + " pads " + std::to_string(c.lda_pad) + "/" +
         std::to_string(c.ldb_pad) + "/" + std::to_string(c.ldc_pad) + " offsets " + std::to_string(c.a_offset) + "/" +
         std::to_string(c.b_offset) + "/" + std::to_string(c.c_offset) + " alpha " + std::to_string(c.alpha) + " beta " + std::to_string(c.beta);
}

/// Runs one case; sets `skipped` to the reason when the rung cannot take it.
template <class In, class Out>
void check_case(case_t const& cs, gemm_tc_rung rung, std::string& skipped) {
  SCOPED_TRACE(describe(cs, rung));
  std::int64_t const m = cs.m, n = cs.n, k = cs.k;
  std::int64_t const a_rows = cs.oa == gemm_op::n ? m : k, a_cols = cs.oa == gemm_op::n ? k : m;
  std::int64_t const b_rows = cs.ob == gemm_op::n ? k : n, b_cols = cs.ob == gemm_op::n ? n : k;
  std::int64_t const lda = a_cols + cs.lda_pad, ldb = b_cols + cs.ldb_pad, ldc = n + cs.ldc_pad;
  memlab::gemm_tc_shape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.op_a = cs.oa;
  s.op_b = cs.ob;
  s.input = memlab::detail::gemm_tc::operand_traits<In>::type;
  constexpr std::int64_t q = per16<In>;
  s.aligned = (k == 0 || cs.alpha == 0.f) ||
              (cs.a_offset % q == 0 && cs.b_offset % q == 0 && lda % q == 0 && ldb % q == 0);
  {
    // automatic runs the rung gemm_tc_select picks; when none can run (BF16 in an sm_75 image),
    // the call throws the wmma rung's reason, and the case is skipped with it.
    memlab::gemm_tc_target const target = memlab::gemm_tc_current_target();
    gemm_tc_rung runs = rung == gemm_tc_rung::automatic ? memlab::gemm_tc_select(s, target) : rung;
    if (rung == gemm_tc_rung::automatic) {  // a layout only wmma takes may run on the canonical rung after a copy
      bool const a_fast = cs.oa == gemm_op::n && cs.a_offset % q == 0 && lda % q == 0;
      bool const b_fast = cs.ob == gemm_op::t && cs.b_offset % q == 0 && ldb % q == 0;
      if (auto const plan = memlab::detail::gemm_tc::plan_repack(s, a_fast, b_fast, target); plan.rung != gemm_tc_rung::automatic)
        runs = plan.rung;  // which runs on the copy: nothing to skip
    }
    gemm_tc_rung const widest = std::is_same_v<In, e4m3> ? gemm_tc_rung::mma_sync : gemm_tc_rung::wmma;
    memlab::gemm_tc_shape copied = s;  // the layout the rung reads: the copy's, where automatic copies
    if (rung == gemm_tc_rung::automatic && runs != memlab::gemm_tc_select(s, target)) {
      copied.op_a = gemm_op::n;
      copied.op_b = gemm_op::t;
      copied.aligned = true;
    }
    std::string const why = memlab::gemm_tc_unavailable(runs == gemm_tc_rung::automatic ? widest : runs, copied, target);
    if (!why.empty()) {
      skipped = why;
      return;
    }
  }
  auto const ha = random_matrix<In>(static_cast<std::size_t>(a_rows * lda + cs.a_offset), 11u + static_cast<unsigned>(m));
  auto const hb = random_matrix<In>(static_cast<std::size_t>(b_rows * ldb + cs.b_offset), 23u + static_cast<unsigned>(n));
  auto hc = random_matrix<Out>(static_cast<std::size_t>(m * ldc + cs.c_offset), 37u);
  if (cs.beta == 0.f)
    for (auto& x : hc) x = from_f<Out>(NAN);  // beta = 0 must never read C
  auto da = upload(ha);
  auto db = upload(hb);
  auto dc = upload(hc);
  In const* pa = da.data() + cs.a_offset;
  In const* pb = db.data() + cs.b_offset;
  call(cs.oa, cs.ob, m, n, k, cs.alpha, pa, lda, pb, ldb, cs.beta, dc.data() + cs.c_offset, ldc, rung);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = download(dc.data(), hc.size());

  double const unit = std::is_same_v<Out, float> ? 0x1p-20 : (std::is_same_v<Out, __half> ? 0x1p-10 : 0x1p-7);
  double const abs_tol = abs_tolerance<In>(k, cs.alpha);
  int reported = 0;
  for (std::int64_t e = 0; e < cs.c_offset; ++e)  // before C's base: never written
    if (std::memcmp(&got[e], &hc[e], sizeof(Out)) != 0) {
      ADD_FAILURE() << "wrote element " << e << " before C's base";
      return;
    }
  // The operands as rows along k in float (exact: every input type fits), A's row i and B's column j
  // each contiguous, converted once: the double-precision dot products below then stream through
  // memory (the layouts' strided reads and the conversions inside the loop made the large cases'
  // reference the test's cost; session 38).
  std::vector<float> fa(static_cast<std::size_t>(m * k)), fb(static_cast<std::size_t>(n * k));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t kk = 0; kk < k; ++kk)
      fa[i * k + kk] = to_f(cs.oa == gemm_op::n ? ha[cs.a_offset + i * lda + kk] : ha[cs.a_offset + kk * lda + i]);
  for (std::int64_t kk = 0; kk < k; ++kk)
    for (std::int64_t j = 0; j < n; ++j)
      fb[j * k + kk] = to_f(cs.ob == gemm_op::n ? hb[cs.b_offset + kk * ldb + j] : hb[cs.b_offset + j * ldb + kk]);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < ldc; ++j) {
      float const g = to_f(got[cs.c_offset + i * ldc + j]);
      if (j >= n) {  // padding between rows is never written
        float const before = to_f(hc[cs.c_offset + i * ldc + j]);
        if (!(g == before || (std::isnan(g) && std::isnan(before)))) {
          ADD_FAILURE() << "wrote padding at (" << i << ", " << j << ")";
          return;
        }
        continue;
      }
      double acc = 0.0;
      float const* const ar = fa.data() + i * k;
      float const* const br = fb.data() + j * k;
      for (std::int64_t kk = 0; kk < k; ++kk) acc += static_cast<double>(ar[kk]) * static_cast<double>(br[kk]);
      double ref = cs.alpha * acc;
      if (cs.beta != 0.f) ref += cs.beta * static_cast<double>(to_f(hc[cs.c_offset + i * ldc + j]));
      double const err = std::fabs(static_cast<double>(g) - ref);
      if (!(err <= abs_tol + unit * std::fabs(ref) + std::fabs(cs.beta) * unit)) {  // NaN fails
        if (reported++ < 5) ADD_FAILURE() << "C(" << i << ", " << j << ") = " << g << ", expected " << ref;
      }
    }
  EXPECT_EQ(reported, 0);
}

std::vector<case_t> canonical_cases() {
  std::vector<case_t> v = {
      {1, 1, 1},
      {1, 200, 70},
      {130, 1, 65},
      {257, 263, 129},
      {128, 256, 192},
      {200, 136, 40, gemm_op::n, gemm_op::t, 8, 16, 3},       // ld > row
      {70, 90, 100, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f},  // alpha, beta
      // Few tiles, long k: rung 5 splits K in a cluster (split_k.hpp) on 128 x 64 tiles, S = 2, 4, 8
      {100, 300, 640, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f},  // 5 tiles, 10 k-blocks: 2
      {64, 256, 1100},                                                     // 4 tiles, 18 k-blocks: 4
      {1, 130, 2100, gemm_op::n, gemm_op::t, 8, 8, 4},                    // 3 tiles, 33 k-blocks: 8, uneven
      {128, 256, 1024},                                                    // 4 tiles, 16 k-blocks: 4
      {64, 4480, 512},  // 35 tiles of 128 x 128 (k split in two), 70 of 64 x 64 (one each)
      {2200, 300, 72},  // 18 M tiles of 128: rungs 5-6's grouped order, a run of 16 and a partial run of 2
      // Rung 2 splits K where its 128 x 128 tiles fill at most half the device (split_k.hpp):
      {8, 130, 8200, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f},  // 2 tiles, 257 slices: 16 splits; alpha, beta
      {5, 200, 1500, gemm_op::n, gemm_op::t, 8, 16, 2, 0, 0, 1.f, 0.5f, 1},  // 5 uneven splits; ld > row, C unaligned
  };
  if (!memlab::test::small_sizes()) {
    v.push_back({300, 520, 1000});
    v.push_back({128, 5120, 512});  // 80 tiles of 128 x 64 are too many to split: one a CTA
    v.push_back({128, 1024, 4096});  // a decode batch's shape: rung 2 splits its 8 tiles 4 ways (16 before the partials' cap)
  }
  return v;
}

template <class In, class Out>
void run_rung(gemm_tc_rung rung) {
  MEMLAB_REQUIRE_GPU();
  std::string skipped;
  for (case_t c : canonical_cases()) {
    pad_rows_to_16_bytes<In>(c);  // the wmma rung takes any padding (LayoutsAndAlignment...)
    check_case<In, Out>(c, rung, skipped);
    if (!skipped.empty()) GTEST_SKIP() << skipped;
  }
}

#define MEMLAB_TC_RUNG_TESTS(rung_id, rung)                                                                  \
  TEST(GemmTc, rung_id##_bf16) { run_rung<__nv_bfloat16, __nv_bfloat16>(rung); }                             \
  TEST(GemmTc, rung_id##_bf16_f32out) { run_rung<__nv_bfloat16, float>(rung); }                              \
  TEST(GemmTc, rung_id##_f16) { run_rung<__half, __half>(rung); }                                            \
  TEST(GemmTc, rung_id##_f16_f32out) { run_rung<__half, float>(rung); }

MEMLAB_TC_RUNG_TESTS(Wmma, gemm_tc_rung::wmma)
MEMLAB_TC_RUNG_TESTS(MmaSync, gemm_tc_rung::mma_sync)
MEMLAB_TC_RUNG_TESTS(TmaWgmma, gemm_tc_rung::tma_wgmma)
MEMLAB_TC_RUNG_TESTS(WarpSpecialized, gemm_tc_rung::warp_specialized)
MEMLAB_TC_RUNG_TESTS(Persistent, gemm_tc_rung::persistent)
MEMLAB_TC_RUNG_TESTS(Cluster, gemm_tc_rung::cluster)

// Rung 6 has two kernels (cluster_plan.hpp): each of its batteries below runs with the rule's
// choice and with each kernel forced, so both see every case whatever the rule picks.
using memlab::detail::gemm_tc::cluster_family;
using family_scope = memlab::detail::gemm_tc::cluster_family_scope;
#define MEMLAB_TC_CLUSTER_FAMILY_TESTS(name, family, body)                                                        \
  TEST(GemmTc, name##_bf16) { family_scope const f(family); body<__nv_bfloat16, __nv_bfloat16>(); }            \
  TEST(GemmTc, name##_bf16_f32out) { family_scope const f(family); body<__nv_bfloat16, float>(); }             \
  TEST(GemmTc, name##_f16) { family_scope const f(family); body<__half, __half>(); }                           \
  TEST(GemmTc, name##_f16_f32out) { family_scope const f(family); body<__half, float>(); }
template <class In, class Out>
void run_cluster_rung() {
  run_rung<In, Out>(gemm_tc_rung::cluster);
}
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCooperative, cluster_family::cooperative, run_cluster_rung)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong, cluster_family::pingpong192, run_cluster_rung)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong160, cluster_family::pingpong160, run_cluster_rung)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCooperative256, cluster_family::cooperative256, run_cluster_rung)
// The swapped pingpong kernels (C^T = B^T A^T, C stored transposed through shared memory); where C
// does not take the TMA store (beta != 0) they run the unswapped kernel, as the rule would.
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong192s, cluster_family::pingpong192s, run_cluster_rung)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong160s, cluster_family::pingpong160s, run_cluster_rung)
// Pingpong at 128 x 176 and 128 x 144: C in 64-byte boxes plus a 16-column tail box.
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong176, cluster_family::pingpong176, run_cluster_rung)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong144, cluster_family::pingpong144, run_cluster_rung)
// The cooperative kernel at each tile width forced (session 20): 128 x 256 where the rule's
// `cooperative` takes 128 x 128 (few pairs) and the reverse.
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x256, cluster_family::coop128x256, run_cluster_rung)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x128, cluster_family::coop128x128, run_cluster_rung)
// The cooperative kernel on 128 x 64 tiles, pairs along N sharing A (session 32): an odd tile count
// leaves the last tile alone, pairs wrap rows (own A), C one box wide (16-bit) or two (FP32).
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x64, cluster_family::coop128x64, run_cluster_rung)

// Rung 6's own edges: the TMA store epilogue (beta = 0, C 16-byte aligned, ldc bytes a
// multiple of 16) against its register fallback, a pair whose second tile lies past m (odd
// tile rows), one row or few columns of C, ld > row, alpha without beta.
std::vector<case_t> cluster_edge_cases() {
  gemm_op const n_ = gemm_op::n, t_ = gemm_op::t;
  return {
      {257, 264, 129},                                         // 3 tile rows: the second pair's CTA 1 idles; TMA store
      {1, 64, 200},                                            // m = 1 through the TMA store (ldc 64)
      {130, 8, 70},                                            // n = 8: a box 8 columns wide, clipped by TMA
      {67, 72, 300, n_, t_, 0, 0, 8},                          // ldc > n, still a TMA-storable stride
      {67, 72, 300, n_, t_, 0, 0, 1},                          // ldc bytes not a multiple of 16: register stores
      {129, 136, 64, n_, t_, 0, 0, 0, 0, 0, 1.f, 0.f, 1},      // C base not 16-byte aligned: register stores
      {129, 136, 64, n_, t_, 0, 0, 0, 0, 0, 1.f, 0.f, 8},      // C base moved by 8 elements: 16-byte aligned, TMA
      {200, 392, 136, n_, t_, 8, 16, 8, 0, 0, -2.5f, 0.f},     // alpha through the TMA path, ld > row for A, B, C
      {200, 392, 136, n_, t_, 0, 0, 0, 0, 0, 0.5f, 2.f},       // beta != 0: register stores read C
      {300, 290, 72},                                          // 256 x 152 tiles: the second's tail box clipped at n
      {520, 304, 72, n_, t_, 0, 0, 0, 0, 0, -0.5f},            // ... two whole tile columns, tail boxes whole; rows past 512
      {520, 456, 40},                                          // ... 3 x 3 tiles: pairs wrap rows (own A), the last tile alone
  };
}
template <class In, class Out>
void run_cluster_edges() {
  MEMLAB_REQUIRE_GPU();
  std::string skipped;
  for (case_t c : cluster_edge_cases()) {
    pad_rows_to_16_bytes<In>(c);
    check_case<In, Out>(c, gemm_tc_rung::cluster, skipped);
    if (!skipped.empty()) GTEST_SKIP() << skipped;
  }
}
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterEdges, cluster_family::automatic, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCooperativeEdges, cluster_family::cooperative, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpongEdges, cluster_family::pingpong192, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong160Edges, cluster_family::pingpong160, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCooperative256Edges, cluster_family::cooperative256, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong192sEdges, cluster_family::pingpong192s, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong160sEdges, cluster_family::pingpong160s, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong176Edges, cluster_family::pingpong176, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong144Edges, cluster_family::pingpong144, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x256Edges, cluster_family::coop128x256, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x128Edges, cluster_family::coop128x128, run_cluster_edges)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x64Edges, cluster_family::coop128x64, run_cluster_edges)

// Rungs 5 and 6 walking several tiles per block (their barrier phases wrap across tiles): both
// tile widths (128 x 256 with many pairs, 128 x 128 in a partial last wave), odd tile rows.
// Against a double-precision host reference; skipped at small sizes (sanitizer runs).
template <class In, class Out>
void check_many_tiles(gemm_tc_rung rung, std::int64_t m, std::int64_t n, std::int64_t k, float alpha = 1.f) {
  SCOPED_TRACE(memlab::gemm_tc_rung_name(rung) + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
               " alpha " + std::to_string(alpha));
  auto const ha = random_matrix<In>(static_cast<std::size_t>(m * k), 101u);
  auto const hb = random_matrix<In>(static_cast<std::size_t>(n * k), 202u);
  auto da = upload(ha), db = upload(hb);
  memlab::device_buffer<Out> dc(static_cast<std::size_t>(m * n));
  dc.fill_bytes(0xFF);
  call(gemm_op::n, gemm_op::t, m, n, k, alpha, da.data(), k, db.data(), k, 0.f, dc.data(), n, rung);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = download(dc.data(), dc.size());
  std::vector<float> fa(ha.size()), fb(hb.size());
  for (std::size_t i = 0; i < ha.size(); ++i) fa[i] = to_f(ha[i]);
  for (std::size_t i = 0; i < hb.size(); ++i) fb[i] = to_f(hb[i]);
  double const unit = std::is_same_v<Out, float> ? 0x1p-20 : (std::is_same_v<Out, __half> ? 0x1p-10 : 0x1p-7);
  double const abs_tol = abs_tolerance<In>(k, alpha);
  int reported = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      float const* ar = &fa[static_cast<std::size_t>(i * k)];
      float const* br = &fb[static_cast<std::size_t>(j * k)];
      double acc = 0.0;
      for (std::int64_t kk = 0; kk < k; ++kk) acc += static_cast<double>(ar[kk]) * br[kk];
      acc *= alpha;
      double const g = to_f(got[static_cast<std::size_t>(i * n + j)]);
      if (!(std::fabs(g - acc) <= abs_tol + unit * std::fabs(acc)) && reported++ < 5)
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << g << ", expected " << acc;
    }
  EXPECT_EQ(reported, 0);
}

TEST(GemmTc, PersistentAndClusterWalkManyTiles) {
  MEMLAB_REQUIRE_GPU();
  if (memlab::test::small_sizes()) GTEST_SKIP() << "large shapes (MEMLAB_TEST_SMALL=1)";
  memlab::gemm_tc_shape s;
  s.m = s.n = s.k = 4096;
  for (gemm_tc_rung r : {gemm_tc_rung::persistent, gemm_tc_rung::cluster}) {
    if (auto why = memlab::gemm_tc_unavailable(r, s, memlab::gemm_tc_current_target()); !why.empty()) GTEST_SKIP() << why;
    // 33 x 9 tiles of 128 x 256: 153 pairs, odd rows, and the last tile column's second B half
    // (columns 2176..2303) wholly past n = 2152: rung 6 loads one half there (ldc bytes still TMA-storable).
    check_many_tiles<__nv_bfloat16, __nv_bfloat16>(r, 4224, 2152, 200);
    check_many_tiles<__half, float>(r, 2304, 1024, 520);                 // rung 5: 18 x 8 tiles of 128 x 128 (partial wave), 9 k-blocks
  }
  // Rung 6's kernels forced. Pingpong 192: 33 x 12 tiles of 128 x 192, the last column's second
  // B half (2208..2303) past n = 2152, alternating warpgroups over 3-4 tiles a CTA; 2304 x 1024:
  // 18 x 6 tiles, 9 k-blocks over 4 slots. Pingpong 160: 33 x 14 tiles, the last column's
  // second half (2160..2239) past n, 64-byte C boxes; 2304 x 1024: 18 x 7, 9 k-blocks over 5 slots.
  // Cooperative 256 x 152 (pairs along N sharing A): 17 x 15 = 255 tiles, so pairs wrap rows
  // (those load their own A) and the last pair's second tile lies past the end; tail boxes (24
  // columns) in every whole tile; the last tile column holds 24 columns (one box clipped, the rest
  // and the tail not issued); 2304 x 1024: 9 x 7 tiles, 31 pairs and a half. Swapped 192 and 160
  // (C^T's 2152 x 4224: 17 x 22 and 17 x 27 tiles of 128 x BN, odd tile rows, the last tile column
  // whole at 192 and 64 of 160 rows of C at 160, C's columns past 2152 clipped; 1024 x 2304: 8 x 12
  // and 8 x 15).
  for (cluster_family f : {cluster_family::cooperative, cluster_family::pingpong192, cluster_family::pingpong160,
                           cluster_family::cooperative256, cluster_family::pingpong192s, cluster_family::pingpong160s,
                           cluster_family::pingpong176, cluster_family::pingpong144, cluster_family::coop128x256,
                           cluster_family::coop128x128, cluster_family::coop128x64}) {
    family_scope const scope(f);
    SCOPED_TRACE(memlab::detail::gemm_tc::cluster_family_name(f));
    check_many_tiles<__nv_bfloat16, __nv_bfloat16>(gemm_tc_rung::cluster, 4224, 2152, 200);
    check_many_tiles<__half, float>(gemm_tc_rung::cluster, 2304, 1024, 520);
  }
}

// Stream-K (sessions 27-28): with it forced on, the cooperative kernels split their partial wave's
// tiles into runs of k-blocks, one a cluster, each run that crosses into a tile computing that
// tile's head first; a tile in pieces meets in global memory (the other pieces' FP32 partials, a
// flag each), finished by the piece holding its last k-block. Each tile width forced, against the
// double-precision reference; the row's kernel name says the split ran. Shapes (66 clusters, an
// H100's or H200's): 4224x2152x200, 153 pairs of 128 x 256 (2 waves and 21 pairs: 84 k-blocks over
// 66 bins of 1-2, so tiles in up to four pieces; odd tile rows so pairs' second CTAs lie past m, the
// last column's second B half past n); 4096x2048x520 (1 wave and 62 pairs, 9 k-blocks a tile), FP32
// C and alpha; 2304x1024x520 at 128 x 128 (1 wave and 6 pairs: 54 k-blocks over 66 bins, some
// empty). At sanitizer sizes: 384x17408x136 (2 waves and 4 pairs of 3 k-blocks: 12 over 66 bins)
// and 384x8192x200 at 128 x 128 (1 wave and 62 pairs, 4 k-blocks).
TEST(GemmTc, ClusterStreamKSplitsThePartialWave) {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_tc_shape s;
  s.m = s.n = s.k = 1024;
  if (auto why = memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, s, memlab::gemm_tc_current_target()); !why.empty())
    GTEST_SKIP() << why;
  using memlab::detail::gemm_tc::cluster_stream_k_mode;
  memlab::detail::gemm_tc::cluster_stream_k_scope const on(cluster_stream_k_mode::on);
  struct sk_case {
    cluster_family family;
    std::int64_t m, n, k;
    float alpha;
    bool f16_to_f32, large;
  };
  for (sk_case const& c : {sk_case{cluster_family::coop128x256, 4224, 2152, 200, 1.f, false, true},
                           sk_case{cluster_family::coop128x256, 4096, 2048, 520, -1.5f, true, true},
                           sk_case{cluster_family::coop128x128, 2304, 1024, 520, 1.f, false, true},
                           sk_case{cluster_family::coop128x256, 384, 17408, 136, 0.75f, false, false},
                           sk_case{cluster_family::coop128x128, 384, 8192, 200, 1.f, true, false}}) {
    if (c.large && memlab::test::small_sizes()) continue;
    family_scope const scope(c.family);
    std::string const name = memlab::detail::gemm_tc::cluster_kernel_name(c.f16_to_f32, c.m, c.n, c.k, true,
                                                                          memlab::detail::gemm_tc::row_alignment::line);
    SCOPED_TRACE(name);
    EXPECT_NE(name.find("stream-K"), std::string::npos);
    if (c.f16_to_f32) check_many_tiles<__half, float>(gemm_tc_rung::cluster, c.m, c.n, c.k, c.alpha);
    else check_many_tiles<__nv_bfloat16, __nv_bfloat16>(gemm_tc_rung::cluster, c.m, c.n, c.k, c.alpha);
  }
}

// Rung 6's TMA store epilogue while each cluster walks several tiles, at sizes the sanitizer
// runs take (k small; PersistentAndClusterWalkManyTiles is skipped there): its staging boxes
// alternate across tiles, a tile past m skips the epilogue, one k-block a tile turns the ring
// over fastest. 136+ pairs of 128 x 256 tiles make any H100/H200 run the 256-wide kernel over
// two waves or more (4 boxes a tile of 16-bit C, 8 of FP32); 32 pairs of them, one wave, take
// 128 x 128 tiles (64 pairs, still one wave: cluster_coop_tile).
// (It also walked session 12's held-slot epilogue trial, 30a3e13.)
template <class In, class Out>
void run_cluster_epilogue_walk() {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_tc_shape s;
  s.m = s.n = s.k = 1024;
  if (auto why = memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, s, memlab::gemm_tc_current_target()); !why.empty())
    GTEST_SKIP() << why;
  check_many_tiles<In, Out>(gemm_tc_rung::cluster, 256, 35840, 16);           // 140 pairs, one k-block a tile
  check_many_tiles<In, Out>(gemm_tc_rung::cluster, 384, 17408, 136, -1.5f);   // odd tile rows: tiles past m; alpha
  check_many_tiles<In, Out>(gemm_tc_rung::cluster, 256, 8192, 72, 0.75f);     // 32 pairs: 128 x 128 tiles
}
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterEpilogueWalk, cluster_family::automatic, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCooperativeEpilogueWalk, cluster_family::cooperative, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpongEpilogueWalk, cluster_family::pingpong192, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong160EpilogueWalk, cluster_family::pingpong160, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCooperative256EpilogueWalk, cluster_family::cooperative256, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong192sEpilogueWalk, cluster_family::pingpong192s, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong160sEpilogueWalk, cluster_family::pingpong160s, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong176EpilogueWalk, cluster_family::pingpong176, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterPingpong144EpilogueWalk, cluster_family::pingpong144, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x256EpilogueWalk, cluster_family::coop128x256, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x128EpilogueWalk, cluster_family::coop128x128, run_cluster_epilogue_walk)
MEMLAB_TC_CLUSTER_FAMILY_TESTS(ClusterCoop128x64EpilogueWalk, cluster_family::coop128x64, run_cluster_epilogue_walk)

// FP8 (E4M3) on rung 6, each kernel forced and the rule's choice: the canonical cases and rung
// 6's edges (rows padded to whole 16-byte units, as E4M3 needs), BF16 and FP32 C; then the
// epilogue walk with k a multiple of 16 but not of the 128-element FP8 k-block.
template <class Out>
void run_e4m3_battery() {
  run_rung<e4m3, Out>(gemm_tc_rung::cluster);
  run_cluster_edges<e4m3, Out>();
  MEMLAB_REQUIRE_GPU();
  if (auto why = unavailable<e4m3>(gemm_tc_rung::cluster, 1024, 1024, 1024); !why.empty()) GTEST_SKIP() << why;
  check_many_tiles<e4m3, Out>(gemm_tc_rung::cluster, 256, 35840, 16);          // 140 pairs, one k-block a tile
  check_many_tiles<e4m3, Out>(gemm_tc_rung::cluster, 384, 17408, 144, -1.5f);  // a whole and a 16-wide k-block; alpha
  check_many_tiles<e4m3, Out>(gemm_tc_rung::cluster, 256, 8192, 80, 0.75f);    // 32 pairs: 128 x 128 tiles
}
#define MEMLAB_TC_E4M3_TESTS(name, family)                                                                      \
  TEST(GemmTc, name##_e4m3) { family_scope const f(family); run_e4m3_battery<__nv_bfloat16>(); }                \
  TEST(GemmTc, name##_e4m3_f32out) { family_scope const f(family); run_e4m3_battery<float>(); }
MEMLAB_TC_E4M3_TESTS(Cluster, cluster_family::automatic)
MEMLAB_TC_E4M3_TESTS(ClusterCooperative, cluster_family::cooperative)
MEMLAB_TC_E4M3_TESTS(ClusterPingpong, cluster_family::pingpong192)
MEMLAB_TC_E4M3_TESTS(ClusterPingpong160, cluster_family::pingpong160)
MEMLAB_TC_E4M3_TESTS(ClusterCooperative256, cluster_family::cooperative256)
MEMLAB_TC_E4M3_TESTS(ClusterPingpong192s, cluster_family::pingpong192s)
MEMLAB_TC_E4M3_TESTS(ClusterPingpong160s, cluster_family::pingpong160s)
MEMLAB_TC_E4M3_TESTS(ClusterPingpong176, cluster_family::pingpong176)
MEMLAB_TC_E4M3_TESTS(ClusterPingpong144, cluster_family::pingpong144)
MEMLAB_TC_E4M3_TESTS(ClusterCoop128x256, cluster_family::coop128x256)
MEMLAB_TC_E4M3_TESTS(ClusterCoop128x128, cluster_family::coop128x128)
MEMLAB_TC_E4M3_TESTS(ClusterCoop128x64, cluster_family::coop128x64)

// FP8 on rungs 2-5: the canonical cases (rung 5's 64 x 64 decode tiles and its split-K among
// them), BF16 and FP32 C.
#define MEMLAB_TC_E4M3_RUNG_TESTS(rung_id, rung)                                            \
  TEST(GemmTc, rung_id##_e4m3) { run_rung<e4m3, __nv_bfloat16>(rung); }                     \
  TEST(GemmTc, rung_id##_e4m3_f32out) { run_rung<e4m3, float>(rung); }
MEMLAB_TC_E4M3_RUNG_TESTS(MmaSync, gemm_tc_rung::mma_sync)
MEMLAB_TC_E4M3_RUNG_TESTS(TmaWgmma, gemm_tc_rung::tma_wgmma)
MEMLAB_TC_E4M3_RUNG_TESTS(WarpSpecialized, gemm_tc_rung::warp_specialized)
MEMLAB_TC_E4M3_RUNG_TESTS(Persistent, gemm_tc_rung::persistent)

// FP8 over many tiles a cluster, each kernel (the shapes of PersistentAndClusterWalkManyTiles,
// k rounded to whole 16-byte rows: 208 = one whole FP8 k-block and 80 of the next, 528 = 4 and 16).
TEST(GemmTc, ClusterE4m3WalkManyTiles) {
  MEMLAB_REQUIRE_GPU();
  if (memlab::test::small_sizes()) GTEST_SKIP() << "large shapes (MEMLAB_TEST_SMALL=1)";
  if (auto why = unavailable<e4m3>(gemm_tc_rung::cluster, 4096, 4096, 4096); !why.empty()) GTEST_SKIP() << why;
  for (cluster_family f : {cluster_family::automatic, cluster_family::cooperative, cluster_family::pingpong192,
                           cluster_family::pingpong160, cluster_family::cooperative256, cluster_family::pingpong192s,
                           cluster_family::pingpong160s, cluster_family::pingpong176, cluster_family::pingpong144,
                           cluster_family::coop128x256, cluster_family::coop128x128}) {
    family_scope const scope(f);
    SCOPED_TRACE(memlab::detail::gemm_tc::cluster_family_name(f));
    check_many_tiles<e4m3, __nv_bfloat16>(gemm_tc_rung::cluster, 4224, 2152, 208);
    check_many_tiles<e4m3, float>(gemm_tc_rung::cluster, 2304, 1024, 528);
  }
}

// What gemm_e4m3 refuses, C untouched: a named rung given the layouts and alignments it cannot
// read, the rung without an FP8 kernel (wmma). k = 0 needs no operand, so it scales C whatever their alignment.
TEST(GemmTc, E4m3RefusesWhatItCannotRun) {
  MEMLAB_REQUIRE_GPU();
  int const m = 64, n = 64, k = 64;
  auto const h = random_matrix<e4m3>(static_cast<std::size_t>(m) * k + 16, 9u);
  auto da = upload(h), db = upload(h);
  memlab::device_buffer<float> dc(static_cast<std::size_t>(m) * n);
  dc.fill_bytes(0x7F);
  untouched_c const checked(dc);
  gemm_op const n_ = gemm_op::n, t_ = gemm_op::t;
  // A rung named explicitly takes only the canonical layout and alignment (automatic copies the
  // operand first: AutomaticRepacksOtherLayouts).
  for (gemm_tc_rung r : {gemm_tc_rung::mma_sync, gemm_tc_rung::cluster}) {
    checked.expect_throw([&] { memlab::gemm_e4m3(n_, n_, m, n, k, 1.f, da.data(), k, db.data(), n, 0.f, dc.data(), n, nullptr, r); });
    checked.expect_throw([&] { memlab::gemm_e4m3(t_, t_, m, n, k, 1.f, da.data(), m, db.data(), k, 0.f, dc.data(), n, nullptr, r); });
    checked.expect_throw([&] { memlab::gemm_e4m3(n_, t_, m, n, k - 8, 1.f, da.data(), k - 8, db.data(), k - 8, 0.f, dc.data(), n, nullptr, r); });
    checked.expect_throw([&] { memlab::gemm_e4m3(n_, t_, m, n, k - 8, 1.f, da.data() + 8, k, db.data(), k, 0.f, dc.data(), n, nullptr, r); });
  }
  checked.expect_throw([&] { memlab::gemm_e4m3(n_, t_, m, n, k, 1.f, da.data(), k, db.data(), k, 0.f, dc.data(), n, nullptr, gemm_tc_rung::wmma); });
  checked.expect_throw([&] { memlab::gemm_e4m3(n_, t_, m, n, k, 1.f, da.data(), k, db.data(), k, 0.f, dc.data(), n - 1); });
  std::string sk;
  check_case<e4m3, float>({37, 41, 0, n_, t_, 8, 8, 0, 0, 0, 1.f, 0.5f}, gemm_tc_rung::automatic, sk);
  check_case<e4m3, __nv_bfloat16>({37, 41, 64, n_, t_, 0, 0, 2, 0, 0, 0.f, -2.f}, gemm_tc_rung::automatic, sk);
  if (!sk.empty()) GTEST_SKIP() << sk;
}

// An E4M3 NaN (0x7F) in A reaches its row of C.
TEST(GemmTc, E4m3NanInAPropagates) {
  MEMLAB_REQUIRE_GPU();
  int const m = 130, n = 140, k = 96;
  if (auto why = unavailable<e4m3>(gemm_tc_rung::cluster, m, n, k); !why.empty()) GTEST_SKIP() << why;
  auto ha = random_matrix<e4m3>(static_cast<std::size_t>(m) * k, 5u);
  auto const hb = random_matrix<e4m3>(static_cast<std::size_t>(n) * k, 6u);
  ha[77 * k + 50].__x = 0x7F;
  auto da = upload(ha), db = upload(hb);
  memlab::device_buffer<__nv_bfloat16> dc(static_cast<std::size_t>(m) * n);
  dc.fill_bytes(0);
  memlab::gemm_e4m3(gemm_op::n, gemm_op::t, m, n, k, 1.f, da.data(), k, db.data(), k, 0.f, dc.data(), n);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const c = download(dc.data(), dc.size());
  for (int j = 0; j < n; ++j) EXPECT_TRUE(std::isnan(to_f(c[77 * n + j]))) << "C(77, " << j << ")";
  EXPECT_FALSE(std::isnan(to_f(c[76 * n + 3])));
}

// Every layout and misaligned base pointers and leading dimensions through the automatic
// choice (which falls back to a rung that takes them) and the wmma rung.
TEST(GemmTc, LayoutsAndAlignmentFallBack) {
  MEMLAB_REQUIRE_GPU();
  std::string skipped, no_bf16;  // an sm_75 image has no BF16: its FP16 cases still run
  for (gemm_op oa : {gemm_op::n, gemm_op::t})
    for (gemm_op ob : {gemm_op::n, gemm_op::t})
      for (gemm_tc_rung r : {gemm_tc_rung::automatic, gemm_tc_rung::wmma}) {
        check_case<__nv_bfloat16, __nv_bfloat16>({67, 45, 77, oa, ob, 1, 3, 1}, r, no_bf16);
        check_case<__half, float>({33, 130, 70, oa, ob, 0, 0, 0, 1, 3}, r, skipped);
        check_case<__nv_bfloat16, float>({129, 257, 96, oa, ob, 8, 8, 0, 0, 0, 2.f, 1.f}, r, no_bf16);
        if (!skipped.empty()) GTEST_SKIP() << skipped;
      }
}

// automatic copies an operand that is not K-major and 16-byte aligned into K-major rows first
// (repack.hpp) where that pays, and runs the canonical layout's rung on the copy: every layout, a
// misaligned base pointer and odd leading dimensions, alpha and beta, FP32 and 16-bit C. E4M3 (no
// wmma kernel) copies at any size.
TEST(GemmTc, AutomaticRepacksOtherLayouts) {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_tc_target const target = memlab::gemm_tc_current_target();
  std::string skipped;
  int copied = 0;
  auto planned = [&](case_t const& c, memlab::gemm_tc_input in, std::int64_t q) {
    memlab::gemm_tc_shape s;
    s.m = c.m;
    s.n = c.n;
    s.k = c.k;
    s.op_a = c.oa;
    s.op_b = c.ob;
    s.input = in;
    std::int64_t const lda = (c.oa == gemm_op::n ? c.k : c.m) + c.lda_pad, ldb = (c.ob == gemm_op::n ? c.n : c.k) + c.ldb_pad;
    bool const a_fast = c.oa == gemm_op::n && c.a_offset % q == 0 && lda % q == 0;
    bool const b_fast = c.ob == gemm_op::t && c.b_offset % q == 0 && ldb % q == 0;
    bool const b_kn = c.ob == gemm_op::n && c.b_offset % q == 0 && ldb % q == 0;  // rung 5 may read it as stored
    s.aligned = a_fast && b_fast;
    auto const plan = memlab::detail::gemm_tc::plan_repack(s, a_fast, b_fast, target, b_kn);
    copied += plan.rung != gemm_tc_rung::automatic;
  };
  for (gemm_op oa : {gemm_op::n, gemm_op::t})
    for (gemm_op ob : {gemm_op::n, gemm_op::t}) {
      // Edge tiles in m, n and k.
      case_t c{300, 400, 520, oa, ob, 0, 0, 3, 0, 0, 1.5f, -0.5f};
      if (oa == gemm_op::n && ob == gemm_op::t) c.lda_pad = 1;  // canonical, but rows of A 1042 bytes apart
      std::string no_bf16;  // an sm_75 image has no BF16: its FP16 cases still run (onto rung 2's Turing kernel)
      if (check_case<__nv_bfloat16, __nv_bfloat16>(c, gemm_tc_rung::automatic, no_bf16); no_bf16.empty())
        planned(c, memlab::gemm_tc_input::bf16, per16<__nv_bfloat16>);
      case_t f{260, 390, 600, oa, ob, 5, 7, 0, 1, 1};  // A and B one element off 16 bytes, odd leading dimensions
      planned(f, memlab::gemm_tc_input::f16, per16<__half>);
      check_case<__half, float>(f, gemm_tc_rung::automatic, skipped);
      if (!skipped.empty()) GTEST_SKIP() << skipped;
      if (!(oa == gemm_op::n && ob == gemm_op::t)) {
        case_t e{64, 80, 96, oa, ob};
        planned(e, memlab::gemm_tc_input::e4m3, per16<e4m3>);
        check_case<e4m3, __nv_bfloat16>(e, gemm_tc_rung::automatic, skipped);
        skipped.clear();  // no FP8 tensor cores here: the BF16 and FP16 cases above still count
      }
    }
  // Where the canonical layout gets a rung faster than wmma, every 16-bit case above was copied but a
  // B stored k x n in whole 16-byte rows where rung 5 reads it as stored (ReadsBStoredKByN).
  memlab::gemm_tc_shape canonical;
  canonical.m = canonical.n = canonical.k = 512;
  canonical.input = memlab::gemm_tc_input::f16;
  gemm_tc_rung const fast = memlab::gemm_tc_select(canonical, target);
  if (fast != gemm_tc_rung::wmma) EXPECT_GE(copied, 4);
}

// Rungs 4-6 read a B stored k x n (op_b = n, BF16 and FP16) as it is: TMA boxes of 64 k-rows x
// 64 columns, wgmma's MN-major B. The canonical battery's shapes with B so stored (rows padded to
// 16 bytes, ld > row in one), on rung 4 (128 x 256 tiles) and rung 5 (its 128 x 128 and 128 x 256
// persistent tiles, 64 x 64 decode tiles, K split in a cluster on 128 x 64 and 128 x 128 tiles);
// n = 1 and n not a multiple of 64 leave whole boxes past n. Rung 6 (its cooperative kernels, each
// CTA of a pair multicasting its half of B as one or two boxes) takes the same shapes and its own
// edges (odd tile rows, B's second half past n, C through registers for beta or an unaligned C),
// with the rule's tile and each width forced, and a pingpong family forced (which runs the
// cooperative kernel: only it reads B so); at full size, 153 pairs over the clusters. Then
// `automatic`: such a B is read as it is (no copy) where that pays, or copied for rung 6; both
// modes forced and verified; with A stored k x m too, A alone copied.
TEST(GemmTc, ReadsBStoredKByN) {
  MEMLAB_REQUIRE_GPU();
  namespace tc = memlab::detail::gemm_tc;
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::persistent, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  auto const stored_kn = [](case_t c) {
    c.ob = gemm_op::n;
    pad_rows_to_16_bytes<__half>(c);
    return c;
  };
  std::vector<case_t> cases;
  for (case_t c : canonical_cases()) cases.push_back(stored_kn(c));
  cases.push_back(stored_kn({200, 136, 40, gemm_op::n, gemm_op::t, 8, 24, 3}));  // ld > row
  if (!memlab::test::small_sizes()) cases.push_back(stored_kn({4224, 1024, 96}));  // 132 tiles of 128 x 256 (rung 5's wide tiles on 132 SMs)
  std::string skipped;
  for (gemm_tc_rung rung : {gemm_tc_rung::warp_specialized, gemm_tc_rung::persistent}) {
    for (case_t const& c : cases) {
      check_case<__nv_bfloat16, __nv_bfloat16>(c, rung, skipped);
      check_case<__half, float>(c, rung, skipped);
    }
    ASSERT_TRUE(skipped.empty()) << skipped;
  }
  {
    // Rung 6 at each tile width forced (the cases' few pairs would mostly take 128 x 128), on the
    // battery's cases but its large ones (rungs 2 and 5's split-K shapes) and rung 6's edges; then
    // many pairs under the rule (17 x 9 pairs of 128 x 256, odd tile rows, the last column's second
    // half past n). A pingpong family forced runs the cooperative kernel.
    std::vector<case_t> rung6;
    for (case_t const& c : cases)
      if (c.m * c.n * c.k < 20000000) rung6.push_back(c);
    for (case_t c : cluster_edge_cases()) rung6.push_back(stored_kn(c));
    for (cluster_family f : {cluster_family::coop128x256, cluster_family::coop128x128}) {
      family_scope const scope(f);
      SCOPED_TRACE(tc::cluster_family_name(f));
      for (case_t const& c : rung6) {
        check_case<__nv_bfloat16, __nv_bfloat16>(c, gemm_tc_rung::cluster, skipped);
        check_case<__half, float>(c, gemm_tc_rung::cluster, skipped);
      }
      ASSERT_TRUE(skipped.empty()) << skipped;
    }
    if (!memlab::test::small_sizes()) {
      check_case<__nv_bfloat16, __nv_bfloat16>(stored_kn({4224, 2152, 72}), gemm_tc_rung::cluster, skipped);
      check_case<__half, float>(stored_kn({4224, 2152, 72, gemm_op::n, gemm_op::n, 0, 0, 0, 0, 0, 0.75f}), gemm_tc_rung::cluster, skipped);
    }
    family_scope const pingpong(cluster_family::pingpong192);
    EXPECT_NE(tc::cluster_kernel_name(false, 4096, 4096, 4096, true, tc::row_alignment::line, true).find("cooperative"), std::string::npos);
    check_case<__nv_bfloat16, __nv_bfloat16>(stored_kn({257, 264, 129}), gemm_tc_rung::cluster, skipped);
  }
  // automatic: rung 6 (or rung 5 where m <= 128) on B as stored, or a copy for rung 6 in `copy` mode.
  memlab::gemm_tc_target const target = memlab::gemm_tc_current_target();
  memlab::gemm_tc_shape s = shape_of<__nv_bfloat16>(300, 400, 520, gemm_op::n, gemm_op::n);
  EXPECT_EQ(tc::plan_repack(s, true, false, target, true).rung, gemm_tc_rung::automatic) << "B stored k x n is read as it is";
  EXPECT_EQ(memlab::gemm_tc_select(s, target), gemm_tc_rung::cluster);
  EXPECT_NE(tc::plan_repack(s, true, false, target, false).rung, gemm_tc_rung::automatic) << "a misaligned B is copied";
  s.input = memlab::gemm_tc_input::e4m3;
  EXPECT_NE(tc::plan_repack(s, true, false, target, true).rung, gemm_tc_rung::automatic) << "FP8: wgmma takes no MN-major B";
  s.input = memlab::gemm_tc_input::bf16;
  for (tc::transposed_mode mode : {tc::transposed_mode::as_stored, tc::transposed_mode::copy}) {
    tc::transposed_scope const forced(mode);
    EXPECT_EQ(tc::plan_repack(s, true, false, target, true).rung == gemm_tc_rung::automatic, mode == tc::transposed_mode::as_stored);
    check_case<__nv_bfloat16, __nv_bfloat16>(stored_kn({300, 400, 520, gemm_op::n, gemm_op::t, 0, 0, 3, 0, 0, 1.5f, -0.5f}),
                                             gemm_tc_rung::automatic, skipped);
    check_case<__half, float>(stored_kn({128, 4096, 1024}), gemm_tc_rung::automatic, skipped);  // a decode batch
  }
  EXPECT_EQ(tc::gemm_tc_transposed_mode(), tc::transposed_mode::as_stored);
  // A stored k x m as well (tn): where A's rows are not whole 16-byte units (lda = 302), A is
  // copied alone and rung 6 reads B as stored; at m <= 128 (rung 5, which reads no transposed A)
  // likewise, on rung 5. (A in whole 16-byte rows is read as stored too: ReadsAStoredKByM.)
  {
    memlab::gemm_tc_shape tn = s;
    tn.op_a = gemm_op::t;
    auto const plan = tc::plan_repack(tn, false, false, target, true, false);
    EXPECT_TRUE(plan.a);
    EXPECT_FALSE(plan.b) << "B stored k x n is read as stored";
    EXPECT_EQ(plan.rung, gemm_tc_rung::cluster);
    check_case<__nv_bfloat16, __nv_bfloat16>({300, 400, 520, gemm_op::t, gemm_op::n, 2, 0, 3, 0, 0, 1.5f, -0.5f},
                                             gemm_tc_rung::automatic, skipped);
    check_case<__half, float>({128, 4096, 1024, gemm_op::t, gemm_op::n}, gemm_tc_rung::automatic, skipped);
  }
  EXPECT_TRUE(skipped.empty()) << skipped;
  // The rungs that read only K-major operands still refuse it, naming the layout.
  s.input = memlab::gemm_tc_input::f16;
  EXPECT_NE(memlab::gemm_tc_unavailable(gemm_tc_rung::tma_wgmma, s, target).find("op_b = t"), std::string::npos);
  EXPECT_TRUE(memlab::gemm_tc_unavailable(gemm_tc_rung::persistent, s, target).empty());
  EXPECT_TRUE(memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, s, target).empty());
  s.op_a = gemm_op::t;
  EXPECT_FALSE(memlab::gemm_tc_unavailable(gemm_tc_rung::persistent, s, target).empty()) << "A must still be K-major";
}

// Rung 6's cooperative kernels read an A stored k x m (op_a = t, BF16 and FP16) as it is: TMA boxes of
// 64 k-rows x 64 rows of A, wgmma's MN-major A; with B stored n x k (tt) and k x n (tn). The
// battery's small cases and rung 6's edges with A so stored (rows padded to 16 bytes), at each
// tile width forced; many pairs under the rule. Then `automatic`: A read as stored where rung 6
// runs (m > 128), copied for rung 5 at m <= 128, copied in `copy` mode; every case verified.
TEST(GemmTc, ReadsAStoredKByM) {
  MEMLAB_REQUIRE_GPU();
  namespace tc = memlab::detail::gemm_tc;
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::cluster, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  auto const stored_km = [](case_t c, gemm_op ob) {
    c.oa = gemm_op::t;
    c.ob = ob;
    pad_rows_to_16_bytes<__half>(c);
    return c;
  };
  std::vector<case_t> base;
  for (case_t const& c : canonical_cases())
    if (c.m * c.n * c.k < 20000000) base.push_back(c);
  for (case_t const& c : cluster_edge_cases()) base.push_back(c);
  std::string skipped;
  for (cluster_family f : {cluster_family::coop128x256, cluster_family::coop128x128}) {
    family_scope const scope(f);
    SCOPED_TRACE(tc::cluster_family_name(f));
    for (case_t const& c : base) {
      check_case<__nv_bfloat16, __nv_bfloat16>(stored_km(c, gemm_op::t), gemm_tc_rung::cluster, skipped);
      check_case<__half, float>(stored_km(c, gemm_op::n), gemm_tc_rung::cluster, skipped);
    }
    ASSERT_TRUE(skipped.empty()) << skipped;
  }
  if (!memlab::test::small_sizes()) {  // 17 x 9 pairs of 128 x 256, odd tile rows, the last tile's rows past m
    check_case<__half, __half>(stored_km({4200, 2152, 72}, gemm_op::t), gemm_tc_rung::cluster, skipped);
    check_case<__nv_bfloat16, float>(stored_km({4200, 2152, 72, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 0.75f}, gemm_op::n),
                                     gemm_tc_rung::cluster, skipped);
  }
  // automatic, both modes: in place on rung 6 (m > 128), or the copy; at m = 128 A is copied for rung 5.
  memlab::gemm_tc_target const target = memlab::gemm_tc_current_target();
  memlab::gemm_tc_shape tt = shape_of<__half>(300, 400, 520, gemm_op::t, gemm_op::t);
  EXPECT_EQ(memlab::gemm_tc_select(tt, target), gemm_tc_rung::cluster);
  for (tc::transposed_mode mode : {tc::transposed_mode::as_stored, tc::transposed_mode::copy}) {
    tc::transposed_scope const forced(mode);
    bool const in_place = mode == tc::transposed_mode::as_stored;
    EXPECT_EQ(tc::plan_repack(tt, false, true, target, false, true).rung == gemm_tc_rung::automatic, in_place);
    memlab::gemm_tc_shape tn = tt;
    tn.op_b = gemm_op::n;
    EXPECT_EQ(tc::plan_repack(tn, false, false, target, true, true).rung == gemm_tc_rung::automatic, in_place);
    for (gemm_op ob : {gemm_op::t, gemm_op::n}) {
      check_case<__nv_bfloat16, __nv_bfloat16>(stored_km({300, 400, 520, gemm_op::n, gemm_op::t, 0, 0, 3, 0, 0, 1.5f, -0.5f}, ob),
                                               gemm_tc_rung::automatic, skipped);
      check_case<__half, float>(stored_km({128, 4096, 1024}, ob), gemm_tc_rung::automatic, skipped);  // a decode batch: rung 5
    }
  }
  tt.m = 128;
  auto const decode = tc::plan_repack(tt, false, true, target, false, true);
  EXPECT_TRUE(decode.a) << "rung 5 reads no transposed A: copied";
  EXPECT_EQ(decode.rung, gemm_tc_rung::persistent);
  EXPECT_TRUE(skipped.empty()) << skipped;
  // FP8 and the other rungs refuse it, naming the layout.
  tt.m = 300;
  EXPECT_FALSE(memlab::gemm_tc_unavailable(gemm_tc_rung::persistent, tt, target).empty());
  tt.input = memlab::gemm_tc_input::e4m3;
  EXPECT_FALSE(memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, tt, target).empty());
}

// Few tiles with m > 128: automatic takes rung 5's few-tile grids where they run faster than rung 6
// (persistent_takes_few_tiles, CPU-tested): 64 x 64 tiles a CTA, the 128 x 64 split, 128 x 64 tiles a
// CTA and 64 x 128 tiles a CTA, in the canonical layout and with B stored k x n (rung 5 reads it as
// stored); with A stored k x m rung 6 reads it as stored instead. Against the double-precision
// reference; where this device's rule takes another rung, the same shapes still have to come out right.
TEST(GemmTc, FewTilesRunOnRungFiveWhereItsGridsAreFaster) {
  MEMLAB_REQUIRE_GPU();
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::cluster, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  bool const small = memlab::test::small_sizes();
  // At full size: 64 x 64 tiles (16 k-blocks); 256x1024x1088 (17), the 64 x 64 split on a device that
  // holds fewer than 32 clusters of four (the H100: 128 CTAs against the 128 x 64 split's 64), else the
  // 128 x 64 split; 128 x 64 tiles a CTA (16, n past a whole tile, alpha and beta), each in every layout
  // and type; 128 x 64 tiles a CTA at 40 k-blocks and 64 x 128 tiles a CTA at 65 (68 tiles; BF16,
  // canonical and B stored k x n: the host reference's time). At sanitizer sizes three of the kind.
  struct few_case {
    case_t c;
    bool every_layout;
  };
  std::vector<few_case> const cases =
      small ? std::vector<few_case>{{{192, 2048, 1024}, true},
                                    {{320, 512, 1600, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f}, true},
                                    {{384, 1480, 1024, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 0.5f, 0.25f}, true}}
            : std::vector<few_case>{{{256, 2048, 1024}, true},
                                    {{256, 1024, 1088, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f}, true},
                                    {{384, 1480, 1024, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 0.5f, 0.25f}, true},
                                    {{256, 2176, 2560}, false},
                                    {{256, 2176, 4160}, false}};
  memlab::gemm_tc_target const target = memlab::gemm_tc_current_target();
  int on_rung5 = 0, rung5_expected = 0;
  std::string skipped;
  for (few_case const& fc : cases)
    for (auto [oa, ob] : {std::pair{gemm_op::n, gemm_op::t}, std::pair{gemm_op::n, gemm_op::n}, std::pair{gemm_op::t, gemm_op::t}}) {
      if (!fc.every_layout && oa == gemm_op::t) continue;
      case_t c = fc.c;
      c.oa = oa;
      c.ob = ob;
      pad_rows_to_16_bytes<__half>(c);
      gemm_tc_rung const rung = memlab::gemm_tc_select(shape_of<__half>(c.m, c.n, c.k, oa, ob), target);
      if (oa == gemm_op::t) EXPECT_EQ(rung, gemm_tc_rung::cluster) << "rung 5 reads no A stored k x m";
      else ++rung5_expected;
      on_rung5 += rung == gemm_tc_rung::persistent;
      check_case<__nv_bfloat16, __nv_bfloat16>(c, gemm_tc_rung::automatic, skipped);
      if (fc.every_layout) check_case<__half, float>(c, gemm_tc_rung::automatic, skipped);
    }
  EXPECT_TRUE(skipped.empty()) << skipped;
  // On a device of 132 SMs (H100 SXM, H200) the rule's grids are the ones named above.
  if (target.sm_count == 132) EXPECT_EQ(on_rung5, rung5_expected);
}

// The persistent rung at one shape in the four ways a grid's tests take it, each with rows padded to 16
// bytes: BF16 into BF16, FP16 into FP32, B stored k x n (FP16, its rows 24 elements longer than n), and
// FP8 into BF16 at `f8_k` (FP8's k-blocks are 128 elements, so it needs a longer k for as many).
void check_persistent_four_ways(case_t const& base, std::int64_t f8_k, std::string& skipped) {
  case_t c = base;
  pad_rows_to_16_bytes<__nv_bfloat16>(c);
  check_case<__nv_bfloat16, __nv_bfloat16>(c, gemm_tc_rung::persistent, skipped);
  c = base;
  pad_rows_to_16_bytes<__half>(c);
  check_case<__half, float>(c, gemm_tc_rung::persistent, skipped);
  c = base;
  c.ob = gemm_op::n;
  c.ldb_pad = 24;
  pad_rows_to_16_bytes<__half>(c);
  check_case<__half, __half>(c, gemm_tc_rung::persistent, skipped);
  c = base;
  c.k = f8_k;
  pad_rows_to_16_bytes<e4m3>(c);
  check_case<e4m3, __nv_bfloat16>(c, gemm_tc_rung::persistent, skipped);
}

// Rung 5's 64 x 96 and 64 x 128 tiles a CTA (one consumer warpgroup, the whole k, no reduction),
// the grids of few tiles with long k (split_k.hpp, plan_persistent; CPU-tested). 65x4225x4097 makes 90
// tiles of 64 x 96 (68 of 64 x 128, so 64 x 96 runs), the second row of tiles one row deep, the last
// column one wide, the last k-block one element deep; alpha and beta; BF16 and FP16 into their own
// type and FP32, FP8 into BF16, and B stored k x n (read as stored, ld > row), which runs 64 x 128
// tiles instead. 65x8321x4097 (BF16) makes 132 tiles of 64 x 128 (174 of 64 x 96: no one wave), the
// last column again one wide. Against the double-precision reference, at every size (the sanitizers run it).
// On a device of 132 SMs the rows must name their grids.
TEST(GemmTc, PersistentTilesOf64x96And64x128TakeLongKAlone) {
  MEMLAB_REQUIRE_GPU();
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::persistent, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  case_t const base{65, 4225, 4097, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f};
  case_t wide = base;
  wide.n = 8321;
  namespace tc = memlab::detail::gemm_tc;
  if (memlab::gemm_tc_current_target().sm_count == 132) {
    EXPECT_EQ(tc::persistent_kernel_name<__nv_bfloat16>(base.m, base.n, base.k, 132), "64x96, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<e4m3>(base.m, base.n, 8200, 132), "64x96, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<__nv_bfloat16>(wide.m, wide.n, wide.k, 132), "64x128, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<e4m3>(wide.m, wide.n, 8200, 132), "64x128, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<__half>(base.m, base.n, base.k, 132, true), "64x128, a tile a CTA");  // B k x n
  }
  std::string skipped;
  check_persistent_four_ways(base, 8200, skipped);  // FP8: 64 whole k-blocks and 8 elements
  // 64 x 128 in BF16 alone: its host reference is twice the others' (session 38's call F spent more
  // than 100 s on this test with all four types at both shapes).
  pad_rows_to_16_bytes<__nv_bfloat16>(wide);
  check_case<__nv_bfloat16, __nv_bfloat16>(wide, gemm_tc_rung::persistent, skipped);
  EXPECT_TRUE(skipped.empty()) << skipped;
}

// A decode batch at short k (at most 64 k-blocks) whose 64 x 96 tiles make one wave and are more than its
// 128 x 64 tiles takes 64 x 96 (session 40; split_k.hpp, plan_persistent; CPU-tested). 100x6145x4095 makes
// 130 tiles of 64 x 96 against 97 of 128 x 64: the second row of tiles 36 deep, the last column one wide,
// the last k-block one element short; alpha and beta; BF16 into BF16 and FP8 into BF16 (32 k-blocks of 128),
// against the double-precision reference. On a device of 132 SMs the rows, and a decode batch's, must
// name their grids; B stored k x n keeps 128 x 64.
TEST(GemmTc, DecodeBatchesTake64x96TilesAtShortK) {
  MEMLAB_REQUIRE_GPU();
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::persistent, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  case_t const base{100, 6145, 4095, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f};
  namespace tc = memlab::detail::gemm_tc;
  if (memlab::gemm_tc_current_target().sm_count == 132) {
    EXPECT_EQ(tc::persistent_kernel_name<__nv_bfloat16>(base.m, base.n, base.k, 132), "64x96, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<e4m3>(base.m, base.n, base.k, 132), "64x96, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<__nv_bfloat16>(128, 6144, 4096, 132), "64x96, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<e4m3>(128, 5120, 5120, 132), "64x96, a tile a CTA");
    EXPECT_EQ(tc::persistent_kernel_name<__half>(base.m, base.n, base.k, 132, true), "128x64, a tile a CTA");  // B k x n
  }
  std::string skipped;
  case_t c = base;
  pad_rows_to_16_bytes<__nv_bfloat16>(c);
  check_case<__nv_bfloat16, __nv_bfloat16>(c, gemm_tc_rung::persistent, skipped);
  c = base;
  pad_rows_to_16_bytes<e4m3>(c);
  check_case<e4m3, __nv_bfloat16>(c, gemm_tc_rung::persistent, skipped);
  EXPECT_TRUE(skipped.empty()) << skipped;
}

// Rung 5's persistent 128 x 96 and 128 x 112 tiles (split_k.hpp, plan_persistent; CPU-tested): one row of
// tiles, more than half the SMs. 97x11009x2049 makes 115 tiles of 128 x 96 (one wave), the row of tiles 97
// deep, the last column one wide, the last k-block one element deep; alpha and beta; BF16 into its own type,
// FP16 into FP32, FP8 into BF16 (k = 4097: 33 k-blocks of 128), and B stored k x n with ld > row, which runs
// 128 x 128. 100x14337x2049 makes 129 tiles of 128 x 112, and 65x28673x2049 257 of them: two waves, so each
// CTA walks two tiles. Against the double-precision reference, at every size (the sanitizers run it). On a
// device of 132 SMs the rows must name their grids.
TEST(GemmTc, PersistentTilesOf128x96And128x112SpreadOneRowOfTiles) {
  MEMLAB_REQUIRE_GPU();
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::persistent, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  case_t const base{97, 11009, 2049, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f};
  case_t w112 = base;
  w112.m = 100;
  w112.n = 14337;
  case_t two = base;
  two.m = 65;
  two.n = 28673;
  namespace tc = memlab::detail::gemm_tc;
  if (memlab::gemm_tc_current_target().sm_count == 132) {
    EXPECT_EQ(tc::persistent_kernel_name<__nv_bfloat16>(base.m, base.n, base.k, 132), "persistent 128x96");
    EXPECT_EQ(tc::persistent_kernel_name<e4m3>(base.m, base.n, 4097, 132), "persistent 128x96");
    EXPECT_EQ(tc::persistent_kernel_name<__half>(base.m, base.n, base.k, 132, true), "persistent 128x128");  // B k x n
    EXPECT_EQ(tc::persistent_kernel_name<__nv_bfloat16>(w112.m, w112.n, w112.k, 132), "persistent 128x112");
    EXPECT_EQ(tc::persistent_kernel_name<__half>(two.m, two.n, two.k, 132), "persistent 128x112");
  }
  std::string skipped;
  check_persistent_four_ways(base, 4097, skipped);  // FP8: 32 whole k-blocks and 1 element
  pad_rows_to_16_bytes<__nv_bfloat16>(w112);
  check_case<__nv_bfloat16, __nv_bfloat16>(w112, gemm_tc_rung::persistent, skipped);
  pad_rows_to_16_bytes<__half>(two);
  check_case<__half, __half>(two, gemm_tc_rung::persistent, skipped);
  EXPECT_TRUE(skipped.empty()) << skipped;
}

TEST(GemmTc, KZeroScalesC) {
  MEMLAB_REQUIRE_GPU();
  for (gemm_tc_rung r : {gemm_tc_rung::automatic, gemm_tc_rung::wmma, gemm_tc_rung::persistent, gemm_tc_rung::cluster}) {
    std::string sk;
    check_case<__nv_bfloat16, float>({37, 41, 0, gemm_op::n, gemm_op::t, 8, 8, 0, 0, 0, 1.f, 0.5f}, r, sk);
    check_case<__half, __half>({37, 41, 0, gemm_op::n, gemm_op::t, 8, 8, 2, 0, 0, 1.f, 0.f}, r, sk);
  }
}

// A NaN in A reaches its row of C through every rung: NaN never passes. Four tiles and 32 k
// slices: rungs 2 and 5 split K, and the NaN sits in the last split.
TEST(GemmTc, NanInAPropagates) {
  MEMLAB_REQUIRE_GPU();
  int const m = 130, n = 140, k = 1024;
  auto ha = random_matrix<__nv_bfloat16>(static_cast<std::size_t>(m) * k, 5u);
  auto const hb = random_matrix<__nv_bfloat16>(static_cast<std::size_t>(n) * k, 6u);
  ha[77 * k + 900] = __float2bfloat16_rn(NAN);
  auto da = upload(ha), db = upload(hb);
  int ran = 0;
  for (int r = 1; r <= 6; ++r) {
    auto const rung = static_cast<gemm_tc_rung>(r);
    memlab::gemm_tc_shape s;
    s.m = m;
    s.n = n;
    s.k = k;
    if (!memlab::gemm_tc_unavailable(rung, s, memlab::gemm_tc_current_target()).empty()) continue;
    SCOPED_TRACE(memlab::gemm_tc_rung_name(rung));
    memlab::device_buffer<float> dc(static_cast<std::size_t>(m) * n);
    dc.fill_bytes(0);
    memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, k, 1.f, da.data(), k, db.data(), k, 0.f, dc.data(), n, nullptr, rung);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const c = download(dc.data(), dc.size());
    for (int j = 0; j < n; ++j) EXPECT_TRUE(std::isnan(c[77 * n + j])) << "C(77, " << j << ")";
    EXPECT_FALSE(std::isnan(c[76 * n + 3]));
    ++ran;
  }
  if (ran == 0) GTEST_SKIP() << "no rung runs here";
}

// Rungs 4-6 launch as programmatic dependents (they may start while the stream's previous kernel
// finishes, and wait in griddepcontrol.wait before touching global memory). Back-to-back calls on
// one stream, no host sync between them: C1 = X W^T, C2 = C1 W^T (reads what the call before it
// wrote), C1 = C2 W^T (writes what the call before it reads). W is a permutation matrix, so every
// step is exact (C = X with its columns permuted) and a stale or early read shows as a wrong
// element or the NaN the buffers start with. Twenty rounds on each of rungs 4, 5 and 6 (the rule's
// kernel).
TEST(GemmTc, BackToBackCallsSeeEachOthersWrites) {
  MEMLAB_REQUIRE_GPU();
  std::int64_t const m = 384, n = 320;  // k = n
  for (gemm_tc_rung rung : {gemm_tc_rung::cluster, gemm_tc_rung::persistent, gemm_tc_rung::warp_specialized}) {
    memlab::gemm_tc_shape sh;
    sh.m = m;
    sh.n = sh.k = n;
    if (auto why = memlab::gemm_tc_unavailable(rung, sh, memlab::gemm_tc_current_target()); !why.empty()) GTEST_SKIP() << why;
    SCOPED_TRACE(memlab::gemm_tc_rung_name(rung));
    std::vector<int> perm(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j) perm[static_cast<std::size_t>(j)] = static_cast<int>((7 * j + 3) % n);  // 7 and 320 coprime
    std::vector<__nv_bfloat16> hx(static_cast<std::size_t>(m * n)), hw(static_cast<std::size_t>(n * n), __float2bfloat16(0.f));
    for (std::int64_t i = 0; i < m * n; ++i) hx[static_cast<std::size_t>(i)] = __float2bfloat16(static_cast<float>((i * 37) % 17 - 8));
    for (int j = 0; j < n; ++j) hw[static_cast<std::size_t>(j * n + perm[static_cast<std::size_t>(j)])] = __float2bfloat16(1.f);  // row j picks column perm[j]
    auto dx = upload(hx), dw = upload(hw);
    memlab::device_buffer<__nv_bfloat16> c1(static_cast<std::size_t>(m * n)), c2(static_cast<std::size_t>(m * n));
    // Column j of X W^T is column perm[j] of X; applied p times, column perm^p[j].
    auto const expect = [&](std::vector<__nv_bfloat16> const& got, int p, char const* what) {
      int bad = 0;
      for (std::int64_t i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          int c = j;
          for (int r = 0; r < p; ++r) c = perm[static_cast<std::size_t>(c)];
          float const want = __bfloat162float(hx[static_cast<std::size_t>(i * n + c)]);
          float const g = __bfloat162float(got[static_cast<std::size_t>(i * n + j)]);
          if (!(g == want) && bad++ < 3) ADD_FAILURE() << what << "(" << i << ", " << j << ") = " << g << ", expected " << want;
        }
      return bad;
    };
    memlab::stream st;
    int bad = 0;
    for (int round = 0; round < 20 && bad == 0; ++round) {
      c1.fill_bytes(0xFF, st);
      c2.fill_bytes(0xFF, st);
      memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, n, 1.f, dx.data(), n, dw.data(), n, 0.f, c1.data(), n, st, rung);
      memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, n, 1.f, c1.data(), n, dw.data(), n, 0.f, c2.data(), n, st, rung);
      memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, n, 1.f, c2.data(), n, dw.data(), n, 0.f, c1.data(), n, st, rung);
      st.synchronize();
      bad += expect(download(c2.data(), c2.size()), 2, "C2");
      bad += expect(download(c1.data(), c1.size()), 3, "C1");
    }
    EXPECT_EQ(bad, 0);
  }
}

// Rung 2's split partials are added in split order by a second kernel, never by atomics: the
// same call gives the same bits every time. Three calls back to back on one stream (each takes
// and frees its own workspace in stream order), no host sync between them.
TEST(GemmTc, MmaSyncSplitKIsDeterministic) {
  MEMLAB_REQUIRE_GPU();
  std::int64_t const m = 64, n = 384, k = 4096;  // 3 tiles, 128 slices
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::mma_sync, m, n, k); !why.empty()) GTEST_SKIP() << why;
  int const splits = memlab::detail::gemm_tc::mma_sync_split_count<__nv_bfloat16>(m, n, k, memlab::gemm_tc_current_target().sm_count);
  ASSERT_GT(splits, 1) << "the shape is meant to split K";
  auto const ha = random_matrix<__nv_bfloat16>(static_cast<std::size_t>(m * k), 71u);
  auto const hb = random_matrix<__nv_bfloat16>(static_cast<std::size_t>(n * k), 72u);
  auto da = upload(ha), db = upload(hb);
  memlab::stream st;
  std::vector<memlab::device_buffer<float>> c;
  for (int i = 0; i < 3; ++i) {
    c.emplace_back(static_cast<std::size_t>(m * n));
    c.back().fill_bytes(0xFF, st);
    memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, k, 1.f, da.data(), k, db.data(), k, 0.f, c.back().data(), n, st,
                      gemm_tc_rung::mma_sync);
  }
  st.synchronize();
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const first = download(c[0].data(), c[0].size());
  for (float v : first) ASSERT_FALSE(std::isnan(v)) << "an element was never written";
  for (int i = 1; i < 3; ++i) {
    auto const again = download(c[static_cast<std::size_t>(i)].data(), first.size());
    EXPECT_EQ(0, std::memcmp(first.data(), again.data(), first.size() * sizeof(float))) << "call " << i;
  }
}

// Rung 2 with its split count forced (gemm.tc_split_k's rows): any count from 1 to 16 gives C,
// including splits of one or two k slices and a count above the slices (capped: a slice each).
TEST(GemmTc, MmaSyncForcedSplits) {
  MEMLAB_REQUIRE_GPU();
  std::string skipped;
  for (int splits : {1, 2, 3, 7, 16}) {
    memlab::detail::gemm_tc::mma_sync_splits_scope const forced(splits);
    SCOPED_TRACE("splits " + std::to_string(splits));
    case_t c{130, 200, 520, gemm_op::n, gemm_op::t, 0, 0, 3, 0, 0, 1.5f, -0.5f};  // 17 slices, a k tail
    check_case<__nv_bfloat16, __nv_bfloat16>(c, gemm_tc_rung::mma_sync, skipped);
    if (!skipped.empty()) GTEST_SKIP() << skipped;
    case_t few{5, 70, 100};  // 4 slices
    pad_rows_to_16_bytes<__half>(few);
    check_case<__half, float>(few, gemm_tc_rung::mma_sync, skipped);
  }
  EXPECT_THROW(memlab::detail::gemm_tc::set_mma_sync_splits(17), memlab::error);
  EXPECT_EQ(memlab::detail::gemm_tc::forced_mma_sync_splits(), 0);
}

// Rung 2's kernels by stages (set_mma_sync_stages): 3 (the one-pass grid's on sm_86/89, two blocks
// in their 100 KB), 4 and 5, each forced through the canonical battery (edge tiles, k tails,
// ld > row, alpha and beta, the split grid) in BF16 and FP16, FP8 at 3 and 4 where the device has
// it; the pick must be the forced kernel. Then the rule: the kernel it picks holds as many blocks
// an SM as the grid's shallowest candidate (3 stages for the one-pass grid, 4 for the split grid),
// up to two, and no deeper candidate would hold as many.
TEST(GemmTc, MmaSyncStages) {
  MEMLAB_REQUIRE_GPU();
  namespace tc = memlab::detail::gemm_tc;
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::mma_sync, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  auto const blocks_at = [](int stages, bool split) {
    tc::mma_sync_stages_scope const forced(stages);
    auto const pick = tc::mma_sync_kernel_pick<__nv_bfloat16>(split);
    return pick.stages == stages ? pick.blocks : 0;
  };
  for (bool split : {false, true}) {
    SCOPED_TRACE(split ? "split grid" : "one-pass grid");
    int const shallowest = blocks_at(split ? 4 : 3, split);
    ASSERT_GE(shallowest, 1) << "the shallowest kernel (48 or 64 KB) fits every sm_80+ device";
    int const want = std::min(2, shallowest);
    auto const rule = tc::mma_sync_kernel_pick<__nv_bfloat16>(split);
    EXPECT_GE(rule.blocks, want) << "the rule's " << rule.stages << "-stage kernel";
    for (int deeper : {5, 4})
      if (deeper > rule.stages) EXPECT_LT(blocks_at(deeper, split), want) << deeper << " stages hold as many; the rule took " << rule.stages;
  }
  std::string skipped;
  for (int stages : {3, 4, 5}) {
    tc::mma_sync_stages_scope const forced(stages);
    SCOPED_TRACE(std::to_string(stages) + " stages");
    for (bool split : {false, true}) {
      auto const pick = tc::mma_sync_kernel_pick<__nv_bfloat16>(split);
      EXPECT_EQ(pick.stages, stages) << (split ? "split grid" : "one-pass grid");
      EXPECT_GE(pick.blocks, 1);
    }
    run_rung<__nv_bfloat16, __nv_bfloat16>(gemm_tc_rung::mma_sync);
    run_rung<__half, float>(gemm_tc_rung::mma_sync);
    if (stages < 5 && unavailable<e4m3>(gemm_tc_rung::mma_sync, 256, 256, 256).empty()) {
      EXPECT_EQ(tc::mma_sync_kernel_pick<e4m3>(false).stages, stages);
      run_rung<e4m3, __nv_bfloat16>(gemm_tc_rung::mma_sync);
    }
  }
  EXPECT_THROW(tc::set_mma_sync_stages(6), memlab::error);
  EXPECT_EQ(tc::forced_mma_sync_stages(), 0);
}

// Rung 2's wide kernel (set_mma_sync_tile_n): 128 x 256 tiles, eight warps, one block an SM, forced
// through the canonical battery (edge tiles, k tails, ld > row, alpha and beta; its split cases keep
// 128 x 128) in BF16 and FP16, and at shapes with k >= 2048, long enough for the pipeline to wrap its
// ring many times, with n not a multiple of 256. Then the rule (mma_sync_takes_wide): wide at 4096^3
// where an SM holds as many warps of it as of the 128 x 128 kernel, never below k = 2048, never for
// the split grid or FP8.
TEST(GemmTc, MmaSyncWideTiles) {
  MEMLAB_REQUIRE_GPU();
  namespace tc = memlab::detail::gemm_tc;
  if (auto why = unavailable<__nv_bfloat16>(gemm_tc_rung::mma_sync, 256, 256, 256); !why.empty()) GTEST_SKIP() << why;
  int const sms = memlab::gemm_tc_current_target().sm_count;
  auto const name = [&](std::int64_t m, std::int64_t n, std::int64_t k) { return tc::mma_sync_kernel_name<__nv_bfloat16>(m, n, k, sms); };
  {
    tc::mma_sync_tile_n_scope const forced(256);
    if (name(4096, 4096, 4096).rfind("128x256", 0) != 0) GTEST_SKIP() << "this device does not hold the wide kernel: " << name(4096, 4096, 4096);
    EXPECT_EQ(name(4096, 4096, 512).rfind("128x256", 0), 0u) << "forced wide at any k";
    run_rung<__nv_bfloat16, __nv_bfloat16>(gemm_tc_rung::mma_sync);
    run_rung<__half, float>(gemm_tc_rung::mma_sync);
    std::string skipped;
    case_t deep{300, 700, 2104, gemm_op::n, gemm_op::t, 0, 0, 0, 0, 0, 1.5f, -0.5f};  // 66 slices, a k tail of 24, 3 x 3 tiles; k a multiple of 8 (rung 2 refuses rows not 16-byte aligned)
    check_case<__nv_bfloat16, __nv_bfloat16>(deep, gemm_tc_rung::mma_sync, skipped);
    case_t ld{129, 260, 2048, gemm_op::n, gemm_op::t, 8, 16, 8};  // ld > row, an edge of one row and of 4 columns
    check_case<__half, __half>(ld, gemm_tc_rung::mma_sync, skipped);
    EXPECT_TRUE(skipped.empty()) << skipped;
  }
  {
    tc::mma_sync_tile_n_scope const forced(128);
    EXPECT_EQ(name(4096, 4096, 4096).rfind("128x128", 0), 0u);
  }
  auto const wide_warps = [&] {
    tc::mma_sync_tile_n_scope const forced(256);
    std::string const n = name(4096, 4096, 4096);
    return n.rfind("128x256", 0) == 0 ? 8 * std::stoi(n.substr(n.find("stages, ") + 8)) : 0;
  }();
  int const narrow_warps = 4 * tc::mma_sync_kernel_pick<__nv_bfloat16>(false).blocks;
  EXPECT_EQ(name(4096, 4096, 4096).rfind("128x256", 0) == 0, tc::mma_sync_takes_wide(4096, wide_warps, narrow_warps)) << name(4096, 4096, 4096);
  EXPECT_EQ(name(4096, 4096, 2047).rfind("128x128", 0), 0u) << "k below mma_sync_wide_min_k";
  EXPECT_NE(name(128, 4096, 4096).find("K split"), std::string::npos) << "a decode batch splits K: " << name(128, 4096, 4096);
  EXPECT_EQ(name(128, 4096, 4096).rfind("128x128", 0), 0u) << "the split grid keeps 128 x 128";
  EXPECT_EQ(tc::mma_sync_kernel_name<e4m3>(4096, 4096, 4096, sms).rfind("128x128", 0), 0u) << "FP8 keeps 128 x 128";
  {
    tc::mma_sync_stages_scope const forced(4);
    EXPECT_EQ(name(4096, 4096, 4096).rfind("128x128, 4 stages", 0), 0u) << "a forced depth runs its own kernel";
  }
  EXPECT_THROW(tc::set_mma_sync_tile_n(192), memlab::error);
  EXPECT_EQ(tc::forced_mma_sync_tile_n(), 0);
}

// Rung 2's FP16 kernel for Turing (sm_75: loads through registers, mma.sync m16n8k8), which an
// sm_75 device or image runs, forced here on any device: the canonical battery (edge tiles, k tails,
// ld > row, alpha and beta, split K) in FP16 and FP32 C, and the split's determinism.
TEST(GemmTc, MmaSyncTuringKernel) {
  MEMLAB_REQUIRE_GPU();
  memlab::detail::gemm_tc::mma_sync_turing_scope const turing;
  run_rung<__half, __half>(gemm_tc_rung::mma_sync);
  run_rung<__half, float>(gemm_tc_rung::mma_sync);
  EXPECT_TRUE(memlab::detail::gemm_tc::forced_mma_sync_turing());
}

TEST(GemmTc, BadInputThrowsAndLeavesCUntouched) {
  MEMLAB_REQUIRE_GPU();
  int const m = 64, n = 64, k = 64;
  auto const h = random_matrix<__nv_bfloat16>(static_cast<std::size_t>(m) * k, 9u);
  auto da = upload(h), db = upload(h);
  memlab::device_buffer<float> dc(static_cast<std::size_t>(m) * n);
  dc.fill_bytes(0x7F);
  untouched_c const checked(dc);
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::n, gemm_op::t, -1, n, k, 1.f, da.data(), k, db.data(), k, 0.f, dc.data(), n); });
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, k, 1.f, da.data(), k - 1, db.data(), k, 0.f, dc.data(), n); });
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, k, 1.f, da.data(), k, db.data(), k, 0.f, dc.data(), n - 1); });
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, k, 1.f, da.data(), k, db.data(), k, 0.f, dc.data(), n, nullptr, static_cast<gemm_tc_rung>(9)); });
  // A named rung that cannot take the layout or the alignment refuses instead of guessing.
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::n, gemm_op::n, m, n, k, 1.f, da.data(), k, db.data(), n, 0.f, dc.data(), n, nullptr, gemm_tc_rung::mma_sync); });
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, k - 1, 1.f, da.data() + 1, k, db.data(), k, 0.f, dc.data(), n, nullptr, gemm_tc_rung::persistent); });
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::n, gemm_op::t, m, n, k - 1, 1.f, da.data() + 1, k, db.data(), k, 0.f, dc.data(), n, nullptr, gemm_tc_rung::cluster); });
  // Rung 5 reads no A stored k x m; rung 6 does, but not in rows that are not whole 16-byte units (lda = m - 1).
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::t, gemm_op::t, m, n, k, 1.f, da.data(), m, db.data(), k, 0.f, dc.data(), n, nullptr, gemm_tc_rung::persistent); });
  checked.expect_throw([&] { memlab::gemm_bf16(gemm_op::t, gemm_op::t, m - 1, n, k, 1.f, da.data(), m - 1, db.data(), k, 0.f, dc.data(), n, nullptr, gemm_tc_rung::cluster); });
}

}  // namespace
