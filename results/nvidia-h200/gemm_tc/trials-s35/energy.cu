// Session 34-35 trial tool (not landed): energy per GEMM at one shape, BF16 or FP16 in and out, at
// the power cap, of contenders named on the command line: `lt` (cublasLt's fastest of 8), `auto`
// (memlab's rule), `r2` / `r5` / `r6` (a rung forced), `f:<family>` (rung 6 with its kernel family
// forced: pingpong192, coop128x256, cooperative256, ...). Each contender runs back to back for `secs`
// seconds, NVML's energy counter read before and after; contenders alternate `reps` times. Prints ms
// a launch (events), J a launch, average W, and the SM clock read at the end.
// Mode "once": one launch of each (for ncu).
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <cuda_fp16.h>
#include <dlfcn.h>
#include <nvml.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <stdexcept>
#include <thread>
#include <vector>

#include "experiments/cublaslt.cuh"
#include "memlab/gemm_tc.hpp"
#include "kernels/gemm/tc/cluster_plan.hpp"

template <class T>
__global__ void fill(T* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
    p[i] = T(static_cast<float>(x & 0xFFFF) / 32768.f - 1.f);
  }
}

struct nvm {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  nvmlDevice_t dev{};
  decltype(&nvmlDeviceGetTotalEnergyConsumption) energy = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  nvm() {
    if (!lib) { std::fprintf(stderr, "no NVML\n"); std::exit(2); }
    auto init = reinterpret_cast<decltype(&nvmlInit_v2)>(dlsym(lib, "nvmlInit_v2"));
    auto get = reinterpret_cast<decltype(&nvmlDeviceGetHandleByIndex_v2)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    energy = reinterpret_cast<decltype(energy)>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    clock = reinterpret_cast<decltype(clock)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    init();
    get(0, &dev);
  }
  unsigned long long mj() { unsigned long long v = 0; energy(dev, &v); return v; }
  unsigned sm() { unsigned v = 0; clock(dev, NVML_CLOCK_SM, &v); return v; }
};

template <class T>
int run(int m, int n, int k, double secs, int reps, bool once, std::vector<std::string> const& names) {
  cudaDataType_t const dt = std::is_same_v<T, __nv_bfloat16> ? CUDA_R_16BF : CUDA_R_16F;
  T *a, *b, *c;
  cudaMalloc(&a, sizeof(T) * m * k); cudaMalloc(&b, sizeof(T) * n * k); cudaMalloc(&c, sizeof(T) * m * n);
  fill<<<2048, 256>>>(a, 1ll * m * k, 1u); fill<<<2048, 256>>>(b, 1ll * n * k, 2u);
  cudaStream_t st; cudaStreamCreate(&st);
  memlab::experiments::lt_gemm lt(dt, dt, m, n, k, k);
  auto cands = lt.candidates(8);
  std::vector<double> ms;
  std::size_t best = lt.fastest(cands, a, std::vector<void const*>{b}, c, st, ms);
  auto algo = cands[best].algo;
  namespace tc = memlab::detail::gemm_tc;
  auto ours = [&](memlab::gemm_tc_rung rung) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      memlab::gemm_bf16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, b, k, 0.f, c, n, st, rung);
    else
      memlab::gemm_f16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, b, k, 0.f, c, n, st, rung);
  };
  auto peer = [&] { lt.run(algo, a, b, c, st); };
  // One launch of contender `name`, its rung or family forced around the call.
  auto launch = [&](std::string const& name) {
    if (name == "lt") return peer();
    if (name == "auto") return ours(memlab::gemm_tc_rung::automatic);
    if (name == "r2") return ours(memlab::gemm_tc_rung::mma_sync);
    if (name == "r5") return ours(memlab::gemm_tc_rung::persistent);
    if (name == "r6") return ours(memlab::gemm_tc_rung::cluster);
    if (name.rfind("f:", 0) == 0) {
      tc::cluster_family_scope const f(tc::cluster_family_from_name(name.substr(2)));
      return ours(memlab::gemm_tc_rung::cluster);
    }
    throw std::runtime_error("no contender named " + name);
  };
  if (once) {
    cudaStreamSynchronize(st);
    cudaProfilerStart();
    for (auto const& nm : names) launch(nm);
    cudaStreamSynchronize(st);
    cudaProfilerStop();
    std::printf("once done (lt candidate %zu)\n", best);
    return 0;
  }
  nvm g;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  // Env ENERGY_MODE=trace: rounds of blocks, each contender in turn (the order flipping every round)
  // launching back to back for ENERGY_BLOCK_MS, each launch after a 2 x L2 memset (cold, as the
  // harness times) and between its own pair of events; prints every launch's offset in its block
  // and its time. ENERGY_MODE=alt: the harness's pairing, one launch of each a round.
  if (char const* mode = std::getenv("ENERGY_MODE")) {
    std::string const md = mode;
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    std::size_t const flush_bytes = 2ull * static_cast<std::size_t>(l2);
    void* flush = nullptr;
    cudaMalloc(&flush, flush_bytes);
    bool const do_flush = !std::getenv("ENERGY_NOFLUSH");
    constexpr int cap = 4096;
    std::vector<cudaEvent_t> ev(2 * cap + 1);
    for (auto& x : ev) cudaEventCreate(&x);
    int const rounds = std::getenv("ENERGY_ROUNDS") ? std::atoi(std::getenv("ENERGY_ROUNDS")) : 4;
    double const block_ms = md == "alt" ? 0.0 : std::atof(std::getenv("ENERGY_BLOCK_MS") ? std::getenv("ENERGY_BLOCK_MS") : "300");
    int const per_alt = std::getenv("ENERGY_PAIRS") ? std::atoi(std::getenv("ENERGY_PAIRS")) : 200;
    for (int i = 0; i < 8; ++i) for (auto const& nm : names) launch(nm);  // warm-up
    cudaStreamSynchronize(st);
    auto one = [&](std::string const& nm, int slot) {
      if (do_flush) cudaMemsetAsync(flush, slot & 0xff, flush_bytes, st);
      cudaEventRecord(ev[2 * slot + 1], st);
      launch(nm);
      cudaEventRecord(ev[2 * slot + 2], st);
    };
    if (md == "alt") {
      // per_alt rounds of one launch each, order flipping; print each side's median.
      std::vector<std::vector<float>> t(names.size());
      for (int r = 0; r < per_alt; ++r) {
        std::size_t const nn = names.size();
        for (std::size_t q = 0; q < nn; ++q) {
          std::size_t const i = (r % 2) ? nn - 1 - q : q;
          one(names[i], static_cast<int>(i));
        }
        cudaStreamSynchronize(st);
        for (std::size_t i = 0; i < nn; ++i) {
          float x = 0; cudaEventElapsedTime(&x, ev[2 * i + 1], ev[2 * i + 2]);
          t[i].push_back(x);
        }
      }
      for (std::size_t i = 0; i < names.size(); ++i) {
        auto v = t[i];
        std::sort(v.begin(), v.end());
        std::printf("alt %-16s median %.4f ms  p10 %.4f  p90 %.4f  (n %zu)\n", names[i].c_str(), v[v.size() / 2], v[v.size() / 10],
                    v[v.size() * 9 / 10], v.size());
      }
      return 0;
    }
    for (int r = 0; r < rounds; ++r) {
      std::size_t const nn = names.size();
      for (std::size_t q = 0; q < nn; ++q) {
        std::size_t const i = (r % 2) ? nn - 1 - q : q;
        auto const& nm = names[i];
        cudaEventRecord(ev[0], st);
        auto const w0 = std::chrono::steady_clock::now();
        int cnt = 0;
        while (cnt < cap && std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count() < block_ms) {
          for (int j = 0; j < 4 && cnt < cap; ++j) one(nm, cnt++);
          cudaEventSynchronize(ev[2 * std::max(cnt - 4, 0) + 2]);  // keep about 4-7 launches queued
        }
        cudaStreamSynchronize(st);
        unsigned const clk = g.sm();
        for (int j = 0; j < cnt; ++j) {
          float off = 0, x = 0;
          cudaEventElapsedTime(&off, ev[0], ev[2 * j + 1]);
          cudaEventElapsedTime(&x, ev[2 * j + 1], ev[2 * j + 2]);
          std::printf("T %d %s %d %.3f %.4f\n", r, nm.c_str(), j, off, x);
        }
        std::printf("B %d %s launches %d sm_at_end %u\n", r, nm.c_str(), cnt, clk);
      }
    }
    return 0;
  }
  auto measure = [&](char const* name, auto const& f) {
    // warm to the cap
    auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 0.5) {
      for (int i = 0; i < 8; ++i) f();
      cudaStreamSynchronize(st);
    }
    unsigned long long j0 = g.mj();
    auto w0 = std::chrono::steady_clock::now();
    cudaEventRecord(e0, st);
    long launches = 0;
    unsigned clk = 0;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() < secs) {
      for (int i = 0; i < 8; ++i) f();
      launches += 8;
      cudaStreamSynchronize(st);
      clk = g.sm();
    }
    cudaEventRecord(e1, st);
    cudaEventSynchronize(e1);
    unsigned long long j1 = g.mj();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    float t = 0; cudaEventElapsedTime(&t, e0, e1);
    double const mj = static_cast<double>(j1 - j0);
    std::printf("%-16s launches %6ld  ms/launch %.4f  J/launch %.4f  W %.1f  sm %u MHz  (wall %.2f s)\n", name, launches,
                t / launches, mj * 1e-3 / launches, mj / wall, clk, wall);
    std::fflush(stdout);
  };
  for (int r = 0; r < reps; ++r)
    for (auto const& nm : names) measure(nm.c_str(), [&] { launch(nm); });
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 7) { std::fprintf(stderr, "energy m n k bf16|f16 secs reps|once contender...\n"); return 2; }
  int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  std::string dt = argv[4];
  double secs = std::atof(argv[5]);
  bool once = std::string(argv[6]) == "once";
  int reps = once ? 1 : std::atoi(argv[6]);
  std::vector<std::string> names(argv + 7, argv + argc);
  if (names.empty()) names = {"auto", "lt"};
  try {
    return dt == "bf16" ? run<__nv_bfloat16>(m, n, k, secs, reps, once, names) : run<__half>(m, n, k, secs, reps, once, names);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "energy: %s\n", e.what());
    return 1;
  }
}
