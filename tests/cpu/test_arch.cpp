// Availability from the compiled image (memlab/arch.hpp): a pure function, checked here
// without a GPU. The GEMM default for other GPUs' limits: test_gemm_select.cpp.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "memlab/arch.hpp"

namespace {

TEST(Arch, UsableWhenTheImageHasTheInstruction) {
  EXPECT_EQ(memlab::format_unavailable(90, "cp.async.bulk", 90, 90, false), "");
  EXPECT_EQ(memlab::format_unavailable(80, "cp.async", 90, 90, false), "");
  EXPECT_EQ(memlab::format_unavailable(80, "cp.async", 80, 90, true), "");  // compute_80 PTX on an H100
  EXPECT_EQ(memlab::format_unavailable(80, "cp.async", 80, 86, false), "");  // sm_80 SASS on sm_86
}

TEST(Arch, NamesTheImageWhenItIsOlderThanTheInstruction) {
  EXPECT_EQ(memlab::format_unavailable(90, "cp.async.bulk", 80, 90, true),
            "cp.async.bulk needs sm_90; this binary's code for the GPU was compiled for compute_80 (PTX JIT): "
            "rebuild with CMAKE_CUDA_ARCHITECTURES including 90");
  EXPECT_EQ(memlab::format_unavailable(80, "cp.async", 75, 86, true),
            "cp.async needs sm_80; this binary's code for the GPU was compiled for compute_75 (PTX JIT): "
            "rebuild with CMAKE_CUDA_ARCHITECTURES including 80");
  EXPECT_EQ(memlab::format_unavailable(90, "mbarrier.try_wait", 80, 86, false),
            "mbarrier.try_wait needs sm_90; this device is sm_86 (compute capability 8.6)");
}

TEST(Arch, NamesTheDeviceWhenItIsTooOld) {
  EXPECT_EQ(memlab::format_unavailable(80, "cp.async", 75, 75, false),
            "cp.async needs sm_80; this device is sm_75 (compute capability 7.5)");
}

TEST(Arch, SaysWhenTheBinaryHasNoCodeForTheDevice) {
  EXPECT_EQ(memlab::format_unavailable(80, "cp.async", 0, 120, false),
            "cp.async needs sm_80; this binary has no code for this device (sm_120): rebuild with "
            "CMAKE_CUDA_ARCHITECTURES including 120");
}

TEST(Arch, EveryReasonIsOneLine) {
  for (int image : {0, 75, 80})
    for (int dev : {75, 80, 86, 90})
      EXPECT_EQ(memlab::format_unavailable(90, "x", image, dev, image != dev).find('\n'), std::string::npos);
}

}  // namespace
