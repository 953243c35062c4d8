// The GEMM default for other GPUs' limits (memlab::gemm_select_variant): a pure function of
// the shape, the device's limits and the image, checked here without a GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "kernels/gemm/gemm_kernels.hpp"
#include "memlab/error.hpp"
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

// ---- the dispatcher (gemm_select / gemm_candidates): plans for any shape -------------------
memlab::gemm_shape shape(long long m, long long n, long long k, long long batch = 1, bool ta = false, bool tb = false) {
  memlab::gemm_shape s;
  s.m = m, s.n = n, s.k = k, s.batch = batch, s.trans_a = ta, s.trans_b = tb;
  return s;
}

TEST(GemmDispatch, PlanNamesRoundTrip) {
  auto const p = memlab::gemm_parse_plan("tile_64x64/s8");
  EXPECT_EQ(p.kernel, "tile_64x64");
  EXPECT_EQ(p.splits, 8);
  EXPECT_EQ(p.name(), "tile_64x64/s8");
  EXPECT_EQ(memlab::gemm_parse_plan("gemv").name(), "gemv");
  EXPECT_EQ(memlab::gemm_parse_plan("cp_async_64x64").splits, 1);
  for (char const* bad : {"nope", "tile_64x64/s0", "tile_64x64/s", "tile_64x64/sx", "warp_tiled/s2", "gemv/s-1"})
    EXPECT_THROW(memlab::gemm_parse_plan(bad), memlab::error) << bad;
}

TEST(GemmDispatch, LargeSquaresKeepTheBigTileWhole) {
  for (auto const& t : {a100, h100}) {
    for (long long n : {4096, 8192, 16384}) {
      auto const p = memlab::gemm_select(shape(n, n, n), t);
      EXPECT_EQ(p.name(), "tile_128x256") << n << " on " << t.sm_count << " SMs";
    }
  }
}

TEST(GemmDispatch, OnePastATileMultipleKeepsTheBigTile) {
  // 4097^3: the ladder's launcher runs 32 x 16 whole tiles and the 1-wide strips apart.
  EXPECT_EQ(memlab::gemm_select(shape(4097, 4097, 4097), h100).name(), "tile_128x256");
}

TEST(GemmDispatch, DeepKSmallOutputSplitsKToFillTheSms) {
  // 256 x 256 x 65536: 2 to 16 output tiles for 132 SMs; each must not walk all of K.
  auto const p = memlab::gemm_select(shape(256, 256, 65536), h100);
  EXPECT_GE(p.splits, 8) << p.name();
  auto const q = memlab::gemm_select(shape(128, 128, 131072), h100);
  EXPECT_GE(q.splits, 16) << q.name();
  // Shallow K never splits below the minimum chunk (64).
  EXPECT_EQ(memlab::gemm_select(shape(256, 256, 16), h100).splits, 1);
  EXPECT_EQ(memlab::gemm_select(shape(1024, 1024, 16), h100).splits, 1);
  for (auto const& c : memlab::gemm_candidates(shape(256, 256, 100), h100)) EXPECT_EQ(c.splits, 1) << c.name();
  // 256^3: 32 tiles of 32 x 64 walk 32 steps of 8 one after the other (9.7 us against
  // cuBLAS's 6.8 on the H200); 4 chunks of 64 give 128 blocks.
  EXPECT_GE(memlab::gemm_select(shape(256, 256, 256), h100).splits, 2);
  // A tiny output over a very deep K splits past the old cap of 128 so every SM holds
  // several blocks' copies in flight (64 x 64 x 65536: 2 tiles x 128 = 1.9 blocks an SM).
  EXPECT_GE(memlab::gemm_select(shape(64, 64, 65536), h100).splits, 256);
}

TEST(GemmDispatch, SplitKReductionGroupsFollowTheOutputSize) {
  auto const detail_gemm_reduce_groups = [](long long outputs, int splits) {
    return memlab::detail::gemm::splitk_reduce_groups(outputs, splits);
  };
  EXPECT_EQ(detail_gemm_reduce_groups(16 * 16, 1024), 8);  // 256 outputs: 8 groups of 128 splits
  EXPECT_EQ(detail_gemm_reduce_groups(64 * 64, 256), 8);
  EXPECT_EQ(detail_gemm_reduce_groups(128 * 128, 256), 4);  // 65536 threads
  EXPECT_EQ(detail_gemm_reduce_groups(256 * 256, 64), 1);
  EXPECT_EQ(detail_gemm_reduce_groups(16, 2), 2);  // never more groups than splits
  EXPECT_EQ(detail_gemm_reduce_groups(16, 1), 1);
}

TEST(GemmDispatch, SkinnyShapesTakeTheGemvKernels) {
  for (auto const& s : {shape(1, 4096, 4096), shape(4096, 1, 4096), shape(1, 4096, 11008)}) {
    auto const p = memlab::gemm_select(s, h100);
    EXPECT_EQ(p.kernel, "gemv") << s.m << "x" << s.n << "x" << s.k;
  }
  // A small side of 16 on the stream kernel (the big operand contiguous along the outputs):
  // a split tile_32x64 beat it on the H200 (1.4-2.6x), so it is not offered there when the
  // image has the cp.async tiles.
  for (auto const& s : {shape(16, 11008, 4096), shape(4096, 16, 4096, 1, true, true)}) {
    for (auto const& c : memlab::gemm_candidates(s, h100)) EXPECT_NE(c.kernel, "gemv") << c.name();
  }
  // The dot kernel (the big operand contiguous along k) is offered when both sides are at
  // most 16, split so that every SM holds several blocks: 16 x 16 x 131072 ran at 1.64x
  // cuBLAS on the H200. With one side 16 and the other large it is not offered: 4096x16x4096
  // on gemv/s2 ran at 0.45 of cuBLAS against 0.60 for a split tile_32x64.
  for (auto const& s : {shape(16, 16, 131072), shape(16, 16, 4096, 1, false, true)}) {
    auto const p = memlab::gemm_select(s, h100);
    EXPECT_EQ(p.kernel, "gemv") << s.m << "x" << s.n << "x" << s.k;
    EXPECT_GT(p.splits, 1) << p.name();
  }
  for (auto const& s : {shape(4096, 16, 4096), shape(16, 4096, 4096, 1, false, true)}) {
    for (auto const& c : memlab::gemm_candidates(s, h100)) EXPECT_NE(c.kernel, "gemv") << c.name();
  }
  // The 64 x 16 tile, at its measured fit, wins where outputs are 16 wide against a large m
  // (4096x16x4096 on the H200: tile_64x16/s8 1.055x cuBLAS, tile_32x64/s4 0.50) and loses to
  // the dot kernel at 8 (4096x8x4096: gemv/s3 32.7 us, tile_64x16/s8 40.9 us) and to wider
  // tiles at 64 and up (between 17 and 32 the model may take two of its columns: unmeasured).
  auto const p16 = memlab::gemm_select(shape(4096, 16, 4096), h100);
  EXPECT_EQ(p16.kernel, "tile_64x16") << p16.name();
  EXPECT_GT(p16.splits, 1) << p16.name();
  EXPECT_EQ(memlab::gemm_select(shape(4096, 8, 4096), h100).kernel, "gemv");
  for (auto const& s : {shape(4096, 64, 4096), shape(4096, 256, 4096), shape(4096, 4096, 4096)})
    EXPECT_NE(memlab::gemm_select(s, h100).kernel, "tile_64x16") << s.m << "x" << s.n << "x" << s.k;
  // n <= 16 with A contiguous along k: one block an SM reached 1.0 TB/s (4096x8x4096, 67 us):
  // the split must give at least ~2.5 blocks an SM, and no more than one wave of the
  // resident blocks (4 an SM for n = 1, 3 for n = 8: a partial second wave is a slow tail).
  for (auto const& [s, resident] : {std::pair{shape(4096, 1, 4096), 4}, std::pair{shape(4096, 8, 4096), 3}}) {
    auto const p = memlab::gemm_select(s, h100);
    EXPECT_EQ(p.kernel, "gemv");
    EXPECT_GE(128 * p.splits * 2, 5 * 132) << p.name();
    EXPECT_LE(128 * p.splits, resident * 132) << p.name();
  }
  // m = 1 on the stream kernel (256 outputs a block): at least ~2.5 blocks an SM (two
  // reached 2.6 TB/s on the H200, cuBLAS 3.4).
  for (auto const& s : {shape(1, 4096, 4096), shape(1, 11008, 4096), shape(1, 4096, 11008)}) {
    auto const p = memlab::gemm_select(s, h100);
    EXPECT_EQ(p.kernel, "gemv");
    EXPECT_GE((s.n + 255) / 256 * p.splits * 2, 5 * 132) << s.n << "x" << s.k << ": " << p.name();
  }
  EXPECT_NE(memlab::gemm_select(shape(64, 4096, 4096), h100).kernel, "gemv");  // not eligible: m > 16
  // One GEMV of 4096 x 4096 has 16 blocks of 256 outputs: K is split to fill the GPU.
  EXPECT_GT(memlab::gemm_select(shape(1, 4096, 4096), h100).splits, 1);
}

TEST(GemmDispatch, TinySquaresTakeTheSmallestTileWhole) {
  // 128x128x128 on the H100: tile_64x16 whole (16 blocks) 3.9 us, tile_32x64 whole 5.8,
  // tile_32x64/s2 6.6 (its reduce is a second launch), cuBLAS 4.6. Its fit scales only its
  // DRAM time: a whole-model fit priced the 8-step k loop at 11.5 us.
  auto const p = memlab::gemm_select(shape(128, 128, 128), h100);
  EXPECT_EQ(p.name(), "tile_64x16");
  EXPECT_EQ(memlab::gemm_select(shape(256, 256, 16), h100).splits, 1);
}

TEST(GemmDispatch, SplitCountsAreTheOnesTheChunksGive) {
  // k = 11008 in chunks of 128: the chosen count must reproduce its own chunk.
  for (auto const& s : {shape(1, 4096, 11008), shape(256, 256, 11008), shape(128, 128, 131072)})
    for (auto const& c : memlab::gemm_candidates(s, h100)) {
      if (c.splits == 1) continue;
      int const granule = c.kernel == "gemv" ? 128 : 8;
      int const chunk = ((static_cast<int>(s.k) + c.splits - 1) / c.splits + granule - 1) / granule * granule;
      EXPECT_EQ((static_cast<int>(s.k) + chunk - 1) / chunk, c.splits) << c.name();
    }
  // A GEMV of 4096 outputs over k = 11008 splits K (the DRAM-bound kernel, not a tile).
  EXPECT_EQ(memlab::gemm_select(shape(1, 4096, 11008), h100).kernel, "gemv");
}

TEST(GemmDispatch, PartialWaveIsAvoided) {
  // 7 x 19 = 133 tiles of 128 x 256 on 132 SMs (one per SM): a second wave for one tile.
  auto const p = memlab::gemm_select(shape(7 * 128, 19 * 256, 4096), h100);
  EXPECT_NE(p.name(), "tile_128x256") << p.name();
}

TEST(GemmDispatch, WithoutCpAsyncTheLadderAndGemvRemain) {
  EXPECT_EQ(memlab::gemm_select(shape(4096, 4096, 4096), t4).name(), "warp_tiled");
  EXPECT_EQ(memlab::gemm_select(shape(1, 4096, 4096), t4).kernel, "gemv");
  for (auto const& c : memlab::gemm_candidates(shape(300, 300, 300, 4, true), t4))
    EXPECT_EQ(c.kernel.rfind("tile_", 0), std::string::npos) << c.name();
}

TEST(GemmDispatch, EveryCandidateRunsOnItsTargetAndTheFirstIsTheChoice) {
  for (auto const& t : {t4, a100, rtx3090, l4, h100})
    for (long long m : {1, 16, 130, 4096})
      for (long long k : {0, 1, 16, 4097, 65536})
        for (bool ta : {false, true}) {
          auto const s = shape(m, 260, k, m == 130 ? 7 : 1, ta, !ta);
          auto const c = memlab::gemm_candidates(s, t);
          ASSERT_FALSE(c.empty());
          EXPECT_EQ(c.front().name(), memlab::gemm_select(s, t).name());
          for (std::size_t i = 0; i < c.size(); ++i) {
            EXPECT_EQ(memlab::gemm_plan_unavailable(c[i], s, t), "") << c[i].name();
            EXPECT_GE(c[i].splits, 1);
            if (i > 0) EXPECT_LE(c[i - 1].predicted_us, c[i].predicted_us);
          }
        }
}

TEST(GemmDispatch, UnavailablePlansSayWhy) {
  EXPECT_NE(memlab::gemm_plan_unavailable(memlab::gemm_parse_plan("tile_64x64"), shape(64, 64, 64), t4)
                .find("cp.async needs sm_80"),
            std::string::npos);
  EXPECT_NE(memlab::gemm_plan_unavailable(memlab::gemm_parse_plan("gemv"), shape(64, 64, 64), h100).find("<= 16"),
            std::string::npos);
  auto unaligned = shape(4, 4096, 64);
  unaligned.aligned = false;
  EXPECT_NE(memlab::gemm_plan_unavailable(memlab::gemm_parse_plan("gemv_v4"), unaligned, h100), "");
  EXPECT_EQ(memlab::gemm_plan_unavailable(memlab::gemm_parse_plan("gemv"), unaligned, h100), "");
}

TEST(GemmDispatch, WorkspaceHoldsPartialsAndPackedTransposes) {
  EXPECT_EQ(memlab::gemm_workspace_bytes(shape(256, 256, 4096), memlab::gemm_parse_plan("tile_64x64")), 0u);
  // 4 splits of a 256 x 256 output, 2 batches: 2 * 4 * 256 * 256 floats.
  EXPECT_EQ(memlab::gemm_workspace_bytes(shape(256, 256, 4096, 2), memlab::gemm_parse_plan("tile_64x64/s4")),
            2u * 4u * 256u * 256u * 4u);
  // n = 10 rows of partials are padded to 12 floats (16-byte aligned rows); 256-byte rounding.
  EXPECT_EQ(memlab::gemm_workspace_bytes(shape(3, 10, 4096), memlab::gemm_parse_plan("tile_32x64/s2")),
            (2u * 3u * 12u * 4u + 255u) / 256u * 256u);
  // op(A) = A^T packs A (m x k, k padded to 4) before the tiles.
  EXPECT_EQ(memlab::gemm_workspace_bytes(shape(64, 64, 30, 1, true), memlab::gemm_parse_plan("tile_64x64")),
            (64u * 32u * 4u + 255u) / 256u * 256u);
  // A split that collapses (k = 100 in chunks of 8: s3 gives chunks of 40, 3 splits).
  EXPECT_GT(memlab::gemm_workspace_bytes(shape(64, 64, 100), memlab::gemm_parse_plan("tile_64x64/s3")), 0u);
  EXPECT_EQ(memlab::gemm_workspace_bytes(shape(64, 64, 8), memlab::gemm_parse_plan("tile_64x64/s3")), 0u);
  // The skinny kernels pack nothing; their partials are s_count x x_count per split.
  EXPECT_EQ(memlab::gemm_workspace_bytes(shape(4, 1000, 4096, 1, true, true), memlab::gemm_parse_plan("gemv/s4")),
            (4u * 4u * 1000u * 4u + 255u) / 256u * 256u);
}

TEST(GemmDispatch, ShapeOfFoldsColumnMajorIntoRowMajor) {
  memlab::gemm_params p;
  p.order = memlab::gemm_order::col_major;
  p.op_a = memlab::gemm_op::t;
  p.m = 3, p.n = 5, p.k = 7, p.batch = 2;
  p.lda = 8, p.ldb = 8, p.ldc = 4, p.stride_a = 64, p.stride_b = 64, p.stride_c = 24;
  auto const s = memlab::gemm_shape_of(p);
  EXPECT_EQ(s.m, 5);  // C^T = op(B)^T op(A)^T
  EXPECT_EQ(s.n, 3);
  EXPECT_EQ(s.k, 7);
  EXPECT_FALSE(s.trans_a);  // op_b = N
  EXPECT_TRUE(s.trans_b);   // op_a = T
  EXPECT_TRUE(s.aligned);   // null pointers are 16-byte aligned; every ld and stride a multiple of 4
  p.ldc = 5;
  EXPECT_FALSE(memlab::gemm_shape_of(p).aligned);
}

TEST(GemmDispatch, SplitPartialsStayBounded) {
  for (auto const& s : {shape(2048, 2048, 1 << 20), shape(8192, 8192, 1 << 18), shape(16, 100000, 1 << 20),
                        shape(1024, 1024, 1 << 22, 4)})
    for (auto const& c : memlab::gemm_candidates(s, h100)) {
      std::size_t const ws = memlab::gemm_workspace_bytes(s, c);
      EXPECT_LE(ws, std::size_t(256) << 20) << c.name() << " at " << s.m << "x" << s.n << "x" << s.k;
    }
}

TEST(GemmDispatch, PlanModelMatchesTheCandidates) {
  for (auto const& s : {shape(3000, 5000, 2000), shape(1, 4096, 4096), shape(64, 64, 65536), shape(7, 9, 11, 3)})
    for (auto const& c : memlab::gemm_candidates(s, h100))
      EXPECT_DOUBLE_EQ(memlab::gemm_plan_model_us(c, s, h100), c.predicted_us) << c.name();
}

TEST(GemmDispatch, TheModelIsAPureFunction) {
  auto const s = shape(3000, 5000, 2000);
  auto const a = memlab::gemm_candidates(s, h100), b = memlab::gemm_candidates(s, h100);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].name(), b[i].name());
    EXPECT_EQ(a[i].predicted_us, b[i].predicted_us);
  }
}

}  // namespace
