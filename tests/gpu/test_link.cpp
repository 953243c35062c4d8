// GPU tests of the link family: the SM copy (device, mapped host memory, awkward sizes and
// alignments), the chase and the ping-pong, the seeded fills against their host formulas,
// and memlab::peer_allreduce: bit-identical to the host's rank-order float sum on every rank,
// for every algorithm, odd counts, in place, in chunks and over many calls (epochs, parities).
// Ranks may share one GPU, so the all-reduce's synchronisation is exercised on a single GPU;
// across real GPUs where the machine has them. Tests whose kernels wait on each other across
// streams skip under the sanitizer runs (MEMLAB_TEST_SMALL=1): compute-sanitizer serialises
// kernels, and one rank's kernel would wait for another that cannot start (it traps after 10 s).
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu_test.hpp"
#include "kernels/link/link_kernels.hpp"
#include "memlab/allreduce.hpp"
#include "memlab/buffer.hpp"
#include "memlab/device.hpp"
#include "memlab/error.hpp"

namespace {

using namespace memlab;

std::vector<unsigned char> random_bytes(std::size_t n, std::uint64_t seed) {
  std::vector<unsigned char> v(n);
  std::mt19937_64 rng(seed);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

TEST(LinkSmCopy, DeviceToDeviceAwkwardSizesAndOffsets) {
  MEMLAB_REQUIRE_GPU();
  for (std::size_t bytes : {std::size_t{1}, std::size_t{15}, std::size_t{16}, std::size_t{17}, std::size_t{4096 + 5},
                            (std::size_t{1} << 20) + 3, test::small_sizes() ? std::size_t{1} << 16 : std::size_t{64} << 20}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{16}}) {
      auto const host = random_bytes(bytes + 32, bytes * 7 + offset);
      device_buffer<unsigned char> src(bytes + 32), dst(bytes + 32);
      src.upload(host);
      dst.fill_bytes(0xAB);
      link::sm_copy(dst.data() + offset, src.data() + offset, bytes, 0, nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      auto const got = dst.download();
      for (std::size_t i = 0; i < bytes + 32; ++i) {
        unsigned char const want = i >= offset && i < offset + bytes ? host[i] : 0xAB;
        ASSERT_EQ(want, got[i]) << "bytes " << bytes << " offset " << offset << " at " << i;
      }
    }
  }
}

TEST(LinkSmCopy, MappedHostBothWays) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const bytes = (test::small_sizes() ? std::size_t{1} << 16 : std::size_t{16} << 20) + 48;
  pinned_buffer<unsigned char> h_src(bytes, cudaHostAllocMapped | cudaHostAllocPortable),
      h_dst(bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  auto const data = random_bytes(bytes, 11);
  std::memcpy(h_src.data(), data.data(), bytes);
  std::memset(h_dst.data(), 0, bytes);
  void* src_dev = nullptr;
  void* dst_dev = nullptr;
  ASSERT_EQ(cudaSuccess, cudaHostGetDevicePointer(&src_dev, h_src.data(), 0));
  ASSERT_EQ(cudaSuccess, cudaHostGetDevicePointer(&dst_dev, h_dst.data(), 0));
  device_buffer<unsigned char> d(bytes);
  link::sm_copy(d.data(), src_dev, bytes, 0, nullptr);  // host -> device, loads over the link
  link::sm_copy(dst_dev, d.data(), bytes, 0, nullptr);  // device -> host, stores over the link
  MEMLAB_EXPECT_LAUNCH_OK();
  EXPECT_EQ(0, std::memcmp(h_dst.data(), data.data(), bytes));
}

TEST(LinkSmCopy, RefusesBadInput) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<char> d(16);
  EXPECT_THROW(link::sm_copy(nullptr, d.data(), 16, 0, nullptr), memlab::error);
  EXPECT_THROW(link::sm_copy(d.data(), d.data(), 16, -1, nullptr), memlab::error);
}

TEST(LinkKernels, SeededFillsMatchTheHostFormulas) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const n = 100003;
  device_buffer<float> d(n);
  for (bool small : {true, false}) {
    link::fill_seeded(d.data(), n, 42, 3, 1000, small, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const got = d.download();
    int in_range = 0;
    for (std::size_t i = 0; i < n; ++i) {
      float const want = small ? link::seeded_small_int(42, 3, 1000 + i) : link::seeded_unit(42, 3, 1000 + i);
      ASSERT_EQ(0, std::memcmp(&want, &got[i], 4)) << i;
      in_range += small ? (got[i] >= -8 && got[i] <= 8 && got[i] == static_cast<float>(static_cast<int>(got[i])))
                        : (got[i] >= -1 && got[i] < 1);
    }
    EXPECT_EQ(static_cast<int>(n), in_range);
  }
  // Different ranks draw different values.
  EXPECT_NE(link::seeded_unit(1, 0, 5), link::seeded_unit(1, 1, 5));
}

TEST(LinkKernels, ChaseEndsWhereTheHostSays) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const slots = 4096, stride = 16, steps = 10000;
  std::vector<std::uint32_t> order(slots), next(slots * stride, 0);
  for (std::size_t i = 0; i < slots; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::mt19937_64 rng(7);
  std::shuffle(order.begin() + 1, order.end(), rng);
  for (std::size_t i = 0; i < slots; ++i) next[order[i] * stride] = static_cast<std::uint32_t>(order[(i + 1) % slots] * stride);
  device_buffer<std::uint32_t> d(next.size()), last(1);
  d.upload(next);
  link::chase(d.data(), steps, last.data(), nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  EXPECT_EQ(order[steps % slots] * stride, last.download()[0]);
}

TEST(LinkKernels, PingPongBetweenTwoStreams) {
  MEMLAB_REQUIRE_GPU();
  if (test::small_sizes()) GTEST_SKIP() << "two kernels that wait on each other: the sanitizer serialises them";
  int n = 0;
  ASSERT_EQ(cudaSuccess, cudaGetDeviceCount(&n));
  // Two GPUs where there are (with peer access), else two streams of one GPU.
  int const a = 0, b = n >= 2 && [] { int c = 0; cudaDeviceCanAccessPeer(&c, 0, 1); return c; }() ? 1 : 0;
  if (a != b) {
    ASSERT_EQ(cudaSuccess, cudaSetDevice(a));
    cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
    ASSERT_EQ(cudaSuccess, cudaSetDevice(b));
    e = cudaDeviceEnablePeerAccess(a, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();
  }
  ASSERT_EQ(cudaSuccess, cudaSetDevice(a));
  device_buffer<std::uint32_t> fa(1);
  stream sa;
  ASSERT_EQ(cudaSuccess, cudaSetDevice(b));
  device_buffer<std::uint32_t> fb(1);
  stream sb;
  ASSERT_EQ(cudaSuccess, cudaMemset(fb.data(), 0, 4));
  ASSERT_EQ(cudaSuccess, cudaSetDevice(a));
  ASSERT_EQ(cudaSuccess, cudaMemset(fa.data(), 0, 4));
  ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  constexpr int rounds = 1000;
  for (std::uint32_t base : {0u, 2u * rounds}) {  // the second call continues from the first's values
    ASSERT_EQ(cudaSuccess, cudaSetDevice(b));
    link::pingpong(fb.data(), fa.data(), rounds, base, false, sb.get());
    ASSERT_EQ(cudaSuccess, cudaSetDevice(a));
    link::pingpong(fa.data(), fb.data(), rounds, base, true, sa.get());
    sa.synchronize();
    sb.synchronize();
    std::uint32_t va = 0, vb = 0;
    ASSERT_EQ(cudaSuccess, cudaMemcpy(&va, fa.data(), 4, cudaMemcpyDefault));
    ASSERT_EQ(cudaSuccess, cudaMemcpy(&vb, fb.data(), 4, cudaMemcpyDefault));
    EXPECT_EQ(base + 2u * rounds, va);
    EXPECT_EQ(base + 2u * rounds - 1u, vb);
  }
  if (a != b) {
    (void)cudaDeviceDisablePeerAccess(b);
    ASSERT_EQ(cudaSuccess, cudaSetDevice(b));
    (void)cudaDeviceDisablePeerAccess(a);
    (void)cudaGetLastError();
    ASSERT_EQ(cudaSuccess, cudaSetDevice(0));
  }
}

// ---- peer_allreduce -----------------------------------------------------------------

/// Inputs, outputs and streams of one group; runs sum() and compares with the host.
struct group {
  std::vector<int> devs;
  std::vector<device_buffer<float>> in, out;
  std::vector<stream> streams;
  std::uint64_t seed = 1;

  group(std::vector<int> d, std::size_t n, std::uint64_t s) : devs(std::move(d)), seed(s) {
    for (std::size_t r = 0; r < devs.size(); ++r) {
      EXPECT_EQ(cudaSuccess, cudaSetDevice(devs[r]));
      in.emplace_back(n);
      out.emplace_back(n);
      streams.emplace_back(cudaStreamNonBlocking);
    }
    EXPECT_EQ(cudaSuccess, cudaSetDevice(0));
  }
  /// Fills rank inputs with fresh seeded values, poisons outputs (unless in place).
  void prepare(std::size_t n, std::uint64_t s, bool in_place) {
    seed = s;
    for (std::size_t r = 0; r < devs.size(); ++r) {
      EXPECT_EQ(cudaSuccess, cudaSetDevice(devs[r]));
      link::fill_seeded(in[r].data(), n, seed, static_cast<int>(r), 0, false, streams[r].get());
      if (!in_place) EXPECT_EQ(cudaSuccess, cudaMemsetAsync(out[r].data(), 0xFF, n * 4, streams[r].get()));
    }
    EXPECT_EQ(cudaSuccess, cudaSetDevice(0));
  }
  /// Runs the all-reduce over the first n elements; returns mismatches (bitwise) over all ranks.
  std::size_t run(peer_allreduce& ar, std::size_t n, allreduce_algorithm algo, bool in_place) {
    std::vector<float const*> ins;
    std::vector<float*> outs;
    std::vector<cudaStream_t> sts;
    for (std::size_t r = 0; r < devs.size(); ++r) {
      ins.push_back(in[r].data());
      outs.push_back(in_place ? in[r].data() : out[r].data());
      sts.push_back(streams[r].get());
    }
    ar.sum(ins.data(), outs.data(), n, sts.data(), algo);
    for (auto& st : streams) {
      EXPECT_EQ(cudaSuccess, cudaStreamSynchronize(st.get()));
    }
    int const ranks = static_cast<int>(devs.size());
    std::size_t bad = 0;
    std::vector<float> got(n);
    for (int r = 0; r < ranks; ++r) {
      EXPECT_EQ(cudaSuccess, cudaMemcpy(got.data(), outs[r], n * 4, cudaMemcpyDefault));
      for (std::size_t i = 0; i < n; ++i) {
        float acc = link::seeded_unit(seed, 0, i);
        for (int k = 1; k < ranks; ++k) acc += link::seeded_unit(seed, k, i);
        bad += std::memcmp(&acc, &got[i], 4) != 0;
      }
    }
    return bad;
  }
};

void exercise(std::vector<int> const& devs) {
  std::vector<std::size_t> counts = {1, 3, 4, 5, 127, 1000, 4096 + 3, (std::size_t{1} << 16) + 1};
  if (!test::small_sizes()) counts.push_back((std::size_t{3} << 20) + 7);  // past max_bytes: chunks
  std::size_t const cap = counts.back();
  allreduce_options opt;
  opt.max_bytes = std::size_t{4} << 20;
  peer_allreduce ar(devs, opt);
  group g(devs, cap, 0);
  std::uint64_t seed = 100;
  for (auto algo : {allreduce_algorithm::low_latency, allreduce_algorithm::one_shot, allreduce_algorithm::two_shot,
                    allreduce_algorithm::automatic}) {
    for (std::size_t n : counts) {
      for (bool in_place : {false, true}) {
        g.prepare(n, ++seed, in_place);
        EXPECT_EQ(0u, g.run(ar, n, algo, in_place))
            << devs.size() << " ranks, count " << n << ", " << allreduce_algorithm_name(algo)
            << (in_place ? ", in place" : "");
      }
    }
  }
  EXPECT_GT(ar.epoch(), 60u);
}

TEST(PeerAllreduce, OneRankIsACopy) {
  MEMLAB_REQUIRE_GPU();
  exercise({0});
}

TEST(PeerAllreduce, RanksSharingOneGpu) {
  MEMLAB_REQUIRE_GPU();
  if (test::small_sizes()) GTEST_SKIP() << "ranks wait on each other across streams: the sanitizer serialises kernels";
  exercise({0, 0});
  exercise({0, 0, 0});
  exercise({0, 0, 0, 0});
}

TEST(PeerAllreduce, EveryGpuOfTheMachine) {
  MEMLAB_REQUIRE_GPU();
  if (test::small_sizes()) GTEST_SKIP() << "ranks wait on each other across GPUs: the sanitizer serialises kernels";
  int n = 0;
  ASSERT_EQ(cudaSuccess, cudaGetDeviceCount(&n));
  if (n < 2) GTEST_SKIP() << "needs 2 GPUs; this machine has " << n;
  std::vector<int> devs;
  for (int d = 0; d < n && d < allreduce_max_ranks; ++d) devs.push_back(d);
  for (int a : devs)
    for (int b : devs) {
      int c = 1;
      if (a != b) ASSERT_EQ(cudaSuccess, cudaDeviceCanAccessPeer(&c, a, b));
      if (!c) GTEST_SKIP() << "GPUs " << a << " and " << b << " cannot access each other";
    }
  exercise(devs);
  exercise({devs[1], devs[0]});  // ranks in another order than the devices
}

TEST(PeerAllreduce, RefusesBadInput) {
  MEMLAB_REQUIRE_GPU();
  EXPECT_THROW(peer_allreduce({}), memlab::error);
  EXPECT_THROW(peer_allreduce({0, 99}), memlab::error);
  allreduce_options bad;
  bad.max_bytes = 10;
  EXPECT_THROW(peer_allreduce({0}, bad), memlab::error);
  peer_allreduce ar({0});
  device_buffer<float> b(64);
  float const* in[1] = {b.data() + 1};  // 4-byte aligned only
  float* out[1] = {b.data()};
  cudaStream_t st[1] = {nullptr};
  EXPECT_THROW(ar.sum(in, out, 8, st), memlab::error);
  EXPECT_EQ(0u, ar.epoch());  // refused before any work
}

}  // namespace
