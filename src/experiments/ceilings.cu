// ceilings: what this GPU can do, measured in the same run as everything compared to it.
//  - d2d_memcpy: cudaMemcpyAsync device-to-device (bytes read + written), the bandwidth
//    every bandwidth row's ratio_to_ceiling refers to;
//  - fp32_fma: independent FP32 FMAs, the arithmetic ceiling for % of peak and the roofline.
#include <cstring>

#include "bench/state.hpp"
#include "kernels/ceilings/fma_peak.hpp"
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

}  // namespace
