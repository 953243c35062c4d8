#pragma once
// The one cuBLAS handle of the experiments (GEMM reference and peer, transpose's cublasSgeam
// peer) and its error check: created on first use, outside any timed region, in FP32
// pedantic mode (no TF32, no reduced precision) so a peer never computes less than we do.
#include <cublas_v2.h>

#include <string>

#include "memlab/error.hpp"

#define MEMLAB_CUBLAS_CHECK(call)                                                              \
  do {                                                                                         \
    cublasStatus_t const memlab_cublas_status_ = (call);                                       \
    if (memlab_cublas_status_ != CUBLAS_STATUS_SUCCESS)                                        \
      throw ::memlab::error(std::string("cuBLAS error ") + std::to_string(memlab_cublas_status_) + \
                            " in " #call " at " __FILE__ ":" + std::to_string(__LINE__));      \
  } while (0)

namespace memlab::experiments {

/// One cuBLAS handle per process.
inline cublasHandle_t cublas() {
  struct holder {
    cublasHandle_t h = nullptr;
    holder() {
      MEMLAB_CUBLAS_CHECK(cublasCreate(&h));
      MEMLAB_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    }
    ~holder() {
      if (h) (void)cublasDestroy(h);
    }
  };
  static holder const instance;
  return instance.h;
}

}  // namespace memlab::experiments

namespace memlab::experiments {

/// Sets the shared handle's math mode for a scope and restores pedantic FP32 after: the
/// tensor-core GEMM reference and peer (BF16/FP16 inputs, FP32 compute) run in
/// CUBLAS_DEFAULT_MATH, the mode a user of cublasGemmEx gets.
class cublas_math_scope {
 public:
  explicit cublas_math_scope(cublasMath_t mode) { MEMLAB_CUBLAS_CHECK(cublasSetMathMode(cublas(), mode)); }
  ~cublas_math_scope() { (void)cublasSetMathMode(cublas(), CUBLAS_PEDANTIC_MATH); }
  cublas_math_scope(cublas_math_scope const&) = delete;
  cublas_math_scope& operator=(cublas_math_scope const&) = delete;
};

}  // namespace memlab::experiments
