// registers.pressure: seed 004's register budget. One row-normalization kernel (each thread
// keeps a 64-float row in registers) built under several __launch_bounds__ and __maxnreg__
// budgets; per build: registers, spill bytes, occupancy and time side by side.
//
// Model: blocks per SM = min(limits of registers, threads, blocks); registers allow
// floor(65536 / (regs * 256)) blocks of 256 threads (allocation granularity aside), so the
// occupancy column is predicted from numRegs and compared with the CUDA occupancy API.
// -maxrregcount would need a per-target CMake flag; __maxnreg__ (CUDA 12.4+) is the same
// budget stated on the kernel itself.
#include <cmath>
#include <vector>

#include "bench/state.hpp"
#include "kernels/registers/row_normalize.hpp"
#include "memlab/buffer.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

std::vector<std::string> build_names() {
  std::vector<std::string> v;
  for (auto const& b : registers::builds()) v.emplace_back(b.name);
  return v;
}

void pressure_body(state& s) {
  auto const rows = static_cast<std::size_t>(s.get_int("rows"));
  constexpr int L = registers::row_length;
  std::string const& name = s.variant();
  registers::build_info const info = registers::query(name);

  std::vector<float> in_h(rows * L);
  fill_random(in_h, s.seed());
  device_buffer<float> in(in_h.size()), out(in_h.size());
  in.upload(in_h);
  out.fill_bytes(0xFF);
  auto launch = [&](cudaStream_t st) {
    registers::row_normalize(name, in.data(), out.data(), static_cast<std::int64_t>(rows), st);
  };
  launch(s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  std::vector<double> ref(in_h.size());
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int k = 0; k < L; ++k) sum += in_h[k * rows + r];
    double const mean = sum / L;
    double sq = 0.0;
    for (int k = 0; k < L; ++k) sq += (in_h[k * rows + r] - mean) * (in_h[k * rows + r] - mean);
    double const inv = 1.0 / std::sqrt(sq / L + registers::row_eps);
    for (int k = 0; k < L; ++k) ref[k * rows + r] = (in_h[k * rows + r] - mean) * inv;
  }
  // Outputs are O(1); float sums of 64 terms and rsqrtf (2 ulp) keep errors near 1e-6.
  s.set_verification(compare_close(out.download(), ref, 1e-5, 1e-5));

  s.add_reads<float>(rows * L);
  s.add_writes<float>(rows * L);
  s.exec(launch);

  device_info const& d = s.device();
  int const warps_per_block = registers::row_block / 32;
  int const max_warps = d.max_threads_per_sm / 32;
  // Registers are allocated per warp in units of 256 (8 per thread).
  int const regs_per_warp = ((info.num_regs * 32 + 255) / 256) * 256;
  int const by_regs = regs_per_warp > 0 ? d.regs_per_sm / (regs_per_warp * warps_per_block) : 0;
  int const by_threads = d.max_threads_per_sm / registers::row_block;
  int const predicted_blocks = std::min(by_regs, by_threads);
  s.set_predicted({{"blocks_per_sm", predicted_blocks},
                   {"occupancy", static_cast<double>(predicted_blocks * warps_per_block) / max_warps}});
  std::string attribute;
  for (auto const& b : registers::builds())
    if (name == b.name) attribute = b.attribute;
  s.set_extra("attribute", attribute);
  s.set_extra("registers_per_thread", info.num_regs);
  s.set_extra("spill_bytes_per_thread", info.local_bytes);
  s.set_extra("blocks_per_sm", info.blocks_per_sm);
  s.set_extra("occupancy", static_cast<double>(info.blocks_per_sm * warps_per_block) / max_warps);
  s.set_extra("active_warps_per_sm", info.blocks_per_sm * warps_per_block);
}

registrar const pressure_reg{[] {
  experiment e;
  e.id = "registers.pressure";
  e.description = "one 64-float-per-thread kernel under __launch_bounds__/__maxnreg__ budgets: regs, spills, occupancy, time";
  e.seed_ref = "004 (registers: __launch_bounds__, -maxrregcount, spilling, occupancy)";
  e.axes = {variant_axis(build_names(), {"default", "lb256_4", "maxnreg_32"}), pow2_axis("rows", 19, 19, 14, 14)};
  e.axes[1].min_value = 1;
  e.axes[1].max_value = std::int64_t{1} << 24;
  e.ceiling = ceiling_relation::peer;
  e.body = pressure_body;
  e.describe_axis("variant", "", "the register budget: compiler default, __launch_bounds__(256, n), __maxnreg__(n)");
  e.describe_axis("rows", "rows", "rows of 64 floats, one per thread", true);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling(),
               {"extra.spill_bytes_per_thread", "bytes", "local-memory spill per thread"}};
  e.headline = best_row("Does any register budget beat the compiler's default?", {{"rows", {"max"}}}, "median_ms",
                        "baseline", {{"variant", {"default"}}});
  e.prose = {"Capping registers (__launch_bounds__, -maxrregcount) raises occupancy but can force spills to local "
             "memory; the table shows registers, spill bytes and occupancy beside the time, so the trade is visible.",
             "Where the time starts rising as the budget tightens: the first budget with spill bytes.", ""};
  {
    plot_spec p = bar_plot("registers_pressure.png", "Time per register budget", "variant", "median_ms");
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
