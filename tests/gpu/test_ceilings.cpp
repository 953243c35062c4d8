// The tensor-core ceilings' kernels (kernels/ceilings/tensor_peak.hpp): every accumulator of every
// warp against the products in double, for each instruction and input type the device and the
// image can run; and the check itself tells one iteration too few from the right count.
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "gpu_test.hpp"
#include "kernels/ceilings/tensor_peak.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"

using memlab::device_buffer;
using memlab::gemm_tc_input;
using memlab::detail::tensor_instruction;

namespace {

/// Accumulators farther than 2^-10 x sum |a||b| from the reference after `iterations`.
std::size_t off_reference(memlab::detail::tensor_peak_operands const& ops, std::vector<float> const& got, int blocks,
                          int iterations) {
  return memlab::detail::tensor_peak_mismatches(ops, got, blocks, iterations, std::ldexp(1.0, -10));
}

}  // namespace

class TensorPeak : public ::testing::TestWithParam<std::tuple<tensor_instruction, gemm_tc_input>> {};

TEST_P(TensorPeak, EveryAccumulatorHoldsItsProductsTimesTheIterations) {
  MEMLAB_REQUIRE_GPU();
  auto const [ins, in] = GetParam();
  void const* kernel = memlab::detail::tensor_peak_kernel(ins, in);
  if (ins == tensor_instruction::mma_sync) {
    MEMLAB_REQUIRE_ARCH(kernel, in == gemm_tc_input::e4m3 ? 89 : 80, "mma.sync");
  } else {
    MEMLAB_REQUIRE_ARCH(kernel, memlab::arch::wgmma, "wgmma");
    if (!memlab::image_has_sm90a()) GTEST_SKIP() << "wgmma needs an sm_90a image";
  }
  auto const ops = memlab::detail::make_tensor_peak_operands(ins, in, 1234);
  device_buffer<std::uint8_t> a(ops.a_bits.size()), b(ops.b_bits.size());
  a.upload(ops.a_bits);
  b.upload(ops.b_bits);
  int const blocks = 3;
  device_buffer<float> out(memlab::detail::tensor_peak_out_floats(ins, blocks));
  for (int iterations : {0, 1, 5}) {
    out.fill_bytes(0xFF);  // NaN: an accumulator never written fails
    memlab::detail::tensor_peak(ins, in, a.data(), b.data(), out.data(), blocks, iterations, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const got = out.download();
    EXPECT_EQ(off_reference(ops, got, blocks, iterations), 0u) << iterations << " iterations";
    // The same bound tells a missing iteration: most accumulators fail against one more.
    if (iterations > 0) EXPECT_GT(off_reference(ops, got, blocks, iterations + 1), got.size() / 2);
  }
}

INSTANTIATE_TEST_SUITE_P(InstructionsAndTypes, TensorPeak,
                         ::testing::Combine(::testing::Values(tensor_instruction::mma_sync, tensor_instruction::wgmma),
                                            ::testing::Values(gemm_tc_input::bf16, gemm_tc_input::f16, gemm_tc_input::e4m3)));

TEST(TensorPeakArgs, RefusesNullOperands) {
  float out = 0.f;
  EXPECT_THROW(memlab::detail::tensor_peak(tensor_instruction::mma_sync, gemm_tc_input::bf16, nullptr, &out, &out, 1, 1, nullptr),
               memlab::error);
}
