// Correctness of the shared-memory kernels: reverse (static, dynamic, carved) at awkward
// sizes and block sizes, and the bank-conflict microbenchmark against its host reference.
#include <cstdint>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/smem/bank_stride.hpp"
#include "kernels/smem/reverse.hpp"
#include "memlab/buffer.hpp"

using memlab::device_buffer;
using memlab::bench::fill_random;

namespace {

std::vector<std::int64_t> reverse_sizes() {
  if (memlab::test::small_sizes()) return {1, 2, 33, 257, 1000};
  return {1, 2, 31, 255, 256, 257, 1000, 4097, 100003, 1 << 20};
}

template <class T>
std::vector<T> random_vec(std::size_t n, std::uint64_t seed, double lo, double hi) {
  std::vector<T> v(n);
  fill_random(v, seed, lo, hi);
  return v;
}

}  // namespace

TEST(SmemReverse, StaticReversesEverySize) {
  MEMLAB_REQUIRE_GPU();
  for (std::int64_t n : reverse_sizes()) {
    auto const host = random_vec<int>(n, 3 + n, -1e9, 1e9);
    device_buffer<int> in(n), out(n);
    in.upload(host);
    out.fill_bytes(0xFF);
    memlab::smem::reverse_static(in.data(), out.data(), n, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const got = out.download();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], host[n - 1 - i]) << "n=" << n << " i=" << i;
  }
}

class SmemReverseBlock : public ::testing::TestWithParam<int> {};

TEST_P(SmemReverseBlock, DynamicReversesEverySize) {
  MEMLAB_REQUIRE_GPU();
  int const block = GetParam();
  for (std::int64_t n : reverse_sizes()) {
    auto const host = random_vec<int>(n, 5 + n, -1e9, 1e9);
    device_buffer<int> in(n), out(n);
    in.upload(host);
    out.fill_bytes(0xFF);
    memlab::smem::reverse_dynamic(in.data(), out.data(), n, block, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const got = out.download();
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(got[i], host[n - 1 - i]) << "n=" << n << " i=" << i;
  }
}

TEST_P(SmemReverseBlock, CarvedReversesCharIntAndFloat) {
  MEMLAB_REQUIRE_GPU();
  int const block = GetParam();  // odd blocks make the int array need padding after the chars
  for (std::int64_t n : reverse_sizes()) {
    auto const hc = random_vec<std::int8_t>(n, 7 + n, -128, 127);
    auto const hi = random_vec<int>(n, 8 + n, -1e9, 1e9);
    auto const hf = random_vec<float>(n, 9 + n, -1, 1);
    device_buffer<std::int8_t> ic(n), oc(n);
    device_buffer<int> ii(n), oi(n);
    device_buffer<float> iff(n), of(n);
    ic.upload(hc);
    ii.upload(hi);
    iff.upload(hf);
    oc.fill_bytes(0xFF);
    oi.fill_bytes(0xFF);
    of.fill_bytes(0xFF);
    memlab::smem::reverse_carved(reinterpret_cast<char const*>(ic.data()), ii.data(), iff.data(),
                                 reinterpret_cast<char*>(oc.data()), oi.data(), of.data(), n, block, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const gc = oc.download();
    auto const gi = oi.download();
    auto const gf = of.download();
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(gc[i], hc[n - 1 - i]) << "char n=" << n << " i=" << i;
      ASSERT_EQ(gi[i], hi[n - 1 - i]) << "int n=" << n << " i=" << i;
      ASSERT_EQ(gf[i], hf[n - 1 - i]) << "float n=" << n << " i=" << i;
    }
  }
}
INSTANTIATE_TEST_SUITE_P(Blocks, SmemReverseBlock, ::testing::Values(1, 33, 97, 256, 1000, 1024));

TEST(SmemReverse, CarveAlignsTheIntArray) {
  MEMLAB_REQUIRE_GPU();
  for (std::size_t count : {1u, 3u, 97u, 1023u}) {
    auto const L = memlab::smem::carve_char_int_float(count);
    EXPECT_EQ(L.int_offset % alignof(int), 0u);
    EXPECT_GE(L.int_offset, count);
    EXPECT_EQ(L.float_offset, L.int_offset + count * sizeof(int));
    EXPECT_GE(L.bytes, L.float_offset + count * sizeof(float));
  }
}

TEST(SmemReverse, RejectsBadArguments) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<int> b(4);
  EXPECT_THROW(memlab::smem::reverse_dynamic(b.data(), b.data(), 4, 0, nullptr), memlab::error);
  EXPECT_THROW(memlab::smem::reverse_dynamic(b.data(), b.data(), 4, 1025, nullptr), memlab::error);
  EXPECT_THROW(memlab::smem::reverse_static(b.data(), b.data(), -1, nullptr), memlab::error);
  EXPECT_NO_THROW(memlab::smem::reverse_static(b.data(), b.data(), 0, nullptr));
}

struct bank_case {
  int elem_bytes, stride, group;
};

class SmemBankStride : public ::testing::TestWithParam<bank_case> {};

TEST_P(SmemBankStride, EveryLaneSumsWhatItsAddressHolds) {
  MEMLAB_REQUIRE_GPU();
  auto const c = GetParam();
  std::vector<unsigned> fill(memlab::smem::bank_smem_bytes / 4);
  fill_random(fill, 11 + c.stride * 7 + c.elem_bytes, 0, 0xFFFFFFFFu);
  device_buffer<unsigned> fill_dev(fill.size());
  fill_dev.upload(fill);
  int const grid = 3, iters = 5;
  std::size_t const threads = static_cast<std::size_t>(grid) * memlab::smem::bank_block;
  device_buffer<unsigned> out(threads);
  out.fill_bytes(0xFF);
  memlab::smem::bank_stride_loads(fill_dev.data(), out.data(), c.elem_bytes, c.stride, c.group, iters, grid, nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = out.download();
  auto const* bytes = reinterpret_cast<unsigned char const*>(fill.data());
  for (std::size_t t = 0; t < threads; ++t) {
    unsigned const ref =
        memlab::smem::bank_stride_reference(bytes, static_cast<int>(t % 32), c.elem_bytes, c.stride, c.group, iters);
    ASSERT_EQ(got[t], ref) << "thread " << t;
  }
}
INSTANTIATE_TEST_SUITE_P(Patterns, SmemBankStride,
                         ::testing::Values(bank_case{4, 0, 1}, bank_case{4, 1, 1}, bank_case{4, 2, 1},
                                           bank_case{4, 33, 1}, bank_case{4, 64, 1}, bank_case{1, 1, 1},
                                           bank_case{1, 63, 1}, bank_case{2, 3, 1}, bank_case{2, 64, 1},
                                           bank_case{8, 1, 1}, bank_case{8, 17, 1}, bank_case{16, 1, 1},
                                           bank_case{16, 64, 1}, bank_case{4, 32, 2}, bank_case{4, 5, 32}));

TEST(SmemBankStride, ModelMatchesTheGcdRuleAndCountsPhases) {
  MEMLAB_REQUIRE_GPU();
  for (int s = 1; s <= 64; ++s) {
    EXPECT_EQ(memlab::smem::bank_wavefronts(4, s), memlab::smem::gcd_rule_degree(s)) << "stride " << s;
    if (s % 2 == 1) EXPECT_EQ(memlab::smem::bank_wavefronts(4, s), 1) << "odd strides are conflict-free";
  }
  EXPECT_EQ(memlab::smem::bank_wavefronts(4, 0), 1);    // broadcast
  EXPECT_EQ(memlab::smem::bank_wavefronts(8, 2), 4);    // lanes 8 apart share banks: 4 words per bank
  EXPECT_EQ(memlab::smem::bank_wavefronts(16, 2), 8);   // 2 half-warps, each 4 wavefronts
  EXPECT_EQ(memlab::smem::bank_wavefronts(8, 0), 1);    // 64-bit broadcast: one pass (measured on H200)
  EXPECT_EQ(memlab::smem::bank_wavefronts(16, 0), 2);   // 128-bit broadcast: one pass per half-warp
  EXPECT_EQ(memlab::smem::bank_wavefronts(2, 2), 1);    // 16-bit stride 2: one word per lane
  EXPECT_EQ(memlab::smem::bank_wavefronts(2, 64), 32);  // 16-bit stride 64: 32 words in bank 0
}

TEST(SmemBankStride, RejectsPatternsOutsideTheTile) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<unsigned> b(memlab::smem::bank_smem_bytes / 4), out(memlab::smem::bank_block);
  EXPECT_THROW(memlab::smem::bank_stride_loads(b.data(), out.data(), 16, 65, 1, 1, 1, nullptr), memlab::error);
  EXPECT_THROW(memlab::smem::bank_stride_loads(b.data(), out.data(), 3, 1, 1, 1, 1, nullptr), memlab::error);
  EXPECT_THROW(memlab::smem::bank_stride_loads(b.data(), out.data(), 4, 1, 0, 1, 1, nullptr), memlab::error);
}
