// transfer.zerocopy: Best Practices Guide §9.1.3 (seed 000 §9.1.3). A kernel reads (or
// writes) mapped pinned host memory directly: the PCIe traffic overlaps the kernel's own
// execution without streams. On a discrete GPU mapped memory should be read or written
// once, coalesced; data read twice crosses the link twice (the Guide's warning), where an
// explicit copy moves it once and the second pass reads device memory.
//
// Variants (each against its explicit counterpart, copy + the same kernel on device memory,
// measured in the same point as the peer):
//   read        out_dev = a * in_mapped + b
//   write       out_mapped = a * in_dev + b
//   read_twice  out_dev = a * in_mapped + b, then out_dev += c * in_mapped
// Model: a mapped pass moves the same bytes as the copy, over the same link, so read and
// write should take about the copy time (plus no separate kernel); read_twice about twice.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "bench/state.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/buffer.hpp"
#include "transfer_noise.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

constexpr float coef_a = 1.5f, coef_b = 0.25f, coef_c = -0.75f;

verification check(std::vector<float> const& in, float const* out, bool twice) {
  verification v;
  v.metric = "max_abs_err / bound";
  v.tolerance = 1.0;
  double worst = 0;
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    double const x = in[i];
    double const ref = coef_a * x + coef_b + (twice ? coef_c * x : 0.0);
    // Each float op rounds once (FMA or not): a few ulps of the largest term.
    double const bound = 4.0 * std::ldexp(1.0, -24) * (std::fabs(coef_a * x) + coef_b + std::fabs(coef_c * x) + 1e-30);
    double const e = std::fabs(static_cast<double>(out[i]) - ref) / bound;
    if (!(e <= 1.0) && bad++ == 0) first = i;
    if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
  }
  v.error = worst;
  v.status = bad ? verdict::failed : verdict::passed;
  if (bad) v.detail = std::to_string(bad) + " bad; first at " + std::to_string(first) + ": got " + std::to_string(out[first]);
  return v;
}

void zerocopy_body(state& s) {
  device_info const& dev = s.device();
  s.set_extra("integrated", dev.integrated);
  s.set_extra("can_map_host_memory", dev.can_map_host_memory);
  if (!dev.can_map_host_memory) s.skip("the device cannot map host memory (canMapHostMemory = 0)");
  std::string const variant = s.variant();
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 16 == 0 && bytes > 0, "bytes must be a positive multiple of 16");
  std::size_t const n = bytes / sizeof(float);
  bool const write = variant == "write", twice = variant == "read_twice";

  pinned_buffer<float> h_in(n, cudaHostAllocMapped), h_out(n, cudaHostAllocMapped);
  device_buffer<float> d_in(n), d_out(n);
  float *m_in = nullptr, *m_out = nullptr;
  MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&m_in), h_in.data(), 0));
  MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&m_out), h_out.data(), 0));
  s.set_extra("uva_same_pointer", m_in == h_in.data());

  std::vector<float> in(n);
  transfer::fill_random_floats(in.data(), n, s.seed());
  std::copy(in.begin(), in.end(), h_in.data());
  d_in.upload(in);

  auto mapped = [&](cudaStream_t st) {
    if (write) {
      transfer::affine(d_in.data(), m_out, n, coef_a, coef_b, st);
    } else {
      transfer::affine(m_in, d_out.data(), n, coef_a, coef_b, st);
      if (twice) transfer::affine_accumulate(m_in, d_out.data(), n, coef_c, st);
    }
  };
  auto explicit_copy = [&](cudaStream_t st) {
    if (write) {
      transfer::affine(d_in.data(), d_out.data(), n, coef_a, coef_b, st);
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), bytes, cudaMemcpyDeviceToHost, st));
    } else {
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), h_in.data(), bytes, cudaMemcpyHostToDevice, st));
      transfer::affine(d_in.data(), d_out.data(), n, coef_a, coef_b, st);
      if (twice) transfer::affine_accumulate(d_in.data(), d_out.data(), n, coef_c, st);
    }
  };
  // Checks one path: poison its output, run, compare against the double reference.
  auto checked = [&](auto const& path) {
    d_out.fill_bytes(0xFF, s.stream());
    std::memset(h_out.data(), 0xFF, bytes);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    path(s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    if (write) return check(in, h_out.data(), false);
    std::vector<float> got = d_out.download();
    return check(in, got.data(), twice);
  };
  verification v = checked(mapped);
  verification const v_explicit = checked(explicit_copy);
  s.set_extra("explicit_verified", to_string(v_explicit.status));
  if (v_explicit.status != verdict::passed) {
    v.status = verdict::failed;
    v.detail = "explicit path: " + v_explicit.detail;
  }
  s.set_verification(v);

  double const crossings = twice ? 2.0 : 1.0;
  s.add_bytes_read(crossings * static_cast<double>(bytes));
  s.set_extra("bytes_counted", twice ? "bytes crossing PCIe in the mapped kernel: the input twice"
                                     : "bytes crossing PCIe, once");
  s.exec(mapped);
  set_host_noise_floor(s, host_crossing::pcie);
  s.set_peer("copy+kernel", s.measure(explicit_copy).median);  // ratio_to_peer > 1: zero-copy faster
}

memlab::bench::registrar const reg{[] {
  experiment e;
  e.id = "transfer.zerocopy";
  e.description = "kernels reading / writing mapped pinned host memory vs explicit copy + kernel; data read twice";
  e.seed_ref = "000 §9.1.3";
  e.axes = {int_axis("bytes", {std::int64_t{1} << 28}, {std::int64_t{1} << 24}),
            variant_axis({"read", "write", "read_twice"})};
  e.axes[0].min_value = 16;
  e.body = zerocopy_body;
  e.describe_axis("bytes", "bytes", "bytes the kernel reads or writes");
  e.describe_axis("variant", "", "read or write mapped host memory once, or read it twice");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("explicit copy + kernel")};
  e.headline = best_row("Does reading mapped host memory once beat copying it first?", {{"variant", {"read"}}},
                        "median_ms", "ratio_to_peer");
  e.prose = {"Zero-copy: a kernel reads or writes mapped pinned host memory directly over PCIe. It wins when each byte "
             "crosses once and coalesced (no separate copy), and loses when the kernel touches the same data twice, "
             "since nothing is cached on the device.",
             "Above 1: zero-copy faster than copy + kernel; read_twice should fall below.", ""};
  {
    plot_spec p = bar_plot("transfer_zerocopy.png", "Zero-copy against explicit copy + kernel", "variant", "ratio_to_peer");
    p.refs = {{"value", "copy + kernel", 1.0}};
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
