// Session 40 trial tool (session 39's decode39.cu). Contenders, named on the command line: the library's
// choice (`rule`), rung 5 by its rule (`r5`), rung 6 by its rule (`cluster`), rung 6 with one kernel family
// forced (any rung-6 family name, e.g. coop128x96: the trial's 128 x 96 pairs along N sharing A), rung 5's
// 128 x 96 / 128 x 112 grids changed through the trial build's MEMLAB_TRIAL_DEC (`dec:s8`: 224 KB of
// slots; `dec:rot`: each tile's k-loop starts at its own k-block; `dec:s8rot`: both), and cublasLt's
// fastest of 8. BF16 in and out, A m x k, B n x k (weights), C m x n. Every launch reads the next of
// `copies` copies of B (enough that B comes from DRAM, as the ladder's decode points do). Contenders in
// turn, `rounds` times, the order flipped every other round. Each: 20 launches not kept, then 400
// launches each between its own events; the median and p10-p90. rounds = 0: one launch each between
// cudaProfilerStart/Stop (for ncu). Every contender's C is checked against cublasLt's element by element.
#include <cublasLt.h>
#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "experiments/cublaslt.cuh"
#include "memlab/gemm_tc.hpp"
#include "kernels/gemm/tc/cluster_plan.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include <cuda_profiler_api.h>

using bf16 = __nv_bfloat16;
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { std::fprintf(stderr, "CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); std::exit(1); } } while (0)

__global__ void fill(bf16* p, long long n, unsigned seed) {
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n; i += 256ll * gridDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ seed;
    x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
    p[i] = bf16(static_cast<float>(x & 0xFFFF) / 32768.f - 1.f);
  }
}

__global__ void check(bf16 const* c, bf16 const* ref, long long n_el, int k, unsigned long long* bad) {
  float const floor_tol = sqrtf(static_cast<float>(k)) / 768.f;
  for (long long i = blockIdx.x * 256ll + threadIdx.x; i < n_el; i += 256ll * gridDim.x) {
    float const x = __bfloat162float(c[i]), y = __bfloat162float(ref[i]);
    float const d = fabsf(x - y);
    if (!(d <= fabsf(y) / 128.f + floor_tol)) atomicAdd(bad, 1ull);
  }
}

static double pct(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * (v.size() - 1) + 0.5)];
}

int main(int argc, char** argv) {
  if (argc < 2) { std::fprintf(stderr, "usage: decode40 MxNxK[,MxNxK...] [rounds=3] [copies=4] [contenders=rule,r5,cluster,coop128x96,cublasLt]; rounds 0: one launch each for ncu\n"); return 2; }
  int const rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  int const copies = argc > 3 ? std::atoi(argv[3]) : 4;
  std::string list = argv[1];
  std::string const names = argc > 4 ? argv[4] : "rule,cluster,cublasLt";
  try {
    for (std::size_t p0 = 0; p0 < list.size();) {
      std::size_t q = list.find(',', p0);
      if (q == std::string::npos) q = list.size();
      std::string const sh = list.substr(p0, q - p0);
      p0 = q + 1;
      int m = 0, n = 0, k = 0;
      if (std::sscanf(sh.c_str(), "%dx%dx%d", &m, &n, &k) != 3 || m < 1 || n < 1 || k < 1) {
        std::fprintf(stderr, "decode: bad shape '%s'\n", sh.c_str());
        return 2;
      }
      bf16 *a, *c_ours, *c_lt;
      std::vector<bf16*> bs(copies);
      CK(cudaMalloc(&a, sizeof(bf16) * m * k));
      for (auto& b : bs) CK(cudaMalloc(&b, sizeof(bf16) * n * k));
      CK(cudaMalloc(&c_ours, sizeof(bf16) * m * n));
      CK(cudaMalloc(&c_lt, sizeof(bf16) * m * n));
      fill<<<2048, 256>>>(a, 1ll * m * k, 1u);
      for (auto& b : bs) fill<<<2048, 256>>>(b, 1ll * n * k, 2u);  // the same values in every copy
      cudaStream_t st;
      CK(cudaStreamCreate(&st));
      memlab::experiments::lt_gemm lt(CUDA_R_16BF, CUDA_R_16BF, m, n, k, k);
      auto cands = lt.candidates(8);
      std::vector<double> ms;
      std::vector<void const*> bv(bs.begin(), bs.end());
      std::size_t const best = lt.fastest(cands, a, bv, c_lt, st, ms);
      auto const algo = cands[best].algo;
      int next = 0;
      auto ours = [&] {
        memlab::gemm_bf16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, bs[next], k, 0.f, c_ours, n, st);
        next = (next + 1) % copies;
      };
      auto ours5 = [&] {
        memlab::gemm_bf16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, bs[next], k, 0.f, c_ours, n, st,
                          memlab::gemm_tc_rung::persistent);
        next = (next + 1) % copies;
      };
      auto ours6 = [&] {
        memlab::gemm_bf16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, bs[next], k, 0.f, c_ours, n, st,
                          memlab::gemm_tc_rung::cluster);
        next = (next + 1) % copies;
      };
      auto peer = [&] {
        lt.run(algo, a, bs[next], c_lt, st);
        next = (next + 1) % copies;
      };
      struct contender {
        char const* name;
        char const* env;  // a rung-6 family forced, or null
        std::function<void()> f;
        char const* dec = nullptr;  // MEMLAB_TRIAL_DEC for rung 5's decode grids (s8, rot, s8rot), or null
      };
      std::vector<contender> cs;
      std::vector<std::string> keep;  // the names outlive the contenders' pointers
      for (std::size_t p1 = 0; p1 < names.size();) {
        std::size_t q1 = names.find(',', p1);
        if (q1 == std::string::npos) q1 = names.size();
        keep.push_back(names.substr(p1, q1 - p1));
        p1 = q1 + 1;
      }
      for (auto const& nm : keep) {
        if (nm == "rule") cs.push_back({nm.c_str(), nullptr, ours});
        else if (nm == "r5") cs.push_back({nm.c_str(), nullptr, ours5});
        else if (nm == "cluster") cs.push_back({nm.c_str(), nullptr, ours6});
        else if (nm == "cublasLt") cs.push_back({nm.c_str(), nullptr, peer});
        else if (nm.rfind("dec:", 0) == 0) cs.push_back({nm.c_str(), nullptr, ours, nm.c_str() + 4});
        else cs.push_back({nm.c_str(), nm.c_str(), ours6});
      }
      unsigned long long* bad;
      CK(cudaMalloc(&bad, 8));
      std::printf("== %s (cublasLt candidate %zu of %zu)\n", sh.c_str(), best, cands.size());
      for (auto& c : cs) {
          memlab::detail::gemm_tc::set_cluster_family(c.env ? memlab::detail::gemm_tc::cluster_family_from_name(c.env)
                                                            : memlab::detail::gemm_tc::cluster_family::automatic);
          if (c.dec) setenv("MEMLAB_TRIAL_DEC", c.dec, 1); else unsetenv("MEMLAB_TRIAL_DEC");
        c.f();
        peer();
        CK(cudaStreamSynchronize(st));
        CK(cudaMemset(bad, 0, 8));
        check<<<2048, 256>>>(c_ours, c_lt, 1ll * m * n, k, bad);
        unsigned long long hb = 0;
        CK(cudaMemcpy(&hb, bad, 8, cudaMemcpyDeviceToHost));
        if (std::string(c.name) != "cublasLt")
          std::printf("verify %-8s: %llu of %lld outside tolerance%s\n", c.name, hb, 1ll * m * n, hb ? "  FAILED" : "");
      }
      if (rounds == 0) {  // for ncu --profile-from-start off: one launch of each, after the checks' warm-up
        for (auto& c : cs) {
            memlab::detail::gemm_tc::set_cluster_family(c.env ? memlab::detail::gemm_tc::cluster_family_from_name(c.env)
                                                                        : memlab::detail::gemm_tc::cluster_family::automatic);
          c.f();
          CK(cudaStreamSynchronize(st));
          CK(cudaProfilerStart());
          c.f();
          CK(cudaStreamSynchronize(st));
          CK(cudaProfilerStop());
        }
      }
      std::vector<cudaEvent_t> ev(401);
      for (auto& e : ev) CK(cudaEventCreate(&e));
      for (int r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i < cs.size(); ++i) {
          auto& c = cs[r % 2 ? cs.size() - 1 - i : i];
            memlab::detail::gemm_tc::set_cluster_family(c.env ? memlab::detail::gemm_tc::cluster_family_from_name(c.env)
                                                            : memlab::detail::gemm_tc::cluster_family::automatic);
          if (c.dec) setenv("MEMLAB_TRIAL_DEC", c.dec, 1); else unsetenv("MEMLAB_TRIAL_DEC");
          for (int j = 0; j < 20; ++j) c.f();
          std::vector<double> t;
          for (int j = 0; j < 400; ++j) {
            CK(cudaEventRecord(ev[j], st));
            c.f();
          }
          CK(cudaEventRecord(ev[400], st));
          CK(cudaEventSynchronize(ev[400]));
          for (int j = 0; j < 400; ++j) {
            float x = 0;
            CK(cudaEventElapsedTime(&x, ev[j], ev[j + 1]));
            t.push_back(x * 1e3);
          }
          std::printf("r%d %-8s %s  median %.2f us (p10 %.2f, p90 %.2f)\n", r, c.name, sh.c_str(), pct(t, 0.5), pct(t, 0.1),
                      pct(t, 0.9));
          std::fflush(stdout);
        }
      memlab::detail::gemm_tc::set_cluster_family(memlab::detail::gemm_tc::cluster_family::automatic);
      for (auto& e : ev) CK(cudaEventDestroy(e));
      CK(cudaStreamDestroy(st));
      CK(cudaFree(a));
      for (auto& b : bs) CK(cudaFree(b));
      CK(cudaFree(c_ours));
      CK(cudaFree(c_lt));
      CK(cudaFree(bad));
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "decode: %s\n", e.what());
    return 1;
  }
  return 0;
}
