#pragma once
// The one host thread pool: references, fills and checks of 100 MiB+ host buffers would
// otherwise dominate an experiment's wall time.
#include <algorithm>
#include <cstddef>
#include <thread>
#include <type_traits>
#include <vector>

namespace memlab::detail {

/// How many host threads host_parallel_for uses: the cores, at most 16.
inline unsigned host_workers() { return std::max(1u, std::min(16u, std::thread::hardware_concurrency())); }

/// Runs body(begin, end) or body(begin, end, chunk) over [0, n) in at most host_workers()
/// contiguous chunks, one thread each (chunk < host_workers(), so a caller can keep per-chunk
/// partials); below `serial_below` elements, in the calling thread as chunk 0.
template <class Body>
void host_parallel_for(std::size_t n, Body&& body, std::size_t serial_below = std::size_t{1} << 16) {
  auto run = [&body](std::size_t b, std::size_t e, unsigned w) {
    if constexpr (std::is_invocable_v<Body&, std::size_t, std::size_t, unsigned>)
      body(b, e, w);
    else
      body(b, e);
  };
  unsigned const workers = host_workers();
  if (n < serial_below || workers == 1) {
    run(std::size_t{0}, n, 0u);
    return;
  }
  std::vector<std::thread> pool;
  std::size_t const step = (n + workers - 1) / workers;
  for (unsigned w = 0; w < workers; ++w) {
    std::size_t const b = std::min(n, w * step), e = std::min(n, b + step);
    if (b < e) pool.emplace_back([&run, b, e, w] { run(b, e, w); });
  }
  for (auto& t : pool) t.join();
}

}  // namespace memlab::detail
