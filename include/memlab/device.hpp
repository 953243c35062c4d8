#pragma once
// What the GPU is: the properties the experiments and their models need.
#include <cstddef>
#include <string>

namespace memlab {

struct device_info {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  std::size_t global_mem_bytes = 0;
  std::size_t l2_bytes = 0;
  std::size_t persisting_l2_max_bytes = 0;
  std::size_t smem_per_sm_bytes = 0;
  std::size_t smem_per_block_bytes = 0;
  std::size_t smem_per_block_optin_bytes = 0;
  int regs_per_sm = 0;
  int regs_per_block = 0;
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int async_engine_count = 0;
  bool can_map_host_memory = false;
  bool unified_addressing = false;
  bool integrated = false;
  bool concurrent_managed_access = false;
  int sm_clock_khz = 0;
  int mem_clock_khz = 0;
  int mem_bus_width_bits = 0;
  int pci_domain = 0, pci_bus = 0, pci_device = 0;

  int compute_capability() const noexcept { return cc_major * 10 + cc_minor; }
  /// Theoretical DRAM bandwidth in GB/s (1e9 B/s): double data rate x clock x bus width.
  double dram_peak_gbps() const noexcept {
    return 2.0 * static_cast<double>(mem_clock_khz) * 1e3 * (mem_bus_width_bits / 8.0) / 1e9;
  }
};

/// Number of usable CUDA devices; 0 when there is no device or no driver (never throws).
int device_count() noexcept;
/// Properties of device `index`; throws memlab::error when it does not exist.
device_info query_device(int index);
/// Multiprocessors of the calling thread's current device: one attribute read, cheap
/// enough for launch code that sizes a grid (query_device reads every property).
int current_device_sm_count();

}  // namespace memlab
