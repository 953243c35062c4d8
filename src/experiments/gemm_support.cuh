#pragma once
// Shared by the gemm.* experiments: seeded device fills, the cuBLAS FP32 reference and
// peer (CUBLAS_PEDANTIC_MATH: no TF32, no reduced precision), and a device-side
// comparison so that 8192^2 outputs verify without a host round trip of doubles.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/state.hpp"
#include "bench/verify.hpp"
#include "experiments/cublas.cuh"
#include "experiments/seeded_fill.cuh"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace memlab::experiments::gemm {

using memlab::experiments::cublas;

/// A GEMM shape axis value: "4096" (a cube) or "3000x5000x2000" (m x n x k).
struct shape {
  long long m, n, k;
};

inline shape parse_shape(std::string const& text) {
  shape s{0, 0, 0};
  if (std::sscanf(text.c_str(), "%lldx%lldx%lld", &s.m, &s.n, &s.k) == 3) return s;
  long long const v = std::stoll(text);
  return {v, v, v};
}

/// Row-major C = alpha A B + beta C through column-major cuBLAS: C^T = B^T A^T.
inline void cublas_sgemm(cudaStream_t st, int m, int n, int k, float alpha, float const* a, int lda, float const* b,
                         int ldb, float beta, float* c, int ldc) {
  MEMLAB_CUBLAS_CHECK(cublasSetStream(cublas(), st));
  MEMLAB_CUBLAS_CHECK(cublasSgemm(cublas(), CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, ldb, a, lda, &beta, c, ldc));
}

/// Seeded uniform [-1, 1) fill on the device (fresh per point, reproducible per seed).
inline void fill_uniform(memlab::device_buffer<float>& buf, std::uint64_t seed) {
  if (buf.size() == 0) return;
  memlab::experiments::fill_seeded(buf.data(), buf.size(), seed, nullptr);
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

struct compare_result {
  unsigned int max_ratio_bits;  ///< max |got-ref| / (abs + rel |ref|), as float bits (>= 0)
  unsigned long long bad;       ///< elements over tolerance or not finite
  unsigned long long first_bad; ///< smallest offending linear index
};

static __global__ void compare_kernel(float const* got, float const* ref, int rows, int cols, long long ld, double rel,
                               double abs_tol, compare_result* out) {
  long long const total = static_cast<long long>(rows) * cols;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long const i = (e / cols) * ld + e % cols;
    float const g = got[i], r = ref[i];
    float ratio = static_cast<float>(std::fabs(static_cast<double>(g) - r) / (abs_tol + rel * std::fabs(static_cast<double>(r))));
    if (!isfinite(g) || !isfinite(ratio)) ratio = INFINITY;  // NaN never passes
    atomicMax(&out->max_ratio_bits, __float_as_uint(ratio));
    if (ratio > 1.f) {
      atomicAdd(&out->bad, 1ull);
      atomicMin(&out->first_bad, static_cast<unsigned long long>(e));
    }
  }
}

/// Tolerance for a length-k FP32 dot product of values in [-1, 1) against another FP32
/// implementation: grows linearly with k (abs) plus a relative term.
inline double gemm_abs_tol(long long k) { return static_cast<double>(k + 1) * 0x1p-21; }
inline constexpr double gemm_rel_tol = 1e-5;

/// Compares the m x n matrix `got` (row stride ld) with `ref` on the device.
inline bench::verification compare_device(float const* got, float const* ref, int rows, int cols, long long ld,
                                          double rel, double abs_tol) {
  memlab::device_buffer<compare_result> res(1);
  compare_result init{0u, 0ull, ~0ull};
  MEMLAB_CUDA_CHECK(cudaMemcpy(res.data(), &init, sizeof init, cudaMemcpyHostToDevice));
  if (rows > 0 && cols > 0) {
    compare_kernel<<<2048, 256>>>(got, ref, rows, cols, ld, rel, abs_tol, res.data());
    MEMLAB_CHECK_LAUNCH();
  }
  compare_result h{};
  MEMLAB_CUDA_CHECK(cudaMemcpy(&h, res.data(), sizeof h, cudaMemcpyDeviceToHost));
  bench::verification v;
  float ratio = 0.f;
  std::memcpy(&ratio, &h.max_ratio_bits, sizeof ratio);
  v.error = static_cast<double>(ratio);
  v.tolerance = 1.0;
  v.metric = "max |err| / (abs + rel |ref|)";
  v.status = h.bad == 0 ? bench::verdict::passed : bench::verdict::failed;
  if (h.bad != 0) {
    long long const r = static_cast<long long>(h.first_bad / static_cast<unsigned long long>(cols));
    long long const c = static_cast<long long>(h.first_bad % static_cast<unsigned long long>(cols));
    v.detail = std::to_string(h.bad) + " elements out of tolerance (abs " + std::to_string(abs_tol) + ", rel " +
               std::to_string(rel) + "); first at (" + std::to_string(r) + ", " + std::to_string(c) + ")";
  } else {
    v.detail = "vs cuBLAS SGEMM (CUBLAS_PEDANTIC_MATH), abs tol " + std::to_string(abs_tol) + ", rel " + std::to_string(rel);
  }
  return v;
}

/// Registers, spill (local) bytes and static shared memory of a kernel, as row extras.
inline void record_attributes(bench::state& s, cudaFuncAttributes const& a) {
  s.set_extra("registers", a.numRegs);
  s.set_extra("local_bytes", static_cast<long long>(a.localSizeBytes));
  s.set_extra("static_smem_bytes", static_cast<long long>(a.sharedSizeBytes));
}

/// % of the run's measured FFMA peak, when the ceilings experiment published one.
inline void record_pct_of_peak(bench::state& s, double flops) {
  auto const peak = s.fp32_peak_tflops();
  auto const& ms = s.result().median_ms;
  if (!peak || !ms || *ms <= 0.0 || *peak <= 0.0) return;
  double const tflops = flops / (*ms * 1e-3) / 1e12;
  s.set_extra("pct_of_fp32_peak", 100.0 * tflops / *peak);
}

inline void set_mnk(bench::state& s, long long m, long long n, long long k) {
  s.result().params["m"] = m;
  s.result().params["n"] = n;
  s.result().params["k"] = k;
}

}  // namespace memlab::experiments::gemm
