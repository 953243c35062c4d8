#pragma once
// Clocks, power, temperature and clock-event (throttle) reasons from NVML, read before and
// after a row's samples, never inside a timed region. NVML is opened with dlopen of the
// driver's libnvidia-ml.so.1 at run time, so binaries link no driver library and load on
// machines without one; the prototypes come from the real nvml.h (MEMLAB_HAVE_NVML_H),
// without which this module compiles to "not built".
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace memlab::bench {

/// One reading of the GPU's state. Fields NVML did not give are empty.
struct gpu_reading {
  double t_s = 0.0;  ///< steady-clock seconds when read
  std::optional<unsigned> sm_mhz, mem_mhz, temp_c;
  std::optional<double> power_w;                    ///< instantaneous board power
  std::optional<std::uint64_t> energy_mj;           ///< total energy since driver load
  std::optional<std::uint64_t> reasons;             ///< clocks-event reason bits (nvml.h values)
  std::optional<std::uint64_t> power_violation_ns;  ///< cumulative time below app clocks for power
  std::optional<std::uint64_t> thermal_violation_ns;
};

/// Clocks-event reason bits, as in nvml.h (checked against it where the header is built in).
namespace reason {
inline constexpr std::uint64_t gpu_idle = 0x1, applications_clocks = 0x2, sw_power_cap = 0x4,
                               hw_slowdown = 0x8, sync_boost = 0x10, sw_thermal = 0x20, hw_thermal = 0x40,
                               hw_power_brake = 0x80, display_clocks = 0x100;
/// The reasons that mean the clocks were lowered for power or temperature.
inline constexpr std::uint64_t throttling = sw_power_cap | hw_slowdown | sw_thermal | hw_thermal | hw_power_brake;
}  // namespace reason

/// "sw_power_cap", "hw_slowdown", ... for each bit set, in bit order; unknown bits as "0x...".
std::vector<std::string> reason_names(std::uint64_t mask);

/// What a row records about the GPU over its samples (pure: unit-tested on the CPU).
struct gpu_window {
  nlohmann::json gpu;                         ///< the row's "gpu" object (null: nothing read)
  bool throttled = false;                     ///< power or thermal throttling seen
  std::vector<std::string> throttle_reasons;  ///< which (names above, plus power/thermal_violation)
};
/// The shortest window over which the energy counter's average power is reported.
inline constexpr double energy_window_min_s = 1.0;

/// From the readings before and after the samples: min/max of clocks, power and temperature,
/// the average power from the energy counter (windows of at least energy_window_min_s), the
/// OR of the reasons seen, and whether the power or thermal violation counters advanced.
gpu_window summarize_window(gpu_reading const& before, gpu_reading const& after);

class gpu_monitor {
 public:
  /// Opens NVML for the GPU at `pci_bus_id` ("0000:65:00.0"). Never throws: when NVML is
  /// missing, status() says why and read() returns nothing.
  explicit gpu_monitor(std::string const& pci_bus_id);
  ~gpu_monitor();
  gpu_monitor(gpu_monitor const&) = delete;
  gpu_monitor& operator=(gpu_monitor const&) = delete;

  bool available() const noexcept { return status_ == "ok"; }
  /// "ok", "not built" (no nvml.h at build time) or "unavailable: <reason>".
  std::string const& status() const noexcept { return status_; }
  std::optional<gpu_reading> read() const;
  std::optional<unsigned> max_sm_mhz() const;
  /// PIDs of the compute processes on this GPU (this process included), or nothing.
  std::optional<std::vector<unsigned>> compute_processes() const;

  struct api;  ///< the resolved NVML entry points (gpu_monitor.cpp)

 private:
  std::string status_;
  std::unique_ptr<api> api_;
};

}  // namespace memlab::bench
