#pragma once
// Shared helpers for GPU tests: skip without a device, check launches.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "memlab/arch.hpp"

/// Skips the test when no CUDA device is usable (no GPU, no driver, any error).
#define MEMLAB_REQUIRE_GPU()                                           \
  do {                                                                 \
    int memlab_count_ = 0;                                             \
    if (cudaGetDeviceCount(&memlab_count_) != cudaSuccess || memlab_count_ == 0) { \
      (void)cudaGetLastError();                                        \
      GTEST_SKIP() << "no CUDA device";                                \
    }                                                                  \
  } while (0)

/// Checks the launch itself and waits for it: a fault inside the kernel fails here.
#define MEMLAB_EXPECT_LAUNCH_OK()                                  \
  do {                                                             \
    ASSERT_EQ(cudaSuccess, cudaPeekAtLastError());                 \
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());               \
  } while (0)

/// Skips the test, with memlab::unavailable_reason's line, unless `kernel` as compiled into
/// this binary can use `instruction` (which needs `arch`) on this device.
#define MEMLAB_REQUIRE_ARCH(kernel, arch, instruction)                                   \
  do {                                                                                   \
    std::string const memlab_reason_ = ::memlab::unavailable_reason((kernel), (arch), (instruction)); \
    if (!memlab_reason_.empty()) GTEST_SKIP() << memlab_reason_;                         \
  } while (0)

namespace memlab::test {
/// True under the sanitizer runs (MEMLAB_TEST_SMALL=1): tests shrink their sizes.
inline bool small_sizes() {
  char const* v = std::getenv("MEMLAB_TEST_SMALL");
  return v != nullptr && v[0] == '1';
}
}  // namespace memlab::test
