// The tensor-core GEMM's rung choice, for any target, without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "memlab/error.hpp"
#include "memlab/gemm_tc.hpp"

namespace {
using memlab::gemm_op;
using memlab::gemm_tc_input;
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

memlab::gemm_tc_shape shape(gemm_op a = gemm_op::n, gemm_op b = gemm_op::t, gemm_tc_input in = gemm_tc_input::bf16,
                            bool aligned = true) {
  memlab::gemm_tc_shape s;
  s.m = s.n = s.k = 4096;
  s.op_a = a;
  s.op_b = b;
  s.input = in;
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
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(gemm_op::n, gemm_op::t, gemm_tc_input::bf16, false), h));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(gemm_op::t, gemm_op::n, gemm_tc_input::e4m3), h));  // FP8 A stored k x m
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

// FP8 runs on mma.sync (sm_89+) and the wgmma rungs (3-6): wmma refuses it by name, automatic
// takes rung 6 (rung 5 for decode shapes, as BF16) on sm_90a, mma.sync on sm_89 and on sm_90
// without the arch features, and nothing on an Ampere image or device.
TEST(GemmTcSelect, E4m3RunsOnMmaSyncAndTheWgmmaRungs) {
  auto const h = target(90, true, 90);
  auto const fp8 = shape(gemm_op::n, gemm_op::t, gemm_tc_input::e4m3);
  EXPECT_EQ(gemm_tc_rung::cluster, memlab::gemm_tc_select(fp8, h));
  for (gemm_tc_rung r : {gemm_tc_rung::mma_sync, gemm_tc_rung::tma_wgmma, gemm_tc_rung::warp_specialized,
                         gemm_tc_rung::persistent, gemm_tc_rung::cluster})
    EXPECT_EQ("", memlab::gemm_tc_unavailable(r, fp8, h));
  std::string const why = memlab::gemm_tc_unavailable(gemm_tc_rung::wmma, fp8, h);
  EXPECT_NE(std::string::npos, why.find("no FP8 kernel")) << why;
  auto decode = fp8;
  decode.m = 128;
  EXPECT_EQ(gemm_tc_rung::persistent, memlab::gemm_tc_select(decode, h));
  // Only K-major A and B, aligned, on an sm_90a image on a 9.0 device.
  EXPECT_EQ(gemm_tc_rung::automatic, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::n, gemm_tc_input::e4m3), h));
  EXPECT_EQ(gemm_tc_rung::automatic, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, gemm_tc_input::e4m3, false), h));
  std::string const unaligned =
      memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(gemm_op::n, gemm_op::t, gemm_tc_input::e4m3, false), h);
  EXPECT_NE(std::string::npos, unaligned.find("multiples of 16")) << unaligned;
  EXPECT_EQ(gemm_tc_rung::mma_sync, memlab::gemm_tc_select(fp8, target(90, false, 90)));
  EXPECT_EQ(gemm_tc_rung::mma_sync, memlab::gemm_tc_select(fp8, target(89, false, 89)));  // an L4 / RTX 40
  EXPECT_EQ(gemm_tc_rung::automatic, memlab::gemm_tc_select(fp8, target(89, false, 86)));  // sm_86: no FP8
  EXPECT_EQ(gemm_tc_rung::automatic, memlab::gemm_tc_select(fp8, target(80, false, 80)));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::mma_sync, fp8, target(80, false, 90)));  // an sm_80 image
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, fp8, target(80, false, 80)));
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
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::n), target(80, false, 80)));
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::n, gemm_tc_input::bf16, false), h));
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::t, gemm_op::n, gemm_tc_input::bf16, false), h));
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::t, gemm_op::t), target(80, false, 80)));
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, gemm_tc_input::bf16, false), h));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::persistent, shape(gemm_op::n, gemm_op::t, gemm_tc_input::bf16, false), h));
}

// A B stored k x n (op_b = n) in rows of whole 16-byte units: rungs 4-6 read it as stored
// (wgmma's MN-major B; rung 6 on its cooperative kernels) in BF16 and FP16 on sm_90a, so
// `automatic` runs rung 6 there (rung 5 where m <= 128). An A stored k x m (op_a = t) only rung 6
// reads so: at m <= 128 `automatic` falls to wmma (plan_repack copies A first). Rung 3 and FP8
// still need K-major operands.
TEST(GemmTcSelect, TransposedOperandsRunOnTheWgmmaRungs) {
  auto const h = target(90, true, 90);
  auto const nn = [](gemm_tc_input in) { return shape(gemm_op::n, gemm_op::n, in); };
  EXPECT_EQ(gemm_tc_rung::cluster, memlab::gemm_tc_select(nn(gemm_tc_input::bf16), h));
  EXPECT_EQ(gemm_tc_rung::cluster, memlab::gemm_tc_select(nn(gemm_tc_input::f16), h));
  auto decode = nn(gemm_tc_input::bf16);
  decode.m = 128;
  EXPECT_EQ(gemm_tc_rung::persistent, memlab::gemm_tc_select(decode, h));
  for (gemm_tc_rung r : {gemm_tc_rung::warp_specialized, gemm_tc_rung::persistent, gemm_tc_rung::cluster})
    EXPECT_EQ("", memlab::gemm_tc_unavailable(r, nn(gemm_tc_input::bf16), h));
  for (gemm_tc_rung r : {gemm_tc_rung::tma_wgmma, gemm_tc_rung::mma_sync})
    EXPECT_NE(std::string::npos, memlab::gemm_tc_unavailable(r, nn(gemm_tc_input::bf16), h).find("op_b = t"));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::persistent, nn(gemm_tc_input::e4m3), h));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, nn(gemm_tc_input::e4m3), h));
  EXPECT_EQ(gemm_tc_rung::automatic, memlab::gemm_tc_select(nn(gemm_tc_input::e4m3), h));  // no wmma for FP8: copied instead
  for (gemm_op ob : {gemm_op::n, gemm_op::t}) {
    EXPECT_EQ("", memlab::gemm_tc_unavailable(gemm_tc_rung::cluster, shape(gemm_op::t, ob), h));
    EXPECT_EQ(gemm_tc_rung::cluster, memlab::gemm_tc_select(shape(gemm_op::t, ob), h));
    auto tdecode = shape(gemm_op::t, ob);
    tdecode.m = 128;
    EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(tdecode, h));
    for (gemm_tc_rung r : {gemm_tc_rung::warp_specialized, gemm_tc_rung::persistent, gemm_tc_rung::tma_wgmma})
      EXPECT_NE("", memlab::gemm_tc_unavailable(r, shape(gemm_op::t, ob), h));
  }
}

TEST(GemmTcSelect, TuringRunsFp16OnMmaSyncAndNothingInBf16) {
  auto const t = target(75, false, 75);
  EXPECT_EQ(gemm_tc_rung::mma_sync, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, gemm_tc_input::f16), t));
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::n, gemm_tc_input::f16), t));
  EXPECT_NE("", memlab::gemm_tc_unavailable(gemm_tc_rung::mma_sync, shape(gemm_op::n, gemm_op::t, gemm_tc_input::f16), target(75, false, 70)));
  // An sm_75 image on an sm_80+ device runs the same Turing kernel (the PTX's rung 2).
  EXPECT_EQ(gemm_tc_rung::mma_sync, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, gemm_tc_input::f16), target(75, false, 90)));
  EXPECT_EQ(gemm_tc_rung::automatic, memlab::gemm_tc_select(shape(gemm_op::n, gemm_op::t, gemm_tc_input::bf16), t));
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

// Rung 5's split-K rule: only grids that fill at most half the SMs, the largest of 8, 4, 2
// that keeps 4 k-blocks a CTA, fits the SMs and runs in one wave of clusters.
#include "kernels/gemm/tc/split_k.hpp"

TEST(GemmTcSplitK, SplitsOnlyWhereTheTilesLeaveSmsIdle) {
  using memlab::detail::gemm_tc::split_k_splits;
  auto plenty = [](unsigned) { return 1000; };
  EXPECT_EQ(split_k_splits(32, 64, 132, plenty), 4u);    // m = 128, n = k = 4096: 128 CTAs
  EXPECT_EQ(split_k_splits(16, 64, 132, plenty), 8u);    // n = 2048: 128 CTAs
  EXPECT_EQ(split_k_splits(66, 64, 132, plenty), 2u);    // exactly half the SMs
  EXPECT_EQ(split_k_splits(67, 640, 132, plenty), 1u);   // more than half: the persistent grid
  EXPECT_EQ(split_k_splits(2, 18, 132, plenty), 4u);     // 18 k-blocks: 8 would leave 2 a CTA
  EXPECT_EQ(split_k_splits(3, 10, 132, plenty), 2u);
  EXPECT_EQ(split_k_splits(3, 7, 132, plenty), 1u);      // under 8 k-blocks: no split
  EXPECT_EQ(split_k_splits(0, 64, 132, plenty), 1u);
  // A device that holds only 20 clusters of 4 at once: 32 tiles would take a second wave.
  auto few_fours = [](unsigned s) { return s == 4 ? 20 : 1000; };
  EXPECT_EQ(split_k_splits(32, 64, 132, few_fours), 2u);
  auto none = [](unsigned) { return 0; };
  EXPECT_EQ(split_k_splits(32, 64, 132, none), 1u);
}

// Rung 5's grids (plan_persistent, which launch_persistent runs), on an H100's 132 SMs.
TEST(GemmTcSplitK, PersistentPlanTakesAFewTileGridWhereTheTilesAreFew) {
  using memlab::detail::gemm_tc::persistent_grid;
  using memlab::detail::gemm_tc::plan_persistent;
  auto plenty = [](int, unsigned) { return 1000; };
  auto grid = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    auto const p = plan_persistent(m, n, static_cast<int>((k + 63) / 64), 132, plenty);
    return std::pair{p.grid, p.splits};
  };
  using g = persistent_grid;
  EXPECT_EQ(grid(128, 4096, 4096), (std::pair{g::tiles_64x64, 1u}));     // 128 tiles of 64 x 64: one wave
  EXPECT_EQ(grid(256, 2048, 4096), (std::pair{g::tiles_64x64, 1u}));
  // 64 tiles of 64 x 64 fill only half the SMs: 32 of 128 x 64, split in four (the H100 held fewer than
  // 32 clusters of four at once, so it ran them split in two).
  EXPECT_EQ(grid(256, 1024, 4096), (std::pair{g::split_128x64, 4u}));
  // 128 tiles of 128 x 64, no room to split them: one a CTA up to 64 k-blocks, then 64 x 128 tiles
  // a CTA (one wave over more than half the SMs), as at the decode batches with long k (session 37).
  EXPECT_EQ(grid(1024, 1024, 4096), (std::pair{g::tiles_128x64, 1u}));
  EXPECT_EQ(grid(1024, 1024, 4160), (std::pair{g::tiles_64x128, 1u}));
  EXPECT_EQ(grid(128, 8192, 4096), (std::pair{g::tiles_128x64, 1u}));  // 172 tiles of 64 x 96: not one wave
  // A decode batch whose 64 x 96 tiles make one wave and are more takes those at short k too (session 40).
  EXPECT_EQ(grid(128, 6144, 4096), (std::pair{g::tiles_64x96, 1u}));   // 128 tiles, against 96 of 128 x 64
  EXPECT_EQ(grid(100, 6145, 4095), (std::pair{g::tiles_64x96, 1u}));   // 130, against 97: the GPU test's case
  EXPECT_EQ(plan_persistent(128, 5120, 40, 132, plenty).grid, g::tiles_64x96);  // FP8 k = 5120: 108, against 80
  EXPECT_EQ(plan_persistent(100, 6145, 32, 132, plenty).grid, g::tiles_64x96);  // FP8 k = 4095: the GPU test's
  EXPECT_EQ(plan_persistent(128, 6144, 64, 132, plenty, true).grid, g::tiles_128x64);  // B stored k x n
  EXPECT_EQ(grid(128, 8192, 28672), (std::pair{g::tiles_64x128, 1u}));  // 128 tiles: 64 of B's columns twice
  EXPECT_EQ(grid(65, 8321, 4097), (std::pair{g::tiles_64x128, 1u}));   // 132 tiles (174 of 64 x 96): the GPU test's case
  // 64 x 96 tiles where they too make one wave and are more (session 38): cuBLAS's layout there.
  EXPECT_EQ(grid(128, 5120, 8192), (std::pair{g::tiles_64x96, 1u}));    // 108 tiles, against 80 of 64 x 128
  EXPECT_EQ(grid(128, 6144, 8192), (std::pair{g::tiles_64x96, 1u}));    // 128, against 96
  EXPECT_EQ(grid(256, 3072, 8192), (std::pair{g::tiles_64x96, 1u}));    // 128, against 96
  EXPECT_EQ(grid(65, 4225, 4097), (std::pair{g::tiles_64x96, 1u}));     // 90, against 68: the GPU test's case
  EXPECT_EQ(grid(128, 8192, 8192), (std::pair{g::tiles_64x128, 1u}));   // 172 tiles of 64 x 96: not one wave
  // One row of tiles over more than half the SMs (session 39): the width of fewest waves times width.
  EXPECT_EQ(grid(128, 11008, 4096), (std::pair{g::tiles_128x96, 1u}));   // 115 tiles, against 99 and 86
  EXPECT_EQ(grid(128, 12288, 4096), (std::pair{g::tiles_128x96, 1u}));   // 128
  EXPECT_EQ(grid(128, 10240, 8192), (std::pair{g::tiles_128x96, 1u}));   // 107
  EXPECT_EQ(grid(97, 11009, 2049), (std::pair{g::tiles_128x96, 1u}));    // 33 k-blocks: the GPU test's case
  EXPECT_EQ(grid(128, 14336, 4096), (std::pair{g::tiles_128x112, 1u}));  // 128 tiles; 150 of 128 x 96: two waves
  EXPECT_EQ(grid(128, 13824, 5120), (std::pair{g::tiles_128x112, 1u}));  // 124, against 108: the tie-break
  EXPECT_EQ(grid(100, 14337, 2049), (std::pair{g::tiles_128x112, 1u}));  // 129
  EXPECT_EQ(grid(128, 28672, 8192), (std::pair{g::tiles_128x112, 1u}));  // 256 tiles, 2 waves x 112 < 2 x 128 < 3 x 96
  EXPECT_EQ(grid(65, 28673, 2049), (std::pair{g::tiles_128x112, 1u}));   // 257
  EXPECT_EQ(grid(128, 15360, 5120), (std::pair{g::tiles_128x128, 1u}));  // 120; both narrower widths take two waves
  EXPECT_EQ(grid(128, 11008, 1984), (std::pair{g::tiles_128x128, 1u}));  // 31 k-blocks: fewer than measured
  EXPECT_EQ(grid(129, 11008, 4096), (std::pair{g::tiles_128x128, 1u}));  // two rows of tiles
  EXPECT_EQ(plan_persistent(128, 11008, 64, 132, plenty, true).grid, g::tiles_128x128);  // B stored k x n
  // B stored k x n: its MN-major boxes are 64 columns wide, so 64 x 128 stays.
  EXPECT_EQ(plan_persistent(128, 5120, 128, 132, plenty, true).grid, g::tiles_64x128);
  EXPECT_EQ(plan_persistent(65, 4225, 65, 132, plenty, true).grid, g::tiles_64x128);
  // 64 x 128 tiles that would fill only half the SMs keep the 128 x 128 split: on a device with no
  // room for clusters of the 64-wide grids, 128 x 2048 splits its 16 tiles eight ways.
  auto no64 = [](int bn, unsigned) { return bn == 64 ? 0 : 1000; };
  EXPECT_EQ(plan_persistent(128, 2048, 128, 132, no64).grid, g::split_128x128);
  EXPECT_EQ(plan_persistent(128, 2048, 128, 132, no64).splits, 8u);
  EXPECT_EQ(grid(1024, 1024, 384), (std::pair{g::tiles_128x128, 1u}));   // 6 k-blocks: no split
  EXPECT_EQ(grid(512, 4096, 4096), (std::pair{g::tiles_128x128, 1u}));   // 128 tiles: more than half the SMs
  EXPECT_EQ(grid(4096, 4096, 4096), (std::pair{g::tiles_128x256, 1u}));  // 512 tiles of 128 x 256: whole waves
  // The H100's cluster capacity (fewer than 32 clusters of four): 256 x 1024 splits its 32 tiles of
  // 128 x 64 in two, 64 CTAs, so its 64 tiles of 64 x 64 split in two instead (128 CTAs). At 128 x 1024
  // both run 64 CTAs (16 tiles in four, 32 in two): the tie keeps 128 x 64.
  auto h100 = [](int, unsigned s) { return s == 2 ? 66 : s == 4 ? 30 : 14; };
  EXPECT_EQ(plan_persistent(256, 1024, 64, 132, h100).grid, g::split_64x64);
  EXPECT_EQ(plan_persistent(256, 1024, 64, 132, h100).splits, 2u);
  EXPECT_EQ(plan_persistent(128, 1024, 64, 132, h100).grid, g::split_128x64);
  EXPECT_EQ(grid(512, 512, 512), (std::pair{g::split_64x64, 2u}));  // 8 k-blocks: 128x64 splits in two only
  // A device that holds no cluster of two: no split, the persistent grid.
  auto none = [](int, unsigned) { return 0; };
  EXPECT_EQ(plan_persistent(1024, 1024, 64, 132, none).grid, g::tiles_128x128);
}

// Where automatic takes rung 5 over rung 6 at m > 128: its few-tile grids where a tile has the k-blocks
// they were measured winning with (docs/tc-gemm.md, "Session 31").
TEST(GemmTcSelect, FewTilesRunOnThePersistentRungWhereItsGridIsFaster) {
  auto const h = target(90, true, 90);  // 132 SMs
  auto rung = [&](std::int64_t m, std::int64_t n, std::int64_t k, gemm_op a = gemm_op::n, gemm_op b = gemm_op::t,
                  gemm_tc_input in = gemm_tc_input::bf16) {
    memlab::gemm_tc_shape s = shape(a, b, in);
    s.m = m;
    s.n = n;
    s.k = k;
    return memlab::gemm_tc_select(s, h);
  };
  auto const r5 = gemm_tc_rung::persistent, r6 = gemm_tc_rung::cluster;
  EXPECT_EQ(r5, rung(256, 2048, 1024));   // 64 x 64 tiles, 16 k-blocks: 4.7 against 8.2 us
  EXPECT_EQ(r5, rung(512, 1024, 4096));   // 11.9 against 23.7
  EXPECT_EQ(r6, rung(256, 2048, 960));    // 15 k-blocks: fewer than were measured
  EXPECT_EQ(r5, rung(256, 1024, 1024));   // the 128 x 64 split, 16 k-blocks: 6.4 against 8.1
  EXPECT_EQ(r6, rung(512, 512, 512));     // ... 8: level (5.7 against 5.6)
  // 128 x 64 tiles a CTA from 12 k-blocks: 768^3 5.5 against 7.1 us, 1024^3 6.9 against 8.6.
  EXPECT_EQ(r5, rung(768, 768, 768));
  EXPECT_EQ(r5, rung(1024, 1024, 1024));
  EXPECT_EQ(r6, rung(1024, 1024, 704));   // 11
  EXPECT_EQ(r5, rung(1024, 1024, 4096, gemm_op::n, gemm_op::t, gemm_tc_input::f16));
  // Past 64 k-blocks 64 x 128 tiles a CTA (before session 37 the 128 x 128 split, from 32 k-blocks:
  // 33.6 against 45.9 us at 1024x1024x8192; 64 x 128 ran 33.1 there).
  EXPECT_EQ(r5, rung(1024, 1024, 8192));
  EXPECT_EQ(r6, rung(512, 4096, 4096));   // 128 tiles: no few-tile grid
  EXPECT_EQ(r6, rung(4096, 4096, 4096));
  EXPECT_EQ(r6, rung(1024, 1024, 4096, gemm_op::n, gemm_op::t, gemm_tc_input::e4m3));  // FP8: not measured
  EXPECT_EQ(r6, rung(1024, 1024, 384));   // 6 k-blocks: no few-tile grid
  // Rung 5 reads a B stored k x n, not an A stored k x m: rung 6 reads that one as stored.
  EXPECT_EQ(r5, rung(1024, 1024, 4096, gemm_op::n, gemm_op::n));
  EXPECT_EQ(r6, rung(1024, 1024, 4096, gemm_op::t, gemm_op::t));
  EXPECT_EQ(r6, rung(1024, 1024, 4096, gemm_op::t, gemm_op::n));
  // m <= 128 stays on rung 5 as before.
  EXPECT_EQ(r5, rung(128, 4096, 4096));
}

// Rung 2's split of K (02_mma_sync.cu): slots are SMs x the blocks an SM holds (264 on an H100,
// 216 on an A100, 128 on a 128-SM Ada part, whose 99 KB holds one block an SM).
TEST(GemmTcSplitK, MmaSyncSplitsFillOneWaveOfSlots) {
  using memlab::detail::gemm_tc::mma_sync_max_splits;
  using memlab::detail::gemm_tc::mma_sync_splits;
  EXPECT_EQ(mma_sync_splits(32, 128, 264), 8u);    // m = 128, n = k = 4096 on an H100: 256 blocks
  EXPECT_EQ(mma_sync_splits(32, 128, 216), 6u);    // ... on an A100: 192 blocks
  EXPECT_EQ(mma_sync_splits(32, 128, 128), 4u);    // ... one block an SM (Ada's 99 KB)
  EXPECT_EQ(mma_sync_splits(64, 896, 264), 4u);    // 128x8192x28672
  EXPECT_EQ(mma_sync_splits(132, 896, 264), 2u);   // exactly half the slots
  EXPECT_EQ(mma_sync_splits(133, 896, 264), 1u);   // more than half: one pass, no partials
  EXPECT_EQ(mma_sync_splits(1, 4096, 264), mma_sync_max_splits);  // capped
  EXPECT_EQ(mma_sync_splits(2, 35, 264), 4u);      // every split keeps 8 slices or more
  EXPECT_EQ(mma_sync_splits(3, 15, 264), 1u);      // under 16 slices: no split
  EXPECT_EQ(mma_sync_splits(0, 128, 264), 1u);
  EXPECT_EQ(mma_sync_splits(32, 128, 0), 1u);      // no slots known: no split
  // The partials' bytes against the tiles' flops (measured at 4fc071f / bd18a75 on the H100,
  // gemm.tc_split_k): m = 128, n = k = 4096 halves 8 to 4 (16.8 MB against 4.3 GFLOP: 3.9 bytes a
  // kFLOP; 4 splits ran 25.0 us, 8 28.3); m = 16 keeps 8 (0.49 a kFLOP; 8 splits 19.8 us, 4 21.5).
  auto splits_of = [](std::int64_t m, std::int64_t n, std::int64_t k, int slots) {
    std::int64_t const tiles = ((m + 127) / 128) * ((n + 127) / 128);
    int const slices = static_cast<int>((k + 31) / 32);
    return mma_sync_splits(tiles, slices, slots, 4.0 * m * n, 2.0 * tiles * 128 * 128 * slices * 32.0);
  };
  EXPECT_EQ(splits_of(128, 4096, 4096, 264), 4u);
  EXPECT_EQ(splits_of(16, 4096, 4096, 264), 8u);
  EXPECT_EQ(splits_of(128, 8192, 28672, 264), 4u);   // 0.28 a kFLOP
  EXPECT_EQ(splits_of(64, 14336, 4096, 264), 2u);
  EXPECT_EQ(splits_of(1024, 1024, 4096, 264), 4u);   // 1.95 a kFLOP: kept (4 splits 33.4 us, 2 34.0, 1 58.6)
  EXPECT_EQ(splits_of(512, 2048, 8192, 264), 4u);
  EXPECT_EQ(splits_of(2048, 2048, 1024, 264), 1u);   // 256 tiles: no split
  EXPECT_EQ(mma_sync_splits(32, 128, 264, 1e9, 1.0), 1u);  // partials that outweigh everything: halved to 1
  for (std::int64_t tiles : {1, 5, 33, 66, 100, 132})
    for (int slices : {8, 16, 17, 100, 1000}) {
      unsigned const s = mma_sync_splits(tiles, slices, 264);
      EXPECT_LE(tiles * s, 264);                              // one wave
      EXPECT_TRUE(s == 1 || slices / static_cast<int>(s) >= 8);  // a pipeline's worth each
      EXPECT_LE(s, mma_sync_max_splits);
    }
}

// Rung 2's tile width (mma_sync_takes_wide, split_k.hpp): 128 x 256 where k >= 2048 and an SM holds as
// many warps of the wide kernel as of the 128 x 128 one.
TEST(GemmTcSplitK, MmaSyncTakesWideTilesAtLongK) {
  using memlab::detail::gemm_tc::mma_sync_takes_wide;
  using memlab::detail::gemm_tc::mma_sync_wide_min_k;
  EXPECT_TRUE(mma_sync_takes_wide(4096, 8, 8));    // H100, A100: one block of 8 warps against two of 4
  EXPECT_TRUE(mma_sync_takes_wide(mma_sync_wide_min_k, 8, 8));
  EXPECT_FALSE(mma_sync_takes_wide(mma_sync_wide_min_k - 1, 8, 8));  // 8192x8192x1024's k: fill and drain uncovered
  EXPECT_FALSE(mma_sync_takes_wide(1024, 8, 8));
  EXPECT_FALSE(mma_sync_takes_wide(4096, 0, 8));   // sm_86/89: 120 KB does not fit
  EXPECT_FALSE(mma_sync_takes_wide(4096, 8, 12));  // a device that holds three narrow blocks: fewer warps
  EXPECT_TRUE(mma_sync_takes_wide(8192, 16, 8));
}

// Rung 2's depth (mma_sync_depth, split_k.hpp) on the blocks an SM holds of its 5-, 4- and 3-stage
// kernels (80, 64 and 48 KB, 254 registers: two blocks at most): an H100 (228 KB) and an A100
// (164 KB) hold two of each; sm_86/89 (100 KB) one of 5 or 4 stages and two of 3, where the one-pass
// grid takes 3 and the split grid keeps 5 (docs/tc-gemm.md, "Session 26").
TEST(GemmTcSplitK, MmaSyncDepthIsTheDeepestKernelAnSmHoldsTwoOf) {
  using memlab::detail::gemm_tc::mma_sync_depth;
  EXPECT_EQ(mma_sync_depth(5, 2, 2, 2, 3), 5);  // H100, A100: the one-pass grid
  EXPECT_EQ(mma_sync_depth(5, 2, 2, 2, 4), 5);  // ... the split grid
  EXPECT_EQ(mma_sync_depth(5, 1, 1, 2, 3), 3);  // sm_86/89: the one-pass grid, two blocks of 3 stages
  EXPECT_EQ(mma_sync_depth(5, 1, 1, 2, 4), 5);  // ... the split grid, one block of 5
  EXPECT_EQ(mma_sync_depth(4, 1, 1, 2, 3), 3);  // FP8 (deepest 4) on sm_89
  EXPECT_EQ(mma_sync_depth(4, 1, 1, 2, 4), 4);
  EXPECT_EQ(mma_sync_depth(4, 2, 2, 2, 3), 4);  // FP8 on an H100
  EXPECT_EQ(mma_sync_depth(5, 1, 2, 2, 3), 4);  // where 4 stages hold two and 5 one
  EXPECT_EQ(mma_sync_depth(5, 0, 1, 1, 3), 4);  // 5 does not fit: one block of 4 beats one of 3
  EXPECT_EQ(mma_sync_depth(5, 0, 0, 1, 3), 3);  // only 3 fits
  EXPECT_EQ(mma_sync_depth(5, 0, 0, 1, 4), 3);  // ... for the split grid too
  EXPECT_EQ(mma_sync_depth(5, 3, 4, 5, 3), 5);  // more than two blocks of everything: the deepest
}

// Rung 6's choice between its cooperative and pingpong kernels (cluster_plan.hpp), with the
// H100's 66 clusters of each: the cost count and what the session-13 A/B measured.
#include "kernels/gemm/tc/cluster_plan.hpp"

// The cluster tiles in both of cl_grid's orders: pairs along M leave an odd last tile row
// unpaired; row-major pairs wrap rows and leave only an odd count's last tile alone.
TEST(GemmTcClusterPlan, PairsCoverEveryTile) {
  using memlab::detail::gemm_tc::cluster_pairs;
  EXPECT_EQ(cluster_pairs(3000, 5000, 256, 152, true), 198);  // 12 x 33 tiles: 3 waves of 66
  EXPECT_EQ(cluster_pairs(3000, 5000, 256, 152, false), 198);  // 6 pair rows x 33
  EXPECT_EQ(cluster_pairs(520, 456, 256, 152, true), 5);      // 3 x 3 tiles: the ninth alone
  EXPECT_EQ(cluster_pairs(520, 456, 256, 152, false), 6);     // 2 pair rows (one half empty) x 3
  EXPECT_EQ(cluster_pairs(4097, 4097, 128, 256, false), 17 * 17);
  EXPECT_EQ(cluster_pairs(1, 1, 128, 256, false), 1);
  EXPECT_EQ(cluster_pairs(0, 64, 128, 256, false), 0);
  for (std::int64_t m : {1, 255, 256, 257, 3000})
    for (std::int64_t n : {1, 151, 152, 153, 5000}) {
      std::int64_t const tiles = ((m + 255) / 256) * ((n + 151) / 152);
      EXPECT_GE(2 * cluster_pairs(m, n, 256, 152, true), tiles);      // every tile in a pair
      EXPECT_LE(2 * cluster_pairs(m, n, 256, 152, true), tiles + 1);  // at most one alone
    }
}

// gemm.tc_cluster_kernels' variants name the families; a name that is none of them is an error.
TEST(GemmTcClusterPlan, FamiliesByName) {
  using memlab::detail::gemm_tc::cluster_family;
  using memlab::detail::gemm_tc::cluster_family_from_name;
  using memlab::detail::gemm_tc::cluster_family_name;
  // Every family by its name, and the names one apiece (the variants of gemm.tc_cluster_kernels).
  std::size_t const families = std::size(memlab::detail::gemm_tc::cluster_family_names);
  for (std::size_t i = 0; i < families; ++i) {
    auto const f = static_cast<cluster_family>(i);
    EXPECT_EQ(cluster_family_from_name(cluster_family_name(f)), f);
  }
  EXPECT_EQ(families, static_cast<std::size_t>(cluster_family::coop128x64) + 1);
  EXPECT_EQ(cluster_family_from_name("auto"), cluster_family::automatic);
  EXPECT_THROW(cluster_family_from_name("pingpong128"), memlab::error);
}

// Rung 6's TMA store takes C where beta = 0, C's base is 16-byte aligned and ldc x the element
// size is a multiple of 16 (the launch and the ladder's kernel name ask the same function).
// A B stored k x n or an A stored k x m runs the cooperative kernels, which alone read them as stored (their halves of B
// are whole 64-column boxes): the tile cluster_coop_tile gives, or the width forced; any other family
// forced runs them too.
TEST(GemmTcClusterPlan, TransposedOperandsTakeTheCooperativeTile) {
  using memlab::detail::gemm_tc::cluster_family;
  using memlab::detail::gemm_tc::cluster_family_name;
  using memlab::detail::gemm_tc::cluster_pick_mn;
  using memlab::detail::gemm_tc::cluster_tile;
  EXPECT_EQ(cluster_pick_mn(4096, 4096, 66), cluster_tile::coop_128x256);
  EXPECT_EQ(cluster_pick_mn(8192, 8192, 66), cluster_tile::coop_128x256);  // where the rule's cluster_pick takes pingpong at k = 1024
  EXPECT_EQ(cluster_pick_mn(2304, 2304, 66), cluster_tile::coop_128x128);  // 81 pairs of 128 x 256 (2 waves), 162 of 128 x 128 (3)
  EXPECT_EQ(cluster_pick_mn(2304, 2304, 66), memlab::detail::gemm_tc::cluster_coop_tile(2304, 2304, 66));
  EXPECT_EQ(cluster_pick_mn(4096, 4096, 66, cluster_family::coop128x128), cluster_tile::coop_128x128);
  EXPECT_EQ(cluster_pick_mn(2304, 2304, 66, cluster_family::coop128x256), cluster_tile::coop_128x256);
  for (cluster_family f : {cluster_family::pingpong192, cluster_family::pingpong160s, cluster_family::cooperative256,
                           cluster_family::cooperative})
    EXPECT_EQ(cluster_pick_mn(4096, 4096, 66, f), cluster_tile::coop_128x256) << cluster_family_name(f);
}

TEST(GemmTcClusterPlan, TmaStoreNeedsAlignedCAndNoBeta) {
  using memlab::detail::gemm_tc::cluster_c_tma_store;
  alignas(16) static unsigned char c[64];
  EXPECT_TRUE(cluster_c_tma_store(c, 4096, 2, 0.f));
  EXPECT_FALSE(cluster_c_tma_store(c, 4097, 2, 0.f));  // 4097 x 2 bytes: the ladder's 4097^3 row
  EXPECT_TRUE(cluster_c_tma_store(c, 4100, 4, 0.f));   // FP32: 16400 bytes
  EXPECT_FALSE(cluster_c_tma_store(c, 4098, 4, 0.f));
  EXPECT_FALSE(cluster_c_tma_store(c + 8, 4096, 2, 0.f));  // base 8 bytes off
  EXPECT_FALSE(cluster_c_tma_store(c, 4096, 2, 1.f));      // beta != 0 reads C
}

TEST(GemmTcClusterPlan, PingpongWhereTheEpilogueOrTheWavesCost) {
  using memlab::detail::gemm_tc::cluster_family;
  using memlab::detail::gemm_tc::cluster_tile;
  auto pick = [](std::int64_t m, std::int64_t n, std::int64_t k, cluster_family f = cluster_family::automatic,
                 bool tma = true) {
    return memlab::detail::gemm_tc::cluster_pick(m, n, k, {66, 66, 66, 66, 66, 66}, f, tma);
  };
  // k = 1024: 16 k-blocks a tile, the cooperative epilogue a sixth of them (measured 0.866 -> 0.955).
  EXPECT_EQ(pick(8192, 8192, 1024), cluster_tile::pingpong_128x192);
  // Pairs in one wave: one tile a CTA, the epilogue exposed. 256^3 (4 k-blocks): 0.625 x 6.5 against
  // 0.5 x 6.5, the cooperative 128 x 128 kernel (measured 4.4 against 5.5 us); 1536^3 (24): 0.625 x 26.5
  // against one wave of 128 x 256's 26.5 (measured 15.1 against 18.6 us).
  EXPECT_EQ(pick(256, 256, 256), cluster_tile::coop_128x128);
  EXPECT_EQ(pick(1536, 1536, 1536), cluster_tile::pingpong_128x160);
  // 8192^3: 16 waves of 130.5 against 21 of 0.75 x 129 (2.7% fewer; measured 1.8% in ncu).
  EXPECT_EQ(pick(8192, 8192, 8192), cluster_tile::pingpong_128x192);
  // 4096^3: 4 waves of 128 x 256 pairs against 6 of 128 x 192 (measured 0.98 against 0.89).
  EXPECT_EQ(pick(4096, 4096, 4096), cluster_tile::coop_128x256);
  // 4096 x 11008: 69 columns of 160 make 16.7 waves (17) against 10.4 (11) of 256: 5.6% fewer.
  EXPECT_EQ(pick(4096, 11008, 4096), cluster_tile::pingpong_128x160);
  // 3000x5000x2000: 256 x 152 tiles make whole waves, 12 x 33 tiles = 198 pairs, 3 waves of
  // 1.05 x 1.1875 x 34.5 = 129; 128 x 192's 5 waves of 0.75 x 33 = 124; 4 waves of 34.5 of the
  // cooperative 128 x 256. With rows on 128-byte lines pingpong 128x192 (measured 0.965 against
  // 0.949, gemm.tc_row_pitch); with the ladder's 4000-byte rows no pingpong, so 256 x 152 (0.938
  // against pingpong's 0.887; with rows on sectors pingpong must count 8% under: not here).
  EXPECT_EQ(pick(3000, 5000, 2000), cluster_tile::pingpong_128x192);
  for (auto rows : {memlab::detail::gemm_tc::row_alignment::sector, memlab::detail::gemm_tc::row_alignment::other})
    EXPECT_EQ(memlab::detail::gemm_tc::cluster_pick(3000, 5000, 2000, {66, 66, 66, 66, 66, 66}, cluster_family::automatic, true, rows),
              cluster_tile::coop_256x152);
  // 3072^3: 128 x 192 pairs make 3 waves of 0.75 x 49 = 110, 256 x 152 2 of 126, 128 x 256
  // 3 of 50.5 (measured 0.96, 0.88, 0.74 of cuBLAS).
  EXPECT_EQ(pick(3072, 3072, 3072), cluster_tile::pingpong_128x192);
  // 2048 x 14336 x 4096: the cooperative pairs make 7 waves (6.8), 128 x 160's 11 (10.9), so no
  // correction: 11 x 0.625 x 65 = 447 against 7 x 66.5 = 466 (measured 0.97-0.98 against 0.95-0.97);
  // 3072 x 8192 x 4096: 128 x 192's pairs make 8 waves (7.8): 8 x 0.75 x 65 = 390 against the
  // cooperative's 6 x 66.5 = 399 (measured 1.00 against 0.98).
  EXPECT_EQ(pick(2048, 14336, 4096), cluster_tile::pingpong_128x160);
  EXPECT_EQ(pick(3072, 8192, 4096), cluster_tile::pingpong_128x192);
  // 5120^3: 400 pairs of 128 x 256 make 7 waves (6.06); 128 x 160 10 of 0.625 x 81 = 506 (measured
  // 0.97 against 0.87); 128 x 144 11 (10.9) of 0.5625 x 81 = 501, 1% less: not the 5% it needs.
  EXPECT_EQ(pick(5120, 5120, 5120), cluster_tile::pingpong_128x160);
  // 3840^3: 128 x 192 5 waves (4.5) of 0.75 x 61 = 229; 128 x 176 5 (4.9) of 0.6875 x 61 = 210, 8% less
  // (measured 0.966-0.975 against 0.911).
  EXPECT_EQ(pick(3840, 3840, 3840), cluster_tile::pingpong_128x176);
  // 1536^3: 128 x 144 makes one wave (66 pairs), counted 10% under 128 x 160's, measured 3% slower:
  // no narrow pingpong below two waves.
  EXPECT_EQ(pick(1536, 1536, 1536), cluster_tile::pingpong_128x160);
  // Few pairs: the cooperative kernel's 128 x 128 tiles against the others. 2560^3: 200 pairs of
  // 128 x 128, 4 waves of 0.5 x 42.5 = 85 against 128 x 160's 3 of 0.625 x 41 = 77
  // (measured 0.89 against 0.78) and 128 x 144's 3 (2.7) of 0.5625 x 41 = 69, 10% less (measured
  // 0.939 against 0.898);
  // 2048^3: one wave of 128 x 256 (64 pairs), 34.5, against 49.5 and 41.25 (session 20: 0.90
  // against 0.78 for pingpong 128x160; 128 x 128 tiles, the same count, measured 0.82).
  EXPECT_EQ(pick(2560, 2560, 2560), cluster_tile::pingpong_128x144);
  EXPECT_EQ(pick(2048, 2048, 2048), cluster_tile::coop_128x256);
  // 4097^3 as the ladder runs it (ldc = 4097: no TMA store): pingpong is not considered, and the
  // 256 x 152 count (4 waves of 1.05 x 1.1875 x 67.5) is within 2% of 128 x 256's 5 of 67.5.
  EXPECT_EQ(pick(4097, 4097, 4097, cluster_family::automatic, false), cluster_tile::coop_128x256);
  // 16384 x 4096: 128 x 256 pairs make 16 waves (15.5) of 66.5 = 1064; 128 x 160's 26 (25.2) of
  // 0.625 x 65 = 1056, within 2%. Swapped, 160 x 128 tiles make 103 x 32 tiles, 1648 pairs: 25 waves
  // (24.97) = 1016, 4.5% fewer than the cooperative count.
  EXPECT_EQ(pick(16384, 4096, 4096), cluster_tile::pingpong_160x128_swapped);
  // ... and where the swapped count only ties, the unswapped kernel stays (squares, 8192x8192x1024),
  // unless the swapped one has fewer pairs (fewer tiles past C's edge, the same waves).
  EXPECT_EQ(pick(4096, 11008, 4096), cluster_tile::pingpong_128x160);
  EXPECT_EQ(pick(8192, 8192, 8192), cluster_tile::pingpong_128x192);
  EXPECT_EQ(pick(6144, 6144, 6144, cluster_family::automatic), pick(6144, 6144, 6144));
  EXPECT_NE(pick(6144, 6144, 6144), cluster_tile::pingpong_192x128_swapped);
  EXPECT_EQ(pick(12288, 2048, 4096), cluster_tile::pingpong_192x128_swapped);  // 512 pairs against 528
  EXPECT_EQ(pick(3000, 5000, 2000), cluster_tile::pingpong_128x192);           // 320 against 324: not 2%
  // 3072 x 1024 x 2048: 8 tile columns of 128 make 12 pairs x 8 = 96 pairs of the cooperative 128 x 128
  // (2 waves of 0.5 x 34.5); swapped, 192 x 128 tiles are 16 x 8 = 64 pairs, one wave of 0.75 x 33.
  EXPECT_EQ(pick(3072, 1024, 2048), cluster_tile::pingpong_192x128_swapped);
  // No TMA store for C (beta != 0, C unaligned): neither swapped kernel, whose epilogue is TMA's alone.
  EXPECT_EQ(pick(16384, 4096, 4096, cluster_family::automatic, false), cluster_tile::coop_128x256);
  // Forced families (the GPU tests run rung 6's batteries through each).
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong192), cluster_tile::pingpong_128x192);
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong160), cluster_tile::pingpong_128x160);
  EXPECT_EQ(pick(8192, 8192, 1024, cluster_family::cooperative), cluster_tile::coop_128x256);
  EXPECT_EQ(pick(1024, 2048, 64, cluster_family::cooperative), cluster_tile::coop_128x128);
  EXPECT_EQ(pick(1024, 2048, 64, cluster_family::cooperative256), cluster_tile::coop_256x152);
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong192s), cluster_tile::pingpong_192x128_swapped);
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong160s), cluster_tile::pingpong_160x128_swapped);
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong176), cluster_tile::pingpong_128x176);
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong144), cluster_tile::pingpong_128x144);
  EXPECT_EQ(pick(1024, 2048, 64, cluster_family::coop128x256), cluster_tile::coop_128x256);  // `cooperative` takes 128 x 128
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::coop128x128), cluster_tile::coop_128x128);  // `cooperative`: 128 x 256
  // ... the swapped families run the unswapped kernel where C does not take the TMA store.
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong192s, false), cluster_tile::pingpong_128x192);
  EXPECT_EQ(pick(4096, 4096, 4096, cluster_family::pingpong160s, false), cluster_tile::pingpong_128x160);
  // Fewer pingpong clusters on a device turn the count back to the cooperative kernel.
  EXPECT_EQ(memlab::detail::gemm_tc::cluster_pick(8192, 8192, 1024, {66, 40, 40, 40, 40, 40}), cluster_tile::coop_128x256);
  // ... and fewer 256 x 152 clusters another kernel (3000x5000x2000: 198 pairs, 5 waves of 40).
  EXPECT_NE(memlab::detail::gemm_tc::cluster_pick(3000, 5000, 2000, {66, 66, 66, 40, 66, 66}), cluster_tile::coop_256x152);
  // Beta != 0 or an unaligned C (register stores): no pingpong, whatever its count.
  EXPECT_EQ(pick(8192, 8192, 1024, cluster_family::automatic, false), cluster_tile::coop_128x256);
  // Rows of A and B not on 128-byte lines (docs/tc-gemm.md, "Session 19"). On 32-byte sectors (k =
  // 2000 in BF16: 4000-byte rows) pingpong only where it counts 8% under the rest: 6000x3000x2000
  // (pingpong 128x192 measured 0.990-0.997 of cuBLAS against the cooperative 0.921-0.922) takes it,
  // 3000x5000x2000 (counted 4% under, measured 4% slower) keeps the 256 x 152 kernel.
  using memlab::detail::gemm_tc::cluster_pick;
  using memlab::detail::gemm_tc::row_alignment;
  memlab::detail::gemm_tc::cluster_capacity const full{66, 66, 66, 66, 66, 66};
  auto const is_coop = [](cluster_tile t) {
    return t == cluster_tile::coop_128x256 || t == cluster_tile::coop_128x128 || t == cluster_tile::coop_256x152;
  };
  EXPECT_EQ(cluster_pick(6000, 3000, 2000, full), cluster_tile::pingpong_128x160);
  // ... and only the 192-wide kernels (128x160 ran 3-10% below 128x192 at all 12 shapes measured).
  EXPECT_EQ(cluster_pick(6000, 3000, 2000, full, cluster_family::automatic, true, row_alignment::sector), cluster_tile::pingpong_128x192);
  EXPECT_FALSE(is_coop(cluster_pick(5000, 6000, 2000, full, cluster_family::automatic, true, row_alignment::sector)));
  EXPECT_EQ(cluster_pick(3000, 5000, 2000, full, cluster_family::automatic, true, row_alignment::sector), cluster_tile::coop_256x152);
  // At 16-byte steps (k = 1000 or 3000 in BF16) no pingpong at all: session 18's six held-out
  // shapes, where pingpong ran 0.73-0.81 against 0.84-0.90 (and 10-12% below its own 128-byte-row
  // speed at 64ed1dd).
  EXPECT_EQ(cluster_pick(8192, 8192, 1024, full, cluster_family::automatic, true, row_alignment::other), cluster_tile::coop_128x256);
  for (auto const& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
           {3000, 3000, 3000}, {5000, 3000, 2000}, {10000, 3000, 2000}, {8000, 5000, 1000}, {3000, 6000, 3000}, {5000, 6000, 2000}}) {
    EXPECT_TRUE(is_coop(cluster_pick(m, n, k, full, cluster_family::automatic, true, row_alignment::other))) << m << "x" << n << "x" << k;
  }
  // ... forced families still run what they name.
  EXPECT_EQ(cluster_pick(8192, 8192, 1024, full, cluster_family::pingpong192, true, row_alignment::other),
            cluster_tile::pingpong_128x192);
}

// Where rung 6's 128 x 64 pairs (along N, sharing A) fit one wave they run, whatever the count says
// of the rest (docs/tc-gemm.md, "Session 32"): 28 shapes, 0.80-0.98 of the cooperative 128 x 128
// kernel's time. Not where they take two waves, not for a device or type that does not weigh them
// (capacity 0: FP8), and never when a family is forced.
TEST(GemmTcClusterPlan, OneWaveOfPairsAlongNTakesTheCooperative128x64Kernel) {
  using memlab::detail::gemm_tc::cluster_family;
  using memlab::detail::gemm_tc::cluster_pick;
  using memlab::detail::gemm_tc::cluster_tile;
  memlab::detail::gemm_tc::cluster_capacity const cap{66, 66, 66, 66, 66, 66, 66};
  EXPECT_EQ(cluster_pick(256, 256, 256, cap), cluster_tile::coop_128x64);        // 4 pairs: 3.9 against 4.4 us
  EXPECT_EQ(cluster_pick(512, 512, 512, cap), cluster_tile::coop_128x64);        // 16 pairs: 4.9 against 5.6
  EXPECT_EQ(cluster_pick(1024, 1024, 8192, cap), cluster_tile::coop_128x64);     // 64 pairs: 39.9 against 45.6
  EXPECT_EQ(cluster_pick(1024, 1088, 1024, cap), cluster_tile::coop_128x128);    // 68 pairs: two waves
  EXPECT_EQ(cluster_pick(1280, 1280, 1280, cap), cluster_tile::coop_128x128);    // 100 pairs (measured 14.6 against 10.7)
  EXPECT_EQ(cluster_pick(1536, 1536, 1536, cap), cluster_tile::pingpong_128x160);
  EXPECT_EQ(cluster_pick(256, 256, 256, {66, 66, 66, 66, 66, 66}), cluster_tile::coop_128x128);
  EXPECT_EQ(cluster_pick(256, 256, 256, cap, cluster_family::cooperative), cluster_tile::coop_128x128);
  EXPECT_EQ(cluster_pick(256, 256, 256, cap, cluster_family::pingpong192), cluster_tile::pingpong_128x192);
  EXPECT_EQ(cluster_pick(4096, 4096, 4096, cap, cluster_family::coop128x64), cluster_tile::coop_128x64);
}

// How A's and B's rows lie: on 128-byte lines, on 32-byte sectors (16-bit inputs only), or neither.
TEST(GemmTcClusterPlan, RowAlignmentNeedsBaseAndPitch) {
  using memlab::detail::gemm_tc::cluster_row_alignment;
  using memlab::detail::gemm_tc::row_alignment;
  alignas(128) static unsigned char buf[256];
  EXPECT_EQ(cluster_row_alignment(buf, 4096, buf, 8192, 2), row_alignment::line);     // 2048 BF16 elements
  EXPECT_EQ(cluster_row_alignment(buf, 4000, buf, 4096, 2), row_alignment::sector);   // k = 2000 BF16: 4000-byte rows
  EXPECT_EQ(cluster_row_alignment(buf, 6000, buf, 6000, 2), row_alignment::other);    // k = 3000 BF16: 16-byte steps
  EXPECT_EQ(cluster_row_alignment(buf, 4096, buf, 2000, 1), row_alignment::other);    // k = 2000 FP8
  EXPECT_EQ(cluster_row_alignment(buf, 4000, buf, 4000, 1), row_alignment::other);    // FP8 on sectors: not re-measured
  EXPECT_EQ(cluster_row_alignment(buf + 16, 4096, buf, 4096, 2), row_alignment::other);  // 16-byte aligned base only
  EXPECT_EQ(cluster_row_alignment(buf, 4096, buf + 64, 4096, 2), row_alignment::sector);
  EXPECT_EQ(cluster_row_alignment(buf, 4096, buf, 8192, 1), row_alignment::line);
}

// The cooperative kernel's tile below two waves of 128 x 256 pairs (session 20, H100: 66
// clusters): 128 x 128 only where its pairs take fewer than twice the waves. The first 11 shapes
// are those measured with both tiles forced, each expecting the faster; the last three check one
// wave of both (128 x 128) and two waves or more (128 x 256).
TEST(GemmTcClusterPlan, CooperativeTileByWaves) {
  using memlab::detail::gemm_tc::cluster_coop_tile;
  using memlab::detail::gemm_tc::cluster_tile;
  struct shape_t {
    std::int64_t m, n;
    cluster_tile faster;
  };
  for (auto [m, n, faster] : {shape_t{2048, 2048, cluster_tile::coop_128x256},   // 64 pairs against 128: 1 wave against 2
                              shape_t{1792, 1792, cluster_tile::coop_128x256},   // 49 / 98
                              shape_t{1536, 1536, cluster_tile::coop_128x256},   // 36 / 72
                              shape_t{2560, 2560, cluster_tile::coop_128x256},   // 100 / 200: 2 waves against 4
                              shape_t{1024, 8192, cluster_tile::coop_128x256},   // 128 / 256
                              shape_t{1024, 4096, cluster_tile::coop_128x256},   // 64 / 128
                              shape_t{3072, 1024, cluster_tile::coop_128x256},   // 48 / 96
                              shape_t{2048, 1536, cluster_tile::coop_128x256},   // 48 / 96
                              shape_t{5120, 1024, cluster_tile::coop_128x128},   // 80 / 160: 2 waves against 3
                              shape_t{2304, 2304, cluster_tile::coop_128x128},   // 81 / 162
                              shape_t{2048, 3072, cluster_tile::coop_128x128},   // 96 / 192
                              shape_t{1024, 2048, cluster_tile::coop_128x128},   // 32 / 64: both one wave
                              shape_t{4096, 4096, cluster_tile::coop_128x256},   // 256 pairs: two waves or more
                              shape_t{4224, 2152, cluster_tile::coop_128x256}})  // 153 (odd tile rows)
    EXPECT_EQ(cluster_coop_tile(m, n, 66), faster) << m << "x" << n;
}

#include "kernels/gemm/tc/repack.hpp"

namespace {
using memlab::detail::gemm_tc::plan_repack;

memlab::gemm_tc_shape sized(std::int64_t m, std::int64_t n, std::int64_t k, gemm_op a, gemm_op b,
                            gemm_tc_input in = gemm_tc_input::bf16) {
  memlab::gemm_tc_shape s = shape(a, b, in, true);
  s.m = m;
  s.n = n;
  s.k = k;
  return s;
}

// automatic copies the operand that is not K-major and aligned, and runs the canonical layout's rung on the copy.
TEST(GemmTcRepack, OtherLayoutsRunOnTheCanonicalRungAfterACopy) {
  auto const h = target(90, true, 90);
  auto p = plan_repack(sized(4096, 4096, 4096, gemm_op::n, gemm_op::n), true, false, h);  // B stored k x n
  EXPECT_FALSE(p.a);
  EXPECT_TRUE(p.b);
  EXPECT_EQ(gemm_tc_rung::cluster, p.rung);
  p = plan_repack(sized(4096, 4096, 4096, gemm_op::t, gemm_op::t), false, true, h);  // A stored k x m
  EXPECT_TRUE(p.a);
  EXPECT_FALSE(p.b);
  p = plan_repack(sized(4096, 4096, 4096, gemm_op::t, gemm_op::n), false, false, h);  // both
  EXPECT_TRUE(p.a && p.b);
  // An A100 (or an 80-virtual image on Hopper) runs the copy on rung 2.
  EXPECT_EQ(gemm_tc_rung::mma_sync, plan_repack(sized(4096, 4096, 4096, gemm_op::n, gemm_op::n), true, false, target(80, false, 80)).rung);
  // Canonical and aligned: nothing to copy.
  EXPECT_EQ(gemm_tc_rung::automatic, plan_repack(sized(4096, 4096, 4096, gemm_op::n, gemm_op::t), true, true, h).rung);
}

// B stored k x n in rows of whole 16-byte units (b_kn): read as stored (BF16, FP16 on sm_90a) by
// rung 6's cooperative kernels, or rung 5 where m <= 128, at every size; copied for FP8 and on an
// A100 (for rung 2). Where A needs a copy too, A alone is copied and B read as stored. An A stored
// k x m in such rows (a_km) is read as stored by rung 6 (m > 128), else copied. `copy` mode copies
// them instead.
TEST(GemmTcRepack, TransposedOperandsAreReadAsStored) {
  namespace tc = memlab::detail::gemm_tc;
  auto const h = target(90, true, 90);
  auto const nn = [](std::int64_t m, std::int64_t n, std::int64_t k) { return sized(m, n, k, gemm_op::n, gemm_op::n); };
  auto const as_stored = [&](memlab::gemm_tc_shape const& s) { return plan_repack(s, true, false, h, true).rung == gemm_tc_rung::automatic; };
  for (auto const& s : {nn(128, 4096, 4096), sized(16, 4096, 4096, gemm_op::n, gemm_op::n, gemm_tc_input::f16), nn(16, 16, 16),
                        nn(1024, 4096, 4096), nn(2048, 4096, 4096), nn(3000, 5000, 2000), nn(4096, 4096, 4096), nn(8192, 8192, 1024)})
    EXPECT_TRUE(as_stored(s)) << s.m << "x" << s.n << "x" << s.k;
  EXPECT_EQ(gemm_tc_rung::persistent, memlab::gemm_tc_select(nn(16, 16, 16), h));
  EXPECT_EQ(gemm_tc_rung::persistent, memlab::gemm_tc_select(nn(128, 4096, 4096), h));
  EXPECT_EQ(gemm_tc_rung::cluster, memlab::gemm_tc_select(nn(4096, 4096, 4096), h));
  EXPECT_TRUE(plan_repack(nn(128, 4096, 4096), true, false, h, false).b);  // misaligned: copied
  EXPECT_TRUE(plan_repack(sized(128, 4096, 4096, gemm_op::n, gemm_op::n, gemm_tc_input::e4m3), true, false, h, true).b);
  // A stored k x m too: A copied alone, B read as stored, on the rung that reads it.
  for (auto [m, rung] : {std::pair{128, gemm_tc_rung::persistent}, std::pair{4096, gemm_tc_rung::cluster}}) {
    auto const a_only = plan_repack(sized(m, 4096, 4096, gemm_op::t, gemm_op::n), false, false, h, true);
    EXPECT_TRUE(a_only.a);
    EXPECT_FALSE(a_only.b);
    EXPECT_EQ(rung, a_only.rung);
  }
  // A stored k x m in whole 16-byte rows (a_km): read as stored by rung 6, with B either way.
  for (gemm_op ob : {gemm_op::t, gemm_op::n}) {
    auto const plan = plan_repack(sized(4096, 4096, 4096, gemm_op::t, ob), false, ob == gemm_op::t, h, ob == gemm_op::n, true);
    EXPECT_EQ(gemm_tc_rung::automatic, plan.rung);
    EXPECT_FALSE(plan.a || plan.b);
    // m <= 128: rung 5 reads no transposed A, so A is copied (alone) for it.
    auto const decode = plan_repack(sized(128, 4096, 4096, gemm_op::t, ob), false, ob == gemm_op::t, h, ob == gemm_op::n, true);
    EXPECT_TRUE(decode.a);
    EXPECT_FALSE(decode.b);
    EXPECT_EQ(gemm_tc_rung::persistent, decode.rung);
  }
  // Below the copy's size threshold A is not copied at all: wmma reads both (as before).
  EXPECT_EQ(gemm_tc_rung::automatic, plan_repack(sized(16, 16, 16, gemm_op::t, gemm_op::n), false, false, h, true).rung);
  EXPECT_EQ(gemm_tc_rung::wmma, memlab::gemm_tc_select(sized(16, 16, 16, gemm_op::t, gemm_op::n), h));
  EXPECT_EQ(gemm_tc_rung::mma_sync, plan_repack(nn(128, 4096, 4096), true, false, target(80, false, 80), true).rung);
  {
    tc::transposed_scope const forced(tc::transposed_mode::copy);
    EXPECT_FALSE(as_stored(nn(128, 4096, 4096)));
    EXPECT_EQ(gemm_tc_rung::cluster, plan_repack(nn(4096, 4096, 4096), true, false, h, true).rung);
    auto const both = plan_repack(sized(4096, 4096, 4096, gemm_op::t, gemm_op::n), false, false, h, true, true);
    EXPECT_TRUE(both.a && both.b);
  }
  EXPECT_EQ(tc::gemm_tc_transposed_mode(), tc::transposed_mode::as_stored);
}

TEST(GemmTcRepack, NoCopyWhereItDoesNotPay) {
  auto const h = target(90, true, 90);
  // Tiny products: the copy's launch costs about as much as the product on wmma.
  EXPECT_EQ(gemm_tc_rung::automatic, plan_repack(sized(64, 64, 64, gemm_op::n, gemm_op::n), true, false, h).rung);
  EXPECT_EQ(gemm_tc_rung::automatic, plan_repack(sized(100, 128, 128, gemm_op::t, gemm_op::t), false, true, h).rung);
  EXPECT_EQ(gemm_tc_rung::cluster, plan_repack(sized(256, 256, 256, gemm_op::n, gemm_op::n), true, false, h).rung);
  // A decode batch whose weights are stored k x n: copying B (32 MB) and running rung 5 beats wmma's k loop.
  EXPECT_EQ(gemm_tc_rung::persistent, plan_repack(sized(16, 4096, 4096, gemm_op::n, gemm_op::n), true, false, h).rung);
  EXPECT_TRUE(plan_repack(sized(16, 4096, 4096, gemm_op::t, gemm_op::t), false, true, h).a);
  // Turing copies FP16 onto its rung 2 kernel; BF16 has no rung there at all; Volta has no rung 2.
  auto const t4 = target(75, false, 75);
  EXPECT_EQ(gemm_tc_rung::mma_sync, plan_repack(sized(4096, 4096, 4096, gemm_op::n, gemm_op::n, gemm_tc_input::f16), true, false, t4).rung);
  EXPECT_EQ(gemm_tc_rung::automatic, plan_repack(sized(4096, 4096, 4096, gemm_op::n, gemm_op::n), true, false, t4).rung);
}

TEST(GemmTcRepack, E4m3CopiesAtAnySize) {
  auto const h = target(90, true, 90);
  auto const p = plan_repack(sized(64, 64, 64, gemm_op::n, gemm_op::n, gemm_tc_input::e4m3), true, false, h);
  EXPECT_TRUE(p.b);
  EXPECT_EQ(gemm_tc_rung::persistent, p.rung);  // m <= 128
  EXPECT_EQ(gemm_tc_rung::mma_sync,
            plan_repack(sized(64, 64, 64, gemm_op::t, gemm_op::t, gemm_tc_input::e4m3), false, true, target(89, false, 89)).rung);
  // No FP8 tensor cores (sm_86): nothing to copy for.
  EXPECT_EQ(gemm_tc_rung::automatic,
            plan_repack(sized(64, 64, 64, gemm_op::n, gemm_op::n, gemm_tc_input::e4m3), true, false, target(89, false, 86)).rung);
}

}  // namespace

// Stream-K's split (cluster_stream_k_dp): the full waves' cluster tiles walked whole, the partial
// wave's split; none split where the waves are whole, there is no full wave, a tile has one
// k-block, or (the rule) the partial wave leaves clusters idle for fewer than
// stream_k_min_idle_kblocks k-blocks.
TEST(GemmTcClusterPlan, StreamKSplitsThePartialWave) {
  using memlab::detail::gemm_tc::cluster_stream_k_dp;
  using memlab::detail::gemm_tc::cluster_stream_k_mode;
  using memlab::detail::gemm_tc::stream_k_min_idle_kblocks;
  auto const rule = cluster_stream_k_mode::automatic, on = cluster_stream_k_mode::on, off = cluster_stream_k_mode::off;
  // 4096^3 at 128 x 256: 256 pairs on 66 clusters, 3 waves and 58 pairs, 64 k-blocks a tile: the
  // partial wave idles 8 x 64 k-blocks, 7.8 a cluster, under the rule's threshold.
  EXPECT_LT((66 - 58) * 64, stream_k_min_idle_kblocks * 66);
  EXPECT_EQ(cluster_stream_k_dp(256, 66, 64, rule), 256);
  EXPECT_EQ(cluster_stream_k_dp(256, 66, 64, on), 198);
  EXPECT_EQ(cluster_stream_k_dp(256, 66, 64, off), 256);
  EXPECT_EQ(cluster_stream_k_dp(289, 66, 65, rule), 264);    // 4097^3: 4 waves and 25 pairs, 40 idle a cluster
  EXPECT_EQ(cluster_stream_k_dp(1024, 66, 128, rule), 990);  // 8192^3: 15 waves and 34 pairs, 62 idle a cluster
  EXPECT_EQ(cluster_stream_k_dp(128, 66, 128, rule), 128);   // 1024x8192x8192: one wave and 62 pairs, 7.8 idle
  EXPECT_EQ(cluster_stream_k_dp(128, 66, 128, on), 66);
  EXPECT_EQ(cluster_stream_k_dp(264, 66, 64, on), 264);      // whole waves
  EXPECT_EQ(cluster_stream_k_dp(40, 66, 64, on), 40);        // no full wave
  EXPECT_EQ(cluster_stream_k_dp(256, 66, 1, on), 256);       // one k-block a tile: nothing to split
  // The split k-blocks must fit an int (the kernel counts them so).
  EXPECT_EQ(cluster_stream_k_dp(256, 66, std::int64_t{1} << 26, on), 256);
}
