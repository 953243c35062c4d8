#pragma once
// Sampling for timings the transfer experiments take themselves (pageable copies, work
// spread over several streams), with the same stopping rule as the harness: at least
// min_samples and min_time, then stop once the relative standard deviation is under
// max_noise, or at max_samples, or when the wall-clock budget is spent. The samples go
// to state::set_samples, which computes the median and noise. No harness types here.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "memlab/buffer.hpp"

namespace memlab::transfer {

struct sampling_policy {
  int warmup = 1;
  int min_samples = 10;
  int max_samples = 1000;
  double min_time_ms = 20.0;
  double max_noise = 0.01;
  double timeout_s = 1.0;
};

/// Builds the policy from the harness's timing options (any struct with those fields).
template <class Timing>
sampling_policy policy_from(Timing const& t) {
  sampling_policy p;
  p.warmup = t.profile ? 0 : t.warmup;
  p.min_samples = t.profile ? 1 : t.min_samples;
  p.max_samples = t.profile ? 1 : t.max_samples;
  p.min_time_ms = t.min_time_s * 1e3;
  p.max_noise = t.max_noise;
  p.timeout_s = t.timeout_s;
  return p;
}

/// Caps the sampling of slow or inherently noisy measurements (pageable copies, both
/// directions at once): at most `wall_s` seconds and at least `min_samples` samples.
inline sampling_policy capped(sampling_policy p, double wall_s, int min_samples = 5) {
  p.timeout_s = std::min(p.timeout_s, wall_s);
  p.min_samples = std::min(p.min_samples, min_samples);
  return p;
}

/// Runs body(begin, end) over [0, n) split across up to 8 host threads (fills and checks
/// of 100 MiB+ host buffers would otherwise dominate an experiment's wall time).
template <class Body>
void host_parallel_for(std::size_t n, Body&& body) {
  unsigned const hw = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::size_t const threads = n < (std::size_t{1} << 20) ? 1 : hw;
  if (threads == 1) {
    body(std::size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  std::size_t const step = (n + threads - 1) / threads;
  for (std::size_t t = 0; t < threads; ++t) {
    std::size_t const b = std::min(n, t * step), e = std::min(n, b + step);
    if (b < e) pool.emplace_back([&body, b, e] { body(b, e); });
  }
  for (auto& th : pool) th.join();
}

/// Calls `one_sample()` (returns milliseconds) under `p`; returns the samples.
template <class Sample>
std::vector<double> sample_until_stable(Sample&& one_sample, sampling_policy const& p) {
  for (int i = 0; i < p.warmup; ++i) (void)one_sample();
  std::vector<double> ms;
  double sum = 0.0, sum2 = 0.0;
  auto const t0 = std::chrono::steady_clock::now();
  while (static_cast<int>(ms.size()) < p.max_samples) {
    double const x = one_sample();
    ms.push_back(x);
    sum += x;
    sum2 += x * x;
    auto const n = static_cast<double>(ms.size());
    double const wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (static_cast<int>(ms.size()) >= p.min_samples && sum >= p.min_time_ms) {
      double const mean = sum / n;
      double const var = n > 1 ? std::max(0.0, (sum2 - n * mean * mean) / (n - 1)) : 0.0;
      if (mean > 0 && std::sqrt(var) / mean <= p.max_noise) break;
    }
    // Out of budget: keep what we have (at least three samples, for a meaningful median).
    if (wall >= p.timeout_s && ms.size() >= 3) break;
  }
  return ms;
}

/// Times work spread over several streams: `start` is recorded on streams[0], every other
/// stream waits on it, `issue()` enqueues the work, then streams[0] waits on every other
/// stream's end and records `stop`. Returns stop - start in milliseconds.
class fork_join_timer {
 public:
  explicit fork_join_timer(std::size_t max_streams) {
    for (std::size_t i = 0; i < max_streams; ++i) joins_.emplace_back(cudaEventDisableTiming);
  }
  template <class Issue>
  double time(std::vector<cudaStream_t> const& streams, Issue&& issue) {
    start_.record(streams.at(0));
    for (std::size_t i = 1; i < streams.size(); ++i) MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(streams[i], start_.get(), 0));
    issue();
    for (std::size_t i = 1; i < streams.size(); ++i) {
      joins_.at(i).record(streams[i]);
      MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(streams[0], joins_[i].get(), 0));
    }
    stop_.record(streams[0]);
    stop_.synchronize();
    return stop_.elapsed_since(start_);
  }
  memlab::event const& start_event() const noexcept { return start_; }

 private:
  memlab::event start_, stop_;
  std::vector<memlab::event> joins_;
};

}  // namespace memlab::transfer
