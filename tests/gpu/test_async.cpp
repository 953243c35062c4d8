// Correctness of the asynchronous-copy kernels: every copy-and-compute variant at every
// element size, with and without the alignment hint, at awkward sizes (partial last batch,
// several batches per block); the warp-entanglement kernels at every split; argument checks.
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_test.hpp"
#include "kernels/async/copy_compute.hpp"
#include "kernels/async/entanglement.hpp"
#include "kernels/async/reference.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

using memlab::device_buffer;
namespace async = memlab::async;

namespace {

int device_cc() {
  int dev = 0, major = 0, minor = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) return 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  return major * 10 + minor;
}

std::vector<std::size_t> copy_sizes() {
  if (memlab::test::small_sizes()) return {3, 130, 1031};
  return {1, 3, 63, 64, 65, 1000, 4099, 100003, 1 << 20};
}

/// First index where got and ref differ bitwise (NaN never equals), or -1.
long long first_mismatch(std::vector<float> const& got, std::vector<float> const& ref) {
  if (got.size() != ref.size()) return 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == ref[i])) return static_cast<long long>(i);
  return -1;
}

std::vector<std::string> const all_variants = {"plain",           "cg_memcpy_async", "cuda_barrier",
                                               "pipeline_1stage", "pipeline_2stage", "pipeline_3stage",
                                               "pipeline_4stage", "bulk_copy",       "bulk_copy_2stage",
                                               "bulk_copy_4stage"};

}  // namespace

class AsyncCopyCompute : public ::testing::TestWithParam<std::tuple<std::string, int, bool>> {};

TEST_P(AsyncCopyCompute, MatchesHostReferenceAtAwkwardSizes) {
  MEMLAB_REQUIRE_GPU();
  auto const& [variant, element_bytes, aligned] = GetParam();
  async::copy_compute_config cfg;
  async::parse_variant(variant, cfg.method, cfg.stages);
  cfg.element_bytes = element_bytes;
  cfg.aligned_hint = aligned;
  // Only bulk_copy needs a newer image: the memcpy_async variants copy synchronously below sm_80.
  char const* instruction = "";
  if (int const need = async::copy_compute_needed_arch(cfg.method, &instruction); need > 0)
    MEMLAB_REQUIRE_ARCH(async::copy_compute_kernel(cfg), need, instruction);
  std::uint64_t seed = 11;
  // 64-thread batches over 3 blocks: several batches per block and a partial last one;
  // then 96-thread batches with one block per batch.
  bool const small = memlab::test::small_sizes();  // under the sanitizers: one configuration
  std::vector<std::pair<int, int>> const shapes =
      small ? std::vector<std::pair<int, int>>{{64, 3}} : std::vector<std::pair<int, int>>{{64, 3}, {96, 0}};
  std::vector<int> const fma_counts = small ? std::vector<int>{5} : std::vector<int>{0, 5};
  for (auto [block, grid] : shapes) {
    cfg.block_threads = block;
    cfg.grid_blocks = grid;
    for (int fmas : fma_counts) {
      cfg.fmas = fmas;
      for (std::size_t n : copy_sizes()) {
        std::size_t const floats = n * element_bytes / 4;
        device_buffer<float> in(floats), out(floats);
        async::fill_quantized(in.data(), floats, ++seed);
        out.fill_bytes(0xFF);
        async::copy_compute(cfg, out.data(), in.data(), n);
        MEMLAB_EXPECT_LAUNCH_OK();
        auto const ref = async::reference::copy_compute(n, element_bytes, block, fmas, seed);
        long long const bad = first_mismatch(out.download(), ref);
        ASSERT_EQ(bad, -1) << variant << " bytes=" << element_bytes << " aligned=" << aligned << " n=" << n
                           << " block=" << block << " grid=" << grid << " fmas=" << fmas;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, AsyncCopyCompute,
                         ::testing::Combine(::testing::ValuesIn(all_variants), ::testing::Values(4, 8, 16),
                                            ::testing::Bool()),
                         [](auto const& info) {
                           return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "B" +
                                  (std::get<2>(info.param) ? "_aligned" : "_plain");
                         });

TEST(AsyncCopyCompute, ComputeChangesTheResult) {
  MEMLAB_REQUIRE_GPU();
  // The FMA chain must reach the output: 0 and 7 FMAs give different results.
  auto const a = async::reference::copy_compute(256, 16, 256, 0, 3);
  auto const b = async::reference::copy_compute(256, 16, 256, 7, 3);
  EXPECT_NE(first_mismatch(a, b), -1);
}

TEST(AsyncCopyCompute, FillMatchesHostValues) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const n = 10007;
  device_buffer<float> d(n);
  async::fill_quantized(d.data(), n, 42);
  MEMLAB_EXPECT_LAUNCH_OK();
  auto const got = d.download();
  int distinct_signs = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(got[i], async::quantized_value(async::quantized_code(42, i))) << i;
    ASSERT_GE(got[i], -1.0f);
    ASSERT_LT(got[i], 1.0f);
    distinct_signs |= got[i] < 0 ? 1 : 2;
  }
  EXPECT_EQ(distinct_signs, 3);
}

TEST(AsyncCopyCompute, RejectsBadArguments) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> a(1024), b(1024);
  async::copy_compute_config cfg;
  cfg.element_bytes = 12;
  EXPECT_THROW(async::copy_compute(cfg, b.data(), a.data(), 16), memlab::error);
  cfg = {};
  cfg.block_threads = 100;
  EXPECT_THROW(async::copy_compute(cfg, b.data(), a.data(), 16), memlab::error);
  cfg = {};
  cfg.method = async::copy_method::pipeline;
  cfg.stages = 5;
  EXPECT_THROW(async::copy_compute(cfg, b.data(), a.data(), 16), memlab::error);
  cfg = {};
  cfg.stages = 2;  // plain has no stages
  EXPECT_THROW(async::copy_compute(cfg, b.data(), a.data(), 16), memlab::error);
  cfg = {};
  EXPECT_THROW(async::copy_compute(cfg, b.data() + 1, a.data(), 16), memlab::error);  // misaligned
  EXPECT_THROW(async::copy_compute(cfg, a.data() + 4, a.data(), 16), memlab::error);  // overlapping
  EXPECT_THROW(async::copy_compute(cfg, nullptr, a.data(), 16), memlab::error);
  cfg.fmas = -1;
  EXPECT_THROW(async::copy_compute(cfg, b.data(), a.data(), 16), memlab::error);
  async::copy_method m{};
  int stages = 0;
  EXPECT_THROW(async::parse_variant("pipeline_5stage", m, stages), memlab::error);
  EXPECT_THROW(async::parse_variant("fast", m, stages), memlab::error);
  async::parse_variant("pipeline_3stage", m, stages);
  EXPECT_EQ(m, async::copy_method::pipeline);
  EXPECT_EQ(stages, 3);
  async::parse_variant("bulk_copy", m, stages);
  EXPECT_EQ(m, async::copy_method::bulk_copy);
  EXPECT_EQ(stages, 1);
  async::parse_variant("bulk_copy_4stage", m, stages);
  EXPECT_EQ(stages, 4);
}

TEST(AsyncCopyCompute, OccupancyAndSharedMemory) {
  MEMLAB_REQUIRE_GPU();
  async::copy_compute_config cfg;
  cfg.method = async::copy_method::pipeline;
  cfg.stages = 4;
  cfg.element_bytes = 16;
  cfg.block_threads = 1024;  // 64 KiB of stages: needs the opt-in above 48 KiB
  EXPECT_EQ(async::copy_compute_smem_bytes(cfg), 4u * 1024u * 16u);
  int dev = 0, optin = 0;
  ASSERT_EQ(cudaSuccess, cudaGetDevice(&dev));
  ASSERT_EQ(cudaSuccess, cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (optin <= 64 * 1024) {  // sm_75: 64 KiB per block, and the pipeline's state needs a few bytes more
    EXPECT_EQ(async::copy_compute_max_blocks_per_sm(cfg), 0);
    device_buffer<float> in(64), out(64);
    EXPECT_THROW(async::copy_compute(cfg, out.data(), in.data(), 16), memlab::error);
    GTEST_SKIP() << "64 KiB of stages plus the pipeline state exceed this device's " << optin << " bytes per block";
  }
  EXPECT_GE(async::copy_compute_max_blocks_per_sm(cfg), 1);
  std::size_t const n = memlab::test::small_sizes() ? 3000 : 70001;
  device_buffer<float> in(4 * n), out(4 * n);
  async::fill_quantized(in.data(), 4 * n, 5);
  out.fill_bytes(0xFF);
  async::copy_compute(cfg, out.data(), in.data(), n);
  MEMLAB_EXPECT_LAUNCH_OK();
  EXPECT_EQ(first_mismatch(out.download(), async::reference::copy_compute(n, 16, 1024, 0, 5)), -1);
}

class AsyncEntanglement : public ::testing::TestWithParam<std::tuple<async::entangled_op, int, bool>> {};

TEST_P(AsyncEntanglement, MatchesHostReference) {
  MEMLAB_REQUIRE_GPU();
  auto const [op, split, reconverge] = GetParam();
  char const* instruction = "";
  int const need = async::warp_entanglement_needed_arch(op, &instruction);
  MEMLAB_REQUIRE_ARCH(async::warp_entanglement_kernel(op), need, instruction);
  async::entanglement_config cfg;
  cfg.op = op;
  cfg.split = split;
  cfg.reconverge = reconverge;
  cfg.fmas = 3;
  cfg.block_threads = 64;
  cfg.grid_blocks = 2;  // 128 threads: many trips each, the last one partial
  std::vector<std::size_t> sizes =
      memlab::test::small_sizes() ? std::vector<std::size_t>{1, 77, 1000} : std::vector<std::size_t>{1, 77, 129, 5000, 100003};
  std::uint64_t seed = 100;
  for (std::size_t n : sizes) {
    device_buffer<float> in(4 * n), out(4 * n);
    async::fill_quantized(in.data(), 4 * n, ++seed);
    out.fill_bytes(0xFF);
    async::warp_entanglement(cfg, out.data(), in.data(), n);
    MEMLAB_EXPECT_LAUNCH_OK();
    ASSERT_EQ(first_mismatch(out.download(), async::reference::entanglement(n, 3, seed)), -1)
        << "split=" << split << " reconverge=" << reconverge << " n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Splits, AsyncEntanglement,
                         ::testing::Combine(::testing::Values(async::entangled_op::commit_wait,
                                                              async::entangled_op::arrive_on),
                                            ::testing::Values(1, 3, 32), ::testing::Bool()),
                         [](auto const& info) {
                           return std::string(std::get<0>(info.param) == async::entangled_op::commit_wait ? "commit_wait"
                                                                                                          : "arrive_on") +
                                  "_split" + std::to_string(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_syncwarp" : "");
                         });

/// A variant whose instruction the image lacks is refused with memlab::error before any
/// launch (never run into the __trap() fallback); where the image has it, it runs. Which
/// branch is taken depends on the build: 75;90a on an H100 runs, 80-virtual throws.
TEST(AsyncAvailability, RefusesWhatTheImageLacks) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const n = 1000;
  device_buffer<float> in(4 * n), out(4 * n);
  async::fill_quantized(in.data(), 4 * n, 3);
  MEMLAB_EXPECT_LAUNCH_OK();

  async::copy_compute_config bulk;
  bulk.method = async::copy_method::bulk_copy;
  bulk.aligned_hint = true;
  void const* const bulk_kernel = async::copy_compute_kernel(bulk);
  bool const has_bulk = memlab::compiled_arch(bulk_kernel) >= memlab::arch::bulk_copy && device_cc() >= 90;
  EXPECT_EQ(memlab::unavailable_reason(bulk_kernel, memlab::arch::bulk_copy, "cp.async.bulk").empty(), has_bulk);
  if (has_bulk) {
    EXPECT_NO_THROW(async::copy_compute(bulk, out.data(), in.data(), n));
    MEMLAB_EXPECT_LAUNCH_OK();
  } else {
    EXPECT_THROW(async::copy_compute(bulk, out.data(), in.data(), n), memlab::error);
    // Nothing was launched: no trap, the context is still usable.
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  }

  for (auto op : {async::entangled_op::commit_wait, async::entangled_op::arrive_on}) {
    async::entanglement_config cfg;
    cfg.op = op;
    int const need = async::warp_entanglement_needed_arch(op);
    bool const has = memlab::compiled_arch(async::warp_entanglement_kernel(op)) >= need && device_cc() >= need;
    if (has) {
      EXPECT_NO_THROW(async::warp_entanglement(cfg, out.data(), in.data(), n));
    } else {
      try {
        async::warp_entanglement(cfg, out.data(), in.data(), n);
        ADD_FAILURE() << "warp_entanglement ran without sm_" << need;
      } catch (memlab::error const& e) {
        EXPECT_NE(std::string(e.what()).find("needs sm_" + std::to_string(need)), std::string::npos) << e.what();
      }
    }
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
  }
}

TEST(AsyncEntanglementArgs, RejectsBadArguments) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> a(64), b(64);
  async::entanglement_config cfg;
  cfg.split = 0;
  EXPECT_THROW(async::warp_entanglement(cfg, b.data(), a.data(), 16), memlab::error);
  cfg.split = 33;
  EXPECT_THROW(async::warp_entanglement(cfg, b.data(), a.data(), 16), memlab::error);
  cfg.split = 1;
  EXPECT_THROW(async::warp_entanglement(cfg, a.data(), a.data(), 16), memlab::error);
}
