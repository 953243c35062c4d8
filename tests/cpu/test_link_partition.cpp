// The link family's arithmetic: peer_allreduce's slices cover a message exactly once for any
// size, rank count and grid (a gap would leave output unwritten, an overlap would race), and
// nccl-tests' sizes and bus-bandwidth factors.
#include <gtest/gtest.h>

#include <vector>

#include "kernels/link/partition.hpp"
#include "memlab/allreduce.hpp"

using namespace memlab::link;

TEST(LinkPartition, OneShotSlicesCoverEveryVectorOnce) {
  for (std::size_t vecs : {0ul, 1ul, 2ul, 7ul, 512ul, 1000ul, 16384ul, 65537ul}) {
    for (unsigned grid : {1u, 2u, 3u, 32u, 132u}) {
      std::vector<int> seen(vecs, 0);
      for (unsigned b = 0; b < grid; ++b) {
        vec_range const r = one_shot_slice(vecs, grid, b);
        for (std::size_t i = r.lo; i < r.hi; ++i) ++seen[i];
      }
      for (std::size_t i = 0; i < vecs; ++i) ASSERT_EQ(1, seen[i]) << vecs << " vectors, grid " << grid << ", at " << i;
    }
  }
}

TEST(LinkPartition, TwoShotSlicesCoverEveryVectorOnceAndStayInTheirShard) {
  for (std::size_t vecs : {0ul, 1ul, 3ul, 5ul, 17ul, 1000ul, 32768ul, 100003ul}) {
    for (int ranks : {1, 2, 3, 4, 7, 8, 16}) {
      for (unsigned grid : {1u, 2u, 5u, 64u, 132u}) {
        std::size_t const len = (vecs + ranks - 1) / ranks;
        std::vector<int> seen(vecs, 0);
        for (int k = 0; k < ranks; ++k)
          for (unsigned b = 0; b < grid; ++b) {
            vec_range const r = two_shot_slice(vecs, ranks, grid, k, b);
            for (std::size_t i = r.lo; i < r.hi; ++i) {
              ++seen[i];
              ASSERT_EQ(static_cast<std::size_t>(k), i / len) << "vector " << i << " outside shard " << k;
            }
          }
        for (std::size_t i = 0; i < vecs; ++i)
          ASSERT_EQ(1, seen[i]) << vecs << " vectors, " << ranks << " ranks, grid " << grid << ", at " << i;
      }
    }
  }
}

TEST(LinkPartition, NcclTestsBusFactors) {
  EXPECT_DOUBLE_EQ(1.0, bus_factor(collective::all_reduce, 2));
  EXPECT_DOUBLE_EQ(1.75, bus_factor(collective::all_reduce, 8));
  EXPECT_DOUBLE_EQ(0.0, bus_factor(collective::all_reduce, 1));
  EXPECT_DOUBLE_EQ(0.5, bus_factor(collective::all_gather, 2));
  EXPECT_DOUBLE_EQ(0.75, bus_factor(collective::reduce_scatter, 4));
  EXPECT_DOUBLE_EQ(0.875, bus_factor(collective::alltoall, 8));
  EXPECT_DOUBLE_EQ(1.0, bus_factor(collective::broadcast, 8));
  EXPECT_DOUBLE_EQ(1.0, bus_factor(collective::reduce, 2));
}

TEST(LinkPartition, NcclTestsSizes) {
  // size = the larger buffer of one rank, in floats here: 1024 floats over 4 ranks.
  auto const ag = shape_of(collective::all_gather, 1024, 4);
  EXPECT_EQ(256u, ag.send);
  EXPECT_EQ(1024u, ag.recv);
  auto const rs = shape_of(collective::reduce_scatter, 1024, 4);
  EXPECT_EQ(1024u, rs.send);
  EXPECT_EQ(256u, rs.recv);
  auto const a2a = shape_of(collective::alltoall, 1026, 4);  // rounded down to whole parts
  EXPECT_EQ(1024u, a2a.send);
  EXPECT_EQ(256u, a2a.part);
  auto const ar = shape_of(collective::all_reduce, 1026, 4);
  EXPECT_EQ(1026u, ar.send);
  EXPECT_EQ(1026u, ar.recv);
  EXPECT_EQ(0u, shape_of(collective::all_gather, 2, 8).part);  // less than one float per rank
}

// peer_allreduce's automatic choice: the thresholds count what a rank pushes (message x (ranks - 1)).
TEST(LinkAllreduceChoice, ThresholdsCountPushedBytes) {
  using memlab::allreduce_algorithm;
  using memlab::allreduce_choice;
  memlab::allreduce_options const opt;  // low_latency to 1 MiB pushed, one_shot to 3 MiB pushed, slots of 8 MiB
  constexpr std::size_t kib = 1024, mib = 1024 * kib;
  // 2 ranks (as measured on 2 x H200): low_latency to 1 MiB, one_shot above at every size.
  EXPECT_EQ(allreduce_choice(8 * kib, 2, opt), allreduce_algorithm::low_latency);
  EXPECT_EQ(allreduce_choice(1 * mib, 2, opt), allreduce_algorithm::low_latency);
  EXPECT_EQ(allreduce_choice(1 * mib + 16, 2, opt), allreduce_algorithm::one_shot);
  EXPECT_EQ(allreduce_choice(64 * mib, 2, opt), allreduce_algorithm::one_shot);
  // 4 ranks (4 x H200): low_latency to 256 KiB, one_shot at 512 KiB and 1 MiB, two_shot from 4 MiB.
  EXPECT_EQ(allreduce_choice(256 * kib, 4, opt), allreduce_algorithm::low_latency);
  EXPECT_EQ(allreduce_choice(512 * kib, 4, opt), allreduce_algorithm::one_shot);
  EXPECT_EQ(allreduce_choice(1 * mib, 4, opt), allreduce_algorithm::one_shot);
  EXPECT_EQ(allreduce_choice(4 * mib, 4, opt), allreduce_algorithm::two_shot);
  // 8 ranks: the same pushed bytes, so smaller messages.
  EXPECT_EQ(allreduce_choice(128 * kib, 8, opt), allreduce_algorithm::low_latency);
  EXPECT_EQ(allreduce_choice(256 * kib, 8, opt), allreduce_algorithm::one_shot);
  EXPECT_EQ(allreduce_choice(1 * mib, 8, opt), allreduce_algorithm::two_shot);
  // One rank: nothing crosses a link; the message alone counts.
  EXPECT_EQ(allreduce_choice(1 * mib, 1, opt), allreduce_algorithm::low_latency);
  // low_latency needs twice the message in a slot.
  memlab::allreduce_options small = opt;
  small.max_bytes = 256 * kib;
  EXPECT_EQ(allreduce_choice(256 * kib, 2, small), allreduce_algorithm::one_shot);
}
