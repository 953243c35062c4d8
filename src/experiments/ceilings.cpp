// ceilings: what this GPU can do, measured in the same run as everything compared to it.
//  - d2d_memcpy: cudaMemcpyAsync device-to-device (bytes read + written), the bandwidth
//    every bandwidth row's ratio_to_ceiling refers to;
//  - fp32_fma: independent FP32 FMAs, the arithmetic ceiling for % of peak and the roofline;
//  - tensor: the tensor-core instructions the GEMM ladder uses (mma.sync, wgmma), operands on
//    chip, the ceiling of every tensor-core GEMM row (extra.pct_of_tensor_peak).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "bench/state.hpp"
#include "kernels/ceilings/fma_peak.hpp"
#include "kernels/ceilings/tensor_peak.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

void d2d_memcpy(state& s) {
  std::size_t const bytes = static_cast<std::size_t>(s.get_int("mib")) << 20;
  std::size_t const n = bytes / sizeof(std::uint32_t);
  device_buffer<std::uint32_t> src(n), dst(n);  // device first: an impossible size fails fast
  std::vector<std::uint32_t> host(n);
  fill_random(host, s.seed(), 0, 0xffffffffu);
  src.upload(host);
  dst.fill_bytes(0xFF);
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, s.stream()));
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  s.set_verification(compare_exact(dst.download(), host));
  s.add_bytes_read(static_cast<double>(bytes));
  s.add_bytes_written(static_cast<double>(bytes));
  s.exec([&](cudaStream_t st) {
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice, st));
  });
  s.set_predicted({{"gbps", s.device().dram_peak_gbps()}, {"model", "theoretical DRAM bandwidth"}});
  // Publish the ceiling now so every later bandwidth row in this run is compared with it.
  row const r = s.finish();
  if (r.gbps) s.set_ceiling_gbps(*r.gbps);
}

void fp32_fma(state& s) {
  int const threads = 256;
  int const blocks = s.device().sm_count * (s.device().max_threads_per_sm / threads);
  int const iterations = s.quick() ? 1024 : 4096;
  std::size_t const total = static_cast<std::size_t>(blocks) * threads;
  float const a = 0.999f, b = 0.001f;  // contracts towards 1: no overflow, no denormals
  std::vector<float> seeds(4096);
  fill_random(seeds, s.seed(), -1.0, 1.0);
  device_buffer<float> d_seeds(seeds.size()), out(total);
  d_seeds.upload(seeds);
  out.fill_bytes(0xFF);
  detail::fma_peak(out.data(), d_seeds.data(), seeds.size(), blocks, threads, iterations, a, b, s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  // Check every thread's result bit for bit against the same FMA sequence on the host.
  std::vector<float> got = out.download(), ref(total);
  std::vector<float> per_seed(seeds.size());
  for (std::size_t i = 0; i < seeds.size(); ++i) per_seed[i] = detail::fma_peak_reference(seeds[i], iterations, a, b);
  for (std::size_t t = 0; t < total; ++t) ref[t] = per_seed[t % seeds.size()];
  s.set_verification(compare_exact(got, ref));
  // The one float each thread writes is negligible: this row is arithmetic only.
  s.add_flops(2.0 * static_cast<double>(total) * detail::fma_chains * iterations);
  s.exec([&](cudaStream_t st) {
    detail::fma_peak(out.data(), d_seeds.data(), seeds.size(), blocks, threads, iterations, a, b, st);
  });
  row const r = s.finish();
  if (r.tflops) s.set_fp32_peak_tflops(*r.tflops);
  s.set_extra("blocks", blocks);
  s.set_extra("threads", threads);
  s.set_extra("iterations", iterations);
}

void tensor_peak_point(state& s) {
  using detail::tensor_instruction;
  std::string const dtype = s.get_string("dtype");
  bool const mma = s.variant() == "mma_sync";
  tensor_instruction const ins = mma ? tensor_instruction::mma_sync : tensor_instruction::wgmma;
  gemm_tc_input const in = dtype == "f16" ? gemm_tc_input::f16 : dtype == "e4m3" ? gemm_tc_input::e4m3 : gemm_tc_input::bf16;
  int const warps = static_cast<int>(s.get_int("warps"));
  void const* kernel = detail::tensor_peak_kernel(ins, in);
  if (mma) {
    s.require_arch(kernel, in == gemm_tc_input::e4m3 ? 89 : 80,
                   in == gemm_tc_input::e4m3 ? "FP8 mma.sync m16n8k32" : "mma.sync m16n8k16");
  } else {
    s.require_arch(kernel, arch::wgmma, "wgmma");
    if (!image_has_sm90a()) s.skip("wgmma needs an sm_90a image (this binary's code for the device is sm_90 or PTX)");
    if (warps != detail::wgmma_peak_threads / 32)
      s.skip("the wgmma kernel runs two warpgroups (8 warps) an SM; warps applies to mma_sync");
  }
  int const per_block = mma ? detail::mma_peak_threads / 32 : detail::wgmma_peak_threads / 32;
  int const want_per_sm = warps / per_block;
  int const fits = detail::tensor_peak_blocks_per_sm(ins, in);
  if (want_per_sm > fits)
    s.skip(std::to_string(warps) + " warps an SM need " + std::to_string(want_per_sm) + " blocks; " + std::to_string(fits) + " fit");
  int const blocks = s.device().sm_count * want_per_sm;
  // ~0.5-1 ms a launch on an H100, like the GEMM rows it is the ceiling of (at the power cap the
  // clock follows the work's length); wgmma does 8x the flops an iteration of a 16-warp mma_sync SM.
  // Not shortened under --quick: an eighth of it measured wgmma at 475 TFLOP/s against 850 on the
  // H200 (set-up and ramp), which would inflate every row's share of it; quick runs one warp count.
  int const iterations = mma ? 4096 * 16 / warps : 1024;
  auto const ops = detail::make_tensor_peak_operands(ins, in, s.seed());
  device_buffer<std::uint8_t> a(ops.a_bits.size()), b(ops.b_bits.size());
  a.upload(ops.a_bits);
  b.upload(ops.b_bits);
  device_buffer<float> out(detail::tensor_peak_out_floats(ins, blocks));
  // Every accumulator against the products in double: `rel` x sum |a||b| x iterations. Two
  // iterations are held to 2^-10 (FP32 accumulators: the exact check); the timed length to 2^-4,
  // except E4M3 wgmma, whose accumulator keeps around 14 bits (DeepSeek-V3's figure for the
  // H800; DeepGEMM promotes around it): over 4096 slices a sum drifts up to ~35% low (measured
  // on the H200: 5567.5 against 8484.5), so at full length it is held to 1/2 (docs/tc-gemm.md).
  auto check = [&](int its, double rel) {
    out.fill_bytes(0xFF);  // NaN: an accumulator never written fails
    detail::tensor_peak(ins, in, a.data(), b.data(), out.data(), blocks, its, s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    std::string first;
    std::size_t const bad = detail::tensor_peak_mismatches(ops, out.download(), blocks, its, rel, &first);
    return std::make_pair(bad, first);
  };
  auto const [bad_short, first_short] = check(2, std::ldexp(1.0, -10));
  s.add_flops(static_cast<double>(blocks) * iterations * detail::tensor_peak_flops_per_block_iteration(ins, in));
  s.exec([&](cudaStream_t st) { detail::tensor_peak(ins, in, a.data(), b.data(), out.data(), blocks, iterations, st); });
  bool const fp8_wgmma = !mma && in == gemm_tc_input::e4m3;
  auto const [bad_long, first_long] = check(iterations, fp8_wgmma ? 0.5 : std::ldexp(1.0, -4));
  s.set_verification(zero_mismatches(std::string("accumulators off the double-precision products (2 iterations: 2^-10 x "
                                                 "sum|ab|; all: ") + (fp8_wgmma ? "1/2, FP8 wgmma's short adder)" : "2^-4)"),
                                     bad_short + bad_long, bad_short ? first_short : first_long));
  s.set_extra("blocks", blocks);
  s.set_extra("iterations", iterations);
  s.set_extra("instruction", mma ? (in == gemm_tc_input::e4m3 ? "mma.sync.m16n8k32" : "mma.sync.m16n8k16")
                                 : (in == gemm_tc_input::e4m3 ? "wgmma.m64n256k32" : "wgmma.m64n256k16"));
  row const r = s.finish();
  // The key's ceiling is the best configuration measured in this run.
  std::string const key = detail::tensor_peak_key(ins, in);
  if (r.tflops && r.check.status == verdict::passed && *r.tflops > s.tensor_peak_tflops(key).value_or(0.0))
    s.set_tensor_peak_tflops(key, *r.tflops);
}

registrar const copy_reg{[] {
  experiment e;
  e.id = "ceilings.d2d_copy";
  e.description = "measured bandwidth ceiling: cudaMemcpy device-to-device (bytes read + written)";
  e.seed_ref = "(every bandwidth row is compared with it)";
  e.axes = {int_axis("mib", {512}, {256})};
  e.axes[0].min_value = 1;
  e.axes[0].max_value = 1 << 20;
  e.axes[0].description = "MiB copied";
  e.body = d2d_memcpy;
  e.describe_axis("mib", "MiB", "MiB copied (read once, written once)");
  e.metrics = {metrics::time(), metrics::gbps()};
  e.headline = best_row("What device-to-device bandwidth can this GPU sustain?", {{"mib", {"max"}}}, "gbps");
  e.prose = {"The yardsticks every other section is measured against, taken in this run: the device-to-device "
             "cudaMemcpy bandwidth (the practical DRAM ceiling, well below the datasheet figure). Ratios to the "
             "ceiling and the roofline use this measured number, not the datasheet.",
             "The copy's share of the DRAM peak in the header: 85-95% is usual for HBM.", ""};
  return e;
}()};

registrar const fma_reg{[] {
  experiment e;
  e.id = "ceilings.fp32_fma";
  e.description = "measured arithmetic ceiling: FP32 FMA rate of a kernel that does nothing else";
  e.seed_ref = "(% of FP32 peak and the roofline use it)";
  e.body = fp32_fma;
  e.metrics = {metrics::time(), metrics::tflops()};
  e.headline = best_row("What FP32 FMA rate can this GPU sustain?", {}, "tflops");
  {
    // The run's roofline: every row of an experiment that declares tflops, under the two
    // ceilings this run measured.
    plot_spec p;
    p.file = "roofline.png";
    p.title = "Roofline: every kernel with declared flops and bytes, under this run's ceilings";
    p.kind = "roofline";
    p.y = "tflops";
    e.plots.push_back(p);
  }
  e.prose = {"The FP32 FMA peak of a register-only kernel, measured in this run; % of FP32 peak uses it.",
             "It should sit within a few percent of 2 x SMs x 128 lanes x the boost clock.", ""};
  return e;
}()};

registrar const tensor_reg{[] {
  experiment e;
  e.id = "ceilings.tensor";
  e.description = "measured tensor-core ceilings: mma.sync and wgmma with operands on chip, FP32 accumulators";
  e.seed_ref = "(the tensor-core GEMM rows' extra.pct_of_tensor_peak uses it)";
  e.axes = {variant_axis({"mma_sync", "wgmma"}), string_axis("dtype", {"bf16", "f16", "e4m3"}),
            int_axis("warps", {8, 16, 32}, {8})};
  // 4 (one warp a scheduler) on request only: what a single warp issues (rung 2 runs two a scheduler).
  e.axes.back().allowed = {std::int64_t{4}, std::int64_t{8}, std::int64_t{16}, std::int64_t{32}};
  e.body = tensor_peak_point;
  e.describe_axis("variant", "", "the instruction: mma.sync (HMMA: rungs 1-2, every GPU since Ampere) or wgmma (rungs 3-6, sm_90a)");
  e.describe_axis("dtype", "", "input type; accumulation is FP32 (E4M3: mma.sync needs sm_89, wgmma sm_90a)");
  e.describe_axis("warps", "warps", "warps an SM (mma_sync: blocks of 4; 4 on request, one warp a scheduler; wgmma: two warpgroups, 8 only)");
  e.metrics = {metrics::time(), metrics::tflops()};
  e.headline = best_row("What rate can the tensor cores sustain, by instruction?", {{"dtype", {"bf16"}}}, "tflops");
  {
    plot_spec p = bar_plot("tensor_peak.png", "Tensor-core ceilings: TFLOP/s with operands on chip", "variant", "tflops",
                           {"dtype"});
    e.plots.push_back(p);
  }
  e.prose = {"Kernels that do nothing but tensor-core MMAs on operands already in registers (mma.sync) or shared memory "
             "(wgmma): the rate each instruction family reaches on this GPU, measured in this run with random operands "
             "of the input type. Each tensor-core GEMM row is read against the peak of the instruction its rung issues "
             "(extra.pct_of_tensor_peak).",
             "mma.sync against wgmma on Hopper: how much of the tensor cores the pre-Hopper instruction can reach at all, "
             "which bounds the mma.sync rung (the default on Ampere and Ada) on this card.",
             ""};
  return e;
}()};

}  // namespace
