// gemm.ladder: every memlab::gemm variant, naive to the cp.async pipeline, against
// cuBLAS SGEMM (FP32, CUBLAS_PEDANTIC_MATH) in the same run, square 1024..8192 plus a
// non-multiple (4097^3) and a non-square shape (3000 x 5000 x 2000).
#include <cstdio>
#include <string>

#include "bench/experiment.hpp"
#include "bench/state.hpp"
#include "experiments/gemm_support.cuh"
#include "kernels/gemm/gemm_kernels.hpp"
#include "memlab/buffer.hpp"
#include "memlab/gemm.hpp"

namespace {
using namespace memlab;
using namespace memlab::experiments::gemm;


/// Slow variants (first H200 run: naive 0.5 TFLOP/s, the rest 6-40) skip shapes
/// that would take more than ~1 s per launch; the pipeline variants run everywhere.
/// Only the fastest few run 8192^3 (1.1 TFLOP per launch) to keep the suite in budget.
std::string too_slow(std::string const& v, shape const& s) {
  double const flop = 2.0 * s.m * s.n * s.k;
  double const g4096 = 2.0 * 4096.0 * 4096.0 * 4096.0;
  if (v == "naive" && flop > 2.0 * 2048.0 * 2048.0 * 2048.0) return "too slow at this size: uncoalesced, ~1 TFLOP/s";
  bool const pipeline = v.rfind("cp_async", 0) == 0;
  if (!pipeline && flop > 1.05 * g4096) return "too slow at this size: 8192^3 runs only the cp.async variants";
  if (v == "cp_async_64x64" && flop > 1.05 * g4096) return "too slow at this size: 64x64 tiles are for small shapes";
  return {};
}

memlab::bench::registrar const reg{[] {
  memlab::bench::experiment e;
  e.id = "gemm.ladder";
  e.description = "FP32 GEMM optimization ladder (naive .. cp.async multistage) vs cuBLAS SGEMM";
  e.seed_ref = "001 §1-3, 004, 000 §9.2.3";
  e.axes = {memlab::bench::variant_axis(memlab::gemm_variants(),
                                        {"naive", "smem_tiled", "blocktile_2d", "warp_tiled", "cp_async_128x128",
                                         "cp_async_128x256", "cp_async_128x256_db", "cp_async_64x64"}),
            memlab::bench::string_axis("shape", {"1024", "2048", "4096", "8192", "4097", "3000x5000x2000"},
                                       {"512", "1023x1025x517"})};
  e.axes[1].description = "n (cube) or m x n x k";
  e.body = [](memlab::bench::state& s) {
    std::string const v = s.variant();
    shape const sh = parse_shape(s.get_string("shape"));
    set_mnk(s, sh.m, sh.n, sh.k);
    auto const* entry = memlab::detail::gemm::find_variant(v);
    if (entry == nullptr) throw memlab::error("unknown variant " + v);
    if (auto why = too_slow(v, sh); !why.empty()) s.skip(why);
    // Below sm_80 the cp_async_* kernels would copy synchronously: not the variant named.
    if (entry->needs_arch > 0) s.require_arch(entry->kernel(), entry->needs_arch, "cp.async");
    if (static_cast<std::size_t>(entry->dynamic_smem_bytes) > s.device().smem_per_block_optin_bytes)
      s.skip(std::to_string(entry->dynamic_smem_bytes) + " bytes of shared memory per block; this device allows " +
             std::to_string(s.device().smem_per_block_optin_bytes));
    int const m = static_cast<int>(sh.m), n = static_cast<int>(sh.n), k = static_cast<int>(sh.k);
    // Dense row-major operands: lda = k, ldb = ldc = n.
    if (entry->needs_vector_alignment && (k % 4 != 0 || n % 4 != 0))
      s.skip("needs 16-byte aligned rows: lda = " + std::to_string(k) + ", ldb = " + std::to_string(n));

    device_buffer<float> a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n);
    device_buffer<float> c(static_cast<std::size_t>(m) * n), ref(static_cast<std::size_t>(m) * n);
    fill_uniform(a, s.seed());
    fill_uniform(b, s.seed() ^ 0x5bd1e995u);
    ref.fill_bytes(0xFF);
    c.fill_bytes(0xFF);  // NaN poison: an unwritten output fails verification
    cudaStream_t const st = s.stream();
    cublas_sgemm(st, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, ref.data(), n);
    memlab::gemm(m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n, st, v);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
    s.set_verification(compare_device(c.data(), ref.data(), m, n, n, gemm_rel_tol, gemm_abs_tol(k)));

    memlab::detail::gemm::problem p;
    p.a = a.data(); p.b = b.data(); p.c = c.data(); p.lda = k; p.ldb = n; p.ldc = n;
    record_attributes(s, entry->attributes(memlab::detail::gemm::vector_aligned(p)));
    s.set_extra("is_default", memlab::gemm_default_variant(m, n, k) == v);

    double const flops = 2.0 * m * n * k;
    s.add_flops(flops);
    s.add_reads<float>(static_cast<std::size_t>(m) * k + static_cast<std::size_t>(k) * n);
    s.add_writes<float>(static_cast<std::size_t>(m) * n);
    s.exec_paired([&](cudaStream_t t) { memlab::gemm(m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, c.data(), n, t, v); },
                  "cublas", [&](cudaStream_t t) { cublas_sgemm(t, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, ref.data(), n); });
    record_pct_of_peak(s, flops);
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "", "the ladder's rung, from one output per thread to the cp.async pipeline");
  e.describe_axis("shape", "", "n (a cube n x n x n) or m x n x k");
  e.metrics = {metrics::time(), metrics::tflops(), metrics::vs_peer("cuBLAS SGEMM")};
  e.headline = best_row("How close does the best rung come to cuBLAS SGEMM at 8192³?", {{"shape", {"8192"}}},
                        "median_ms", "ratio_to_peer");
  e.prose = {"The FP32 GEMM ladder from one output per thread to a multistage cp.async pipeline, each rung against "
             "cuBLAS SGEMM (pedantic FP32, never TF32) measured in the same run. Each step removes one bottleneck: "
             "uncoalesced loads, global traffic (shared tiles), shared-memory traffic (register blocking), instruction "
             "count (vector loads), bank conflicts, and load latency (the asynchronous pipeline).",
             "Which rung makes the big jumps, and whether the cp.async rungs stay near cuBLAS at the odd shapes too.", ""};
  {
    plot_spec p = line_plot("gemm_ladder.png", "GEMM ladder: each rung's speed as a fraction of cuBLAS SGEMM", "variant", "ratio_to_peer", {"shape"});
    p.refs = {{"value", "cuBLAS", 1.0}};
    e.plots.push_back(p);
  }
  return e;
}()};
}  // namespace
