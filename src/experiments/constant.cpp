// constant.*: constant memory (seed 004). A 1D convolution whose filter sits in __constant__,
// in global memory read through the read-only path (__ldg), or in shared memory; and the
// constant cache's serialization when a warp's lanes ask for different addresses.
#include <vector>

#include "bench/state.hpp"
#include "kernels/constant/constant.hpp"
#include "memlab/buffer.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

constant::filter_source source_of(std::string const& v) {
  if (v == "constant") return constant::filter_source::constant;
  if (v == "global_ldg") return constant::filter_source::global_ldg;
  return constant::filter_source::shared;
}

void broadcast_body(state& s) {
  int const taps = static_cast<int>(s.get_int("taps"));
  if (!constant::conv_supports(taps)) s.skip("taps must be one of 3, 9, 33, 65 (instantiated lengths)");
  auto const n = static_cast<std::size_t>(s.get_int("elements"));
  std::vector<float> in_h(n), filter_h(taps);
  fill_random(in_h, s.seed());
  fill_random(filter_h, s.seed() + 1);
  device_buffer<float> in(n), out(n), filter(taps);
  in.upload(in_h);
  filter.upload(filter_h);
  constant::set_conv_filter(filter_h.data(), taps);
  out.fill_bytes(0xFF);
  auto const src = source_of(s.variant());
  auto launch = [&](cudaStream_t st) {
    constant::conv1d(src, in.data(), out.data(), filter.data(), static_cast<std::int64_t>(n), taps, st);
  };
  launch(s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));

  std::vector<double> ref(n);
  int const r = taps / 2;
  auto const sn = static_cast<std::int64_t>(n);
  for (std::int64_t i = 0; i < sn; ++i) {
    double acc = 0.0;
    for (int k = 0; k < taps; ++k) {
      std::int64_t const j = i + k - r;
      if (j >= 0 && j < sn) acc += static_cast<double>(filter_h[k]) * in_h[static_cast<std::size_t>(j)];
    }
    ref[static_cast<std::size_t>(i)] = acc;
  }
  // |products| <= 1: a float sum of `taps` of them errs by at most ~taps * eps * taps.
  double const abs_tol = 2.0 * taps * taps * 6e-8;
  s.set_verification(compare_close(out.download(), ref, 1e-6, abs_tol));

  s.add_reads<float>(n);  // compulsory traffic: neighbours come from L1/L2
  s.add_writes<float>(n);
  s.add_flops(2.0 * taps * static_cast<double>(n));
  s.exec(launch);
  // Filter reads per output in each variant: a constant-bank operand needs no load
  // instruction; the others issue one uniform load per tap.
  s.set_predicted({{"filter_load_instructions_per_output", src == constant::filter_source::constant ? 0 : taps}});
}

registrar const broadcast_reg{[] {
  experiment e;
  e.id = "constant.broadcast";
  e.description = "1D convolution with the filter in __constant__, global (__ldg) or shared memory";
  e.seed_ref = "004 (constant memory, convolution filter)";
  e.axes = {variant_axis({"constant", "global_ldg", "shared"}), int_axis("taps", {3, 9, 33, 65}, {9}),
            pow2_axis("elements", 24, 24, 20, 20)};
  e.axes[1].min_value = 3;
  e.axes[1].max_value = constant::conv_max_taps;
  e.axes[2].min_value = 1;
  e.axes[2].max_value = std::int64_t{1} << 30;
  e.ceiling = ceiling_relation::peer;
  e.body = broadcast_body;
  e.describe_axis("variant", "", "where the filter lives: __constant__, global through __ldg, or shared");
  e.describe_axis("taps", "taps", "filter length");
  e.describe_axis("elements", "elements", "signal length", true);
  e.metrics = {metrics::time(), metrics::gbps()};
  e.headline = best_row("Does a uniformly read filter gain from constant memory over __ldg?",
                        {{"variant", {"constant"}}, {"taps", {"max"}}}, "median_ms", "baseline",
                        {{"variant", {"global_ldg"}}});
  e.prose = {"Constant memory is cached and broadcast: when every lane of a warp reads the same address it costs one "
             "read, but different addresses are serialized. A convolution filter, read uniformly by all lanes, is the "
             "textbook fit.",
             "How the three lines part as the filter grows.", ""};
  {
    plot_spec p = line_plot("constant_broadcast.png", "Convolution time against filter length", "taps", "median_ms", {"variant"});
    e.plots.push_back(p);
  }
  return e;
}()};

// ---------------------------------------------------------------- serialization

void serialization_body(state& s) {
  int const distinct = static_cast<int>(s.get_int("distinct"));
  int const iters = s.quick() ? 256 : 2048;
  auto const src = s.variant() == "constant" ? constant::table_source::constant : constant::table_source::global_ldg;
  std::vector<float> table_h(constant::table_words);
  fill_random(table_h, s.seed());
  device_buffer<float> table(table_h.size());
  table.upload(table_h);
  constant::set_table(table_h.data());
  int const grid = s.device().sm_count * 8;  // 8 blocks of 256: a full SM, one wave
  std::size_t const threads = static_cast<std::size_t>(grid) * constant::table_block;
  device_buffer<float> out(threads);
  out.fill_bytes(0xFF);
  auto launch_d = [&](int d, cudaStream_t st) {
    constant::table_reads(src, table.data(), out.data(), d, iters, grid, st);
  };
  launch_d(distinct, s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  std::vector<double> lane_ref(32);
  for (int l = 0; l < 32; ++l) {
    double acc = 0.0;
    for (int it = 0; it < iters; ++it) acc += table_h[constant::table_index(l, distinct, it)];
    lane_ref[l] = acc;
  }
  std::vector<double> ref(threads);
  for (std::size_t t = 0; t < threads; ++t) ref[t] = lane_ref[t % 32];
  // A float sum of `iters` values in [-1, 1): error grows at most ~iters^2 * eps / 2.
  s.set_verification(compare_close(out.download(), ref, 1e-5, static_cast<double>(iters) * iters * 6e-8));

  s.exec([&](cudaStream_t st) { launch_d(distinct, st); });
  // The uniform read (one distinct address) timed in this point: no row depends on another.
  double const base = distinct == 1 ? *s.result().median_ms : s.measure([&](cudaStream_t st) { launch_d(1, st); }).median;
  double const median = *s.result().median_ms;
  double const requests_per_sm = static_cast<double>(threads / 32) * iters / s.device().sm_count;
  // Constant cache: one address per pass. Read-only (L1) path: the addresses of one request
  // lie in one 128-byte line, served in one pass whatever `distinct` is.
  int const passes = src == constant::table_source::constant ? distinct : 1;
  s.set_predicted({{"passes_per_request", passes}, {"slowdown_vs_uniform", passes}});
  s.set_extra("uniform_median_ms", base);
  s.set_extra("measured_slowdown_vs_uniform", median / base);
  s.set_extra("ns_per_warp_request_per_sm", median * 1e6 / requests_per_sm);
}

registrar const serialization_reg{[] {
  experiment e;
  e.id = "constant.serialization";
  e.description = "warp reads of a table with 1..32 distinct addresses: __constant__ serializes, __ldg does not";
  e.seed_ref = "004 (constant memory: per-lane addresses serialize)";
  e.axes = {variant_axis({"constant", "global_ldg"}), int_axis("distinct", {1, 2, 4, 8, 16, 32}, {1, 32})};
  e.axes[1].min_value = 1;
  e.axes[1].max_value = 32;
  e.body = serialization_body;
  e.describe_axis("variant", "", "the table in __constant__ or read through __ldg");
  e.describe_axis("distinct", "addresses", "distinct addresses among a warp's 32 lanes", true);
  e.metrics = {metrics::time()};
  e.headline = best_row("What do 32 distinct addresses cost a __constant__ read against a uniform one?",
                        {{"variant", {"constant"}}, {"distinct", {"max"}}}, "median_ms", "baseline",
                        {{"distinct", {"1"}}});
  e.prose = {"The other side of constant memory: when the lanes of a warp read different addresses, the constant cache "
             "serves one address per pass, so a warp touching 32 distinct words takes about 32 times as long as a "
             "uniform read; the read-only global path does not serialize this way.",
             "The constant line rising with the distinct addresses while __ldg stays flat.", ""};
  {
    plot_spec p = line_plot("constant_serialization.png", "Table reads against distinct addresses per warp", "distinct", "median_ms", {"variant"});
    p.log_y = true;
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
