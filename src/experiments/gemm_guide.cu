// gemm.guide_ab / gemm.guide_aat: the CUDA C++ Best Practices Guide's shared-memory
// examples (seed 000 §9.2.3.2 and §9.2.3.3), reported as effective bandwidth (bytes of
// A, B read once and C written once, over the time) as the Guide does, beside its V100
// figures. cuBLAS doing the same product is the peer.
#include <string>

#include "bench/experiment.hpp"
#include "bench/state.hpp"
#include "experiments/gemm_support.cuh"
#include "kernels/gemm/gemm_kernels.hpp"
#include "memlab/buffer.hpp"

namespace {
using namespace memlab;
using namespace memlab::experiments::gemm;
namespace kg = memlab::detail::gemm;
constexpr int w = kg::guide_tile;

memlab::bench::registrar const reg_ab{[] {
  memlab::bench::experiment e;
  e.id = "gemm.guide_ab";
  e.description = "C=AB, A m x 32, B 32 x n: simpleMultiply, coalescedMultiply, sharedABMultiply (BPG 9.2.3.2)";
  e.seed_ref = "000 §9.2.3.2";
  e.ceiling = memlab::bench::ceiling_relation::ratio;  // effective-bandwidth rows: ratio_to_ceiling vs the run's D2D copy
  e.axes = {memlab::bench::variant_axis({"simple", "coalesced", "shared_ab"}),
            memlab::bench::int_axis("m", {4096}, {1024})};
  e.axes[1].description = "m = n";
  e.body = [](memlab::bench::state& s) {
    std::string const v = s.variant();
    int const m = static_cast<int>(s.get_int("m")), n = m;
    auto const which = v == "simple"      ? kg::guide_ab_kernel::simple
                       : v == "coalesced" ? kg::guide_ab_kernel::coalesced
                                          : kg::guide_ab_kernel::shared_ab;
    set_mnk(s, m, n, w);
    device_buffer<float> a(static_cast<std::size_t>(m) * w), b(static_cast<std::size_t>(w) * n);
    device_buffer<float> c(static_cast<std::size_t>(m) * n), ref(static_cast<std::size_t>(m) * n);
    fill_uniform(a, s.seed());
    fill_uniform(b, s.seed() ^ 0x5bd1e995u);
    c.fill_bytes(0xFF);
    cublas_sgemm(s.stream(), m, n, w, 1.f, a.data(), w, b.data(), n, 0.f, ref.data(), n);
    kg::launch_guide_ab(which, m, n, a.data(), b.data(), c.data(), s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    s.set_verification(compare_device(c.data(), ref.data(), m, n, n, gemm_rel_tol, gemm_abs_tol(w)));
    s.add_reads<float>(static_cast<std::size_t>(m) * w + static_cast<std::size_t>(w) * n);
    s.add_writes<float>(static_cast<std::size_t>(m) * n);
    s.add_flops(2.0 * m * n * w);
    s.exec_paired([&](cudaStream_t t) { kg::launch_guide_ab(which, m, n, a.data(), b.data(), c.data(), t); }, "cublas",
                  [&](cudaStream_t t) { cublas_sgemm(t, m, n, w, 1.f, a.data(), w, b.data(), n, 0.f, ref.data(), n); });
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "", "the Guide's kernel: simpleMultiply, coalescedMultiply, sharedABMultiply");
  e.describe_axis("m", "rows", "rows of A and C (n = m columns of C, k = 32)");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("cublas")};
  e.headline = best_row("What do shared tiles of A and B gain over the simple kernel?", {{"variant", {"shared_ab"}}},
                        "gbps", "baseline", {{"variant", {"simple"}}});
  e.seed_figures = {{"simpleMultiply", 119.9, "GB/s", "Tesla V100", "000 §9.2.3.2", {{"variant", "simple"}}},
                    {"coalescedMultiply", 144.4, "GB/s", "Tesla V100", "000 §9.2.3.2", {{"variant", "coalesced"}}},
                    {"sharedABMultiply", 195.5, "GB/s", "Tesla V100", "000 §9.2.3.2", {{"variant", "shared_ab"}}}};
  e.prose = {"The Guide's C = A·B for a thin A (M×32) and B (32×N), reported as effective bandwidth. simpleMultiply "
             "reads A's row with a stride across the warp; coalescedMultiply stages a tile of A in shared memory with "
             "coalesced loads; sharedABMultiply also stages B, so each element of B is read from DRAM once per block "
             "instead of once per row.",
             "Whether the three steps keep the Guide's order, and the ratios between them beside V100's.",
             "Seed 000 §9.2.3.2 (Tesla V100): **119.9 GB/s** (no optimization), **144.4 GB/s** (tile of A in shared "
             "memory), **195.5 GB/s** (tiles of A and B in shared memory)."};
  {
    plot_spec p = bar_plot("guide_ab.png", "The Guide's C=AB kernels: this GPU beside the seed's V100", "variant", "gbps");
    p.refs = {{"seed", "V100 (seed)", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

memlab::bench::registrar const reg_aat{[] {
  memlab::bench::experiment e;
  e.id = "gemm.guide_aat";
  e.description = "C=AA^T, A m x 32: strided simple, coalesced via transposed tile, padded [w][w+1] (BPG 9.2.3.3)";
  e.seed_ref = "000 §9.2.3.3";
  e.ceiling = memlab::bench::ceiling_relation::ratio;
  e.axes = {memlab::bench::variant_axis({"simple", "coalesced", "padded"}), memlab::bench::int_axis("m", {4096}, {1024})};
  e.body = [](memlab::bench::state& s) {
    std::string const v = s.variant();
    int const m = static_cast<int>(s.get_int("m"));
    auto const which = v == "simple"      ? kg::guide_aat_kernel::simple
                       : v == "coalesced" ? kg::guide_aat_kernel::coalesced
                                          : kg::guide_aat_kernel::padded;
    set_mnk(s, m, m, w);
    device_buffer<float> a(static_cast<std::size_t>(m) * w);
    device_buffer<float> c(static_cast<std::size_t>(m) * m), ref(static_cast<std::size_t>(m) * m);
    fill_uniform(a, s.seed());
    c.fill_bytes(0xFF);
    // cuBLAS sees row-major A (m x 32) as a column-major 32 x m matrix X = A^T; the
    // (symmetric) row-major C = A A^T is then X^T X: op T on the first operand, N on the second.
    auto reference = [&](cudaStream_t t) {
      float const one = 1.f, zero = 0.f;
      MEMLAB_CUBLAS_CHECK(cublasSetStream(cublas(), t));
      MEMLAB_CUBLAS_CHECK(cublasSgemm(cublas(), CUBLAS_OP_T, CUBLAS_OP_N, m, m, w, &one, a.data(), w, a.data(), w,
                                      &zero, ref.data(), m));
    };
    reference(s.stream());
    kg::launch_guide_aat(which, m, a.data(), c.data(), s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    s.set_verification(compare_device(c.data(), ref.data(), m, m, m, gemm_rel_tol, gemm_abs_tol(w)));
    s.add_reads<float>(static_cast<std::size_t>(m) * w);
    s.add_writes<float>(static_cast<std::size_t>(m) * m);
    s.add_flops(2.0 * m * m * w);
    s.exec_paired([&](cudaStream_t t) { kg::launch_guide_aat(which, m, a.data(), c.data(), t); }, "cublas", reference);
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "", "strided simple kernel, coalesced via a transposed tile, padded [w][w+1] tile");
  e.describe_axis("m", "rows", "rows of A (C is m x m, k = 32)");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("cublas")};
  e.headline = best_row("What does the padded tile gain over the strided kernel?", {{"variant", {"padded"}}},
                        "gbps", "baseline", {{"variant", {"simple"}}});
  e.seed_figures = {{"strided", 12.8, "GB/s", "Tesla V100", "000 §9.2.3.3", {{"variant", "simple"}}},
                    {"coalesced", 140.2, "GB/s", "Tesla V100", "000 §9.2.3.3", {{"variant", "coalesced"}}},
                    {"padded", 199.4, "GB/s", "Tesla V100", "000 §9.2.3.3", {{"variant", "padded"}}}};
  e.prose = {"C = A·Aᵀ: the second operand is read down columns, so the simple kernel strides through memory by a "
             "whole row per lane. Reading a tile coalesced and transposing it through shared memory fixes the global "
             "access but makes a warp hit one shared-memory bank 32 times; padding the tile to [w][w+1] spreads the "
             "column over all 32 banks.",
             "The jump from strided to coalesced, then the smaller one from padding.",
             "Seed 000 §9.2.3.3 (Tesla V100): **12.8 GB/s** (strided), **140.2 GB/s** (coalesced via shared memory), "
             "**199.4 GB/s** (padded tile, no bank conflicts)."};
  {
    plot_spec p = bar_plot("guide_aat.png", "The Guide's C=AAᵀ kernels: this GPU beside the seed's V100", "variant", "gbps");
    p.refs = {{"seed", "V100 (seed)", 0}};
    p.log_y = true;
    e.plots.push_back(p);
  }
  return e;
}()};
}  // namespace
