#pragma once
// memlab::gemm: row-major single-precision C = alpha * A * B + beta * C on the GPU.
//
//   memlab::gemm(m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, stream);          // fastest for the shape
//   memlab::gemm(m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, stream, "smem_tiled");  // a named variant
//
// A is m x k (row stride lda >= k), B is k x n (ldb >= n), C is m x n (ldc >= n), all in
// device memory. Any m, n, k >= 0: k = 0 gives C = beta * C; beta = 0 never reads C (NaN
// in C does not propagate). Every variant computes in FP32 FFMA (no tensor cores, no TF32).
// Invalid arguments throw memlab::error before any work is issued, leaving C untouched; so
// does a named cp_async_* variant when the binary's GPU code predates sm_80 (no cp.async).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memlab {

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float const* a, std::int64_t lda,
          float const* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream = nullptr,
          std::string const& variant = "");

/// The names `gemm` accepts, in the order of the optimization ladder (docs/gemm.md).
std::vector<std::string> gemm_variants();

/// What the default choice depends on: the device's limits and the GPU code in this binary.
struct gemm_target {
  int sm_count = 0;                            ///< multiprocessors
  std::size_t smem_per_block_optin_bytes = 0;  ///< sharedMemPerBlockOptin
  int device_cc = 0;                           ///< compute capability x 10
  int image_arch = 0;                          ///< compiled_arch of the GEMM kernels (memlab/arch.hpp)
  bool jit = false;                            ///< that code is PTX JIT-compiled for the device
};

/// The current device and this binary's GEMM kernels.
gemm_target gemm_current_target();

/// Empty when `variant` runs on `target`; otherwise why not (cp.async missing from the
/// image, or more shared memory than a block may have). No CUDA calls.
std::string gemm_variant_unavailable(std::string const& variant, gemm_target const& target);

/// The variant `gemm` runs for this shape on `target` when none is named: always one that
/// target can run. No CUDA calls, so the choice for any GPU is testable without one.
std::string gemm_select_variant(std::int64_t m, std::int64_t n, std::int64_t k, gemm_target const& target);

/// gemm_select_variant on gemm_current_target(): what `gemm` runs when no variant is named.
std::string gemm_default_variant(std::int64_t m, std::int64_t n, std::int64_t k);

/// True when `variant` requires every row of A and B to start on a 16-byte boundary.
bool gemm_variant_needs_alignment(std::string const& variant);

}  // namespace memlab
