#pragma once
// The between-run noise floor of a row whose work crosses the host (bench/stats.hpp):
// called by the transfer experiments after the row is timed.
#include "bench/state.hpp"
#include "bench/stats.hpp"

namespace memlab::bench {

enum class host_crossing {
  pcie,  ///< DMA over PCIe from or to pinned memory (copy engines or mapped loads)
  host,  ///< host work in the timing: pageable staging, driver calls timed on the host
};

inline void set_host_noise_floor(state& s, host_crossing c) {
  auto const& r = s.result();
  if (!r.median_ms) return;
  if (c == host_crossing::host) {
    s.set_noise_floor(between_run_noise_floor_host,
                      "host work (pageable staging or a driver call): p95 of two suites' differences, 30%");
  } else if (*r.median_ms < batch_below_ms) {
    s.set_noise_floor(between_run_noise_floor_pcie_short,
                      "a latency-bound copy over PCIe: p95 of two suites' differences, 15%");
  } else {
    s.set_noise_floor(between_run_noise_floor_pcie, "a copy over PCIe: p95 of two suites' differences, 5%");
  }
}

}  // namespace memlab::bench
