#pragma once
// A value computed once per device ordinal (the calling thread's current device) and kept for
// the process: occupancy, image probes, device names, the dispatcher's target.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <type_traits>

#include "memlab/error.hpp"

namespace memlab::detail {

/// `compute()` for the current device, run once per device and thread-safe. Each call site
/// (each lambda type, each template instance of its caller) keeps its own cache; a throw from
/// `compute` caches nothing.
template <class F>
std::invoke_result_t<F> per_device(F&& compute) {
  static std::mutex mu;
  static std::map<int, std::invoke_result_t<F>> cache;
  int dev = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(dev);
  if (it == cache.end()) it = cache.emplace(dev, compute()).first;
  return it->second;
}

}  // namespace memlab::detail
