// gemm.shapes: memlab::gemm's dispatcher over a public set of user-like shapes (squares,
// skinny and GEMV-like, deep K, LLM projections and decode, strided batches) against
// cuBLAS SGEMM (CUBLAS_PEDANTIC_MATH: FP32, never TF32) in the same run. Each row is one
// shape: the dispatcher's plan timed as the row, its closest alternatives by the model
// timed beside it (extra.candidates), and the pick's speed relative to the best of them
// (extra.pick_vs_best: 1 when the dispatcher chose the fastest candidate).
#include <cublas_v2.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/experiment.hpp"
#include "bench/state.hpp"
#include "experiments/gemm_support.cuh"
#include "memlab/buffer.hpp"
#include "memlab/gemm.hpp"

namespace {
using namespace memlab;
using namespace memlab::experiments::gemm;

struct shape_entry {
  char const* text;  ///< "m x n x k" or "m x n x k b batch", as the axis value
  char const* cls;   ///< shape class (the plots' panels)
};

// The public shape set (docs/gemm-notes.md, "The shape set").
constexpr shape_entry kShapes[] = {
    // squares, powers of two and not
    {"128x128x128", "square"}, {"256x256x256", "square"}, {"512x512x512", "square"},
    {"1000x1000x1000", "square"}, {"1024x1024x1024", "square"}, {"2048x2048x2048", "square"},
    {"3000x3000x3000", "square"}, {"4096x4096x4096", "square"}, {"4097x4097x4097", "square"},
    {"6144x6144x6144", "square"}, {"8192x8192x8192", "square"}, {"16384x16384x16384", "square"},
    // m or n in {1, 8, 16, 64, 256} against large other dimensions
    {"1x4096x4096", "skinny"}, {"8x4096x4096", "skinny"}, {"16x4096x4096", "skinny"},
    {"64x4096x4096", "skinny"}, {"256x4096x4096", "skinny"}, {"4096x1x4096", "skinny"},
    {"4096x8x4096", "skinny"}, {"4096x16x4096", "skinny"}, {"4096x64x4096", "skinny"},
    {"4096x256x4096", "skinny"}, {"8192x1x8192", "skinny"}, {"1x8192x8192", "skinny"},
    // deep K with small m, n (k from 16 to 131072)
    {"256x256x16", "deep_k"}, {"256x256x4096", "deep_k"}, {"256x256x65536", "deep_k"},
    {"128x128x131072", "deep_k"}, {"64x64x65536", "deep_k"}, {"16x16x131072", "deep_k"},
    {"1024x1024x16", "deep_k"}, {"512x512x32768", "deep_k"},
    // LLM projections (LLaMA-7B MLP) and their decode forms, m = 1..64
    {"4096x11008x4096", "llm"}, {"4096x4096x11008", "llm"}, {"1x11008x4096", "llm"},
    {"8x11008x4096", "llm"}, {"16x11008x4096", "llm"}, {"32x11008x4096", "llm"},
    {"64x11008x4096", "llm"}, {"1x4096x11008", "llm"}, {"16x4096x11008", "llm"}, {"64x4096x11008", "llm"},
    // mid-size shapes with a partial last wave
    {"3000x5000x2000", "partial_wave"}, {"1536x1536x1536", "partial_wave"}, {"2048x1024x4096", "partial_wave"},
    {"1000x3000x500", "partial_wave"},
    // strided batches
    {"128x128x128b512", "batched"}, {"256x256x256b64", "batched"}, {"64x64x64b1024", "batched"},
    {"1x4096x4096b8", "batched"},
};

struct parsed {
  long long m = 0, n = 0, k = 0, batch = 1;
};
parsed parse(std::string const& t) {
  parsed p;
  int const got = std::sscanf(t.c_str(), "%lldx%lldx%lldb%lld", &p.m, &p.n, &p.k, &p.batch);
  if (got < 3 || p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0)
    throw memlab::error("gemm.shapes: bad shape '" + t + "' (m x n x k, optionally b<batch>)");
  return p;
}
std::string class_of(std::string const& t) {
  for (auto const& e : kShapes)
    if (t == e.text) return e.cls;
  return "other";
}

/// Row-major strided batched C = A B through column-major cuBLAS (C^T = B^T A^T).
void cublas_batched(cudaStream_t st, parsed const& s, float const* a, float const* b, float* c) {
  int const m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  if (s.batch == 1) return cublas_sgemm(st, m, n, k, 1.f, a, k, b, n, 0.f, c, n);
  float const one = 1.f, zero = 0.f;
  MEMLAB_CUBLAS_CHECK(cublasSetStream(cublas(), st));
  MEMLAB_CUBLAS_CHECK(cublasSgemmStridedBatched(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n,
                                                static_cast<long long>(k) * n, a, k, static_cast<long long>(m) * k,
                                                &zero, c, n, static_cast<long long>(m) * n, static_cast<int>(s.batch)));
}

/// Words of `a` and `b` whose bits differ (the determinism check: the pick run twice).
__global__ void count_differences(unsigned const* a, unsigned const* b, long long n, unsigned long long* out) {
  unsigned long long local = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    local += a[i] != b[i] ? 1u : 0u;
  if (local) atomicAdd(out, local);  // integer: exact in any order
}

/// Above this many FLOP per launch only the pick and cuBLAS are timed (16384^3: ~0.2 s each).
constexpr double kPickOnlyFlop = 2.5e12;
constexpr std::size_t kAlternatives = 3;

memlab::bench::registrar const reg{[] {
  memlab::bench::experiment e;
  e.id = "gemm.shapes";
  e.description = "memlab::gemm's dispatcher over 50 user-like FP32 shapes vs cuBLAS SGEMM, with its alternatives";
  e.seed_ref = "issue #15";
  std::vector<std::string> shapes, quick;
  for (auto const& s : kShapes) shapes.emplace_back(s.text);
  quick = {"256x256x256", "4096x16x4096", "256x256x65536", "64x11008x4096", "128x128x128b512"};
  e.axes = {memlab::bench::variant_axis({"dispatch"}), memlab::bench::string_axis("shape", shapes, quick)};
  e.body = [](memlab::bench::state& s) {
    std::string const text = s.get_string("shape");
    parsed const sh = parse(text);
    set_mnk(s, sh.m, sh.n, sh.k);
    s.result().params["batch"] = sh.batch;
    s.set_extra("class", class_of(text));
    long long const m = sh.m, n = sh.n, k = sh.k, nb = sh.batch;
    device_buffer<float> a(static_cast<std::size_t>(m * k * nb)), b(static_cast<std::size_t>(k * n * nb));
    device_buffer<float> c(static_cast<std::size_t>(m * n * nb)), ref(static_cast<std::size_t>(m * n * nb));
    fill_uniform(a, s.seed());
    fill_uniform(b, s.seed() ^ 0x5bd1e995u);
    ref.fill_bytes(0xFF, s.stream());
    cudaStream_t const st = s.stream();
    cublas_batched(st, sh, a.data(), b.data(), ref.data());

    memlab::gemm_params p;
    p.m = m, p.n = n, p.k = k, p.batch = nb;
    p.a = a.data(), p.lda = k, p.stride_a = m * k;
    p.b = b.data(), p.ldb = n, p.stride_b = k * n;
    p.c = c.data(), p.ldc = n, p.stride_c = m * n;
    memlab::gemm_shape const shape = memlab::gemm_shape_of(p);
    std::vector<memlab::gemm_plan> cands = memlab::gemm_candidates(shape, memlab::gemm_current_target());
    double const flops = 2.0 * m * n * k * nb;
    // MEMLAB_GEMM_AUTOTUNE_WRITE=1: every candidate is timed and the fastest is written to the
    // autotune cache (memlab::gemm_autotune_path()), which gemm_ex reads when asked to.
    char const* const tune_env = std::getenv("MEMLAB_GEMM_AUTOTUNE_WRITE");
    bool const autotune_write = tune_env != nullptr && std::string(tune_env) == "1";
    std::size_t const timed = flops > kPickOnlyFlop ? 1
                              : autotune_write      ? cands.size()
                                                    : std::min(cands.size(), 1 + kAlternatives);
    cands.resize(timed);
    // When the pick splits K, its tile unsplit is one of the alternatives: the row then says
    // whether the split paid for its reduction.
    if (timed > 1 && cands.front().splits > 1) {
      memlab::gemm_plan whole = cands.front();
      whole.splits = 1;
      bool const listed = std::any_of(cands.begin(), cands.end(), [&](auto const& c2) { return c2.name() == whole.name(); });
      if (!listed) {
        whole.predicted_us = 0.0;  // not among the model's list (recorded as null)
        cands.back() = whole;
      }
    }
    std::size_t ws_bytes = 0;
    for (auto const& c2 : cands) ws_bytes = std::max(ws_bytes, memlab::gemm_workspace_bytes(shape, c2));
    device_buffer<char> ws(std::max<std::size_t>(ws_bytes, 256));
    p.workspace = ws.data();
    p.workspace_bytes = ws.size();

    auto run = [&](std::string const& plan, cudaStream_t t) {
      memlab::gemm_params q = p;
      q.plan = plan;
      q.stream = t;
      memlab::gemm_ex(q);
    };
    auto verify = [&](std::string const& plan) {
      c.fill_bytes(0xFF, st);  // NaN poison: an unwritten output fails verification
      run(plan, st);
      MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
      return compare_device(c.data(), ref.data(), static_cast<int>(m * nb), static_cast<int>(n), n, gemm_rel_tol,
                            gemm_abs_tol(k));
    };

    memlab::gemm_plan const pick = cands.front();
    s.set_extra("plan", pick.name());
    s.set_extra("predicted_us", pick.predicted_us);
    // The alternatives first (each verified and timed once), then the pick as the row.
    nlohmann::json alts = nlohmann::json::array();
    double best_alt_ms = 0.0;
    std::string best_alt;
    for (std::size_t i = 1; i < cands.size(); ++i) {
      std::string const name = cands[i].name();
      auto const v = verify(name);
      nlohmann::json j{{"plan", name},
                       {"predicted_us", cands[i].predicted_us > 0.0 ? nlohmann::json(cands[i].predicted_us) : nlohmann::json()},
                       {"verified", v.status == memlab::bench::verdict::passed}};
      if (v.status == memlab::bench::verdict::passed) {
        auto const t = s.measure([&](cudaStream_t t2) { run(name, t2); });
        j["median_ms"] = t.median;
        if (best_alt.empty() || t.median < best_alt_ms) best_alt_ms = t.median, best_alt = name;
      } else {
        j["detail"] = v.detail;
      }
      alts.push_back(j);
    }
    auto const pick_verdict = verify(pick.name());
    s.set_verification(pick_verdict);
    s.set_extra("candidates", alts);
    {  // Deterministic: the pick again, from a poisoned C, must give the same bits.
      std::size_t const words = c.size();
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(ref.data(), c.data(), words * sizeof(float), cudaMemcpyDeviceToDevice, st));
      c.fill_bytes(0xFF, st);
      run(pick.name(), st);
      device_buffer<unsigned long long> diff(1);
      diff.fill_bytes(0, st);
      count_differences<<<1024, 256, 0, st>>>(reinterpret_cast<unsigned const*>(c.data()),
                                             reinterpret_cast<unsigned const*>(ref.data()),
                                             static_cast<long long>(words), diff.data());
      MEMLAB_CHECK_LAUNCH();
      MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
      unsigned long long h = 0;
      MEMLAB_CUDA_CHECK(cudaMemcpy(&h, diff.data(), sizeof h, cudaMemcpyDeviceToHost));
      s.set_extra("deterministic", h == 0);
      if (h != 0) s.set_extra("words_differing_between_two_runs", h);
    }

    s.add_flops(flops);
    s.add_reads<float>(static_cast<std::size_t>((m * k + k * n) * nb));
    s.add_writes<float>(static_cast<std::size_t>(m * n * nb));
    s.exec_paired([&](cudaStream_t t) { run(pick.name(), t); }, "cublas",
                  [&](cudaStream_t t) { cublas_batched(t, sh, a.data(), b.data(), ref.data()); });
    record_pct_of_peak(s, flops);
    auto const& ms = s.result().median_ms;
    if (ms && *ms > 0.0) {
      bool const alt_wins = !best_alt.empty() && best_alt_ms < *ms;
      s.set_extra("best_plan", alt_wins ? best_alt : pick.name());
      s.set_extra("pick_vs_best", alt_wins ? best_alt_ms / *ms : 1.0);
      s.set_extra("predicted_vs_measured", pick.predicted_us * 1e-3 / *ms);
      // Only a verified plan is cached: a failing pick with no faster verified alternative
      // writes nothing.
      if (autotune_write && (alt_wins || pick_verdict.status == memlab::bench::verdict::passed)) {
        int dev = 0;
        cudaDeviceProp prop{};
        MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
        MEMLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
        std::string const path = memlab::gemm_autotune_path();
        std::string warning;
        auto cache = memlab::gemm_autotune_cache::load(path, &warning);  // a corrupt file is replaced
        if (!warning.empty()) std::fprintf(stderr, "%s\n", warning.c_str());
        cache.plans[memlab::gemm_autotune_key(prop.name, shape)] = {alt_wins ? best_alt : pick.name(),
                                                                   (alt_wins ? best_alt_ms : *ms) * 1e3};
        cache.save(path);
        s.set_extra("autotune_cache", path);
      }
    }
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "", "dispatch: the plan memlab::gemm picks by itself (gemm_select)");
  e.describe_axis("shape", "", "m x n x k, optionally b<batch> (strided batched, dense)");
  // The run measures `ceilings` first: the FFMA peak behind extra.pct_of_fp32_peak, and the
  // D2D copy rate that the memory-bound (GEMV-like) rows are read against (ratio_to_ceiling).
  e.ceiling = ceiling_relation::ratio;
  e.metrics = {metrics::time(),
               metrics::tflops(),
               metrics::vs_peer("cuBLAS SGEMM"),
               metrics::gbps(),
               metrics::vs_ceiling(),
               {"extra.pct_of_fp32_peak", "%", "TFLOP/s / the run's measured FFMA peak"},
               {"extra.pick_vs_best", "x", "fastest timed candidate's time / the pick's (1: the dispatcher chose best)"}};
  headline_spec h = best_row("Which shape is memlab::gemm furthest behind cuBLAS SGEMM, and by how much?", {},
                             "ratio_to_peer", "ratio_to_peer");
  h.higher_is_better = false;
  e.headline = h;
  e.prose = {"memlab::gemm with no variant named runs a dispatcher: a cost model over its tiles (128x256 down to "
             "32x64), a split of K with a fixed-order reduction, and two GEMV-like kernels for m or n <= 16. Each row "
             "is one shape of a public set of user-like problems, timed against cuBLAS SGEMM (pedantic FP32) in the "
             "same run, with the model's next-best plans timed beside it.",
             "ratio_to_peer per shape class (the plots): where it falls below 0.85, and extra.pick_vs_best below 1, "
             "which says the model chose a slower plan than one it ranked behind it. extra.deterministic: the pick "
             "run twice gave the same bits.",
             ""};
  std::vector<std::pair<std::string, std::string>> const classes = {
      {"square", "squares"}, {"skinny", "m or n small against large"}, {"deep_k", "deep K, small m and n"},
      {"llm", "LLM projections and decode"}, {"partial_wave", "partial last wave"}, {"batched", "strided batches"}};
  for (auto const& [cls, title] : classes) {
    std::vector<std::string> members;
    for (auto const& sh : kShapes)
      if (cls == sh.cls) members.emplace_back(sh.text);
    plot_spec p = bar_plot("gemm_shapes_" + cls + ".png", "memlab::gemm vs cuBLAS SGEMM: " + title, "shape",
                           "ratio_to_peer");
    p.where = {{"shape", members}};
    p.refs = {{"value", "cuBLAS", 1.0}, {"value", "target floor 0.85", 0.85}};
    e.plots.push_back(p);
  }
  return e;
}()};
}  // namespace
