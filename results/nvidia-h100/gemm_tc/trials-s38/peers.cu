// Session 38 trial tool (not landed): the issue's bar, a public hand-written kernel's "1.07x cuBLAS at
// 4096³", measured two ways on the lent card, square BF16 GEMMs (A m x k, B n x k, both k-contiguous):
//   memlab  memlab::gemm_bf16 (rung 6 by its rule)
//   lt      cublasLt, the fastest of its heuristic's 8 candidates
//   ex      cublasGemmEx, CUBLAS_GEMM_DEFAULT (what the public kernel's author compared with)
//   fast12  fast.cu's kernel 12 (github.com/pranjalssh/fast.cu, 38eb642, MIT; read from .deps/fastcu at
//           build time, not part of memlab). Its C is stored n x m (C transposed).
// Methods, both on the legacy default stream (fast12 launches there):
//   author  the public benchmark's: 5 s idle, one launch, then 8 launches timed by one event pair;
//           contenders in turn, `rounds` times.
//   cap     each contender back to back for 0.5 s (not kept) and 2 s (kept), every launch timed by its
//           own events (median, p10, p90), NVML's energy counter around the kept 2 s, the SM clock
//           read at its end; contenders in turn, order flipped each rep, `reps` times.
//   once    (rounds given as "once") each contender launched once inside cudaProfilerStart/Stop, for ncu.
// Every contender's C is checked against cublasLt's, element by element.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda/barrier>
#include <cuda_bf16.h>
#include <cuda_profiler_api.h>
#include <dlfcn.h>
#include <nvml.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "experiments/cublaslt.cuh"
#include "memlab/gemm_tc.hpp"

// What fast.cu's kernel file expects from its driver program.
typedef __nv_bfloat16 bf16;
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))
static void cuda_check_(cudaError_t e, char const* f, int l) {
  if (e != cudaSuccess) { std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e), f, l); std::exit(1); }
}
#define cudaCheck(err) cuda_check_(err, __FILE__, __LINE__)
#include "matmul_12.cuh"

__global__ void fill(bf16* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
    p[i] = bf16(static_cast<float>(x & 0xFFFF) / 32768.f - 1.f);
  }
}

// Counts elements of c (row-major m x n, or n x m where `transposed`) outside ref's tolerance:
// |d| <= |ref| / 128 + sqrt(k) / 768 (two BF16 roundings of a sum of k products of U(-1,1) values);
// NaN counts as outside.
__global__ void check(bf16 const* c, bf16 const* ref, int m, int n, int k, bool transposed, unsigned long long* bad,
                      float* worst) {
  float const floor_tol = sqrtf(static_cast<float>(k)) / 768.f;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < 1ll * m * n; i += 256ll * gridDim.x) {
    long long const r = i / n, col = i % n;
    float const x = __bfloat162float(transposed ? c[col * m + r] : c[i]);
    float const y = __bfloat162float(ref[i]);
    float const d = fabsf(x - y);
    if (!(d <= fabsf(y) / 128.f + floor_tol)) atomicAdd(bad, 1ull);
    if (d == d) atomicMax(reinterpret_cast<int*>(worst), __float_as_int(d));
  }
}

struct nvm {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  nvmlDevice_t dev{};
  decltype(&nvmlDeviceGetTotalEnergyConsumption) energy = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetTemperature) temp = nullptr;
  nvm() {
    if (!lib) { std::fprintf(stderr, "no NVML\n"); std::exit(2); }
    auto init = reinterpret_cast<decltype(&nvmlInit_v2)>(dlsym(lib, "nvmlInit_v2"));
    auto get = reinterpret_cast<decltype(&nvmlDeviceGetHandleByIndex_v2)>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
    energy = reinterpret_cast<decltype(energy)>(dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"));
    clock = reinterpret_cast<decltype(clock)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    temp = reinterpret_cast<decltype(temp)>(dlsym(lib, "nvmlDeviceGetTemperature"));
    init();
    get(0, &dev);
  }
  unsigned long long mj() { unsigned long long v = 0; energy(dev, &v); return v; }
  unsigned sm() { unsigned v = 0; clock(dev, NVML_CLOCK_SM, &v); return v; }
  unsigned deg() { unsigned v = 0; temp(dev, NVML_TEMPERATURE_GPU, &v); return v; }
};

struct contender {
  char const* name;
  std::function<void()> launch;
  bf16* c;
  bool transposed;
};

static double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
}

int run(int s, int rounds, int reps, double secs, nvm& g) {
  int const m = s, n = s, k = s;
  double const flop = 2.0 * m * n * k;
  bf16 *a, *b, *c_ours, *c_lt, *c_ex, *c_fast;
  cudaCheck(cudaMalloc(&a, sizeof(bf16) * m * k));
  cudaCheck(cudaMalloc(&b, sizeof(bf16) * n * k));
  for (bf16** p : {&c_ours, &c_lt, &c_ex, &c_fast}) cudaCheck(cudaMalloc(p, sizeof(bf16) * m * n));
  fill<<<2048, 256>>>(a, 1ll * m * k, 1u);
  fill<<<2048, 256>>>(b, 1ll * n * k, 2u);
  cudaStream_t const st = 0;
  memlab::experiments::lt_gemm lt(CUDA_R_16BF, CUDA_R_16BF, m, n, k, k);
  auto cands = lt.candidates(8);
  std::vector<double> ms;
  std::size_t best = lt.fastest(cands, a, std::vector<void const*>{b}, c_lt, st, ms);
  auto algo = cands[best].algo;
  cublasHandle_t h;
  cublasCreate(&h);
  cublasSetStream(h, st);
  float const one = 1.f, zero = 0.f;
  std::vector<contender> cs = {
      {"memlab", [&] { memlab::gemm_bf16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, b, k, 0.f, c_ours, n, st); },
       c_ours, false},
      {"lt", [&] { lt.run(algo, a, b, c_lt, st); }, c_lt, false},
      {"ex", [&] {
         // row-major C (m x n) = A B^T is column-major C^T (n x m) = B^T(op T of col-major k x n) A.
         if (cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_16BF, k, a, CUDA_R_16BF, k, &zero, c_ex,
                          CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS) {
           std::fprintf(stderr, "cublasGemmEx failed\n"); std::exit(1);
         }
       }, c_ex, false},
      {"fast12", [&] { M12::runKernel12(m, n, k, a, b, c_fast, nullptr); }, c_fast, true},
  };
  std::printf("== %d^3 bf16: cublasLt candidate %zu of %zu (%.4f ms in its trial)\n", s, best, cands.size(), ms[best]);
  unsigned long long* bad;
  float* worst;
  cudaCheck(cudaMalloc(&bad, 8));
  cudaCheck(cudaMalloc(&worst, 4));
  for (auto& c : cs) c.launch();
  cudaCheck(cudaDeviceSynchronize());
  for (auto& c : cs) {
    cudaCheck(cudaMemset(bad, 0, 8));
    cudaCheck(cudaMemset(worst, 0, 4));
    check<<<2048, 256>>>(c.c, c_lt, m, n, k, c.transposed, bad, worst);
    unsigned long long hb = 0;
    float hw = 0;
    cudaCheck(cudaMemcpy(&hb, bad, 8, cudaMemcpyDeviceToHost));
    cudaCheck(cudaMemcpy(&hw, worst, 4, cudaMemcpyDeviceToHost));
    std::printf("verify %-7s against lt: %llu of %lld outside tolerance, largest |d| %.4g%s\n", c.name, hb,
                1ll * m * n, hw, hb ? "  FAILED" : "");
  }
  std::fflush(stdout);
  if (rounds < 0) {
    cudaCheck(cudaProfilerStart());
    for (auto& c : cs) c.launch();
    cudaCheck(cudaDeviceSynchronize());
    cudaCheck(cudaProfilerStop());
    std::printf("once: memlab, lt, ex, fast12 launched once each\n");
    rounds = 0;
    reps = 0;
  }

  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  // The author's method.
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t i = 0; i < cs.size(); ++i) {
      auto& c = cs[(i + r) % cs.size()];
      sleep(5);
      unsigned const deg0 = g.deg();
      c.launch();
      cudaCheck(cudaDeviceSynchronize());
      cudaEventRecord(e0, st);
      for (int j = 0; j < 8; ++j) c.launch();
      cudaEventRecord(e1, st);
      cudaCheck(cudaEventSynchronize(e1));
      float t = 0;
      cudaEventElapsedTime(&t, e0, e1);
      std::printf("author r%d %-7s %.4f ms  %6.1f TFLOP/s  (%u C before, sm %u MHz after)\n", r, c.name, t / 8,
                  flop * 8 / (t * 1e-3) * 1e-12, deg0, g.sm());
      std::fflush(stdout);
    }
  }
  // At the cap.
  int const batch = 8;
  std::vector<cudaEvent_t> ev(batch + 1);
  for (auto& e : ev) cudaEventCreate(&e);
  for (int rep = 0; rep < reps; ++rep) {
    for (std::size_t i = 0; i < cs.size(); ++i) {
      auto& c = cs[rep % 2 ? cs.size() - 1 - i : i];
      auto t0 = std::chrono::steady_clock::now();
      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 0.5) {
        for (int j = 0; j < batch; ++j) c.launch();
        cudaCheck(cudaStreamSynchronize(st));
      }
      std::vector<double> times;
      unsigned long long const j0 = g.mj();
      auto const w0 = std::chrono::steady_clock::now();
      unsigned clk = 0;
      while (std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count() < secs) {
        for (int j = 0; j < batch; ++j) {
          cudaEventRecord(ev[j], st);
          c.launch();
        }
        cudaEventRecord(ev[batch], st);
        cudaCheck(cudaEventSynchronize(ev[batch]));
        for (int j = 0; j < batch; ++j) {
          float t = 0;
          cudaEventElapsedTime(&t, ev[j], ev[j + 1]);
          times.push_back(t);
        }
        clk = g.sm();
      }
      unsigned long long const j1 = g.mj();
      double const wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      double const med = pct(times, 0.5);
      std::printf("cap rep%d %-7s launches %5zu  median %.4f ms (p10 %.4f, p90 %.4f)  %6.1f TFLOP/s  J/launch %.4f  "
                  "W %.0f  sm %u MHz  %u C\n",
                  rep, c.name, times.size(), med, pct(times, 0.1), pct(times, 0.9), flop / (med * 1e-3) * 1e-12,
                  (j1 - j0) * 1e-3 / times.size(), (j1 - j0) * 1e-3 / wall, clk, g.deg());
      std::fflush(stdout);
    }
  }
  for (auto& e : ev) cudaEventDestroy(e);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cublasDestroy(h);
  for (bf16* p : {a, b, c_ours, c_lt, c_ex, c_fast}) cudaFree(p);
  cudaFree(bad);
  cudaFree(worst);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: peers SIZE[,SIZE...] [rounds=2|once] [reps=2] [secs=2]\n");
    return 2;
  }
  int const rounds = argc > 2 ? (std::string(argv[2]) == "once" ? -1 : std::atoi(argv[2])) : 2;
  int const reps = argc > 3 ? std::atoi(argv[3]) : 2;
  double const secs = argc > 4 ? std::atof(argv[4]) : 2.0;
  nvm g;
  try {
    std::string sizes = argv[1];
    for (std::size_t p = 0; p < sizes.size();) {
      std::size_t q = sizes.find(',', p);
      if (q == std::string::npos) q = sizes.size();
      int const s = std::atoi(sizes.substr(p, q - p).c_str());
      if (s < 512 || s % 512) { std::fprintf(stderr, "peers: size %d is not a multiple of 512\n", s); return 2; }
      run(s, rounds, reps, secs, g);
      p = q + 1;
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "peers: %s\n", e.what());
    return 1;
  }
  return 0;
}
