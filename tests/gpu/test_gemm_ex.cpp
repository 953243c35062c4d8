// memlab::gemm_ex (the BLAS interface and the dispatcher's plans): every plan at awkward
// shapes in every order x transpose combination against a float64 host reference and
// cuBLAS, the split paths run twice for identical bits, and the argument checks (throw
// with C untouched).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"
#include "memlab/gemm.hpp"

namespace {
using memlab::device_buffer;
using memlab::gemm_op;
using memlab::gemm_order;

struct ex_case {
  long long m, n, k;
  int pad_a, pad_b, pad_c;  ///< ld = the stored row (column) + pad
  float alpha, beta;
  long long batch;
};

struct layout {
  gemm_order order;
  gemm_op op_a, op_b;
  std::string text() const {
    return std::string(order == gemm_order::row_major ? "row" : "col") + (op_a == gemm_op::n ? "N" : "T") +
           (op_b == gemm_op::n ? "N" : "T");
  }
};
std::vector<layout> all_layouts() {
  std::vector<layout> out;
  for (auto o : {gemm_order::row_major, gemm_order::col_major})
    for (auto a : {gemm_op::n, gemm_op::t})
      for (auto b : {gemm_op::n, gemm_op::t}) out.push_back({o, a, b});
  return out;
}

/// A stored matrix: rows x cols as op() sees it before the transpose, with its ld and size.
struct stored {
  long long rows, cols, ld, size;  ///< size: elements of one batch entry (incl. ld padding)
  bool row_major;
  long long at(long long r, long long c) const { return row_major ? r * ld + c : c * ld + r; }
};
stored make_stored(gemm_order o, long long rows, long long cols, int pad) {
  bool const rm = o == gemm_order::row_major;
  long long const ld = std::max(1LL, (rm ? cols : rows) + pad);
  long long const outer = std::max(1LL, rm ? rows : cols);
  return {rows, cols, ld, outer * ld, rm};
}

struct problem_data {
  layout l;
  ex_case t;
  stored a, b, c;
  long long stride_a, stride_b, stride_c;
  std::vector<float> ha, hb, hc;  ///< hc: the initial C (NaN where beta = 0)
};

problem_data make_problem(layout const& l, ex_case const& t, std::uint64_t seed) {
  problem_data d{l, t, {}, {}, {}, 0, 0, 0, {}, {}, {}};
  bool const ta = l.op_a == gemm_op::t, tb = l.op_b == gemm_op::t;
  d.a = make_stored(l.order, ta ? t.k : t.m, ta ? t.m : t.k, t.pad_a);
  d.b = make_stored(l.order, tb ? t.n : t.k, tb ? t.k : t.n, t.pad_b);
  d.c = make_stored(l.order, t.m, t.n, t.pad_c);
  // Batch strides with a gap between entries, so a write past one entry shows.
  d.stride_a = d.a.size + 3, d.stride_b = d.b.size + 5, d.stride_c = d.c.size + 7;
  d.ha.resize(static_cast<std::size_t>(d.stride_a * t.batch));
  d.hb.resize(static_cast<std::size_t>(d.stride_b * t.batch));
  d.hc.resize(static_cast<std::size_t>(d.stride_c * t.batch));
  memlab::bench::fill_random(d.ha, seed);
  memlab::bench::fill_random(d.hb, seed + 1);
  memlab::bench::fill_random(d.hc, seed + 2);
  if (t.beta == 0.f)
    for (auto& x : d.hc) x = std::nanf("");  // beta = 0 must not read C
  return d;
}

/// The expected C buffer: the m x n entries in double, everything else as it was.
std::vector<double> reference(problem_data const& d) {
  auto const& t = d.t;
  bool const ta = d.l.op_a == gemm_op::t, tb = d.l.op_b == gemm_op::t;
  std::vector<double> ref(d.hc.begin(), d.hc.end());
  for (long long z = 0; z < t.batch; ++z)
    for (long long i = 0; i < t.m; ++i)
      for (long long j = 0; j < t.n; ++j) {
        double acc = 0.0;
        for (long long p = 0; p < t.k; ++p) {
          double const av = d.ha[z * d.stride_a + (ta ? d.a.at(p, i) : d.a.at(i, p))];
          double const bv = d.hb[z * d.stride_b + (tb ? d.b.at(j, p) : d.b.at(p, j))];
          acc += av * bv;
        }
        long long const ci = z * d.stride_c + d.c.at(i, j);
        double const old = t.beta != 0.f ? double(d.hc[ci]) : 0.0;
        ref[ci] = double(t.alpha) * acc + double(t.beta) * old;
      }
  return ref;
}

memlab::gemm_params params_for(problem_data const& d, float const* a, float const* b, float* c) {
  memlab::gemm_params p;
  p.order = d.l.order, p.op_a = d.l.op_a, p.op_b = d.l.op_b;
  p.m = d.t.m, p.n = d.t.n, p.k = d.t.k, p.alpha = d.t.alpha, p.beta = d.t.beta;
  p.a = a, p.lda = d.a.ld, p.stride_a = d.stride_a;
  p.b = b, p.ldb = d.b.ld, p.stride_b = d.stride_b;
  p.c = c, p.ldc = d.c.ld, p.stride_c = d.stride_c;
  p.batch = d.t.batch;
  return p;
}

/// Checks `got` (the whole C buffer) against `ref`: close inside the matrices, and the
/// gaps and ld padding bit-for-bit as they were.
void expect_matches(std::vector<float> const& got, std::vector<double> const& ref, problem_data const& d,
                    std::string const& what) {
  double const tol = (d.t.k + 1) * 0x1p-21 * (std::fabs(d.t.alpha) + 1.0) + 1e-6;
  std::vector<char> inside(got.size(), 0);
  for (long long z = 0; z < d.t.batch; ++z)
    for (long long i = 0; i < d.t.m; ++i)
      for (long long j = 0; j < d.t.n; ++j) inside[static_cast<std::size_t>(z * d.stride_c + d.c.at(i, j))] = 1;
  long long bad = 0;
  std::string first;
  for (std::size_t e = 0; e < got.size(); ++e) {
    bool ok;
    if (inside[e]) {
      ok = std::isfinite(got[e]) && std::fabs(double(got[e]) - ref[e]) <= tol + 1e-5 * std::fabs(ref[e]);
    } else {
      ok = std::memcmp(&got[e], &d.hc[e], sizeof(float)) == 0;
    }
    if (!ok && bad++ == 0)
      first = "element " + std::to_string(e) + (inside[e] ? " (inside)" : " (padding)") + ": got " +
              std::to_string(got[e]) + ", want " + std::to_string(ref[e]);
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " bad elements; first " << first;
}

struct device_problem {
  device_buffer<float> a, b, c;
  explicit device_problem(problem_data const& d) : a(d.ha.size()), b(d.hb.size()), c(d.hc.size()) {
    a.upload(d.ha);
    b.upload(d.hb);
    c.upload(d.hc);
  }
};

/// Plans that exercise every path for a shape: the dispatcher's, each tile whole and split,
/// the skinny kernels whole and split, and a ladder variant through the packed path.
std::vector<std::string> plans_for(memlab::gemm_shape const& s, memlab::gemm_target const& t, std::string* skipped) {
  std::vector<std::string> out{""};
  std::vector<std::string> names;
  for (char const* tile : {"tile_128x256", "tile_128x128", "tile_64x128", "tile_64x64", "tile_32x64", "tile_64x16"}) {
    names.emplace_back(tile);
    names.emplace_back(std::string(tile) + "/s3");
  }
  if (std::min(s.m, s.n) <= 16) {
    names.emplace_back("gemv");
    names.emplace_back("gemv/s3");
    names.emplace_back("gemv/s40");
  }
  names.emplace_back("warp_tiled");
  for (auto const& n : names) {
    std::string const why = memlab::gemm_plan_unavailable(memlab::gemm_parse_plan(n), s, t);
    if (why.empty())
      out.push_back(n);
    else if (skipped->find(n + ":") == std::string::npos)
      *skipped += n + ": " + why + "; ";
  }
  return out;
}

std::vector<ex_case> awkward_cases() {
  bool const small = memlab::test::small_sizes();
  std::vector<ex_case> c{
      {1, 1, 1, 0, 0, 0, 1.f, 0.f, 1},
      {7, 13, 5, 0, 0, 0, 1.f, 0.f, 1},          // primes below any tile
      {31, 37, 0, 1, 2, 3, 2.f, 0.5f, 1},        // k = 0: C = beta C
      {1, 70, 300, 0, 1, 0, 1.f, 0.f, 2},        // m = 1, batched
      {70, 1, 300, 2, 0, 1, -1.f, 1.f, 1},       // n = 1
      {37, 29, 131, 3, 5, 7, 1.5f, -0.5f, 1},    // primes, ld > row, alpha and beta
      {16, 16, small ? 1500LL : 20000LL, 0, 0, 0, 1.f, 0.f, 1},  // deep K
  };
  if (!small) {
    c.push_back({131, 67, 259, 1, 0, 2, 1.f, 0.f, 3});   // several tiles, batch 3
    c.push_back({129, 257, 17, 0, 0, 1, 1.f, 2.f, 1});   // one past 128 / 256
  }
  return c;
}

TEST(GemmEx, EveryPlanEveryLayoutAtAwkwardShapes) {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_target const target = memlab::gemm_current_target();
  std::string skipped;
  std::uint64_t seed = 100;
  for (auto const& t : awkward_cases())
    for (auto const& l : all_layouts()) {
      problem_data const d = make_problem(l, t, seed++);
      auto const ref = reference(d);
      device_problem dp(d);
      auto p = params_for(d, dp.a.data(), dp.b.data(), dp.c.data());
      for (auto const& plan : plans_for(memlab::gemm_shape_of(p), target, &skipped)) {
        std::string const what = l.text() + " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) +
                                 " k=" + std::to_string(t.k) + " batch=" + std::to_string(t.batch) + " plan='" +
                                 plan + "'";
        SCOPED_TRACE(what);
        dp.c.upload(d.hc);
        p.plan = plan;
        ASSERT_NO_THROW(memlab::gemm_ex(p));
        MEMLAB_EXPECT_LAUNCH_OK();
        expect_matches(dp.c.download(), ref, d, what);
      }
    }
  if (!skipped.empty()) GTEST_SKIP() << "every other plan passed; not run here: " << skipped;
}

/// cublasSgemmStridedBatched on the same data: row-major as C^T = op(B)^T op(A)^T.
void cublas_ex(cublasHandle_t h, problem_data const& d, float const* a, float const* b, float* c) {
  auto op = [](gemm_op o) { return o == gemm_op::n ? CUBLAS_OP_N : CUBLAS_OP_T; };
  int const m = int(d.t.m), n = int(d.t.n), k = int(d.t.k), batch = int(d.t.batch);
  float const alpha = d.t.alpha, beta = d.t.beta;
  cublasStatus_t st;
  if (d.l.order == gemm_order::col_major)
    st = cublasSgemmStridedBatched(h, op(d.l.op_a), op(d.l.op_b), m, n, k, &alpha, a, int(d.a.ld), d.stride_a, b,
                                   int(d.b.ld), d.stride_b, &beta, c, int(d.c.ld), d.stride_c, batch);
  else
    st = cublasSgemmStridedBatched(h, op(d.l.op_b), op(d.l.op_a), n, m, k, &alpha, b, int(d.b.ld), d.stride_b, a,
                                   int(d.a.ld), d.stride_a, &beta, c, int(d.c.ld), d.stride_c, batch);
  ASSERT_EQ(st, CUBLAS_STATUS_SUCCESS);
}

TEST(GemmEx, AgreesWithCublasAtEveryCombination) {
  MEMLAB_REQUIRE_GPU();
  cublasHandle_t h = nullptr;
  ASSERT_EQ(cublasCreate(&h), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH), CUBLAS_STATUS_SUCCESS);
  bool const small = memlab::test::small_sizes();
  std::vector<ex_case> cases{{37, 29, 131, 3, 5, 7, 1.5f, -0.5f, 2},
                             {5, 300, 517, 1, 0, 0, 1.f, 0.f, 1},
                             {300, 3, 517, 0, 3, 1, 1.f, 1.f, 2},
                             {small ? 96LL : 260LL, small ? 64LL : 200LL, small ? 3000LL : 9000LL, 0, 0, 0, 1.f, 0.f, 1}};
  std::uint64_t seed = 500;
  for (auto const& t : cases)
    for (auto const& l : all_layouts()) {
      problem_data d = make_problem(l, t, seed++);
      if (t.beta == 0.f) memlab::bench::fill_random(d.hc, seed + 9);  // cuBLAS and we both ignore it
      device_problem ours(d), theirs(d);
      auto p = params_for(d, ours.a.data(), ours.b.data(), ours.c.data());
      std::string const what = l.text() + " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) + " k=" +
                               std::to_string(t.k) + " plan=" + memlab::gemm_select(memlab::gemm_shape_of(p), memlab::gemm_current_target()).name();
      SCOPED_TRACE(what);
      ASSERT_NO_THROW(memlab::gemm_ex(p));
      cublas_ex(h, d, theirs.a.data(), theirs.b.data(), theirs.c.data());
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const got = ours.c.download();
      auto const want = theirs.c.download();
      std::vector<double> want_d(want.begin(), want.end());
      d.hc = want;  // padding: cuBLAS left it as it was, and so must we
      expect_matches(got, want_d, d, what);
    }
  cublasDestroy(h);
}

/// Every split path twice: the same bits (the partials are summed in a fixed order).
TEST(GemmEx, SplitPathsAreDeterministic) {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_target const target = memlab::gemm_current_target();
  bool const small = memlab::test::small_sizes();
  struct det_case {
    long long m, n, k;
    std::vector<std::string> plans;
  };
  long long const deep = small ? 4096 : 16384;  // the host reference of the default plan is O(m n k)
  std::vector<det_case> cases{
      {small ? 96LL : 256LL, small ? 80LL : 256LL, deep,
       {"", "tile_128x256/s8", "tile_128x128/s16", "tile_64x128/s8", "tile_64x64/s12", "tile_32x64/s5"}},
      {8, small ? 600LL : 4096LL, small ? 3000LL : 4096LL, {"", "gemv/s16", "gemv/s7"}},  // stream kernel
      {small ? 600LL : 4096LL, 8, small ? 3000LL : 4096LL, {"", "gemv/s16", "gemv/s7"}},  // dot kernel
  };
  std::string skipped;
  std::uint64_t seed = 900;
  for (auto const& c : cases) {
    problem_data const d = make_problem({gemm_order::row_major, gemm_op::n, gemm_op::n},
                                        {c.m, c.n, c.k, 0, 0, 0, 1.f, 0.f, 1}, seed++);
    device_problem dp(d);
    auto p = params_for(d, dp.a.data(), dp.b.data(), dp.c.data());
    for (auto const& plan : c.plans) {
      if (!plan.empty()) {
        std::string const why =
            memlab::gemm_plan_unavailable(memlab::gemm_parse_plan(plan), memlab::gemm_shape_of(p), target);
        if (!why.empty()) {
          skipped += plan + ": " + why + "; ";
          continue;
        }
      }
      SCOPED_TRACE("plan '" + plan + "' m=" + std::to_string(c.m) + " n=" + std::to_string(c.n) +
                   " k=" + std::to_string(c.k));
      p.plan = plan;
      dp.c.upload(d.hc);
      ASSERT_NO_THROW(memlab::gemm_ex(p));
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const first = dp.c.download();
      // The same starting C (NaN where beta = 0, gaps between batches included): only what the
      // plan writes may differ, and it must not.
      dp.c.upload(d.hc);
      ASSERT_NO_THROW(memlab::gemm_ex(p));
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const second = dp.c.download();
      ASSERT_EQ(first.size(), second.size());
      EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << "bits differ";
      if (plan.empty()) {  // and the default is right (checked once per shape: the host reference is slow)
        auto const ref = reference(d);
        expect_matches(first, ref, d, "default plan");
      }
    }
  }
  // The default plan for a deep-K shape splits K on any GPU with cp.async and >= 8 SMs.
  memlab::gemm_shape s;
  s.m = 256, s.n = 256, s.k = 65536;
  if (memlab::gemm_plan_unavailable(memlab::gemm_parse_plan("tile_64x64"), s, target).empty())
    EXPECT_GT(memlab::gemm_select(s, target).splits, 1) << memlab::gemm_select(s, target).name();
  if (!skipped.empty()) GTEST_SKIP() << "the other plans passed; not run: " << skipped;
}

/// Runs `plan` twice from the same C and checks the bits agree and the result matches the
/// float64 host reference. A plan that cannot run here is skipped (its reason added to skipped).
void run_twice_and_check(problem_data const& d, std::vector<double> const& ref, device_problem& dp,
                         std::string const& plan, memlab::gemm_target const& target, std::string* skipped) {
  auto p = params_for(d, dp.a.data(), dp.b.data(), dp.c.data());
  if (!plan.empty()) {
    std::string const why =
        memlab::gemm_plan_unavailable(memlab::gemm_parse_plan(plan), memlab::gemm_shape_of(p), target);
    if (!why.empty()) {
      if (skipped->find(plan + ":") == std::string::npos) *skipped += plan + ": " + why + "; ";
      return;
    }
  }
  std::string const shown = plan.empty() ? memlab::gemm_select(memlab::gemm_shape_of(p), target).name() : plan;
  std::string const what = d.l.text() + " m=" + std::to_string(d.t.m) + " n=" + std::to_string(d.t.n) +
                           " k=" + std::to_string(d.t.k) + " batch=" + std::to_string(d.t.batch) + " plan='" + plan +
                           "' (" + shown + ")";
  SCOPED_TRACE(what);
  p.plan = plan;
  dp.c.upload(d.hc);
  EXPECT_NO_THROW(memlab::gemm_ex(p));
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const first = dp.c.download();
  dp.c.upload(d.hc);
  EXPECT_NO_THROW(memlab::gemm_ex(p));
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const second = dp.c.download();
  EXPECT_EQ(first.size(), second.size());
  if (first.size() == second.size())
    EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * sizeof(float)), 0) << "bits differ";
  expect_matches(first, ref, d, what);
}

/// Many splits over a tiny output: the split-K reduction's grouped form (up to 8 groups of
/// threads per output, uneven when the split count is not a multiple: s13 over 8 groups
/// leaves the last group empty), the dot kernel where both sides are <= 16 (it reads whichever
/// operand is contiguous along k), and split counts past the old cap of 128. Every layout at
/// primes with ld > row; each plan twice for identical bits, against a float64 reference.
TEST(GemmEx, ManySplitsOverTinyOutputs) {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_target const target = memlab::gemm_current_target();
  bool const small = memlab::test::small_sizes();
  struct split_case {
    ex_case t;
    std::vector<std::string> plans;
    bool every_layout;
  };
  long long const deep = small ? 8192 : 65536;
  std::vector<split_case> cases{
      {{16, 16, deep, 0, 0, 0, 1.f, 0.f, 1},
       {"", "gemv/s256", "gemv/s13", "gemv/s1024", "tile_32x64/s512", "tile_32x64/s13", "tile_64x64/s300"},
       false},
      {{64, small ? 48LL : 64LL, deep, 0, 0, 0, 1.f, 0.f, 1},
       {"", "tile_32x64/s256", "tile_64x64/s512", "tile_128x128/s100", "tile_64x128/s7"},
       false},
      {{3, 5, 4099, 1, 3, 2, 1.5f, -0.5f, 2}, {"", "gemv/s33", "gemv/s2", "tile_32x64/s65", "tile_64x64/s9"}, true},
      {{13, 11, 1031, 0, 1, 0, 1.f, 1.f, 1}, {"", "gemv/s5", "tile_32x64/s17"}, true},  // beta = 1 reads C once
      {{1, 1, 1, 0, 0, 0, 1.f, 0.f, 1}, {"", "gemv/s3", "tile_32x64/s3"}, true},
      {{9, 7, 0, 0, 0, 0, 1.f, 0.5f, 1}, {"", "gemv/s8", "tile_32x64/s8"}, true},  // k = 0: C = beta C
  };
  std::string skipped;
  std::uint64_t seed = 1300;
  for (auto const& c : cases) {
    std::vector<layout> layouts{{gemm_order::row_major, gemm_op::n, gemm_op::n}};
    if (c.every_layout) layouts = all_layouts();
    for (auto const& l : layouts) {
      problem_data const d = make_problem(l, c.t, seed++);
      auto const ref = reference(d);
      device_problem dp(d);
      for (auto const& plan : c.plans) run_twice_and_check(d, ref, dp, plan, target, &skipped);
    }
  }
  if (!skipped.empty()) GTEST_SKIP() << "the other plans passed; not run: " << skipped;
}

/// The dispatcher's own plans at the gemm.shapes rows that were below 0.85 of cuBLAS (their
/// picks moved: more splits, the dot kernel at a small side of 16, small squares split),
/// row-major as gemm.shapes runs them and column-major with transposes: right and the same
/// bits twice. Reduced sizes under MEMLAB_TEST_SMALL (the host reference is O(m n k)).
TEST(GemmEx, DefaultPlansAtTheSlowShapes) {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_target const target = memlab::gemm_current_target();
  bool const small = memlab::test::small_sizes();
  long long const big = small ? 1024 : 4096;
  std::vector<ex_case> cases{
      {big, 8, big, 0, 0, 0, 1.f, 0.f, 1},   {big, 16, big, 0, 0, 0, 1.f, 0.f, 1},
      {big, 1, big, 0, 0, 0, 1.f, 0.f, 1},   {1, big, big, 0, 0, 0, 1.f, 0.f, 1},
      {1, small ? 2752LL : 11008LL, big, 0, 0, 0, 1.f, 0.f, 1},
      {1, big, small ? 2752LL : 11008LL, 0, 0, 0, 1.f, 0.f, 1},
      {16, 16, small ? 32768LL : 131072LL, 0, 0, 0, 1.f, 0.f, 1},
      {64, 64, small ? 16384LL : 65536LL, 0, 0, 0, 1.f, 0.f, 1},
      {small ? 64LL : 128LL, small ? 64LL : 128LL, small ? 8192LL : 32768LL, 0, 0, 0, 1.f, 0.f, 1},  // (131072 in gemm.shapes)
      {256, 256, 256, 0, 0, 0, 1.f, 0.f, 1}, {128, 128, 128, 0, 0, 0, 1.f, 0.f, 1},
      {512, 512, 512, 0, 0, 0, 1.f, 0.f, 1}, {1000, small ? 200LL : 1000LL, 1000, 0, 0, 0, 1.f, 0.f, 1},
  };
  std::string skipped;
  std::uint64_t seed = 1700;
  for (auto const& t : cases)
    for (auto const& l : {layout{gemm_order::row_major, gemm_op::n, gemm_op::n},
                          layout{gemm_order::col_major, gemm_op::t, gemm_op::n}}) {
      problem_data const d = make_problem(l, t, seed++);
      auto const ref = reference(d);
      device_problem dp(d);
      run_twice_and_check(d, ref, dp, "", target, &skipped);
    }
}

/// The autotune cache, opted in per call: the cached plan runs (its bits equal the same plan
/// named explicitly) and a cached plan this shape cannot run is ignored (the dispatcher's
/// choice runs instead). The cache file is read once per process: this is the only test
/// that opts in, and it points MEMLAB_GEMM_AUTOTUNE_FILE at its own file first.
TEST(GemmEx, AutotuneCacheIsReadOnlyWhenAskedFor) {
  MEMLAB_REQUIRE_GPU();
  memlab::gemm_target const target = memlab::gemm_current_target();
  if (!memlab::gemm_plan_unavailable(memlab::gemm_parse_plan("tile_64x64/s7"), {}, target).empty())
    GTEST_SKIP() << "no cp.async tiles in this image";
  std::string const file = ::testing::TempDir() + "memlab_gemm_autotune_test.json";
  setenv("MEMLAB_GEMM_AUTOTUNE_FILE", file.c_str(), 1);
  ex_case const t{64, 64, 4096, 0, 0, 0, 1.f, 0.f, 1};
  problem_data const d = make_problem({gemm_order::row_major, gemm_op::n, gemm_op::n}, t, 77);
  auto const ref = reference(d);
  device_problem dp(d);
  auto p = params_for(d, dp.a.data(), dp.b.data(), dp.c.data());
  int dev = 0;
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaSuccess, cudaGetDevice(&dev));
  ASSERT_EQ(cudaSuccess, cudaGetDeviceProperties(&prop, dev));
  memlab::gemm_autotune_cache cache;
  cache.plans[memlab::gemm_autotune_key(prop.name, memlab::gemm_shape_of(p))] = {"tile_64x64/s7", 1.0};
  memlab::gemm_shape other = memlab::gemm_shape_of(p);
  other.n = 65;  // a plan no 64 x 65 problem can run with: gemv (m, n > 16) -> ignored
  cache.plans[memlab::gemm_autotune_key(prop.name, other)] = {"gemv", 1.0};
  // A cached plan needing more scratch than the caller's workspace (sized for the
  // dispatcher's plan) is ignored, never a throw: 64 x 64 x 2048 -> 256 splits, 4 MiB.
  ex_case const t3{64, 64, 2048, 0, 0, 0, 1.f, 0.f, 1};
  problem_data const d3 = make_problem({gemm_order::row_major, gemm_op::n, gemm_op::n}, t3, 79);
  device_problem dp3(d3);
  auto p3 = params_for(d3, dp3.a.data(), dp3.b.data(), dp3.c.data());
  memlab::gemm_shape const s3 = memlab::gemm_shape_of(p3);
  memlab::gemm_plan const big = memlab::gemm_parse_plan("tile_32x64/s256");
  std::size_t const own = memlab::gemm_workspace_bytes(s3, memlab::gemm_select(s3, target));
  ASSERT_GT(memlab::gemm_workspace_bytes(s3, big), own);
  cache.plans[memlab::gemm_autotune_key(prop.name, s3)] = {big.name(), 1.0};
  cache.save(file);
  auto run = [&](memlab::gemm_params q) {
    dp.c.upload(d.hc);
    memlab::gemm_ex(q);
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    return dp.c.download();
  };
  // The check below can fail only if the dispatcher's own plan differs from the cached one.
  ASSERT_NE(memlab::gemm_select(memlab::gemm_shape_of(p), target).name(), "tile_64x64/s7");
  auto named = p;
  named.plan = "tile_64x64/s7";
  auto const want = run(named);
  expect_matches(want, ref, d, "tile_64x64/s7 named");
  auto tuned = p;
  tuned.autotune = true;
  auto const got = run(tuned);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0) << "the cached plan did not run";
  // The unrunnable cached plan: the dispatcher's own choice runs, and is right.
  ex_case const t2{64, 65, 4096, 0, 0, 0, 1.f, 0.f, 1};
  problem_data const d2 = make_problem({gemm_order::row_major, gemm_op::n, gemm_op::n}, t2, 78);
  device_problem dp2(d2);
  auto p2 = params_for(d2, dp2.a.data(), dp2.b.data(), dp2.c.data());
  p2.autotune = true;
  EXPECT_NO_THROW(memlab::gemm_ex(p2));
  MEMLAB_EXPECT_LAUNCH_OK();
  expect_matches(dp2.c.download(), reference(d2), d2, "unrunnable cached plan ignored");
  device_buffer<float> scratch(own / sizeof(float) + 1);
  p3.autotune = true;
  p3.workspace = scratch.data(), p3.workspace_bytes = own;
  EXPECT_NO_THROW(memlab::gemm_ex(p3));
  MEMLAB_EXPECT_LAUNCH_OK();
  expect_matches(dp3.c.download(), reference(d3), d3, "cached plan over the caller's workspace ignored");
  unsetenv("MEMLAB_GEMM_AUTOTUNE_FILE");
  std::remove(file.c_str());
}

/// More batch entries than one grid dimension holds (65535): the launches are chunked.
TEST(GemmEx, BatchesBeyondOneGridDimension) {
  MEMLAB_REQUIRE_GPU();
  if (memlab::test::small_sizes()) GTEST_SKIP() << "70000 batch entries; covered at full size";
  memlab::gemm_target const target = memlab::gemm_current_target();
  ex_case const t{3, 2, 300, 0, 1, 0, 1.f, 0.5f, 70000};
  problem_data const d = make_problem({gemm_order::row_major, gemm_op::n, gemm_op::t}, t, 4242);
  auto const ref = reference(d);
  device_problem dp(d);
  auto p = params_for(d, dp.a.data(), dp.b.data(), dp.c.data());
  for (std::string plan : {"", "gemv/s2", "tile_32x64/s2", "tile_64x64"}) {
    if (!plan.empty() &&
        !memlab::gemm_plan_unavailable(memlab::gemm_parse_plan(plan), memlab::gemm_shape_of(p), target).empty())
      continue;
    SCOPED_TRACE("plan '" + plan + "'");
    dp.c.upload(d.hc);
    p.plan = plan;
    ASSERT_NO_THROW(memlab::gemm_ex(p));
    MEMLAB_EXPECT_LAUNCH_OK();
    expect_matches(dp.c.download(), ref, d, "batch 70000 plan '" + plan + "'");
  }
}

TEST(GemmEx, InvalidArgumentsThrowAndLeaveCUntouched) {
  MEMLAB_REQUIRE_GPU();
  int const m = 9, n = 10, k = 11;
  device_buffer<float> a(4 * 16 * 16 + 8), b(4 * 16 * 16 + 8), c(4 * 16 * 16);
  a.fill_bytes(0);
  b.fill_bytes(0);
  std::vector<float> init(c.size());
  memlab::bench::fill_random(init, 5);
  c.upload(init);
  memlab::gemm_params base;
  base.m = m, base.n = n, base.k = k;
  base.a = a.data(), base.lda = k, base.b = b.data(), base.ldb = n, base.c = c.data(), base.ldc = n;
  auto expect_throw = [&](auto&& mutate, char const* what) {
    SCOPED_TRACE(what);
    memlab::gemm_params p = base;
    mutate(p);
    try {
      memlab::gemm_ex(p);
      ADD_FAILURE() << "no throw";
    } catch (memlab::error const& e) {
      std::string const msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;  // one line
      EXPECT_FALSE(msg.empty());
    }
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ(c.download(), init);
  };
  using P = memlab::gemm_params;
  expect_throw([](P& p) { p.m = -1; }, "m < 0");
  expect_throw([](P& p) { p.n = -1; }, "n < 0");
  expect_throw([](P& p) { p.k = -5; }, "k < 0");
  expect_throw([](P& p) { p.batch = 0; }, "batch 0");
  expect_throw([](P& p) { p.batch = -3; }, "batch < 0");
  expect_throw([](P& p) { p.lda = k - 1; }, "lda < k");
  expect_throw([](P& p) { p.ldb = n - 1; }, "ldb < n");
  expect_throw([](P& p) { p.ldc = n - 1; }, "ldc < n");
  expect_throw([](P& p) { p.op_a = gemm_op::t, p.lda = m - 1; }, "A^T: lda < m");
  expect_throw([](P& p) { p.op_b = gemm_op::t, p.ldb = k - 1; }, "B^T: ldb < k");
  expect_throw([](P& p) { p.order = gemm_order::col_major; }, "col-major: ldb 10 < k 11");
  expect_throw([](P& p) { p.order = gemm_order::col_major, p.ldb = k, p.ldc = m - 1; }, "col-major: ldc < m");
  expect_throw([](P& p) { p.a = nullptr; }, "null A");
  expect_throw([](P& p) { p.b = nullptr; }, "null B");
  expect_throw([](P& p) { p.c = nullptr; }, "null C");
  expect_throw([](P& p) { p.batch = 2, p.stride_c = 5; }, "batches of C overlap");
  expect_throw([](P& p) { p.batch = 2, p.stride_a = -1, p.stride_c = 160; }, "negative stride");
  expect_throw([](P& p) { p.plan = "no_such"; }, "unknown plan");
  expect_throw([](P& p) { p.plan = "tile_64x64/sx"; }, "bad split");
  expect_throw([](P& p) { p.m = 20, p.n = 20, p.ldb = 20, p.ldc = 20, p.plan = "gemv"; }, "gemv with m, n > 16");
  expect_throw([](P& p) { p.m = 4, p.n = 12, p.ldb = 12, p.ldc = 12, p.lda = 12, p.plan = "gemv_v4", p.b = p.b + 1; },
               "gemv_v4 misaligned B");
  expect_throw([](P& p) { p.m = 4, p.n = 12, p.ldb = 13, p.ldc = 12, p.lda = 12, p.plan = "gemv_v4"; }, "gemv_v4 ldb % 4");
  expect_throw([](P& p) { p.plan = "vectorized"; }, "vectorized with lda 11");
  expect_throw([](P& p) { p.plan = "warp_tiled/s2"; }, "ladder variant split");
  expect_throw(
      [&](P& p) {
        p.plan = "tile_64x64/s4", p.k = 2048, p.lda = 2048;
        p.a = a.data();  // never read: the workspace check comes first
        p.workspace = c.data(), p.workspace_bytes = 16;
      },
      "workspace too small");
  // m = 0 or n = 0: a valid no-op, even with null pointers.
  memlab::gemm_params z = base;
  z.m = 0, z.a = nullptr, z.b = nullptr, z.c = nullptr;
  EXPECT_NO_THROW(memlab::gemm_ex(z));
  EXPECT_EQ(c.download(), init);
}

}  // namespace
