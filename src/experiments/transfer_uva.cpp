// transfer.uva: Best Practices Guide §9.1.4 (seed 000 §9.1.4). Under unified virtual
// addressing, cudaPointerGetAttributes tells from a pointer's value alone where its memory
// lives; pinned allocations have the same address on host and device. One row per kind of
// pointer (the attribute table, checked against how each was allocated, plus a kernel that
// reads through the reported device pointer), timed as the cost of one query. Where the
// machine has two GPUs, peer-to-peer copy bandwidth with and without peer access.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include "bench/state.hpp"
#include "kernels/transfer/host_timing.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/buffer.hpp"
#include "memlab/device.hpp"
#include "transfer_noise.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

char const* type_name(cudaMemoryType t) {
  switch (t) {
    case cudaMemoryTypeUnregistered: return "unregistered";
    case cudaMemoryTypeHost: return "host";
    case cudaMemoryTypeDevice: return "device";
    case cudaMemoryTypeManaged: return "managed";
  }
  return "unknown";
}

/// The allocation of one kind, released on scope exit.
struct allocation {
  std::string kind;
  void* p = nullptr;
  std::size_t bytes = 0;
  allocation(std::string k, std::size_t b) : kind(std::move(k)), bytes(b) {
    if (kind == "device") MEMLAB_CUDA_CHECK(cudaMalloc(&p, bytes));
    else if (kind == "pinned") MEMLAB_CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocDefault));
    else if (kind == "managed") MEMLAB_CUDA_CHECK(cudaMallocManaged(&p, bytes));
    else if (kind == "pageable" || kind == "registered") {
      p = std::aligned_alloc(4096, bytes);
      if (!p) throw memlab::error("aligned_alloc failed");
      if (kind == "registered") {
        cudaError_t const st = cudaHostRegister(p, bytes, cudaHostRegisterDefault);
        if (st != cudaSuccess) {
          std::free(p);
          p = nullptr;
          MEMLAB_CUDA_CHECK(st);
        }
      }
    } else {
      MEMLAB_EXPECTS(false, "unknown allocation kind " + kind);
    }
  }
  allocation(allocation const&) = delete;
  allocation& operator=(allocation const&) = delete;
  ~allocation() {
    if (!p) return;
    if (kind == "device" || kind == "managed") MEMLAB_CUDA_CHECK_NOTHROW(cudaFree(p));
    else if (kind == "pinned") MEMLAB_CUDA_CHECK_NOTHROW(cudaFreeHost(p));
    else {
      if (kind == "registered") MEMLAB_CUDA_CHECK_NOTHROW(cudaHostUnregister(p));
      std::free(p);
    }
  }
};

cudaMemoryType expected_type(std::string const& kind) {
  if (kind == "device") return cudaMemoryTypeDevice;
  if (kind == "managed") return cudaMemoryTypeManaged;
  if (kind == "pageable") return cudaMemoryTypeUnregistered;
  return cudaMemoryTypeHost;
}

void pointer_row(state& s, std::string const& kind) {
  std::size_t const n = std::size_t{1} << 18;  // 1 MiB of floats
  std::size_t const bytes = n * sizeof(float);
  allocation a(kind, bytes);
  // Fresh data written where the allocation lives.
  std::vector<float> data(n);
  transfer::fill_random_floats(data.data(), n, s.seed());
  MEMLAB_CUDA_CHECK(cudaMemcpy(a.p, data.data(), bytes, cudaMemcpyDefault));

  cudaPointerAttributes at{};
  MEMLAB_CUDA_CHECK(cudaPointerGetAttributes(&at, a.p));
  cudaMemoryType const want = expected_type(kind);
  nlohmann::json row = {{"type", type_name(at.type)},
                        {"expected_type", type_name(want)},
                        {"device", at.device},
                        {"device_pointer_equals_pointer", at.devicePointer == a.p},
                        {"host_pointer_equals_pointer", at.hostPointer == a.p},
                        {"device_pointer_null", at.devicePointer == nullptr},
                        {"host_pointer_null", at.hostPointer == nullptr}};
  int pageable_access = 0, host_ptr_for_registered = 0;
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, s.device().index));
  MEMLAB_CUDA_CHECK(
      cudaDeviceGetAttribute(&host_ptr_for_registered, cudaDevAttrCanUseHostPointerForRegisteredMem, s.device().index));
  row["device_pageable_memory_access"] = pageable_access != 0;
  row["device_can_use_host_pointer_for_registered"] = host_ptr_for_registered != 0;
  s.set_extra("attributes", row);
  s.set_extra("unified_addressing", s.device().unified_addressing);

  // Verification: the reported type matches the allocation, and where the driver reports a
  // device pointer, a kernel reading through it sees the data written above.
  verification v;
  v.metric = "problems";
  v.tolerance = 0;
  std::string problems;
  if (at.type != want) problems += std::string("type is ") + type_name(at.type) + "; ";
  if (kind != "pageable" && at.devicePointer == nullptr) problems += "no device pointer; ";
  if ((kind == "pinned" || kind == "device" || kind == "managed") && at.devicePointer != a.p)
    problems += "device pointer differs from the pointer (UVA says it should not); ";
  if (at.devicePointer != nullptr) {
    device_buffer<float> out(n);
    out.fill_bytes(0xFF);
    transfer::affine(static_cast<float const*>(at.devicePointer), out.data(), n, 1.0f, 0.0f, s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    if (out.download() != data) problems += "a kernel reading through devicePointer saw different data; ";
    row["kernel_read_checked"] = true;
  }
  v.error = problems.empty() ? 0 : 1;
  v.status = problems.empty() ? verdict::passed : verdict::failed;
  v.detail = problems;
  s.set_verification(v);

  // Timing: the cost of asking, per call (host clock; the query does not touch the GPU).
  constexpr int calls = 1000;
  auto policy = s.timing();
  policy.min_time_s = 0;
  s.set_samples(bench::sample_until_stable(
      [&] {
        cudaPointerAttributes tmp{};
        auto const t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) MEMLAB_CUDA_CHECK(cudaPointerGetAttributes(&tmp, a.p));
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / calls;
      },
      policy),
      "host");
  s.set_extra("timed_with", "host clock, ms per cudaPointerGetAttributes call (1000 calls per sample)");
  set_host_noise_floor(s, host_crossing::host);
}

void peer_row(state& s, bool with_access) {
  int const count = device_count();
  if (count < 2)
    s.skip("peer-to-peer needs 2 GPUs; this machine has " + std::to_string(count));
  int const self = s.device().index;
  int const peer = self == 0 ? 1 : 0;
  int can = 0;
  MEMLAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, self, peer));
  s.set_extra("can_access_peer", can != 0);
  s.set_extra("peer_device", peer);
  if (with_access && !can) s.skip("cudaDeviceCanAccessPeer says device " + std::to_string(self) + " cannot reach " +
                                  std::to_string(peer));
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 8 == 0 && bytes > 0, "bytes must be a positive multiple of 8");

  // Peer access is per direction and per context: enable (or make sure it is off) for this
  // row, and leave it off afterwards.
  auto set_access = [&](bool on) {
    cudaError_t const st = on ? cudaDeviceEnablePeerAccess(peer, 0) : cudaDeviceDisablePeerAccess(peer);
    if (st == cudaErrorPeerAccessAlreadyEnabled || st == cudaErrorPeerAccessNotEnabled) {
      (void)cudaGetLastError();
      return;
    }
    MEMLAB_CUDA_CHECK(st);
  };
  set_access(with_access);
  struct restore {
    std::function<void()> f;
    ~restore() { f(); }
  } const guard{[&] {
    if (with_access) {
      (void)cudaDeviceDisablePeerAccess(peer);
      (void)cudaGetLastError();
    }
  }};

  device_buffer<char> src(bytes);
  MEMLAB_CUDA_CHECK(cudaSetDevice(peer));
  device_buffer<char> dst;
  try {
    dst = device_buffer<char>(bytes);
    dst.fill_bytes(0xFF);
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (...) {
    cudaSetDevice(self);
    throw;
  }
  MEMLAB_CUDA_CHECK(cudaSetDevice(self));
  transfer::fill_pattern_device(src.data(), bytes, s.seed(), s.stream());
  MEMLAB_CUDA_CHECK(cudaMemcpyPeerAsync(dst.data(), peer, src.data(), self, bytes, s.stream()));
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  MEMLAB_CUDA_CHECK(cudaSetDevice(peer));
  std::size_t bad = 0;
  {
    memlab::stream ps;
    bad = transfer::count_pattern_mismatches(dst.data(), bytes, s.seed(), ps);
  }
  MEMLAB_CUDA_CHECK(cudaSetDevice(self));
  s.set_verification(zero_mismatches("mismatched 8-byte words", bad));

  s.add_bytes_read(static_cast<double>(bytes));
  s.set_extra("bytes_counted", "bytes copied device to device, once");
  s.set_extra("path", with_access ? "direct (peer access enabled: NVLink or PCIe P2P)"
                                  : "peer access off: the driver stages through host memory");
  s.exec([&](cudaStream_t st) {
    MEMLAB_CUDA_CHECK(cudaMemcpyPeerAsync(dst.data(), peer, src.data(), self, bytes, st));
  });
  // dst belongs to the peer device: free it there.
  MEMLAB_CUDA_CHECK(cudaSetDevice(peer));
  dst.reset();
  MEMLAB_CUDA_CHECK(cudaSetDevice(self));
}

void uva_body(state& s) {
  std::string const v = s.variant();
  if (v == "peer_access") return peer_row(s, true);
  if (v == "peer_no_access") return peer_row(s, false);
  pointer_row(s, v);
}

memlab::bench::registrar const reg{[] {
  experiment e;
  e.id = "transfer.uva";
  e.description = "cudaPointerGetAttributes on device/pinned/registered/pageable/managed pointers; P2P copies on 2+ GPUs";
  e.seed_ref = "000 §9.1.4";
  e.axes = {int_axis("bytes", {std::int64_t{1} << 28}, {std::int64_t{1} << 24}),
            variant_axis({"device", "pinned", "registered", "pageable", "managed", "peer_access", "peer_no_access"})};
  e.axes[0].description = "bytes of the peer-to-peer copy (the pointer rows use 1 MiB)";
  e.axes[0].min_value = 8;
  e.body = uva_body;
  using namespace memlab::bench;
  e.describe_axis("bytes", "bytes", "bytes of the peer-to-peer copy (the pointer rows use 1 MiB)");
  e.describe_axis("variant", "", "the kind of pointer asked about, or a P2P copy with and without peer access");
  e.metrics = {metrics::time(), metrics::gbps()};
  e.headline = best_row("How long does cudaPointerGetAttributes take on a device pointer?", {{"variant", {"device"}}},
                        "median_ms");
  e.prose = {"Unified virtual addressing: one address space for host and device, so cudaPointerGetAttributes can tell "
             "where any pointer lives, and with two GPUs peer-to-peer copies can bypass the host.",
             "The attributes each pointer kind reports (extra column); P2P rows need two GPUs.", ""};
  {
    plot_spec p = bar_plot("transfer_uva.png", "cudaPointerGetAttributes and P2P copy time by pointer kind", "variant", "median_ms");
    p.log_y = true;
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
