// Correctness of the constant-memory kernels: the 1D convolution with each filter source at
// awkward lengths (shorter than the filter included), and the table-read microbenchmark.
#include <cstdint>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/constant/constant.hpp"
#include "memlab/buffer.hpp"

using memlab::device_buffer;
using memlab::bench::fill_random;
using memlab::constant::filter_source;

namespace {

std::vector<double> conv_reference(std::vector<float> const& in, std::vector<float> const& f) {
  auto const n = static_cast<std::int64_t>(in.size());
  int const taps = static_cast<int>(f.size());
  std::vector<double> out(in.size());
  for (std::int64_t i = 0; i < n; ++i) {
    double acc = 0.0;
    for (int k = 0; k < taps; ++k) {
      std::int64_t const j = i + k - taps / 2;
      if (j >= 0 && j < n) acc += static_cast<double>(f[k]) * in[j];
    }
    out[i] = acc;
  }
  return out;
}

struct conv_case {
  filter_source src;
  int taps;
};

}  // namespace

class ConstantConv : public ::testing::TestWithParam<conv_case> {};

TEST_P(ConstantConv, MatchesTheDoubleReferenceAtEveryLength) {
  MEMLAB_REQUIRE_GPU();
  auto const c = GetParam();
  std::vector<std::int64_t> sizes = {1, 2, 5, 31, 64, 257, 1000, 4097};
  if (!memlab::test::small_sizes()) sizes.push_back(1 << 20);
  for (std::int64_t n : sizes) {
    std::vector<float> in(n), f(c.taps);
    fill_random(in, 21 + n);
    fill_random(f, 22 + c.taps);
    device_buffer<float> din(n), dout(n), df(c.taps);
    din.upload(in);
    df.upload(f);
    memlab::constant::set_conv_filter(f.data(), c.taps);
    dout.fill_bytes(0xFF);
    memlab::constant::conv1d(c.src, din.data(), dout.data(), df.data(), n, c.taps, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const v = memlab::bench::compare_close(dout.download(), conv_reference(in, f), 1e-6,
                                                2.0 * c.taps * c.taps * 6e-8);
    ASSERT_EQ(v.status, memlab::bench::verdict::passed) << "n=" << n << ": " << v.detail;
  }
}
INSTANTIATE_TEST_SUITE_P(Sources, ConstantConv,
                         ::testing::Values(conv_case{filter_source::constant, 3}, conv_case{filter_source::constant, 9},
                                           conv_case{filter_source::constant, 33},
                                           conv_case{filter_source::constant, 65},
                                           conv_case{filter_source::global_ldg, 3},
                                           conv_case{filter_source::global_ldg, 65},
                                           conv_case{filter_source::shared, 9}, conv_case{filter_source::shared, 65}));

TEST(ConstantConv, RejectsUninstantiatedTaps) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> b(16);
  EXPECT_THROW(memlab::constant::conv1d(filter_source::constant, b.data(), b.data(), b.data(), 16, 5, nullptr),
               memlab::error);
  EXPECT_THROW(memlab::constant::conv1d(filter_source::shared, b.data(), b.data(), b.data(), -1, 3, nullptr),
               memlab::error);
}

class ConstantTable : public ::testing::TestWithParam<int> {};

TEST_P(ConstantTable, BothSourcesSumTheLanesAddresses) {
  MEMLAB_REQUIRE_GPU();
  int const distinct = GetParam();
  int const iters = 72, grid = 3;
  std::vector<float> table(memlab::constant::table_words);
  fill_random(table, 31 + distinct);
  memlab::constant::set_table(table.data());
  device_buffer<float> dtable(table.size());
  dtable.upload(table);
  std::size_t const threads = static_cast<std::size_t>(grid) * memlab::constant::table_block;
  std::vector<double> ref(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    double acc = 0.0;
    for (int it = 0; it < iters; ++it) acc += table[memlab::constant::table_index(static_cast<int>(t % 32), distinct, it)];
    ref[t] = acc;
  }
  for (auto src : {memlab::constant::table_source::constant, memlab::constant::table_source::global_ldg}) {
    device_buffer<float> out(threads);
    out.fill_bytes(0xFF);
    memlab::constant::table_reads(src, dtable.data(), out.data(), distinct, iters, grid, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const v = memlab::bench::compare_close(out.download(), ref, 1e-5, iters * 1e-6);
    ASSERT_EQ(v.status, memlab::bench::verdict::passed) << v.detail;
  }
}
INSTANTIATE_TEST_SUITE_P(Distinct, ConstantTable, ::testing::Values(1, 2, 3, 17, 32));

TEST(ConstantTable, RejectsBadArguments) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> b(memlab::constant::table_words);
  using memlab::constant::table_source;
  EXPECT_THROW(memlab::constant::table_reads(table_source::constant, b.data(), b.data(), 0, 8, 1, nullptr),
               memlab::error);
  EXPECT_THROW(memlab::constant::table_reads(table_source::constant, b.data(), b.data(), 33, 8, 1, nullptr),
               memlab::error);
  EXPECT_THROW(memlab::constant::table_reads(table_source::global_ldg, b.data(), b.data(), 1, 7, 1, nullptr),
               memlab::error);
}
