#pragma once
// Helpers for the timings the transfer experiments take themselves: a fork/join event
// timer for work spread over several streams, and a host parallel-for for the large host
// fills and checks. The sampling policy is the harness's (bench::sample_until_stable).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "memlab/buffer.hpp"
#include "memlab/detail/host_parallel.hpp"

namespace memlab::transfer {

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
