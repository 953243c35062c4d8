// The GEMM default for other GPUs' limits (memlab::gemm_select_variant): a pure function of
// the shape, the device's limits and the image, checked here without a GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "memlab/gemm.hpp"

namespace {

// ---- the GEMM default for other GPUs ------------------------------------------------------
// Limits as cudaGetDeviceProperties reports them: sharedMemPerBlockOptin and SM count.
memlab::gemm_target target(int cc, int sms, std::size_t optin, int image, bool jit = false) {
  memlab::gemm_target t;
  t.device_cc = cc;
  t.sm_count = sms;
  t.smem_per_block_optin_bytes = optin;
  t.image_arch = image;
  t.jit = jit;
  return t;
}
memlab::gemm_target const t4 = target(75, 40, 65536, 75);          // Turing: 64 KB per block
memlab::gemm_target const a100 = target(80, 108, 166912, 80);      // 163 KB
memlab::gemm_target const rtx3090 = target(86, 82, 101376, 80);    // 99 KB, sm_80 SASS
memlab::gemm_target const l4 = target(89, 58, 101376, 89, true);   // 99 KB
memlab::gemm_target const h100 = target(90, 132, 232448, 90);      // 227 KB

TEST(GemmSelect, TuringHasNoCpAsync) {
  for (auto const& shape : {std::vector<long long>{64, 64, 64}, {4096, 4096, 4096}, {4096, 4096, 4097}})
    EXPECT_EQ(memlab::gemm_select_variant(shape[0], shape[1], shape[2], t4), "warp_tiled");
  EXPECT_NE(memlab::gemm_variant_unavailable("cp_async_64x64", t4).find("cp.async needs sm_80"), std::string::npos);
  EXPECT_EQ(memlab::gemm_variant_unavailable("warp_tiled", t4), "");
}

TEST(GemmSelect, PtxForTuringOnANewerGpuHasNoCpAsyncEither) {
  auto const t = target(90, 132, 232448, 75, true);
  EXPECT_EQ(memlab::gemm_select_variant(4096, 4096, 4096, t), "warp_tiled");
  EXPECT_NE(memlab::gemm_variant_unavailable("cp_async_128x256_db", t).find("compute_75 (PTX JIT)"), std::string::npos);
}

TEST(GemmSelect, AmpereAdaHopperPickThePipeline) {
  for (auto const& t : {a100, rtx3090, l4, h100}) {
    SCOPED_TRACE(t.device_cc);
    EXPECT_EQ(memlab::gemm_select_variant(4096, 4096, 4096, t), "cp_async_128x256_db");
    EXPECT_EQ(memlab::gemm_select_variant(4096, 4096, 4097, t), "cp_async_128x256_k16_db");  // 74 KB fits 99 KB
    EXPECT_EQ(memlab::gemm_select_variant(256, 256, 4096, t), "cp_async_64x64");  // 4 tiles < SMs
    EXPECT_EQ(memlab::gemm_variant_unavailable("cp_async_128x256_k16_s4", t), "");  // 97 KB
  }
}

TEST(GemmSelect, SmallTileThresholdFollowsTheSmCount) {
  // 1024 x 1280 is 8 x 10 = 80 tiles of 128 x 128: fewer than 108 SMs, more than 68.
  EXPECT_EQ(memlab::gemm_select_variant(1024, 1280, 512, a100), "cp_async_64x64");
  EXPECT_EQ(memlab::gemm_select_variant(1024, 1280, 512, target(86, 68, 101376, 80)), "cp_async_128x256_db");
}

TEST(GemmSelect, ConfigurationsThatDoNotFitAreSkipped) {
  // Hypothetical limits: the choice falls back to tiles whose stages fit, never past them.
  auto const small = target(80, 108, 64 * 1024, 80);
  EXPECT_EQ(memlab::gemm_select_variant(4096, 4096, 4097, small), "cp_async_128x256_db");  // k16: 74 KB > 64 KB
  EXPECT_NE(memlab::gemm_variant_unavailable("cp_async_128x256_k16_db", small).find("74496 bytes"), std::string::npos);
  auto const tiny = target(80, 108, 32 * 1024, 80);
  EXPECT_EQ(memlab::gemm_select_variant(4096, 4096, 4096, tiny), "cp_async_64x64");  // 17 KB
  auto const none = target(80, 108, 8 * 1024, 80);
  EXPECT_EQ(memlab::gemm_select_variant(4096, 4096, 4096, none), "warp_tiled");  // static shared memory only
}

TEST(GemmSelect, EveryChoiceIsAvailable) {
  for (auto const& t : {t4, a100, rtx3090, l4, h100})
    for (long long m : {1, 130, 4096})
      for (long long k : {1, 16, 4097}) {
        auto const v = memlab::gemm_select_variant(m, 260, k, t);
        EXPECT_EQ(memlab::gemm_variant_unavailable(v, t), "") << v;
      }
}

}  // namespace
