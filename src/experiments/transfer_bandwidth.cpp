// transfer.bandwidth: Best Practices Guide §9.1 / §9.1.1 (seed 000 §9.1). Host<->device
// copy bandwidth by host memory kind: pageable (malloc), pinned (cudaHostAlloc),
// pinned after the fact (cudaHostRegister) and write-combined pinned.
//
// Model: a pinned copy is one DMA over PCIe, bounded by the link's rate (GT/s x lanes
// x encoding / 8, per direction; the link is full duplex, so both directions at once may
// approach twice that). A pageable copy goes through the driver's pinned staging buffer:
// a host memcpy plus the DMA, so it is bounded by the slower of host memcpy and the link,
// and pays a synchronisation per staging block.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "bench/state.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/buffer.hpp"
#include "transfer_noise.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

/// Host memory of one kind, owning; freed (and unregistered) on destruction.
class host_block {
 public:
  host_block(std::string const& kind, std::size_t bytes) : kind_(kind), bytes_(bytes) {
    if (kind == "pinned") {
      MEMLAB_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocDefault));
    } else if (kind == "write_combined") {
      MEMLAB_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocWriteCombined));
    } else if (kind == "pageable" || kind == "registered") {
      std::size_t const rounded = (bytes + 4095) / 4096 * 4096;
      p_ = std::aligned_alloc(4096, rounded);
      if (p_ == nullptr) throw memlab::error("aligned_alloc of " + std::to_string(rounded) + " bytes failed");
      std::memset(p_, 0, rounded);  // touch every page: first-touch faults stay out of the timing
      if (kind == "registered") {
        cudaError_t const st = cudaHostRegister(p_, rounded, cudaHostRegisterDefault);
        if (st != cudaSuccess) {
          std::free(p_);
          p_ = nullptr;
          MEMLAB_CUDA_CHECK(st);
        }
      }
    } else {
      MEMLAB_EXPECTS(false, "unknown host memory kind " + kind);
    }
  }
  host_block(host_block const&) = delete;
  host_block& operator=(host_block const&) = delete;
  ~host_block() {
    if (p_ == nullptr) return;
    if (kind_ == "pinned" || kind_ == "write_combined") {
      MEMLAB_CUDA_CHECK_NOTHROW(cudaFreeHost(p_));
    } else {
      if (kind_ == "registered") MEMLAB_CUDA_CHECK_NOTHROW(cudaHostUnregister(p_));
      std::free(p_);
    }
  }
  void* get() const noexcept { return p_; }

 private:
  std::string kind_;
  std::size_t bytes_ = 0;
  void* p_ = nullptr;
};

/// The PCIe link as the driver reports it in sysfs, with the theoretical rate per direction.
nlohmann::json pcie_link(device_info const& d) {
  char path[128];
  std::snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.0/", d.pci_domain, d.pci_bus, d.pci_device);
  std::string speed, width;
  std::ifstream(std::string(path) + "current_link_speed") >> speed;  // "32.0" (then "GT/s PCIe")
  std::ifstream(std::string(path) + "current_link_width") >> width;
  nlohmann::json j = {{"sysfs", path}};
  double const gts = std::atof(speed.c_str());
  int const lanes = std::atoi(width.c_str());
  if (gts <= 0 || lanes <= 0) {
    j["link"] = "not reported";
    return j;
  }
  // Gen1/2 use 8b/10b line coding, Gen3 and later 128b/130b.
  double const coding = gts <= 5.0 ? 8.0 / 10.0 : 128.0 / 130.0;
  int const gen = gts <= 2.5 ? 1 : gts <= 5.0 ? 2 : gts <= 8.0 ? 3 : gts <= 16.0 ? 4 : gts <= 32.0 ? 5 : 6;
  j["link"] = "PCIe Gen" + std::to_string(gen) + " x" + std::to_string(lanes);
  j["gt_per_s"] = gts;
  j["lanes"] = lanes;
  j["theoretical_gbps_per_direction"] = gts * lanes * coding / 8.0;
  return j;
}

nlohmann::json const& link_of(device_info const& d) {
  static nlohmann::json const j = pcie_link(d);
  return j;
}

void bandwidth_body(state& s) {
  std::string const dir = s.get_string("direction");
  std::string const kind = s.variant();
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 8 == 0, "bytes must be a multiple of 8");
  bool const h2d = dir == "h2d" || dir == "both";
  bool const d2h = dir == "d2h" || dir == "both";
  std::uint64_t const seed_in = s.seed(), seed_out = s.seed() ^ 0xA5A5A5A5ull;

  // h2d: host_src -> dev_dst; d2h: dev_src -> host_dst (checked by copying it back to dev_check).
  std::optional<host_block> host_src, host_dst;
  device_buffer<char> dev_dst, dev_src, dev_check;
  if (h2d) {
    host_src.emplace(kind, bytes);
    dev_dst = device_buffer<char>(bytes);
    transfer::fill_pattern_host(host_src->get(), bytes, seed_in);
  }
  if (d2h) {
    host_dst.emplace(kind, bytes);
    dev_src = device_buffer<char>(bytes);
    dev_check = device_buffer<char>(bytes);
    transfer::fill_pattern_device(dev_src.data(), bytes, seed_out, nullptr);
  }
  // Both directions at once: forked from the timed stream onto two streams (one per copy
  // engine), `chain` copies on each, and joined back, so the harness times it like one launch
  // (batched when short: the fork and join are captured into the graph too). A chain of
  // copies per fork amortises the join: with one copy each, a small row timed how fast two
  // streams meet again (two runs of one build put pinned 16 KiB at 15.3 and 5.8 us), not the
  // link. The chain carries at least 1 MiB per direction, at most 16 copies.
  int const chain = dir == "both" ? static_cast<int>(std::clamp<std::size_t>((std::size_t{1} << 20) / bytes, 1, 16)) : 1;
  memlab::stream sa, sb;
  memlab::event fork(cudaEventDisableTiming), join_a(cudaEventDisableTiming), join_b(cudaEventDisableTiming);
  auto issue_both = [&](cudaStream_t st) {
    fork.record(st);
    MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(sa, fork.get(), 0));
    MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(sb, fork.get(), 0));
    for (int i = 0; i < chain; ++i) {
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dev_dst.data(), host_src->get(), bytes, cudaMemcpyHostToDevice, sa));
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(host_dst->get(), dev_src.data(), bytes, cudaMemcpyDeviceToHost, sb));
    }
    join_a.record(sa);
    join_b.record(sb);
    MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(st, join_a.get(), 0));
    MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(st, join_b.get(), 0));
  };
  auto issue_one = [&](cudaStream_t st) {
    if (h2d) MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dev_dst.data(), host_src->get(), bytes, cudaMemcpyHostToDevice, st));
    else MEMLAB_CUDA_CHECK(cudaMemcpyAsync(host_dst->get(), dev_src.data(), bytes, cudaMemcpyDeviceToHost, st));
  };
  auto copy_pageable = [&] {
    if (h2d) MEMLAB_CUDA_CHECK(cudaMemcpy(dev_dst.data(), host_src->get(), bytes, cudaMemcpyHostToDevice));
    else MEMLAB_CUDA_CHECK(cudaMemcpy(host_dst->get(), dev_src.data(), bytes, cudaMemcpyDeviceToHost));
  };

  // ---- checked run: poisoned destinations, patterns generated independently on each side
  if (h2d) dev_dst.fill_bytes(0xFF);
  if (d2h) std::memset(host_dst->get(), 0xFF, bytes);
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  if (dir == "both") {
    issue_both(s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  } else if (kind == "pageable") {
    copy_pageable();
  } else {
    issue_one(s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  }
  std::size_t bad = 0;
  // The checks run on the timed stream, which is blocking: it waits for the legacy stream's
  // copies, including the DMA of a pageable host-to-device cudaMemcpy, which may return once
  // its source is staged, before the bytes land (on the non-blocking `sa` the check raced it).
  if (h2d) bad += transfer::count_pattern_mismatches(dev_dst.data(), bytes, seed_in, s.stream());
  if (d2h) {
    MEMLAB_CUDA_CHECK(cudaMemcpy(dev_check.data(), host_dst->get(), bytes, cudaMemcpyHostToDevice));
    bad += transfer::count_pattern_mismatches(dev_check.data(), bytes, seed_out, s.stream());
  }
  s.set_verification(zero_mismatches(
      "mismatched 8-byte words", bad,
      std::to_string(bad) + " of " + std::to_string(bytes / 8 * (h2d && d2h ? 2 : 1)) + " words differ"));

  // ---- timing: bytes counted once per direction
  s.add_bytes_read(static_cast<double>(bytes) * (dir == "both" ? 2 * chain : 1));
  s.set_extra("bytes_counted", dir == "both" ? "bytes moved, once per direction: 2 x bytes x copies_per_launch "
                                               "(H2D and D2H at once)"
                                             : "bytes moved, once (one direction)");
  if (dir == "both") s.set_extra("copies_per_launch", chain);
  // Pageable copies are slow and noisy by nature (the driver's staging): past 16 MiB their
  // sampling is capped to keep the suite's budget.
  auto policy = s.timing();
  if (bytes >= (std::size_t{16} << 20) && kind == "pageable") {
    policy = bench::capped(policy, 0.3);
    s.set_extra("sampling", "capped: at most 0.3 s, at least 5 samples");
  }
  if (dir == "both") {
    // Pageable copies are issued from one host thread, so the driver's staging serialises most of them.
    s.exec(issue_both);
    s.set_extra("timed_with", "harness exec: fork onto two streams, one copy each, join back");
  } else if (kind == "pageable") {
    // A pageable cudaMemcpy returns only when the copy is done; events on the legacy stream bracket it.
    memlab::event start, stop;
    s.set_samples(bench::sample_until_stable(
        [&] {
          start.record(cudaStreamLegacy);
          copy_pageable();
          stop.record(cudaStreamLegacy);
          stop.synchronize();
          return static_cast<double>(stop.elapsed_since(start));
        },
        policy));
    s.set_extra("timed_with", "events on the legacy stream around cudaMemcpy");
  } else {
    s.exec([&](cudaStream_t st) { issue_one(st); });
    s.set_extra("timed_with", "harness exec: cudaMemcpyAsync on the timed stream");
  }

  set_host_noise_floor(s, kind == "pageable" ? host_crossing::host : host_crossing::pcie);

  nlohmann::json const& link = link_of(s.device());
  s.set_extra("pcie", link);
  if (link.contains("theoretical_gbps_per_direction"))
    s.set_predicted({{"link_gbps", link["theoretical_gbps_per_direction"].get<double>() * (dir == "both" ? 2 : 1)},
                     {"basis", "theoretical PCIe rate (x2 for both directions: the link is full duplex)"}});
}

memlab::bench::registrar const reg{[] {
  experiment e;
  e.id = "transfer.bandwidth";
  e.description = "host<->device copy GB/s by host memory kind (pageable, pinned, registered, write-combined), 4 KiB..1 GiB";
  e.seed_ref = "000 §9.1";
  e.axes = {string_axis("direction", {"h2d", "d2h", "both"}),
            pow2_axis("bytes", 12, 30, 20, 22),
            variant_axis({"pageable", "pinned", "registered", "write_combined"})};
  e.axes[1].description = "bytes per direction";
  e.axes[1].min_value = 8;
  e.body = bandwidth_body;
  e.describe_axis("direction", "", "h2d, d2h, or both at once");
  e.describe_axis("bytes", "bytes", "bytes per direction", true);
  e.describe_axis("variant", "", "host memory: pageable, pinned (cudaHostAlloc), registered (cudaHostRegister), write-combined");
  e.metrics = {metrics::time(), metrics::gbps(), {"predicted.link_gbps", "GB/s", "the PCIe link's rate"}};
  e.headline = best_row("What does pinned memory gain over pageable for a large host-to-device copy?",
                        {{"direction", {"h2d"}}, {"bytes", {"max"}}, {"variant", {"pinned"}}}, "gbps", "baseline",
                        {{"variant", {"pageable"}}});
  e.prose = {"Host↔device copies over PCIe. Pageable memory is first copied by the driver into a pinned staging buffer, "
             "so it pays an extra host memcpy and cannot overlap; pinned (cudaHostAlloc), registered (cudaHostRegister) "
             "and write-combined memory are DMA'd directly. Small copies are latency-bound, so bandwidth only "
             "saturates at megabytes.",
             "Where each line saturates, and the gap between pageable and the rest.",
             "Seed 000 §9.1: the Guide contrasts device memory (898 GB/s on V100) with PCIe x16 Gen3 (16 GB/s) and "
             "recommends pinned memory for the highest host↔device bandwidth."};
  e.seed_figures = {{"PCIe x16 Gen3, theoretical", 16, "GB/s", "Tesla V100 system", "000 §9.1", {}}};
  {
    plot_spec p = line_plot("transfer_bandwidth.png", "Host-device bandwidth against transfer size", "bytes", "gbps", {"variant"});
    p.panels = "direction";
    p.model = "predicted.link_gbps";
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
