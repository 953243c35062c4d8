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
