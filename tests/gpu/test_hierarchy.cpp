// The hierarchy atlas's kernels: every chase ends where the host says, every on-chip chain
// gives the host's value, every footprint stream reads (and writes) every word it should.
#include <algorithm>
#include <numeric>
#include <random>

#include "gpu_test.hpp"
#include "kernels/hierarchy/hierarchy.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"

namespace mh = memlab::hierarchy;

TEST(HierarchyChase, EveryPathEndsWhereTheHostSays) {
  MEMLAB_REQUIRE_GPU();
  for (std::size_t stride_words : {std::size_t{1}, std::size_t{32}, std::size_t{1024}}) {
    std::size_t const slots = 1000;
    // The sequential cycle at the last stride (the published P-chase's order).
    auto const next = stride_words == 1024 ? mh::sequential_cycle(slots) : mh::random_cycle(slots, 7 + stride_words);
    memlab::device_buffer<std::uint32_t> chain(slots * stride_words);
    chain.fill_bytes(0xFF);  // a word the chain should never read leads far out of bounds
    mh::write_chain(chain.data(), next, stride_words, nullptr);
    for (auto path : {mh::load_path::ca, mh::load_path::cg, mh::load_path::nc}) {
      auto const r = mh::pointer_chase(chain.data(), stride_words, path, 3, 500, 3000, nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      EXPECT_EQ(r.last_slot, mh::follow(next, 3, 3500)) << mh::to_string(path) << " stride " << stride_words;
      EXPECT_GT(r.cycles_per_load, 1.0);
      EXPECT_GT(r.ns_per_load, 0.0);
    }
  }
}

TEST(HierarchyChase, SlotChainEndsWhereTheHostSays) {
  MEMLAB_REQUIRE_GPU();
  for (std::size_t stride_words : {std::size_t{1}, std::size_t{4096}}) {
    std::size_t const stagger = stride_words >= 512 ? 32 : 0;  // one 128-byte line a step
    std::size_t const slots = 777;
    auto const next = mh::random_cycle(slots, 21 + stride_words);
    memlab::device_buffer<std::uint32_t> chain(slots * stride_words);
    chain.fill_bytes(0xFF);  // a word the chain should never read leads far out of bounds
    mh::write_slot_chain(chain.data(), next, stride_words, stagger, nullptr);
    auto const r = mh::slot_chase(chain.data(), stride_words, stagger, 5, 300, 2000, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    EXPECT_EQ(r.last_slot, mh::follow(next, 5, 2300)) << "stride " << stride_words;
    EXPECT_GT(r.cycles_per_load, 1.0);
    EXPECT_GT(r.ns_per_load, 0.0);
  }
  memlab::device_buffer<std::uint32_t> small(64);
  EXPECT_THROW(mh::write_slot_chain(small.data(), mh::random_cycle(4, 1), 16, 32, nullptr), memlab::error);
}

TEST(HierarchyChase, ACarveOutTakesItsShareOfTheL1) {
  MEMLAB_REQUIRE_GPU();
  int dev = 0, per_sm = 0, optin = 0, reserved = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev), cudaSuccess);
  // Half the SM's shared memory in 128-byte lines: inside the L1 with no carve-out, far past
  // what is left of it when the block holds all the shared memory it may (every GPU since
  // Volta keeps at most 32 KiB of L1 then).
  std::size_t const stride_words = 32, slots = static_cast<std::size_t>(per_sm) / 2 / 128;
  auto const next = mh::random_cycle(slots, 99);
  memlab::device_buffer<std::uint32_t> chain(slots * stride_words);
  mh::write_chain(chain.data(), next, stride_words, nullptr);
  auto chase = [&](int dynamic) {
    auto const r = mh::pointer_chase_carveout(chain.data(), stride_words, 0, 2 * slots, 4096, dynamic, nullptr);
    EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
    EXPECT_EQ(r.last_slot, mh::follow(next, 0, 2 * slots + 4096)) << dynamic << " bytes of shared memory";
    return r.cycles_per_load;
  };
  mh::carveout_readback back = mh::set_chase_carveout(0, 0);
  EXPECT_EQ(back.preferred_percent, 0);
  EXPECT_EQ(back.max_dynamic_bytes, 0);
  double const all_l1 = chase(0);
  int const most = optin - reserved;
  back = mh::set_chase_carveout(most, 100);
  EXPECT_EQ(back.preferred_percent, 100);
  EXPECT_EQ(back.max_dynamic_bytes, most);
  double const most_shared = chase(most);
  if (!memlab::test::small_sizes())  // the sanitizers' instrumentation swamps the latencies
    EXPECT_GT(most_shared, 2 * all_l1) << "the footprint should fit L1 only when the block holds no shared memory";
  EXPECT_THROW(mh::set_chase_carveout(0, 101), memlab::error);
}

TEST(HierarchyChase, RandomCycleVisitsEverySlotOnce) {
  auto const next = mh::random_cycle(4097, 11);
  std::vector<int> seen(next.size(), 0);
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < next.size(); ++i) {
    ++seen[s];
    s = next[s];
  }
  EXPECT_EQ(s, 0u) << "back at the start after exactly n steps";
  for (int c : seen) ASSERT_EQ(c, 1);
}

TEST(HierarchyChase, SequentialCycleStepsOneSlotAndWraps) {
  auto const next = mh::sequential_cycle(5);
  EXPECT_EQ(next, (std::vector<std::uint32_t>{1, 2, 3, 4, 0}));
  EXPECT_EQ(mh::follow(next, 3, 7), 0u);
}

TEST(HierarchyOnChip, EveryChainGivesTheHostsValue) {
  MEMLAB_REQUIRE_GPU();
  for (auto op : {mh::onchip_op::shared_load, mh::onchip_op::shared_load_indexed, mh::onchip_op::constant_uniform, mh::onchip_op::constant_divergent,
                  mh::onchip_op::register_imad, mh::onchip_op::register_ffma}) {
    auto const r = mh::onchip_latency(op, 4096, 1234, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    EXPECT_EQ(r.checksum, mh::onchip_reference(op, 4096, 1234)) << mh::to_string(op);
    EXPECT_GT(r.cycles_per_op, 0.5) << mh::to_string(op);
  }
}

TEST(HierarchyFootprint, EveryWordIsReadAndWritten) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const words = (std::size_t{1} << 16) + 4 * 37;  // not a multiple of the block slices
  std::vector<std::uint32_t> host(words);
  std::mt19937 rng(5);
  for (auto& w : host) w = rng();
  std::uint32_t const total = std::accumulate(host.begin(), host.end(), std::uint32_t{0});
  memlab::device_buffer<std::uint32_t> in(words), out(words), sums(64);
  in.upload(host);
  for (auto mode : {mh::footprint_mode::shared, mh::footprint_mode::partitioned}) {
    for (bool write : {false, true}) {
     for (auto path : {mh::load_path::ca, mh::load_path::cg}) {
      int const blocks = 7, reps = 3;
      out.fill_bytes(0);
      mh::footprint_stream(in.data(), out.data(), words * 4, mode, write, path, reps, blocks, sums.data(), nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const s = sums.download();
      std::uint32_t got = std::accumulate(s.begin(), s.begin() + blocks, std::uint32_t{0});
      std::uint32_t const want = (mode == mh::footprint_mode::shared ? blocks : 1) * reps * total;
      EXPECT_EQ(got, want) << (write ? "read+write " : "read ") << static_cast<int>(mode);
      if (write) {
        auto const o = out.download();
        for (std::size_t i = 0; i < words; ++i) ASSERT_EQ(o[i], host[i] + 1) << i;
      }
     }
    }
  }
  EXPECT_GE(mh::footprint_blocks_per_sm(), 1);
}

TEST(HierarchyGridStride, EveryWordIsReadOncePerRep) {
  MEMLAB_REQUIRE_GPU();
  // Sizes that leave a part round (not a multiple of blocks x chunk), one under a single
  // round, and a single 16-byte piece; random words, summed on the host (an independent path).
  std::size_t const big = memlab::test::small_sizes() ? (std::size_t{1} << 18) + 16 * 37 : (std::size_t{1} << 24) + 16 * 37;
  for (std::size_t bytes : {std::size_t{16}, std::size_t{16} * 1000, big}) {
    std::size_t const words = bytes / 4;
    std::vector<std::uint32_t> host(words);
    std::mt19937 rng(static_cast<unsigned>(bytes));
    for (auto& w : host) w = rng();
    std::uint32_t const total = std::accumulate(host.begin(), host.end(), std::uint32_t{0});
    memlab::device_buffer<std::uint32_t> in(words), sums(512);
    in.upload(host);
    for (int loads : {1, 4, 8, 16})
      for (bool nc : {false, true})
        for (int blocks : {1, 7, 300}) {
          int const reps = blocks == 7 ? 3 : 1;
          sums.fill_bytes(0xFF);
          mh::grid_stride_stream(in.data(), bytes, loads, nc, reps, blocks, sums.data(), nullptr);
          MEMLAB_EXPECT_LAUNCH_OK();
          auto const s = sums.download();
          std::uint32_t const got = std::accumulate(s.begin(), s.begin() + blocks, std::uint32_t{0});
          EXPECT_EQ(got, total * static_cast<std::uint32_t>(reps))
              << bytes << " bytes, " << loads << " loads, nc " << nc << ", " << blocks << " blocks";
        }
  }
  for (int loads : {1, 4, 8, 16}) EXPECT_GE(mh::grid_stride_blocks_per_sm(loads, true), 2) << loads;
  memlab::device_buffer<std::uint32_t> one(4);
  EXPECT_THROW(mh::grid_stride_stream(one.data(), 16, 3, false, 1, 1, one.data(), nullptr), memlab::error);
  EXPECT_THROW(mh::grid_stride_stream(one.data(), 8, 4, false, 1, 1, one.data(), nullptr), memlab::error);
}

// Distributed shared memory needs sm_90 code: skipped with the reason elsewhere.
#define MEMLAB_REQUIRE_CLUSTERS(kernel)                                                        \
  do {                                                                                         \
    auto const why = memlab::unavailable_reason((kernel), memlab::arch::cluster, "ld.shared::cluster"); \
    if (!why.empty()) GTEST_SKIP() << why;                                                     \
  } while (0)

TEST(HierarchyDsmem, ChaseInAnotherBlockEndsWhereTheHostSays) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_CLUSTERS(mh::dsmem_kernel(false));
  for (int cluster : {2, 4, 8}) {
    for (int target : {0, 1, cluster - 1}) {
      auto const r = mh::dsmem_chase(cluster, target, 1024, 5000, 99 + target, nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      EXPECT_EQ(r.last_slot, r.expected_slot) << "cluster " << cluster << " target " << target;
      EXPECT_GT(r.cycles_per_load, 1.0);
    }
  }
}

TEST(HierarchyDsmem, EveryBlockReadsItsNeighboursWords) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_CLUSTERS(mh::dsmem_kernel(true));
  memlab::device_buffer<std::uint32_t> sums(64);
  for (int cluster : {2, 4}) {
    for (int distance : {0, 1}) {
      int const clusters = 3, words = 2048, reps = 2;
      sums.fill_bytes(0);
      mh::dsmem_stream(cluster, clusters, words, distance, reps, sums.data(), nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const s = sums.download();
      std::uint32_t got = std::accumulate(s.begin(), s.begin() + cluster * clusters, std::uint32_t{0});
      EXPECT_EQ(got, mh::dsmem_stream_reference(cluster, clusters, words, distance, reps))
          << "cluster " << cluster << " distance " << distance;
    }
  }
}

// ---- streaming by four paths (hierarchy.tma, hierarchy.inflight) ----------------------------

namespace {

/// Reads `bytes` of the pattern with `plan`; the kernel's checksum must be the host's closed
/// form and every word must have held its index's pattern.
void expect_stream_reads_everything(mh::stream_plan const& plan, std::size_t bytes) {
  memlab::device_buffer<std::uint32_t> data(bytes / 4);
  mh::fill_stream_pattern(data.data(), bytes / 4, nullptr);
  int const blocks = mh::stream_blocks(plan);
  memlab::device_buffer<std::uint32_t> out(2 * static_cast<std::size_t>(blocks));
  out.fill_bytes(0xFF);
  mh::stream_read(data.data(), bytes, plan, out.data(), nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = mh::collect_stream_sums(out.data(), blocks);
  std::string const what = std::string(mh::to_string(plan.method)) + " tile " + std::to_string(plan.tile_bytes) +
                           " w " + std::to_string(plan.tile_w_bytes) + " stages " + std::to_string(plan.stages) +
                           " blocks " + std::to_string(blocks);
  EXPECT_EQ(got.sum, mh::stream_pattern_sum(bytes)) << what;
  EXPECT_EQ(got.mismatches, 0u) << what;
}

std::size_t stream_test_bytes() { return memlab::test::small_sizes() ? (std::size_t{1} << 20) : (std::size_t{8} << 20); }

}  // namespace

TEST(HierarchyStream, HostChecksumIsTheSumOfThePattern) {
  for (std::size_t bytes : {std::size_t{16}, std::size_t{4096}, std::size_t{1} << 20}) {
    std::uint32_t sum = 0;
    for (std::size_t g = 0; g < bytes / 4; ++g) sum += static_cast<std::uint32_t>(g) * mh::stream_pattern;
    EXPECT_EQ(mh::stream_pattern_sum(bytes), sum) << bytes;
  }
}

TEST(HierarchyStream, PlainLoadsReadEveryWordOnce) {
  MEMLAB_REQUIRE_GPU();
  for (std::size_t tile : {std::size_t{4096}, std::size_t{16384}, std::size_t{131072}})
    for (int blocks : {0, 3}) {
      mh::stream_plan p;
      p.method = mh::copy_method::ld_global_v4;
      p.tile_bytes = tile;
      p.blocks = blocks;
      expect_stream_reads_everything(p, stream_test_bytes());
    }
}

TEST(HierarchyStream, CpAsyncRingReadsEveryWordOnce) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_ARCH(mh::copy_kernel(mh::copy_method::cp_async), memlab::arch::cp_async, "cp.async");
  for (std::size_t tile : {std::size_t{1024}, std::size_t{4096}, std::size_t{32768}})
    for (int stages : {1, 3, 4, 8})
      for (int blocks : {0, 5}) {
        mh::stream_plan p;
        p.method = mh::copy_method::cp_async;
        p.tile_bytes = tile;
        p.stages = stages;
        p.blocks = blocks;
        if (tile * stages > (std::size_t{96} << 10)) continue;
        expect_stream_reads_everything(p, stream_test_bytes());
      }
}

TEST(HierarchyStream, BulkCopyRingReadsEveryWordOnce) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_ARCH(mh::copy_kernel(mh::copy_method::bulk), memlab::arch::bulk_copy, "cp.async.bulk");
  for (std::size_t tile : {std::size_t{16}, std::size_t{1024}, std::size_t{16384}, std::size_t{65536}})
    for (int stages : {1, 2, 3, 8})
      for (int blocks : {0, 7, -2}) {  // -2: no block count, two blocks (two rings) per SM
        if (tile * stages * (blocks < 0 ? 2 : 1) > (std::size_t{200} << 10)) continue;
        mh::stream_plan p;
        p.method = mh::copy_method::bulk;
        p.tile_bytes = tile;
        p.stages = stages;
        p.blocks = std::max(blocks, 0);
        p.ctas_per_sm = blocks < 0 ? -blocks : 1;
        expect_stream_reads_everything(p, tile == 16 ? std::size_t{64} << 10 : stream_test_bytes());
      }
}

// TMA needs sm_90 code: skipped elsewhere with the reason memlab::unavailable_reason gives.
TEST(HierarchyStream, TmaBoxesReadEveryWordOnce) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_ARCH(mh::copy_kernel(mh::copy_method::tma), memlab::arch::bulk_copy, "cp.async.bulk.tensor");
  struct box {
    std::size_t w, rows;
  };
  for (box b : {box{32, 32}, box{16, 8}, box{64, 16}, box{256, 64}, box{128, 128}, box{256, 256}, box{1024, 1},
                box{1024, 16}, box{1024, 64}})
    for (int stages : {1, 2, 5})
      for (int blocks : {0, 3, -2}) {  // -2: two blocks (two rings) per SM
        if (b.w * b.rows * stages * (blocks < 0 ? 2 : 1) > (std::size_t{200} << 10)) continue;
        mh::stream_plan p;
        p.method = mh::copy_method::tma;
        p.tile_w_bytes = b.w;
        p.tile_bytes = b.w * b.rows;
        p.stages = stages;
        p.blocks = std::max(blocks, 0);
        p.ctas_per_sm = blocks < 0 ? -blocks : 1;
        expect_stream_reads_everything(p, stream_test_bytes());
      }
}

TEST(HierarchyStream, AWrongWordIsCaught) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const bytes = std::size_t{1} << 20;
  memlab::device_buffer<std::uint32_t> data(bytes / 4);
  mh::fill_stream_pattern(data.data(), bytes / 4, nullptr);
  std::uint32_t const wrong = 12345;
  MEMLAB_CUDA_CHECK(cudaMemcpy(data.data() + 777, &wrong, 4, cudaMemcpyHostToDevice));
  mh::stream_plan p;
  p.method = mh::copy_method::ld_global_v4;
  p.blocks = 2;
  memlab::device_buffer<std::uint32_t> out(4);
  mh::stream_read(data.data(), bytes, p, out.data(), nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = mh::collect_stream_sums(out.data(), 2);
  EXPECT_EQ(got.mismatches, 1u);
  EXPECT_NE(got.sum, mh::stream_pattern_sum(bytes));
  // The warp-specialised rings check the same way (a misplaced box or a stale slot would miscount).
  for (auto m : {mh::copy_method::bulk, mh::copy_method::tma}) {
    if (!memlab::unavailable_reason(mh::copy_kernel(m), memlab::arch::bulk_copy, "cp.async.bulk").empty()) continue;
    mh::stream_plan q;
    q.method = m;
    q.tile_bytes = 8192;
    q.tile_w_bytes = 256;
    q.stages = 3;
    q.blocks = 2;
    mh::stream_read(data.data(), bytes, q, out.data(), nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const r = mh::collect_stream_sums(out.data(), 2);
    EXPECT_EQ(r.mismatches, 1u) << mh::to_string(m);
    EXPECT_NE(r.sum, mh::stream_pattern_sum(bytes)) << mh::to_string(m);
  }
}

TEST(HierarchyStream, BadPlansAreRefusedBeforeAnyWork) {
  MEMLAB_REQUIRE_GPU();
  mh::stream_plan p;
  p.method = mh::copy_method::ld_global_v4;
  p.tile_bytes = 12288;  // 3 loads a thread: not a template
  EXPECT_THROW(mh::check_stream_plan(p, std::size_t{12288} * 4), memlab::error);
  p.method = mh::copy_method::bulk;
  p.tile_bytes = 65536;
  p.stages = 16;  // 1 MiB of shared memory
  EXPECT_THROW(mh::check_stream_plan(p, std::size_t{1} << 24), memlab::error);
  p.stages = 2;
  EXPECT_THROW(mh::check_stream_plan(p, (std::size_t{1} << 24) + 16), memlab::error);  // not whole tiles
  p.method = mh::copy_method::tma;
  p.tile_bytes = 4096;
  p.tile_w_bytes = 24;  // not a multiple of 16 bytes
  EXPECT_THROW(mh::check_stream_plan(p, std::size_t{1} << 24), memlab::error);
  p.tile_w_bytes = 8192;  // wider than a row
  EXPECT_THROW(mh::check_stream_plan(p, std::size_t{1} << 24), memlab::error);
  p.tile_w_bytes = 16;
  p.tile_bytes = 16 * 3;  // 3 rows: the next slot would not be 128-byte aligned
  EXPECT_THROW(mh::check_stream_plan(p, std::size_t{1} << 24), memlab::error);
  p.tile_bytes = 4096;
  p.tile_w_bytes = 256;
  p.ctas_per_sm = 0;
  EXPECT_THROW(mh::check_stream_plan(p, std::size_t{1} << 24), memlab::error);
  p.method = mh::copy_method::bulk;
  p.tile_bytes = 65536;
  p.stages = 2;
  p.ctas_per_sm = 2;  // two rings of 128 KiB: more than an SM's shared memory
  EXPECT_THROW(mh::check_stream_plan(p, std::size_t{1} << 24), memlab::error);
  EXPECT_THROW(mh::parse_copy_method("ld.global"), memlab::error);
  for (auto m : {mh::copy_method::ld_global_v4, mh::copy_method::cp_async, mh::copy_method::bulk, mh::copy_method::tma})
    EXPECT_EQ(mh::parse_copy_method(mh::to_string(m)), m);
}

namespace {

/// Runs `p` on a fresh pattern buffer and compares every block's sum with the host's.
void expect_intake_sums(mh::intake_plan const& p) {
  int const blocks = mh::intake_blocks(p);
  std::size_t const bytes = mh::intake_footprint_bytes(p, blocks);
  memlab::device_buffer<std::uint32_t> data(bytes / 4), out(static_cast<std::size_t>(blocks));
  mh::fill_stream_pattern(data.data(), bytes / 4, nullptr);
  out.fill_bytes(0xFF);
  mh::intake_read(data.data(), p, out.data(), nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  std::vector<std::uint32_t> got(static_cast<std::size_t>(blocks));
  MEMLAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), got.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got, mh::intake_expected_sums(p, blocks))
      << blocks << " blocks, share " << p.share << (p.multicast ? ", multicast" : "") << ", " << p.box_rows << " rows x "
      << p.stages << " stages, " << p.steps << " steps";
}

}  // namespace

TEST(HierarchyIntake, EveryBlockAddsTheRowsItShouldRead) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_ARCH(mh::intake_kernel(false), memlab::arch::bulk_copy, "cp.async.bulk.tensor");
  for (bool multicast : {false, true})
    for (int ctas : {2, 6, 0})  // 0: one a SM
      for (int share : {1, 2, 4})
        for (int rows : {16, 128, 256})
          for (int stages : {1, 3, 6, 8}) {  // 1, 1, 2 and 4 consumer warps
            if (multicast && share % 2 != 0) continue;
            if (rows * 128 * stages > (160 << 10)) continue;
            mh::intake_plan p;
            p.ctas = ctas;
            p.share = share;
            p.multicast = multicast;
            p.box_rows = rows;
            p.stages = stages;
            p.steps = 41;  // not a whole number of rings or rows across
            if (multicast && mh::intake_blocks(p) % 2 != 0) continue;
            expect_intake_sums(p);
          }
}

TEST(HierarchyIntake, AWrongRowIsCaught) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_ARCH(mh::intake_kernel(false), memlab::arch::bulk_copy, "cp.async.bulk.tensor");
  for (bool multicast : {false, true}) {
    mh::intake_plan p;
    p.ctas = 4;
    p.share = 2;
    p.multicast = multicast;
    p.box_rows = 64;
    p.stages = 4;
    p.steps = 9;
    std::size_t const bytes = mh::intake_footprint_bytes(p, 4);
    memlab::device_buffer<std::uint32_t> data(bytes / 4), out(4);
    mh::fill_stream_pattern(data.data(), bytes / 4, nullptr);
    // The word the consumers read of row 40 (in the second half of a box: the peer's load in a
    // multicast pair) of row block 1, which blocks 2 and 3 read in their first box: word 40 % 32.
    std::uint32_t const wrong = 7;
    std::size_t const word = (64 + 40) * (mh::intake_row_bytes / 4) + 40 % 32;
    MEMLAB_CUDA_CHECK(cudaMemcpy(data.data() + word, &wrong, 4, cudaMemcpyHostToDevice));
    mh::intake_read(data.data(), p, out.data(), nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    std::vector<std::uint32_t> got(4);
    MEMLAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), 16, cudaMemcpyDeviceToHost));
    auto const want = mh::intake_expected_sums(p, 4);
    EXPECT_EQ(got[0], want[0]);
    EXPECT_EQ(got[1], want[1]);
    EXPECT_NE(got[2], want[2]) << (multicast ? "multicast" : "own");
    EXPECT_NE(got[3], want[3]) << (multicast ? "multicast" : "own");
  }
}

TEST(HierarchyIntake, BadPlansAreRefusedBeforeAnyWork) {
  MEMLAB_REQUIRE_GPU();
  mh::intake_plan p;
  p.box_rows = 24;  // not a multiple of 16
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.box_rows = 512;  // more rows than a box may have
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.box_rows = 256;
  p.stages = 8;  // 256 KiB of ring
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.stages = 33;
  p.box_rows = 16;
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.stages = 4;
  p.share = 0;
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.share = 3;
  p.multicast = true;  // pairs must read the same rows
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.share = 2;
  p.ctas = 5;  // 2-CTA clusters
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.ctas = 4;
  p.steps = 0;
  EXPECT_THROW(mh::check_intake_plan(p), memlab::error);
  p.steps = 1;
  EXPECT_NO_THROW(mh::check_intake_plan(p));
}

namespace {

/// Issues `launch` on a stream captured into a graph, then runs the graph: what the harness does
/// with a short row's launches.
void run_captured(std::function<void(cudaStream_t)> const& launch) {
  cudaStream_t st = nullptr;
  MEMLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t g = nullptr;
  cudaGraphExec_t ge = nullptr;
  MEMLAB_CUDA_CHECK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  launch(st);
  MEMLAB_CUDA_CHECK(cudaStreamEndCapture(st, &g));
  MEMLAB_CUDA_CHECK(cudaGraphInstantiate(&ge, g, 0));
  MEMLAB_CUDA_CHECK(cudaGraphLaunch(ge, st));
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
  MEMLAB_CUDA_CHECK(cudaGraphExecDestroy(ge));
  MEMLAB_CUDA_CHECK(cudaGraphDestroy(g));
  MEMLAB_CUDA_CHECK(cudaStreamDestroy(st));
}

}  // namespace

// The experiments time prepared launches (setup outside the samples): each issue of one must read
// the buffer afresh, directly and from a graph, and a bad plan must fail at preparation.
TEST(HierarchyPrepared, EachIssueOfAPreparedReadRunsTheWholeRead) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_REQUIRE_ARCH(mh::intake_kernel(false), memlab::arch::bulk_copy, "cp.async.bulk.tensor");
  for (bool multicast : {false, true}) {
    mh::intake_plan p;
    p.ctas = 6;
    p.share = 2;
    p.multicast = multicast;
    p.box_rows = 128;
    p.stages = 4;
    p.steps = 19;
    int const blocks = mh::intake_blocks(p);
    std::size_t const bytes = mh::intake_footprint_bytes(p, blocks);
    memlab::device_buffer<std::uint32_t> data(bytes / 4), out(static_cast<std::size_t>(blocks));
    mh::fill_stream_pattern(data.data(), bytes / 4, nullptr);
    auto const launch = mh::prepare_intake_read(data.data(), p, out.data());
    auto const want = mh::intake_expected_sums(p, blocks);
    for (int issue = 0; issue < 3; ++issue) {
      out.fill_bytes(0xFF);  // poisoned: an issue that reads nothing leaves it so
      if (issue == 2)
        run_captured(launch);
      else
        launch(nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      std::vector<std::uint32_t> got(static_cast<std::size_t>(blocks));
      MEMLAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), got.size() * 4, cudaMemcpyDeviceToHost));
      EXPECT_EQ(got, want) << "intake issue " << issue << (multicast ? ", multicast" : "");
    }
  }
  for (auto m : {mh::copy_method::ld_global_v4, mh::copy_method::cp_async, mh::copy_method::bulk, mh::copy_method::tma}) {
    if (int const need = mh::copy_method_arch(m); need > 0 && !memlab::unavailable_reason(mh::copy_kernel(m), need, "").empty())
      continue;
    mh::stream_plan plan;
    plan.method = m;
    plan.tile_bytes = 16384;
    plan.tile_w_bytes = m == mh::copy_method::tma ? 256 : 0;
    plan.stages = 3;
    plan.blocks = 5;
    std::size_t const bytes = std::size_t{1} << 22;
    memlab::device_buffer<std::uint32_t> data(bytes / 4), out(2 * 5);
    mh::fill_stream_pattern(data.data(), bytes / 4, nullptr);
    auto const launch = mh::prepare_stream_read(data.data(), bytes, plan, out.data());
    for (int issue = 0; issue < 3; ++issue) {
      out.fill_bytes(0xFF);
      if (issue == 2)
        run_captured(launch);
      else
        launch(nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const got = mh::collect_stream_sums(out.data(), 5);
      EXPECT_EQ(got.sum, mh::stream_pattern_sum(bytes)) << mh::to_string(m) << " issue " << issue;
      EXPECT_EQ(got.mismatches, 0u) << mh::to_string(m) << " issue " << issue;
    }
  }
  memlab::device_buffer<std::uint32_t> small(1024), out(256);
  mh::intake_plan bad;
  bad.box_rows = 24;
  EXPECT_THROW((void)mh::prepare_intake_read(small.data(), bad, out.data()), memlab::error);
  mh::stream_plan sbad;
  sbad.method = mh::copy_method::bulk;
  sbad.tile_bytes = 4096;
  EXPECT_THROW((void)mh::prepare_stream_read(small.data(), 4096 + 16, sbad, out.data()), memlab::error);
}

TEST(HierarchyOnChip, NanosecondsComeWithTheCycles) {
  MEMLAB_REQUIRE_GPU();
  auto const r = mh::onchip_latency(mh::onchip_op::register_ffma, 1 << 16, 3, nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  ASSERT_GT(r.ns_per_op, 0.0);
  double const mhz = r.cycles_per_op / r.ns_per_op * 1e3;  // the SM clock the loop ran at
  EXPECT_GT(mhz, 200.0);
  EXPECT_LT(mhz, 4000.0);
}
