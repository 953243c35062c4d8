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

// Seed 001's P100 table (ms, n = 1024): thread tile 1..64 and shared tile 1..32.
double seed_thread_ms(int t) {
  switch (t) {
    case 1: return 3.282611; case 2: return 2.271091; case 4: return 2.107053; case 8: return 2.077536;
    case 16: return 7.368474; case 32: return 25.815271; case 64: return 83.601498;
    default: return -1.0;
  }
}
double seed_smem_ms(int w) {
  switch (w) {
    case 1: return 62.395489; case 2: return 10.850624; case 4: return 2.765997; case 8: return 2.107232;
    case 16: return 1.849939; case 32: return 1.928793;
    default: return -1.0;
  }
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
    if (n == 1024) s.set_extra("seed_p100_ms", seed_thread_ms(tile));
    s.exec_peer("cublas", [&](cudaStream_t t) {
      cublas_sgemm(t, n, n, n, 1.f, o.a.data(), n, o.b.data(), n, 0.f, o.ref.data(), n);
    });
    s.exec([&](cudaStream_t t) { kg::launch_seed_thread_tile(tile, n, o.a.data(), o.b.data(), o.c.data(), t); });
    record_pct_of_peak(s, 2.0 * n * n * n);
  };
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
    if (m == 1024 && n == 1024 && k == 1024) s.set_extra("seed_p100_ms", seed_smem_ms(w));
    s.exec_peer("cublas", [&](cudaStream_t t) {
      cublas_sgemm(t, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.f, o.a.data(),
                   static_cast<int>(k), o.b.data(), static_cast<int>(n), 0.f, o.ref.data(), static_cast<int>(n));
    });
    s.exec(run);
    record_pct_of_peak(s, 2.0 * m * n * k);
  };
  return e;
}()};
}  // namespace
