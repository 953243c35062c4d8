// Correctness of the L2-persistence pieces: the sliding-window kernel with and without an
// access policy window (stream attribute and graph kernel node), and the RAII holders
// restoring the set-aside limit and the stream's window.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpu_test.hpp"
#include "kernels/l2/persist.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

using memlab::device_buffer;
namespace l2 = memlab::l2;

namespace {

std::size_t persisting_max() {
  int dev = 0;
  cudaDeviceProp p{};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) return 0;
  return static_cast<std::size_t>(p.persistingL2CacheMaxSize);
}

std::size_t limit_now() {
  std::size_t v = 0;
  EXPECT_EQ(cudaSuccess, cudaDeviceGetLimit(&v, cudaLimitPersistingL2CacheSize));
  return v;
}

/// Runs `launch` once on fresh data and checks every streaming element.
/// The fill runs on `st`, the stream `launch` uses: a non-blocking stream does not wait
/// for the legacy default stream.
template <class Launch>
void check_once(std::size_t ns, std::size_t np, std::uint64_t seed, Launch const& launch,
                device_buffer<std::uint32_t>& streaming, device_buffer<std::uint32_t>& persistent,
                cudaStream_t st = nullptr) {
  l2::fill_hashed(persistent.data(), np, seed + 1, st);
  l2::fill_hashed(streaming.data(), ns, seed, st);
  launch();
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = streaming.download();
  for (std::size_t i = 0; i < ns; ++i)
    ASSERT_EQ(got[i], 2u * l2::hash_value(seed, i) + l2::hash_value(seed + 1, i % np)) << "ns=" << ns << " np=" << np
                                                                                       << " i=" << i;
}

std::vector<std::pair<std::size_t, std::size_t>> sizes() {
  if (memlab::test::small_sizes()) return {{1, 1}, {1000, 7}, {4099, 4099}};
  return {{1, 1}, {1000, 7}, {4099, 4099}, {1000003, 777}, {1 << 22, 1 << 20}};
}

}  // namespace

TEST(L2SlidingWindow, NoWindowMatchesHost) {
  MEMLAB_REQUIRE_GPU();
  for (auto const& sz : sizes()) {
    std::size_t const ns = sz.first, np = sz.second;
    device_buffer<std::uint32_t> s(ns), p(np);
    check_once(ns, np, 7 + ns, [&] { l2::sliding_window(s.data(), ns, p.data(), np); }, s, p);
  }
}

TEST(L2SlidingWindow, StreamWindowMatchesHostAndIsRestored) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const max = persisting_max();
  if (max == 0) GTEST_SKIP() << "no persisting L2";
  std::size_t const before = limit_now();
  memlab::stream st;
  {
    l2::persisting_l2_limit limit(max);
    EXPECT_GT(limit.bytes(), 0u);
    EXPECT_LE(limit.bytes(), max);
    EXPECT_EQ(limit.previous(), before);
    EXPECT_EQ(limit_now(), limit.bytes());
    for (auto const& sz : sizes()) {
      std::size_t const ns = sz.first, np = sz.second;
      device_buffer<std::uint32_t> s(ns), p(np);
      l2::stream_access_policy policy(st, l2::make_window(p.data(), np * 4, 0.6f));
      cudaStreamAttrValue v{};
      ASSERT_EQ(cudaSuccess, cudaStreamGetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &v));
      EXPECT_EQ(v.accessPolicyWindow.num_bytes, np * 4);
      EXPECT_FLOAT_EQ(v.accessPolicyWindow.hitRatio, 0.6f);
      check_once(ns, np, 9 + ns, [&] { l2::sliding_window(s.data(), ns, p.data(), np, st); }, s, p, st);
    }
    cudaStreamAttrValue v{};
    ASSERT_EQ(cudaSuccess, cudaStreamGetAttribute(st, cudaStreamAttributeAccessPolicyWindow, &v));
    EXPECT_EQ(v.accessPolicyWindow.num_bytes, 0u) << "the stream's window was not cleared";
  }
  EXPECT_EQ(limit_now(), before) << "the persisting limit was not restored";
}

TEST(L2SlidingWindow, GraphNodeWindowMatchesHost) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const max = persisting_max();
  if (max == 0) GTEST_SKIP() << "no persisting L2";
  l2::persisting_l2_limit limit(max);
  memlab::stream st;
  for (auto const& sz : sizes()) {
    std::size_t const ns = sz.first, np = sz.second;
    device_buffer<std::uint32_t> s(ns), p(np);
    l2::sliding_window_graph g(s.data(), ns, p.data(), np, l2::make_window(p.data(), np * 4, 1.0f));
    auto const w = g.node_window();
    EXPECT_EQ(w.num_bytes, np * 4);
    EXPECT_EQ(w.base_ptr, static_cast<void*>(p.data()));
    EXPECT_EQ(w.hitProp, cudaAccessPropertyPersisting);
    check_once(ns, np, 13 + ns, [&] { g.launch(st); }, s, p, st);
    l2::sliding_window_graph plain(s.data(), ns, p.data(), np, std::nullopt);
    EXPECT_EQ(plain.node_window().num_bytes, 0u);
    check_once(ns, np, 17 + ns, [&] { plain.launch(st); }, s, p, st);
  }
  l2::reset_persisting_lines();
}

TEST(L2SlidingWindow, RejectsBadArguments) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<std::uint32_t> a(64);
  EXPECT_THROW(l2::sliding_window(a.data(), 32, a.data() + 32, 0), memlab::error);   // empty persistent region
  EXPECT_THROW(l2::sliding_window(a.data(), 40, a.data() + 32, 16), memlab::error);  // overlap
  EXPECT_THROW(l2::sliding_window(nullptr, 32, a.data(), 16), memlab::error);
  EXPECT_THROW(l2::make_window(a.data(), 256, 1.5f), memlab::error);
  EXPECT_THROW(l2::make_window(a.data(), 256, -0.1f), memlab::error);
  EXPECT_GT(l2::max_window_bytes(), 0u);
}
