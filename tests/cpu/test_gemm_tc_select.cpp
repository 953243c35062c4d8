// The tensor-core GEMM's rung choice, for any target, without a GPU.
#include <gtest/gtest.h>

#include "memlab/error.hpp"
#include "memlab/gemm_tc.hpp"

namespace {
using memlab::gemm_op;
using memlab::gemm_tc_rung;

memlab::gemm_tc_target target(int image, bool sm90a, int cc) {
  memlab::gemm_tc_target t;
  t.image_arch = image;
  t.sm90a = sm90a;
  t.device_cc = cc;
  t.smem_per_block_optin_bytes = cc >= 90 ? 232448 : (cc >= 80 ? 166912 : 65536);
  t.sm_count = 132;
  return t;
}

memlab::gemm_tc_shape shape(gemm_op a = gemm_op::n, gemm_op b = gemm_op::t, bool bf16 = true, bool aligned = true) {
  memlab::gemm_tc_shape s;
  s.m = s.n = s.k = 4096;
  s.op_a = a;
  s.op_b = b;
  s.bf16 = bf16;
  s.aligned = aligned;
  return s;
}

TEST(GemmTcSelect, HopperTakesTheClusterRungAndThePersistentOneWhereItCannot) {
  EXPECT_EQ(gemm_tc_rung::cluster, memlab::gemm_tc_select(shape(), target(90, true, 90)));
  auto small = target(90, true, 90);
  small.smem_per_block_optin_bytes = 200 * 1024;  // rung 6's staging buffers do not fit
  EXPECT_EQ(gemm_tc_rung::persistent, memlab::gemm_tc_select(shape(), small));
}

TEST(GemmTcSelect, ClusterRungRunsWhereThePersistentOneDoes) {
  auto const h = target(90, true, 90);
  EXPECT_EQ("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(), h));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(gemm_op::n, gemm_op::t, true, false), h));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(gemm_op::n, gemm_op::n), h));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(), target(90, false, 90)));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(), target(80, false, 80)));
  auto small = h;
  small.smem_per_block_optin_bytes = 200 * 1024;  // the stages fit, the staging buffers do not
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(), small));
  // automatic takes rung 6 on sm_90a, except where m <= 128 (one M tile: a pair's second CTA would idle).
  EXPECT_EQ(gemm_tc_rung::cluster, memlab::gemm_tc_select(shape(), h));
  auto decode = shape();
  decode.m = 128;
  EXPECT_EQ(gemm_tc_rung::persistent, memlab::gemm_tc_select(decode, h));
}

TEST(GemmTcSelect, Sm90WithoutTheArchFeaturesTakesMmaSync) {
  EXPECT_EQ(gemm_tc_rung::mma_sync, memlab::gemm_tc_select(shape(), target(90, false, 90)));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::tma_wgmma, shape(), target(90, false, 90)));
}

TEST(GemmTcSelect, AmpereImageOnHopperTakesMmaSync) {
  EXPECT_EQ(gemm_tc_rung::mma_sync, memlab::gemm_tc_select(shape(), target(80, false, 90)));
}

TEST(GemmTcSelect, OtherLayoutsAndMisalignmentFallBackToWmma) {
  auto const h = target(90, true, 90);
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::n), h));
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::t, gemm_op::t), h));
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, true, false), h));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::persistent, shape(gemm_op::n, gemm_op::t, true, false), h));
}

TEST(GemmTcSelect, TuringRunsFp16OnlyOnWmma) {
  auto const t = target(75, false, 75);
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, false), t));
  EXPECT_EQ(gemm_tc_rung::automatic, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, true), t));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::wmma, shape(), t));
}

TEST(GemmTcSelect, RungNamesRoundTrip) {
  auto const names = memlab::gemm_tc_rung_names();
  ASSERT_EQ(6u, names.size());
  for (int i = 1; i <= 6; ++i)
    EXPECT_EQ(static_cast<gemm_tc_rung>(i), memlab::gemm_tc_rung_from_name(names[static_cast<std::size_t>(i - 1)]));
  EXPECT_THROW(memlab::gemm_tc_rung_from_name("hgemm"), memlab::error);
}

}  // namespace
