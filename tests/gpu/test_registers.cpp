// Correctness of every register-budget build of the row normalization, and the budgets
// themselves: the attributes must show what the annotations asked for.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/registers/row_normalize.hpp"
#include "memlab/buffer.hpp"

using memlab::device_buffer;
namespace reg = memlab::registers;

namespace {

std::vector<double> reference(std::vector<float> const& in, std::size_t rows) {
  constexpr int L = reg::row_length;
  std::vector<double> out(in.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int k = 0; k < L; ++k) sum += in[k * rows + r];
    double const mean = sum / L;
    double sq = 0.0;
    for (int k = 0; k < L; ++k) sq += (in[k * rows + r] - mean) * (in[k * rows + r] - mean);
    double const inv = 1.0 / std::sqrt(sq / L + reg::row_eps);
    for (int k = 0; k < L; ++k) out[k * rows + r] = (in[k * rows + r] - mean) * inv;
  }
  return out;
}

std::vector<std::string> names() {
  std::vector<std::string> v;
  for (auto const& b : reg::builds()) v.emplace_back(b.name);
  return v;
}

}  // namespace

class RegistersBuild : public ::testing::TestWithParam<std::string> {};

TEST_P(RegistersBuild, NormalizesEveryRow) {
  MEMLAB_REQUIRE_GPU();
  std::string const name = GetParam();
  std::vector<std::size_t> sizes = {1, 31, 255, 257, 1000};
  if (!memlab::test::small_sizes()) sizes.push_back(70001);
  for (std::size_t rows : sizes) {
    std::vector<float> in(rows * reg::row_length);
    memlab::bench::fill_random(in, 41 + rows);
    device_buffer<float> din(in.size()), dout(in.size());
    din.upload(in);
    dout.fill_bytes(0xFF);
    reg::row_normalize(name, din.data(), dout.data(), static_cast<std::int64_t>(rows), nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const v = memlab::bench::compare_close(dout.download(), reference(in, rows), 1e-5, 1e-5);
    ASSERT_EQ(v.status, memlab::bench::verdict::passed) << name << " rows=" << rows << ": " << v.detail;
  }
}
INSTANTIATE_TEST_SUITE_P(Builds, RegistersBuild, ::testing::ValuesIn(names()),
                         [](auto const& info) { return info.param; });

TEST(RegistersBudget, AttributesFollowTheAnnotations) {
  MEMLAB_REQUIRE_GPU();
  auto const def = reg::query("default");
  auto const n32 = reg::query("maxnreg_32");
  auto const lb8 = reg::query("lb256_8");
  auto const lb2 = reg::query("lb256_2");
  auto const n128 = reg::query("maxnreg_128");
  // The row needs ~70 registers: unconstrained it must not spill, at 32 it must.
  EXPECT_GT(def.num_regs, 64);
  EXPECT_EQ(def.local_bytes, 0u);
  EXPECT_LE(n32.num_regs, 32);
  EXPECT_GT(n32.local_bytes, 0u);
  EXPECT_LE(lb2.num_regs, 128);
  EXPECT_LE(n128.num_regs, 128);
  EXPECT_GT(n32.blocks_per_sm, def.blocks_per_sm);
  EXPECT_EQ(lb8.max_threads, 256);
  // 8 blocks of 256 threads need 2048 threads per SM: sm_75 has 1024, sm_86/89 1536, and
  // there ptxas ignores the minimum ("out of range"), so lb256_8 gets no register cap.
  int dev = 0, threads_per_sm = 0;
  ASSERT_EQ(cudaSuccess, cudaGetDevice(&dev));
  ASSERT_EQ(cudaSuccess, cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  if (threads_per_sm < 8 * 256) GTEST_SKIP() << "lb256_8 asks for 2048 threads per SM; this device has " << threads_per_sm;
  EXPECT_LE(lb8.num_regs, 32);  // 65536 / (256 * 8)
  EXPECT_GT(lb8.local_bytes, 0u);
  EXPECT_GE(lb8.blocks_per_sm, 8);
}

TEST(RegistersBudget, RejectsUnknownBuild) {
  MEMLAB_REQUIRE_GPU();
  EXPECT_THROW(reg::query("maxnreg_7"), memlab::error);
  device_buffer<float> b(reg::row_length);
  EXPECT_THROW(reg::row_normalize("nope", b.data(), b.data(), 1, nullptr), memlab::error);
  EXPECT_THROW(reg::row_normalize("default", b.data(), b.data(), -1, nullptr), memlab::error);
}
