// gemm.seed_thread_tile (seed 001 §1-2) and gemm.seed_smem_tile (seed 001 §3, seed 004):
// the seed's two tile-size sweeps on this GPU, square n x n, verified against cuBLAS.
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

struct operands {
  device_buffer<float> a, b, c, ref;
  operands(bench::state& s, int m, int n, int k)
      : a(static_cast<std::size_t>(m) * k), b(static_cast<std::size_t>(k) * n),
        c(static_cast<std::size_t>(m) * n), ref(static_cast<std::size_t>(m) * n) {
    fill_uniform(a, s.seed());
    fill_uniform(b, s.seed() ^ 0x5bd1e995u);
    c.fill_bytes(0xFF);
    ref.fill_bytes(0xFF);
    cublas_sgemm(s.stream(), m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, ref.data(), n);
  }
};

void declare_gemm(bench::state& s, int m, int n, int k) {
  set_mnk(s, m, n, k);
  s.add_flops(2.0 * m * n * k);
  s.add_reads<float>(static_cast<std::size_t>(m) * k + static_cast<std::size_t>(k) * n);
  s.add_writes<float>(static_cast<std::size_t>(m) * n);
}

memlab::bench::registrar const reg_thread{[] {
  memlab::bench::experiment e;
  e.id = "gemm.seed_thread_tile";
  e.description = "TILE x TILE outputs per thread from global memory, TILE 1..64 (seed 001 table, register cliff)";
  e.seed_ref = "001 §1-2";
  e.axes = {memlab::bench::int_axis("tile", {1, 2, 4, 8, 16, 32, 64}, {1, 4, 16}),
            memlab::bench::int_axis("n", {1024}, {256})};
  e.body = [](memlab::bench::state& s) {
    int const tile = static_cast<int>(s.get_int("tile")), n = static_cast<int>(s.get_int("n"));
    bool known = false;
    for (int t : kg::seed_thread_tiles()) known = known || t == tile;
    if (!known) s.skip("tile must be one of 1, 2, 4, 8, 16, 32, 64");
    declare_gemm(s, n, n, n);
    operands o(s, n, n, n);
    kg::launch_seed_thread_tile(tile, n, o.a.data(), o.b.data(), o.c.data(), s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    s.set_verification(compare_device(o.c.data(), o.ref.data(), n, n, n, gemm_rel_tol, gemm_abs_tol(n)));
    record_attributes(s, kg::seed_thread_tile_attributes(tile));
    s.set_extra("threads", static_cast<long long>((n + tile - 1) / tile) * ((n + tile - 1) / tile));
    s.exec_paired([&](cudaStream_t t) { kg::launch_seed_thread_tile(tile, n, o.a.data(), o.b.data(), o.c.data(), t); },
                  "cublas", [&](cudaStream_t t) { cublas_sgemm(t, n, n, n, 1.f, o.a.data(), n, o.b.data(), n, 0.f, o.ref.data(), n); });
    record_pct_of_peak(s, 2.0 * n * n * n);
  };
  using namespace memlab::bench;
  e.describe_axis("tile", "outputs", "TILE_SIZE: each thread computes TILE_SIZE x TILE_SIZE outputs", true);
  e.describe_axis("n", "elements", "n x n matrices");
  e.metrics = {metrics::time(), metrics::tflops(), metrics::vs_peer("cublas")};
  e.headline = best_row("Which thread tile is fastest before registers spill?", {{"n", {"max"}}}, "median_ms",
                        "ratio_to_peer");
  e.seed_figures = {{"TILE_SIZE 1", 3.282611, "ms", "Tesla P100", "001 §2", {{"tile", "1"}}},
                    {"TILE_SIZE 2", 2.271091, "ms", "Tesla P100", "001 §2", {{"tile", "2"}}},
                    {"TILE_SIZE 4", 2.107053, "ms", "Tesla P100", "001 §2", {{"tile", "4"}}},
                    {"TILE_SIZE 8", 2.077536, "ms", "Tesla P100", "001 §2", {{"tile", "8"}}},
                    {"TILE_SIZE 16", 7.368474, "ms", "Tesla P100", "001 §2", {{"tile", "16"}}},
                    {"TILE_SIZE 32", 25.815271, "ms", "Tesla P100", "001 §2", {{"tile", "32"}}},
                    {"TILE_SIZE 64", 83.601498, "ms", "Tesla P100", "001 §2", {{"tile", "64"}}}};
  e.prose = {"Seed 001's first kernels: each thread computes a TILE_SIZE×TILE_SIZE block of C straight from global "
             "memory. Small tiles reuse each loaded value a few times; large ones need TILE_SIZE² accumulators, exceed "
             "the register file and spill to local memory, which is the cliff in the table (registers and spill bytes "
             "are shown beside each time).",
             "The minimum near 8 and the cliff after it, on this GPU and on the seed's P100.",
             "Seed 001 (Tesla P100), time per multiply for TILE_SIZE 1, 2, 4, 8, 16, 32, 64: **3.28, 2.27, 2.11, 2.08, "
             "7.37, 25.8, 83.6 ms**: fastest near 8, then the spill cliff."};
  {
    plot_spec p = bar_plot("seed_thread_tile.png", "Seed 001's thread-tile sweep: this GPU beside the P100", "tile", "median_ms");
    p.refs = {{"seed", "P100 (seed)", 0}};
    p.log_y = true;
    e.plots.push_back(p);
  }
  return e;
}()};

memlab::bench::registrar const reg_smem{[] {
  memlab::bench::experiment e;
  e.id = "gemm.seed_smem_tile";
  e.description = "shared-memory tiled C=AB, tile width 1..32, any size (seed 001 §3 table, PMPP ch. 5)";
  e.seed_ref = "001 §3, 004";
  e.axes = {memlab::bench::int_axis("tile", {1, 2, 4, 8, 16, 32}, {4, 16, 32}),
            memlab::bench::string_axis("shape", {"1024", "1000x1100x900"}, {"256", "250x260x270"})};
  e.axes[0].min_value = 1;
  e.axes[0].max_value = 32;
  e.body = [](memlab::bench::state& s) {
    int const w = static_cast<int>(s.get_int("tile"));
    std::string const sh = s.get_string("shape");
    long long m = 0, n = 0, k = 0;
    if (std::sscanf(sh.c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3) m = n = k = std::stoll(sh);
    declare_gemm(s, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
    operands o(s, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
    auto run = [&](cudaStream_t t) {
      kg::launch_seed_smem_tile(w, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), o.a.data(),
                                o.b.data(), o.c.data(), t);
    };
    run(s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    s.set_verification(compare_device(o.c.data(), o.ref.data(), static_cast<int>(m), static_cast<int>(n), n,
                                      gemm_rel_tol, gemm_abs_tol(k)));
    s.exec_paired(run, "cublas", [&](cudaStream_t t) {
      cublas_sgemm(t, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.f, o.a.data(),
                   static_cast<int>(k), o.b.data(), static_cast<int>(n), 0.f, o.ref.data(), static_cast<int>(n));
    });
    record_pct_of_peak(s, 2.0 * m * n * k);
  };
  using namespace memlab::bench;
  e.describe_axis("tile", "elements", "tile width: a block stages width x width tiles of A and B", true);
  e.describe_axis("shape", "", "n (a cube) or m x n x k");
  e.metrics = {metrics::time(), metrics::tflops(), metrics::vs_peer("cublas")};
  e.headline = best_row("Which shared tile width is fastest, and how far from cuBLAS is it?", {{"shape", {"1024"}}},
                        "median_ms", "ratio_to_peer");
  e.seed_figures = {{"tile 1", 62.395489, "ms", "Tesla P100", "001 §3", {{"tile", "1"}, {"shape", "1024"}}},
                    {"tile 2", 10.850624, "ms", "Tesla P100", "001 §3", {{"tile", "2"}, {"shape", "1024"}}},
                    {"tile 4", 2.765997, "ms", "Tesla P100", "001 §3", {{"tile", "4"}, {"shape", "1024"}}},
                    {"tile 8", 2.107232, "ms", "Tesla P100", "001 §3", {{"tile", "8"}, {"shape", "1024"}}},
                    {"tile 16", 1.849939, "ms", "Tesla P100", "001 §3", {{"tile", "16"}, {"shape", "1024"}}},
                    {"tile 32", 1.928793, "ms", "Tesla P100", "001 §3", {{"tile", "32"}, {"shape", "1024"}}}};
  e.prose = {"Shared-memory tiling (seed 001 §3, seed 004): a block stages a tile of A and a tile of B in shared memory "
             "and every thread reuses them tile-width times, so global traffic falls by the tile width. Width 1 is all "
             "overhead; the gain grows with the tile until the block size limit (32×32 threads).",
             "The fall from width 1 to 16, then the flat end, beside the P100's.",
             "Seed 001 (Tesla P100), tile width 1, 2, 4, 8, 16, 32: **62.4, 10.85, 2.77, 2.11, 1.85, 1.93 ms**."};
  {
    plot_spec p = bar_plot("seed_smem_tile.png", "Seed 001's shared-tile sweep: this GPU beside the P100", "tile", "median_ms");
    p.where = {{"shape", {"1024"}}};
    p.refs = {{"seed", "P100 (seed)", 0}};
    p.log_y = true;
    e.plots.push_back(p);
  }
  return e;
}()};
}  // namespace
