#pragma once
// memlab::gemm: row-major single-precision C = alpha * A * B + beta * C on the GPU.
//
//   memlab::gemm(m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, stream);          // fastest for the shape
//   memlab::gemm(m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, stream, "smem_tiled");  // a named variant
//
// A is m x k (row stride lda >= k), B is k x n (ldb >= n), C is m x n (ldc >= n), all in
// device memory. Any m, n, k >= 0: k = 0 gives C = beta * C; beta = 0 never reads C (NaN
// in C does not propagate). Every variant computes in FP32 FFMA (no tensor cores, no TF32).
// Invalid arguments throw memlab::error before any work is issued, leaving C untouched.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memlab {

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float const* a, std::int64_t lda,
          float const* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream = nullptr,
          std::string const& variant = "");

/// The names `gemm` accepts, in the order of the optimization ladder (docs/gemm.md).
std::vector<std::string> gemm_variants();

/// The variant `gemm` runs for this shape when none is named (on the current device).
std::string gemm_default_variant(std::int64_t m, std::int64_t n, std::int64_t k);

/// True when `variant` requires every row of A and B to start on a 16-byte boundary.
bool gemm_variant_needs_alignment(std::string const& variant);

}  // namespace memlab
