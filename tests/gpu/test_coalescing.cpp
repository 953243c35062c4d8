// Correctness of the coalescing kernels and the ceilings kernel at awkward sizes.
#include <cmath>
#include <cstring>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/ceilings/fma_peak.hpp"
#include "memlab/buffer.hpp"
#include "memlab/coalescing.hpp"

using memlab::device_buffer;
using memlab::bench::fill_random;

namespace {

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  fill_random(v, seed);
  return v;
}

}  // namespace

class CoalescingOffset : public ::testing::TestWithParam<int> {};

TEST_P(CoalescingOffset, CopiesExactlyTheOffsetRangeAndNothingElse) {
  MEMLAB_REQUIRE_GPU();
  int const offset = GetParam();
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{257}, std::size_t{100003}}) {
    std::size_t const len = n + 40;
    auto host = random_floats(len, 17 + n + offset);
    device_buffer<float> in(len), out(len);
    in.upload(host);
    out.fill_bytes(0xFF);
    memlab::offset_copy(out.data(), in.data(), n, offset);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto got = out.download();
    for (std::size_t i = 0; i < len; ++i) {
      bool const inside = i >= static_cast<std::size_t>(offset) && i < offset + n;
      if (inside) {
        ASSERT_EQ(got[i], host[i]) << "n=" << n << " i=" << i;
      } else {
        std::uint32_t bits;
        std::memcpy(&bits, &got[i], 4);
        ASSERT_EQ(bits, 0xFFFFFFFFu) << "wrote outside the range at " << i;
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Offsets, CoalescingOffset, ::testing::Values(0, 1, 7, 8, 13, 32));

class CoalescingStride : public ::testing::TestWithParam<int> {};

TEST_P(CoalescingStride, CopiesEveryStrideElementAndLeavesGaps) {
  MEMLAB_REQUIRE_GPU();
  int const stride = GetParam();
  for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{4099}}) {
    std::size_t const len = (n - 1) * stride + 1;
    auto host = random_floats(len, 5 + n * stride);
    device_buffer<float> in(len), out(len);
    in.upload(host);
    out.fill_bytes(0xFF);
    memlab::stride_copy(out.data(), in.data(), n, stride);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto got = out.download();
    for (std::size_t i = 0; i < len; ++i) {
      if (i % stride == 0) {
        ASSERT_EQ(got[i], host[i]) << "i=" << i;
      } else {
        ASSERT_TRUE(std::isnan(got[i])) << "gap written at " << i;
      }
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Strides, CoalescingStride, ::testing::Values(1, 2, 3, 8, 17, 32));

struct vector_case {
  int access, unroll;
};
class CoalescingVector : public ::testing::TestWithParam<vector_case> {};

TEST_P(CoalescingVector, CopiesAnyLengthIncludingTails) {
  MEMLAB_REQUIRE_GPU();
  auto const [access, unroll] = GetParam();
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{5}, std::size_t{1023},
                        std::size_t{1} << 20, (std::size_t{1} << 20) + 7}) {
    auto host = random_floats(n + 1, 99 + n);
    device_buffer<float> in(n + 1), out(n + 1);
    in.upload(host);
    out.fill_bytes(0xFF);
    memlab::vector_copy(out.data(), in.data(), n * sizeof(float), access, unroll);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto got = out.download();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], host[i]) << "n=" << n << " i=" << i;
    ASSERT_TRUE(std::isnan(got[n])) << "wrote past the end, n=" << n;
  }
}
INSTANTIATE_TEST_SUITE_P(Widths, CoalescingVector,
                         ::testing::Values(vector_case{4, 1}, vector_case{8, 1}, vector_case{16, 1}, vector_case{4, 4},
                                           vector_case{8, 2}, vector_case{16, 4}, vector_case{16, 8}),
                         [](auto const& info) {
                           return "bytes" + std::to_string(info.param.access) + "_unroll" +
                                  std::to_string(info.param.unroll);
                         });

TEST(CoalescingVector, RejectsBadArguments) {
  device_buffer<float> dummy;
  EXPECT_THROW(memlab::vector_copy(nullptr, nullptr, 64, 3, 1), memlab::error);
  EXPECT_THROW(memlab::vector_copy(nullptr, nullptr, 64, 16, 3), memlab::error);
  EXPECT_THROW(memlab::vector_copy(nullptr, nullptr, 6, 4, 1), memlab::error);
  EXPECT_THROW(memlab::vector_copy(nullptr, nullptr, 64, 16, 1), memlab::error);
  EXPECT_THROW(memlab::offset_copy(nullptr, nullptr, 5, -1), memlab::error);
  EXPECT_THROW(memlab::stride_copy(nullptr, nullptr, 5, 0), memlab::error);
}

TEST(CoalescingVector, RejectsMisalignedPointers) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> a(64), b(64);
  EXPECT_THROW(memlab::vector_copy(a.data() + 1, b.data(), 32, 16, 1), memlab::error);
  EXPECT_THROW(memlab::vector_copy(a.data(), b.data() + 1, 32, 8, 1), memlab::error);
}

TEST(CeilingsFmaPeak, MatchesHostFmaBitForBit) {
  MEMLAB_REQUIRE_GPU();
  std::vector<float> seeds = random_floats(37, 3);
  int const blocks = 3, threads = 64, iterations = 100;
  device_buffer<float> d_seeds(seeds.size()), out(blocks * threads);
  d_seeds.upload(seeds);
  out.fill_bytes(0xFF);
  memlab::detail::fma_peak(out.data(), d_seeds.data(), seeds.size(), blocks, threads, iterations, 0.999f, 0.001f,
                           nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto got = out.download();
  for (int t = 0; t < blocks * threads; ++t)
    ASSERT_EQ(got[t], memlab::detail::fma_peak_reference(seeds[t % seeds.size()], iterations, 0.999f, 0.001f));
}
