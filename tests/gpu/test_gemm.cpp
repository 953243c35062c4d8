// memlab::gemm: every variant at awkward shapes against a float64 host reference, the
// argument checks (throw, C untouched), and the teaching kernels of the experiments.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/gemm/gemm_kernels.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"
#include "memlab/gemm.hpp"

namespace {
using memlab::device_buffer;
namespace kg = memlab::detail::gemm;

struct case_t {
  int m, n, k;
  long long lda, ldb, ldc;
  float alpha, beta;
};

double abs_tol(int k) { return (k + 1) * 0x1p-21; }

/// Variants this binary and device cannot run are left out of a loop over variants and
/// named in the test's skip message at the end (after the others ran).
struct unavailable_variants {
  memlab::gemm_target const target = memlab::gemm_current_target();
  std::string skipped;
  bool skip(std::string const& v) {
    std::string const why = memlab::gemm_variant_unavailable(v, target);
    if (why.empty()) return false;
    if (skipped.find(v + ":") == std::string::npos) skipped += v + ": " + why + "; ";
    return true;
  }
};
#define MEMLAB_SKIP_IF_ANY_UNAVAILABLE(u) \
  do {                                    \
    if (!(u).skipped.empty()) GTEST_SKIP() << "the other variants passed; not run: " << (u).skipped; \
  } while (0)

/// C = alpha A B + beta C0 in double; C0 is the poisoned/initial C (read only if beta != 0).
std::vector<double> reference(case_t const& t, std::vector<float> const& a, std::vector<float> const& b,
                              std::vector<float> const& c0) {
  std::vector<double> ref(c0.begin(), c0.end());
  for (int i = 0; i < t.m; ++i)
    for (int j = 0; j < t.n; ++j) {
      double acc = 0.0;
      for (int p = 0; p < t.k; ++p) acc += double(a[i * t.lda + p]) * double(b[p * t.ldb + j]);
      double const old = t.beta != 0.f ? double(c0[i * t.ldc + j]) : 0.0;
      ref[i * t.ldc + j] = double(t.alpha) * acc + double(t.beta) * old;
    }
  return ref;
}

/// Runs `variant` on case t; checks the m x n result and that the padding of C is untouched.
void check_case(std::string const& variant, case_t const& t, std::uint64_t seed, cudaStream_t stream) {
  SCOPED_TRACE(variant + " m=" + std::to_string(t.m) + " n=" + std::to_string(t.n) + " k=" + std::to_string(t.k) +
               " lda=" + std::to_string(t.lda) + " ldb=" + std::to_string(t.ldb) + " ldc=" + std::to_string(t.ldc) +
               " beta=" + std::to_string(t.beta));
  std::vector<float> a(std::max<long long>(1, t.m * t.lda)), b(std::max<long long>(1, t.k * t.ldb)),
      c(std::max<long long>(1, t.m * t.ldc));
  memlab::bench::fill_random(a, seed);
  memlab::bench::fill_random(b, seed + 1);
  memlab::bench::fill_random(c, seed + 2);
  if (t.beta == 0.f)  // beta = 0 must not read C: a NaN there must not leak
    for (auto& x : c) x = std::nanf("");
  // Padding columns of C (j >= n) carry a sentinel that must survive.
  for (int i = 0; i < t.m; ++i)
    for (long long j = t.n; j < t.ldc; ++j) c[i * t.ldc + j] = 1234.5f;
  device_buffer<float> da(a.size()), db(b.size()), dc(c.size());
  da.upload(a);
  db.upload(b);
  dc.upload(c);
  memlab::gemm(t.m, t.n, t.k, t.alpha, da.data(), t.lda, db.data(), t.ldb, t.beta, dc.data(), t.ldc, stream, variant);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = dc.download();
  auto ref = reference(t, a, b, c);
  for (int i = 0; i < t.m; ++i)
    for (long long j = t.n; j < t.ldc; ++j) ref[i * t.ldc + j] = 1234.5;
  auto const v = memlab::bench::compare_close(got, ref, 1e-5, abs_tol(t.k) * (std::fabs(t.alpha) + 1.f));
  EXPECT_EQ(v.status, memlab::bench::verdict::passed) << v.detail << " error " << v.error;
}

long long round_up4(long long x) { return (x + 3) / 4 * 4; }

std::vector<case_t> awkward_cases(bool aligned) {
  bool const small = memlab::test::small_sizes();
  std::vector<case_t> cases;
  auto add = [&](int m, int n, int k, int pad_a, int pad_b, int pad_c, float alpha, float beta) {
    long long lda = k + pad_a, ldb = n + pad_b, ldc = n + pad_c;
    if (aligned) {
      lda = round_up4(std::max(1, k)) + (pad_a ? 4 : 0);
      ldb = round_up4(n) + (pad_b ? 4 : 0);
      ldc = round_up4(n) + (pad_c ? 4 : 0);
    }
    cases.push_back({m, n, k, std::max(1LL, lda), std::max(1LL, ldb), std::max(1LL, ldc), alpha, beta});
  };
  add(1, 1, 1, 0, 0, 0, 1.f, 0.f);
  add(7, 13, 5, 0, 0, 0, 1.f, 0.f);         // primes below any tile
  add(31, 37, 0, 0, 0, 0, 2.f, 0.5f);       // K = 0: C = beta C
  add(131, 67, 259, 3, 5, 7, 1.5f, -0.5f);  // primes over tile edges, ld > row, alpha/beta
  add(129, 257, 17, 0, 0, 1, 1.f, 0.f);     // one past 128 / 256-wide tiles
  // Interior tiles (wholly inside C, k a multiple of BK) take the unpredicated pointer-
  // stepping path; with one or two k slices its copy pipeline runs past the last tile.
  add(136, 264, 48, 1, 2, 3, 1.f, 0.5f);
  add(130, 260, 16, 0, 0, 0, 1.f, 0.f);
  add(130, 260, 8, 0, 0, 0, -1.f, 2.f);
  if (!small) {
    add(263, 389, 521, 0, 0, 0, 1.f, 1.f);  // primes, several tiles and k slices
    add(256, 256, 256, 4, 4, 4, 1.f, 0.f);  // tile multiples with padded rows
  }
  return cases;
}

TEST(GemmVariants, EveryVariantAtAwkwardShapes) {
  MEMLAB_REQUIRE_GPU();
  memlab::stream stream;
  std::uint64_t seed = 7;
  unavailable_variants u;
  for (auto const& v : memlab::gemm_variants()) {
    if (u.skip(v)) continue;
    bool const needs = memlab::gemm_variant_needs_alignment(v);
    for (auto const& t : awkward_cases(/*aligned=*/needs)) check_case(v, t, seed++, stream);
    if (!needs)  // the same variants also take 16-byte aligned rows (vector paths)
      for (auto const& t : awkward_cases(/*aligned=*/true)) check_case(v, t, seed++, stream);
  }
  MEMLAB_SKIP_IF_ANY_UNAVAILABLE(u);
}

TEST(GemmVariants, DefaultVariantAtAwkwardShapes) {
  MEMLAB_REQUIRE_GPU();
  std::uint64_t seed = 99;
  for (bool aligned : {false, true})
    for (auto const& t : awkward_cases(aligned)) check_case("", t, seed++, nullptr);
  auto const names = memlab::gemm_variants();
  for (auto shape : {std::vector<long long>{64, 64, 64}, {4096, 4096, 4096}, {3000, 5000, 2000}}) {
    auto const d = memlab::gemm_default_variant(shape[0], shape[1], shape[2]);
    EXPECT_NE(std::find(names.begin(), names.end(), d), names.end()) << d;
    EXPECT_EQ(memlab::gemm_variant_unavailable(d, memlab::gemm_current_target()), "") << d;
  }
}

TEST(GemmVariants, LargerShapeAgainstHost) {
  MEMLAB_REQUIRE_GPU();
  int const s = memlab::test::small_sizes() ? 1 : 3;
  case_t const t{97 * s, 131 * s, 173 * s, 173 * s, 131 * s, 131 * s, 1.f, 0.f};
  unavailable_variants u;
  for (auto const& v : memlab::gemm_variants()) {
    if (memlab::gemm_variant_needs_alignment(v) || u.skip(v)) continue;
    check_case(v, t, 1000, nullptr);
  }
  MEMLAB_SKIP_IF_ANY_UNAVAILABLE(u);
}

/// Shapes one past a tile multiple make the cp.async variants run the tile-multiple part
/// and the remainder strips as separate launches (when that saves a wave): every element
/// must still be written once, with the right alpha/beta, and nothing outside C touched.
TEST(GemmVariants, EdgeSplitShapes) {
  MEMLAB_REQUIRE_GPU();
  if (memlab::test::small_sizes()) GTEST_SKIP() << "large shape; covered at full size";
  unavailable_variants u;
  for (bool aligned : {false, true}) {
    // 1409 = 11 x 128 + 1, 3075 = 12 x 256 + 3 = 24 x 128 + 3: on a 132-SM GPU the tile-multiple
    // part is exactly one wave for the 128x256 and 128x128 configurations, the full grid two.
    int const m = 1409, n = 3075, k = 37;
    case_t t{m, n, k, aligned ? 40 : k, aligned ? 3076 : n, aligned ? 3080 : n + 1, 1.25f, 0.5f};
    std::vector<float> a(static_cast<std::size_t>(m) * t.lda), b(static_cast<std::size_t>(k) * t.ldb),
        c(static_cast<std::size_t>(m) * t.ldc);
    memlab::bench::fill_random(a, 11);
    memlab::bench::fill_random(b, 12);
    memlab::bench::fill_random(c, 13);
    auto const ref = reference(t, a, b, c);
    device_buffer<float> da(a.size()), db(b.size()), dc(c.size());
    da.upload(a);
    db.upload(b);
    for (auto const& v : memlab::gemm_variants()) {
      if (v.rfind("cp_async", 0) != 0 || u.skip(v)) continue;
      SCOPED_TRACE(v + (aligned ? " aligned" : " unaligned"));
      dc.upload(c);
      memlab::gemm(m, n, k, t.alpha, da.data(), t.lda, db.data(), t.ldb, t.beta, dc.data(), t.ldc, nullptr, v);
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const got = dc.download();
      auto const r = memlab::bench::compare_close(got, ref, 1e-5, abs_tol(k) * 3);
      EXPECT_EQ(r.status, memlab::bench::verdict::passed) << r.detail;
    }
  }
  MEMLAB_SKIP_IF_ANY_UNAVAILABLE(u);
}

/// A named cp_async_* variant is refused with memlab::error, C untouched, when the GEMM
/// kernels' code predates sm_80 (a 75 build on a Turing card, or compute_75 PTX JIT-compiled
/// on a newer one); where the code has cp.async it runs. Which branch runs depends on the build.
TEST(GemmArguments, RefusesCpAsyncWithoutItInTheImage) {
  MEMLAB_REQUIRE_GPU();
  int const m = 9, n = 12, k = 8;
  device_buffer<float> a(m * k), b(k * n), c(m * n);
  a.fill_bytes(0);
  b.fill_bytes(0);
  std::vector<float> init(c.size(), 3.f);
  c.upload(init);
  auto const* entry = kg::find_variant("cp_async_64x64");
  ASSERT_NE(entry, nullptr);
  bool const has = memlab::compiled_arch(entry->kernel()) >= memlab::arch::cp_async &&
                   memlab::gemm_current_target().device_cc >= memlab::arch::cp_async;
  EXPECT_EQ(memlab::gemm_variant_unavailable("cp_async_64x64", memlab::gemm_current_target()).empty(), has);
  if (has) {
    EXPECT_NO_THROW(memlab::gemm(m, n, k, 1, a.data(), k, b.data(), n, 0, c.data(), n, nullptr, "cp_async_64x64"));
    MEMLAB_EXPECT_LAUNCH_OK();
    EXPECT_EQ(c.download(), std::vector<float>(c.size(), 0.f));
  } else {
    EXPECT_THROW(memlab::gemm(m, n, k, 1, a.data(), k, b.data(), n, 0, c.data(), n, nullptr, "cp_async_64x64"),
                 memlab::error);
    MEMLAB_EXPECT_LAUNCH_OK();
    EXPECT_EQ(c.download(), init);
    // The default picks what the image has.
    EXPECT_EQ(memlab::gemm_default_variant(m, n, k).rfind("cp_async", 0), std::string::npos);
  }
}

/// Every invalid argument throws memlab::error and leaves C byte-for-byte untouched.
TEST(GemmArguments, InvalidArgumentsThrowAndLeaveCUntouched) {
  MEMLAB_REQUIRE_GPU();
  int const m = 9, n = 10, k = 11;
  device_buffer<float> a(m * 16 + 4), b(k * 16 + 4), c(m * 16);
  std::vector<float> init(c.size());
  memlab::bench::fill_random(init, 5);
  c.upload(init);
  float* const cp = c.data();
  auto expect_throw = [&](auto&& call, char const* what) {
    SCOPED_TRACE(what);
    EXPECT_THROW(call(), memlab::error);
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ(c.download(), init);
  };
  expect_throw([&] { memlab::gemm(m, n, k, 1, nullptr, k, b.data(), n, 0, cp, n); }, "null A");
  expect_throw([&] { memlab::gemm(m, n, k, 1, a.data(), k, nullptr, n, 0, cp, n); }, "null B");
  expect_throw([&] { memlab::gemm(m, n, k, 1, a.data(), k, b.data(), n, 0, nullptr, n); }, "null C");
  expect_throw([&] { memlab::gemm(m, n, k, 1, a.data(), k - 1, b.data(), n, 0, cp, n); }, "lda < k");
  expect_throw([&] { memlab::gemm(m, n, k, 1, a.data(), k, b.data(), n - 1, 0, cp, n); }, "ldb < n");
  expect_throw([&] { memlab::gemm(m, n, k, 1, a.data(), k, b.data(), n, 0, cp, n - 1); }, "ldc < n");
  expect_throw([&] { memlab::gemm(-1, n, k, 1, a.data(), k, b.data(), n, 0, cp, n); }, "m < 0");
  expect_throw([&] { memlab::gemm(m, n, -2, 1, a.data(), k, b.data(), n, 0, cp, n); }, "k < 0");
  expect_throw([&] { memlab::gemm(m, n, k, 1, a.data(), k, b.data(), n, 0, cp, n, nullptr, "no_such"); }, "unknown");
  for (auto const& v : memlab::gemm_variants()) {
    if (!memlab::gemm_variant_needs_alignment(v)) continue;
    // lda = 11 (rows not 16-byte aligned), then an aligned ld but a pointer off by 4 bytes.
    expect_throw([&] { memlab::gemm(m, n, k, 1, a.data(), k, b.data(), 12, 0, cp, 12, nullptr, v); }, "lda % 4");
    expect_throw([&] { memlab::gemm(m, n, k, 1, a.data() + 1, 12, b.data(), 12, 0, cp, 12, nullptr, v); },
                 "misaligned A");
    EXPECT_FALSE(memlab::gemm_variant_needs_alignment("naive"));
  }
  EXPECT_THROW(memlab::gemm_variant_needs_alignment("no_such"), memlab::error);
  // m = 0 or n = 0 is a valid no-op, even with null pointers.
  EXPECT_NO_THROW(memlab::gemm(0, n, k, 1, nullptr, k, nullptr, n, 0, nullptr, n));
  EXPECT_NO_THROW(memlab::gemm(m, 0, k, 1, nullptr, k, nullptr, 1, 0, nullptr, 1));
}

// ---- the experiments' teaching kernels -------------------------------------------------
void check_plain(std::vector<float> const& got, std::vector<float> const& a, std::vector<float> const& b, int m, int n,
                 int k) {
  std::vector<double> ref(static_cast<std::size_t>(m) * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[i * k + p]) * double(b[p * n + j]);
      ref[i * n + j] = acc;
    }
  auto const v = memlab::bench::compare_close(got, ref, 1e-5, abs_tol(k));
  EXPECT_EQ(v.status, memlab::bench::verdict::passed) << v.detail;
}

TEST(GemmSeedKernels, ThreadTileEveryTile) {
  MEMLAB_REQUIRE_GPU();
  int const n = memlab::test::small_sizes() ? 70 : 150;  // not a multiple of any tile
  std::vector<float> a(n * n), b(n * n);
  memlab::bench::fill_random(a, 1);
  memlab::bench::fill_random(b, 2);
  device_buffer<float> da(a.size()), db(b.size()), dc(a.size());
  da.upload(a);
  db.upload(b);
  for (int tile : kg::seed_thread_tiles()) {
    SCOPED_TRACE("tile " + std::to_string(tile));
    dc.fill_bytes(0xFF);
    kg::launch_seed_thread_tile(tile, n, da.data(), db.data(), dc.data(), nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    check_plain(dc.download(), a, b, n, n, n);
    auto const attr = kg::seed_thread_tile_attributes(tile);
    EXPECT_GT(attr.numRegs, 0);
  }
  EXPECT_THROW(kg::launch_seed_thread_tile(3, n, da.data(), db.data(), dc.data(), nullptr), memlab::error);
}

TEST(GemmSeedKernels, SmemTileEveryWidth) {
  MEMLAB_REQUIRE_GPU();
  int const m = 37, n = 45, k = memlab::test::small_sizes() ? 29 : 101;
  std::vector<float> a(m * k), b(k * n);
  memlab::bench::fill_random(a, 3);
  memlab::bench::fill_random(b, 4);
  device_buffer<float> da(a.size()), db(b.size()), dc(m * n);
  da.upload(a);
  db.upload(b);
  for (int w = 1; w <= 32; ++w) {
    SCOPED_TRACE("w " + std::to_string(w));
    dc.fill_bytes(0xFF);
    kg::launch_seed_smem_tile(w, m, n, k, da.data(), db.data(), dc.data(), nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    check_plain(dc.download(), a, b, m, n, k);
  }
  EXPECT_THROW(kg::launch_seed_smem_tile(33, m, n, k, da.data(), db.data(), dc.data(), nullptr), memlab::error);
}

TEST(GemmGuideKernels, ABAndAAT) {
  MEMLAB_REQUIRE_GPU();
  int const w = kg::guide_tile;
  for (int m : {96, 70}) {
    int const n = m + 32;
    std::vector<float> a(m * w), b(w * n), at(w * m);
    memlab::bench::fill_random(a, m);
    memlab::bench::fill_random(b, m + 1);
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < w; ++p) at[p * m + i] = a[i * w + p];
    device_buffer<float> da(a.size()), db(b.size()), dc(static_cast<std::size_t>(m) * n), dcc(static_cast<std::size_t>(m) * m);
    da.upload(a);
    db.upload(b);
    for (auto which : {kg::guide_ab_kernel::simple, kg::guide_ab_kernel::coalesced, kg::guide_ab_kernel::shared_ab}) {
      SCOPED_TRACE("ab " + std::to_string(static_cast<int>(which)) + " m " + std::to_string(m));
      dc.fill_bytes(0xFF);
      kg::launch_guide_ab(which, m, n, da.data(), db.data(), dc.data(), nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      check_plain(dc.download(), a, b, m, n, w);
    }
    for (auto which : {kg::guide_aat_kernel::simple, kg::guide_aat_kernel::coalesced, kg::guide_aat_kernel::padded}) {
      SCOPED_TRACE("aat " + std::to_string(static_cast<int>(which)) + " m " + std::to_string(m));
      dcc.fill_bytes(0xFF);
      kg::launch_guide_aat(which, m, da.data(), dcc.data(), nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      check_plain(dcc.download(), a, at, m, m, w);
    }
  }
}

}  // namespace
