// The hierarchy atlas's kernels: every chase ends where the host says, every on-chip chain
// gives the host's value, every footprint stream reads (and writes) every word it should.
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
    auto const next = mh::random_cycle(slots, 7 + stride_words);
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

TEST(HierarchyOnChip, EveryChainGivesTheHostsValue) {
  MEMLAB_REQUIRE_GPU();
  for (auto op : {mh::onchip_op::shared_load, mh::onchip_op::constant_uniform, mh::onchip_op::constant_divergent,
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
