// Session 34 trial tool (not landed): energy per GEMM of memlab's rung (automatic) and cublasLt's
// fastest of 8 at one shape, BF16 or FP16 in and out, at the power cap. Each contender runs back to
// back for `secs` seconds, NVML's energy counter read before and after; contenders alternate `reps`
// times. Prints ms a launch (events), J a launch, average W, and the SM clock read at the end.
// Mode "once": one launch of each (for ncu).
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <cuda_fp16.h>
#include <dlfcn.h>
#include <nvml.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "experiments/cublaslt.cuh"
#include "memlab/gemm_tc.hpp"

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
int run(int m, int n, int k, double secs, int reps, bool once) {
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
  auto ours = [&] {
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      memlab::gemm_bf16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, b, k, 0.f, c, n, st);
    else
      memlab::gemm_f16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, b, k, 0.f, c, n, st);
  };
  auto peer = [&] { lt.run(algo, a, b, c, st); };
  if (once) {
    cudaStreamSynchronize(st);
    cudaProfilerStart();
    ours(); peer(); cudaStreamSynchronize(st);
    cudaProfilerStop();
    std::printf("once done (lt candidate %zu)\n", best);
    return 0;
  }
  nvm g;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
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
    std::printf("%-8s launches %6ld  ms/launch %.4f  J/launch %.4f  W %.1f  sm %u MHz  (wall %.2f s)\n", name, launches,
                t / launches, mj * 1e-3 / launches, mj / wall, clk, wall);
    std::fflush(stdout);
  };
  for (int r = 0; r < reps; ++r) {
    measure("memlab", ours);
    measure("cublasLt", peer);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 6) { std::fprintf(stderr, "energy m n k bf16|f16 secs [reps] [once]\n"); return 2; }
  int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  std::string dt = argv[4];
  double secs = std::atof(argv[5]);
  int reps = argc > 6 ? std::atoi(argv[6]) : 3;
  bool once = argc > 7 && std::string(argv[7]) == "once";
  try {
    return dt == "bf16" ? run<__nv_bfloat16>(m, n, k, secs, reps, once) : run<__half>(m, n, k, secs, reps, once);
  } catch (std::exception const& e) {
    std::fprintf(stderr, "energy: %s\n", e.what());
    return 1;
  }
}
