#pragma once
// What the link experiments share: GPU counts and skips, the current device restored, peer
// access set per ordered pair and put back, per-GPU streams, and the event timing of work
// spread over several GPUs (one event pair on the first GPU's stream around cross-device
// waits: stop - start covers every GPU's part). The sampling policy is the harness's.
#include <cuda_runtime_api.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/state.hpp"
#include "kernels/link/link_kernels.hpp"
#include "memlab/buffer.hpp"
#include "memlab/device.hpp"
#include "memlab/error.hpp"

#include "experiments/link_collectives.hpp"  // MEMLAB_NCCL_CHECK, nccl_version_text

namespace memlab::link_exp {

/// GPUs visible to this process (CUDA_VISIBLE_DEVICES applies).
inline int gpus() { return memlab::device_count(); }

/// Skips the point unless the machine has at least `n` GPUs.
inline void require_gpus(bench::state& s, int n, std::string const& what) {
  int const have = gpus();
  if (have < n)
    s.skip(what + " needs " + std::to_string(n) + " GPU" + (n == 1 ? "" : "s") + "; this machine has " +
           std::to_string(have));
}

/// Restores the current device on scope exit (the harness's stream belongs to it).
struct device_guard {
  int dev = 0;
  device_guard() { MEMLAB_CUDA_CHECK(cudaGetDevice(&dev)); }
  device_guard(device_guard const&) = delete;
  device_guard& operator=(device_guard const&) = delete;
  ~device_guard() { MEMLAB_CUDA_CHECK_NOTHROW(cudaSetDevice(dev)); }
};

/// Sets whether device a can access device b's memory (one direction) for this scope and puts
/// the previous state back afterwards, so a "without peer access" row is really without it
/// and the rows after it see what they saw before.
class peer_access {
 public:
  peer_access() = default;
  peer_access(peer_access const&) = delete;
  peer_access& operator=(peer_access const&) = delete;
  ~peer_access() {
    int dev = 0;
    (void)cudaGetDevice(&dev);
    for (auto const& c : changed_) {
      (void)cudaSetDevice(c.a);
      cudaError_t const st = c.was_on ? cudaDeviceEnablePeerAccess(c.b, 0) : cudaDeviceDisablePeerAccess(c.b);
      if (st != cudaSuccess) (void)cudaGetLastError();
    }
    (void)cudaSetDevice(dev);
  }
  /// Returns true if the state had to change (it was the opposite before).
  bool set(int a, int b, bool on) {
    if (a == b) return false;
    int dev = 0;
    MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
    MEMLAB_CUDA_CHECK(cudaSetDevice(a));
    cudaError_t const st = on ? cudaDeviceEnablePeerAccess(b, 0) : cudaDeviceDisablePeerAccess(b);
    bool changed = true;
    if (st == cudaErrorPeerAccessAlreadyEnabled || st == cudaErrorPeerAccessNotEnabled) {
      (void)cudaGetLastError();
      changed = false;
    } else if (st != cudaSuccess) {
      (void)cudaSetDevice(dev);
      MEMLAB_CUDA_CHECK(st);
    }
    if (changed) changed_.push_back({a, b, !on});
    MEMLAB_CUDA_CHECK(cudaSetDevice(dev));
    return changed;
  }
  /// Both directions between a and b.
  void set_pair(int a, int b, bool on) {
    set(a, b, on);
    set(b, a, on);
  }

 private:
  struct change {
    int a, b;
    bool was_on;
  };
  std::vector<change> changed_;
};

inline bool can_access(int a, int b) {
  int can = 0;
  MEMLAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
  return can != 0;
}

/// A non-blocking stream created on device `dev` (the current device is restored).
inline memlab::stream stream_on(int dev) {
  device_guard g;
  MEMLAB_CUDA_CHECK(cudaSetDevice(dev));
  return memlab::stream(cudaStreamNonBlocking);
}

/// A device buffer on device `dev`, freed there (whatever the current device is then).
template <class T>
class buffer_at {
 public:
  buffer_at() = default;
  buffer_at(int dev, std::size_t n) : dev_(dev) {
    device_guard g;
    MEMLAB_CUDA_CHECK(cudaSetDevice(dev));
    buf_ = memlab::device_buffer<T>(n);
  }
  buffer_at(buffer_at&&) noexcept = default;
  buffer_at& operator=(buffer_at&& o) noexcept {
    if (this != &o) {
      release();
      dev_ = o.dev_;
      buf_ = std::move(o.buf_);
    }
    return *this;
  }
  ~buffer_at() { release(); }
  T* data() noexcept { return buf_.data(); }
  int device() const noexcept { return dev_; }

 private:
  void release() noexcept {
    if (!buf_.data()) return;
    int cur = 0;
    (void)cudaGetDevice(&cur);
    (void)cudaSetDevice(dev_);
    buf_.reset();
    (void)cudaSetDevice(cur);
  }
  int dev_ = 0;
  memlab::device_buffer<T> buf_;
};

template <class T>
buffer_at<T> buffer_on(int dev, std::size_t n) {
  return buffer_at<T>(dev, n);
}

/// One (device, stream) a timed piece of work runs on.
struct lane {
  int device;
  cudaStream_t stream;
};

/// Times work issued on several streams, possibly of several GPUs: `start` is recorded on
/// lanes[0], every other lane's stream waits on it, the work is issued, every other lane records
/// its end and lanes[0] waits on it, then `stop`. stop - start is the span from the moment the
/// first lane could begin until the last one finished (the max over GPUs, on one clock).
class multi_timer {
 public:
  explicit multi_timer(std::vector<lane> lanes) : lanes_(std::move(lanes)) {
    MEMLAB_EXPECTS(!lanes_.empty(), "multi_timer: no lanes");
    device_guard g;
    MEMLAB_CUDA_CHECK(cudaSetDevice(lanes_[0].device));
    start_ = memlab::event();
    stop_ = memlab::event();
    for (auto const& l : lanes_) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(l.device));
      joins_.emplace_back(cudaEventDisableTiming);
    }
  }
  std::vector<lane> const& lanes() const noexcept { return lanes_; }
  /// Gated timing: before `start`, a kernel holds the first stream until the host has issued
  /// all the work, so back-to-back operations run without the host's issue time between them
  /// (what the GPUs take, not what one host thread can issue). Used for microsecond operations.
  void set_gated(bool on) {
    if (on && !gate_flag_) {
      gate_flag_.emplace(1, cudaHostAllocMapped | cudaHostAllocPortable);
      gate_flag_->data()[0] = 0;
      device_guard g;
      MEMLAB_CUDA_CHECK(cudaSetDevice(lanes_[0].device));
      MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&gate_dev_), gate_flag_->data(), 0));
    }
    gated_ = on;
  }
  bool gated() const noexcept { return gated_; }
  /// Milliseconds from start to stop around `issue()` (which may change the current device).
  double time(std::function<void()> const& issue) {
    device_guard g;
    lane const& first = lanes_[0];
    MEMLAB_CUDA_CHECK(cudaSetDevice(first.device));
    if (gated_) link::gate(gate_dev_, ++ticket_, 2000, first.stream);
    start_.record(first.stream);
    for (std::size_t i = 1; i < lanes_.size(); ++i) MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(lanes_[i].stream, start_.get(), 0));
    issue();
    for (std::size_t i = 1; i < lanes_.size(); ++i) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(lanes_[i].device));
      joins_[i].record(lanes_[i].stream);
    }
    MEMLAB_CUDA_CHECK(cudaSetDevice(first.device));
    for (std::size_t i = 1; i < lanes_.size(); ++i) MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(first.stream, joins_[i].get(), 0));
    stop_.record(first.stream);
    if (gated_) reinterpret_cast<std::uint32_t volatile*>(gate_flag_->data())[0] = ticket_;  // open the gate
    stop_.synchronize();
    return stop_.elapsed_since(start_);
  }

 private:
  std::vector<lane> lanes_;
  memlab::event start_{cudaEventDisableTiming}, stop_{cudaEventDisableTiming};
  std::vector<memlab::event> joins_;
  bool gated_ = false;
  std::optional<memlab::pinned_buffer<std::uint32_t>> gate_flag_;
  std::uint32_t* gate_dev_ = nullptr;
  std::uint32_t ticket_ = 0;
};

/// Samples (ms per operation) of `issue_one` on every lane under policy `p`: one timed
/// operation (also the warm-up) sizes the batch, operations shorter than the batch threshold
/// run `batch` at a time back to back (`fixed_batch` > 0: that many at every size).
/// `*batch_out` gets the batch size. With `peer`, every sample is followed by one sample of the
/// peer (ms per operation), collected in `*peer_out`: the two alternate, so both see the same
/// state of the machine (a host thread that issues slower for a while, a busy link).
inline std::vector<double> sample_lanes(multi_timer& t, std::function<void()> const& issue_one,
                                        bench::timing_options const& p, int* batch_out = nullptr,
                                        int fixed_batch = 0, std::function<double()> const& peer = {},
                                        std::vector<double>* peer_out = nullptr) {
  double const once = t.time(issue_one);
  int const batch = p.profile ? 1 : fixed_batch > 0 ? fixed_batch : bench::batch_size_for(once);
  if (batch_out) *batch_out = batch;
  return bench::sample_until_stable(
      [&] {
        double const ms = t.time([&] {
                            for (int i = 0; i < batch; ++i) issue_one();
                          }) /
                          batch;
        if (peer && peer_out) peer_out->push_back(peer());
        return ms;
      },
      p, batch);
}

/// The harness's sampling policy over multi_timer: `issue_one` enqueues one operation on every
/// lane; operations shorter than the batch threshold are timed `batch` at a time (back to
/// back) and reported per operation; `fixed_batch` > 0 times that many per sample at every
/// size instead. Hands the samples to the row (events). With `peer` (one sample of the peer,
/// ms per operation), the peer is sampled after each of ours and its median returned (else 0).
inline double time_lanes(bench::state& s, multi_timer& t, std::function<void()> const& issue_one,
                         bench::timing_options const* policy = nullptr, int fixed_batch = 0,
                         std::function<double()> const& peer = {}) {
  bench::timing_options const& p = policy ? *policy : s.timing();
  int batch = 1;
  std::vector<double> peer_samples;
  auto const samples = sample_lanes(t, issue_one, p, &batch, fixed_batch, peer, &peer_samples);
  s.set_samples(samples, "events");
  s.result().cold = false;  // no L2 flush between samples: the links, not DRAM, are measured
  s.result().timing["batch"] = batch;
  s.result().timing["method"] = batch > 1 ? "multi_gpu_events_batch" : "multi_gpu_events";
  s.set_extra("timed_with", "one event pair on GPU " + std::to_string(t.lanes()[0].device) +
                                "'s stream around the work of " + std::to_string(t.lanes().size()) +
                                " streams joined by cross-stream event waits" +
                                (batch > 1 ? ", " + std::to_string(batch) + " operations back to back per sample" : "") +
                                (t.gated() ? ", issued behind a gate kernel released once all were issued "
                                             "(the host's issue time excluded)"
                                           : "") +
                                (peer ? "; the peer sampled after each sample, alternating" : ""));
  if (t.gated()) s.result().timing["method"] = batch > 1 ? "multi_gpu_events_gated_batch" : "multi_gpu_events_gated";
  if (peer_samples.empty()) return 0;
  s.result().timing["peer_samples"] = peer_samples.size();
  return bench::summarize(peer_samples).median;
}

/// The same as time_lanes for a peer measured in the same point, returned rather than recorded.
inline double median_lanes(bench::state& s, multi_timer& t, std::function<void()> const& issue_one, double cap_s = 0.5) {
  return bench::summarize(sample_lanes(t, issue_one, bench::capped(s.timing(), cap_s))).median;
}

/// Rows' GPUs as an axis: "0".."7" name one GPU; rows naming a GPU the machine lacks skip.
inline int gpu_of(bench::state& s, std::string const& axis) {
  int const g = static_cast<int>(s.get_int(axis));
  require_gpus(s, g + 1, axis + "=" + std::to_string(g));
  return g;
}

/// The bandwidth rows' size axis: 256 MiB a direction (32 MiB with --quick), at least 16
/// bytes (one 16-byte vector).
inline bench::axis link_bytes_axis() {
  bench::axis a = bench::int_axis("bytes", {std::int64_t{256} << 20}, {std::int64_t{32} << 20});
  a.min_value = 16;
  return a;
}

#if MEMLAB_HAVE_NCCL
/// One communicator per visible GPU, ncclCommInitAll in this process, kept for the process's
/// life (initialisation costs about a second; the comms are never destroyed: at exit the
/// CUDA runtime may already be gone).
struct nccl_world {
  std::vector<int> devices;
  std::vector<ncclComm_t> comms;
  std::vector<memlab::stream> streams;
};
inline nccl_world& nccl_all() {
  static nccl_world* w = nullptr;
  if (!w) {
    device_guard g;
    auto* nw = new nccl_world;
    int const n = gpus();
    for (int i = 0; i < n; ++i) nw->devices.push_back(i);
    nw->comms.resize(n);
    MEMLAB_NCCL_CHECK(ncclCommInitAll(nw->comms.data(), n, nw->devices.data()));
    for (int i = 0; i < n; ++i) nw->streams.push_back(stream_on(i));
    w = nw;
  }
  return *w;
}
#endif

/// Why NCCL rows cannot run in this build, or "".
inline std::string nccl_missing() {
#if MEMLAB_HAVE_NCCL
  return "";
#else
  return "built without NCCL (not found by CMake: apt install libnccl-dev, or -DMEMLAB_NCCL_ROOT=...)";
#endif
}

}  // namespace memlab::link_exp
