#include "bench/gpu_monitor.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#ifdef MEMLAB_HAVE_NVML_H
#include <dlfcn.h>
#include <nvml.h>
#endif

namespace memlab::bench {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

std::vector<std::string> reason_names(std::uint64_t mask) {
  static constexpr std::pair<std::uint64_t, char const*> names[] = {
      {reason::gpu_idle, "gpu_idle"},         {reason::applications_clocks, "applications_clocks"},
      {reason::sw_power_cap, "sw_power_cap"}, {reason::hw_slowdown, "hw_slowdown"},
      {reason::sync_boost, "sync_boost"},     {reason::sw_thermal, "sw_thermal"},
      {reason::hw_thermal, "hw_thermal"},     {reason::hw_power_brake, "hw_power_brake"},
      {reason::display_clocks, "display_clocks"}};
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (auto const& [bit, name] : names) {
    known |= bit;
    if (mask & bit) out.emplace_back(name);
  }
  if (std::uint64_t const rest = mask & ~known) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(rest));
    out.emplace_back(buf);
  }
  return out;
}

gpu_window summarize_window(gpu_reading const& before, gpu_reading const& after) {
  gpu_window w;
  nlohmann::json g = nlohmann::json::object();
  auto range = [&](char const* key, auto const& a, auto const& b) {
    if (!a && !b) return;
    double const x = a ? static_cast<double>(*a) : static_cast<double>(*b);
    double const y = b ? static_cast<double>(*b) : x;
    g[key] = {{"min", std::min(x, y)}, {"max", std::max(x, y)}};
  };
  range("sm_clock_mhz", before.sm_mhz, after.sm_mhz);
  range("mem_clock_mhz", before.mem_mhz, after.mem_mhz);
  range("power_w", before.power_w, after.power_w);
  range("temp_c", before.temp_c, after.temp_c);
  double const dt = after.t_s - before.t_s;
  g["window_s"] = dt;
  // The energy counter integrates over the whole window: the average power the samples drew,
  // which the two instantaneous readings (taken with the GPU idle) do not show.
  // The counter advances in steps (the driver's power sampling, tens of milliseconds apart):
  // over a short window it shows no step or two (the H200's records of stop 21 had averages
  // of 0 W and 2228 W beside 600 W readings), so the average is given only over a window
  // long enough for a step to be a small part of it.
  if (before.energy_mj && after.energy_mj && *after.energy_mj >= *before.energy_mj && dt >= energy_window_min_s)
    g["power_w"]["avg"] = static_cast<double>(*after.energy_mj - *before.energy_mj) * 1e-3 / dt;
  std::uint64_t const mask = before.reasons.value_or(0) | after.reasons.value_or(0);
  if (before.reasons || after.reasons) g["clocks_event_reasons"] = reason_names(mask);
  w.throttle_reasons = reason_names(mask & reason::throttling);
  // The violation counters accumulate while clocks are held down, so they see throttling
  // anywhere between the two readings, not only at the instants read.
  auto violation = [&](char const* key, char const* name, auto const& a, auto const& b) {
    if (!a || !b) return;
    double const ms = *b >= *a ? static_cast<double>(*b - *a) * 1e-6 : 0.0;
    g[key] = ms;
    if (ms > 0.0) w.throttle_reasons.emplace_back(name);
  };
  violation("power_violation_ms", "power_violation", before.power_violation_ns, after.power_violation_ns);
  violation("thermal_violation_ms", "thermal_violation", before.thermal_violation_ns, after.thermal_violation_ns);
  w.throttled = !w.throttle_reasons.empty();
  w.gpu = std::move(g);
  return w;
}

#ifdef MEMLAB_HAVE_NVML_H

static_assert(reason::sw_power_cap == nvmlClocksThrottleReasonSwPowerCap &&
                  reason::hw_slowdown == nvmlClocksThrottleReasonHwSlowdown &&
                  reason::sw_thermal == nvmlClocksThrottleReasonSwThermalSlowdown &&
                  reason::hw_thermal == nvmlClocksThrottleReasonHwThermalSlowdown &&
                  reason::hw_power_brake == nvmlClocksThrottleReasonHwPowerBrakeSlowdown &&
                  reason::gpu_idle == nvmlClocksThrottleReasonGpuIdle,
              "clocks-event reason bits differ from nvml.h");

struct gpu_monitor::api {
  void* lib = nullptr;
  nvmlDevice_t dev{};
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) by_pci = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) energy = nullptr;
  decltype(&nvmlDeviceGetTemperature) temperature = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksThrottleReasons) reasons = nullptr;
  decltype(&nvmlDeviceGetViolationStatus) violation = nullptr;
  decltype(&nvmlDeviceGetComputeRunningProcesses_v3) processes = nullptr;

  template <class F>
  void bind(F& f, char const* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
  }
};

gpu_monitor::gpu_monitor(std::string const& pci_bus_id) {
  auto a = std::make_unique<api>();
  a->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!a->lib) {
    char const* why = dlerror();
    status_ = std::string("unavailable: cannot load libnvidia-ml.so.1 (") + (why ? why : "no reason given") + ")";
    return;
  }
  a->bind(a->init, "nvmlInit_v2");
  a->bind(a->shutdown, "nvmlShutdown");
  a->bind(a->error_string, "nvmlErrorString");
  a->bind(a->by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  a->bind(a->clock, "nvmlDeviceGetClockInfo");
  a->bind(a->max_clock, "nvmlDeviceGetMaxClockInfo");
  a->bind(a->power, "nvmlDeviceGetPowerUsage");
  a->bind(a->energy, "nvmlDeviceGetTotalEnergyConsumption");
  a->bind(a->temperature, "nvmlDeviceGetTemperature");
  // Drivers from 535 on also export it as nvmlDeviceGetCurrentClocksEventReasons; the old
  // name is in every driver and has the same signature.
  a->bind(a->reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  a->bind(a->violation, "nvmlDeviceGetViolationStatus");
  a->bind(a->processes, "nvmlDeviceGetComputeRunningProcesses_v3");
  if (!a->init || !a->shutdown || !a->by_pci) {
    dlclose(a->lib);
    status_ = "unavailable: libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2";
    return;
  }
  // The message is built before dlclose: nvmlErrorString lives in the library.
  auto why = [&](nvmlReturn_t r) { return std::string(a->error_string ? a->error_string(r) : "error"); };
  if (nvmlReturn_t r = a->init(); r != NVML_SUCCESS) {
    status_ = "unavailable: nvmlInit failed (" + why(r) + ")";
    dlclose(a->lib);
    return;
  }
  if (nvmlReturn_t r = a->by_pci(pci_bus_id.c_str(), &a->dev); r != NVML_SUCCESS) {
    status_ = "unavailable: NVML has no GPU at " + pci_bus_id + " (" + why(r) + ")";
    a->shutdown();
    dlclose(a->lib);
    return;
  }
  api_ = std::move(a);
  status_ = "ok";
}

gpu_monitor::~gpu_monitor() {
  if (!api_) return;
  api_->shutdown();
  dlclose(api_->lib);
}

std::optional<gpu_reading> gpu_monitor::read() const {
  if (!api_) return std::nullopt;
  api const& a = *api_;
  gpu_reading r;
  r.t_s = now_s();
  unsigned v = 0;
  if (a.clock && a.clock(a.dev, NVML_CLOCK_SM, &v) == NVML_SUCCESS) r.sm_mhz = v;
  if (a.clock && a.clock(a.dev, NVML_CLOCK_MEM, &v) == NVML_SUCCESS) r.mem_mhz = v;
  if (a.temperature && a.temperature(a.dev, NVML_TEMPERATURE_GPU, &v) == NVML_SUCCESS) r.temp_c = v;
  if (a.power && a.power(a.dev, &v) == NVML_SUCCESS) r.power_w = v * 1e-3;
  unsigned long long u = 0;
  if (a.energy && a.energy(a.dev, &u) == NVML_SUCCESS) r.energy_mj = u;
  if (a.reasons && a.reasons(a.dev, &u) == NVML_SUCCESS) r.reasons = u;
  nvmlViolationTime_t vt{};
  if (a.violation && a.violation(a.dev, NVML_PERF_POLICY_POWER, &vt) == NVML_SUCCESS) r.power_violation_ns = vt.violationTime;
  if (a.violation && a.violation(a.dev, NVML_PERF_POLICY_THERMAL, &vt) == NVML_SUCCESS)
    r.thermal_violation_ns = vt.violationTime;
  return r;
}

std::optional<unsigned> gpu_monitor::max_sm_mhz() const {
  unsigned v = 0;
  if (!api_ || !api_->max_clock || api_->max_clock(api_->dev, NVML_CLOCK_SM, &v) != NVML_SUCCESS) return std::nullopt;
  return v;
}

std::optional<std::vector<unsigned>> gpu_monitor::compute_processes() const {
  if (!api_ || !api_->processes) return std::nullopt;
  std::vector<nvmlProcessInfo_t> infos(64);
  unsigned count = static_cast<unsigned>(infos.size());
  nvmlReturn_t r = api_->processes(api_->dev, &count, infos.data());
  if (r == NVML_ERROR_INSUFFICIENT_SIZE) {
    infos.resize(count + 16);
    count = static_cast<unsigned>(infos.size());
    r = api_->processes(api_->dev, &count, infos.data());
  }
  if (r != NVML_SUCCESS) return std::nullopt;
  std::vector<unsigned> pids;
  for (unsigned i = 0; i < count; ++i) pids.push_back(infos[i].pid);
  return pids;
}

#else  // no nvml.h at build time

struct gpu_monitor::api {};
gpu_monitor::gpu_monitor(std::string const&) : status_("not built") {}
gpu_monitor::~gpu_monitor() = default;
std::optional<gpu_reading> gpu_monitor::read() const { return std::nullopt; }
std::optional<unsigned> gpu_monitor::max_sm_mhz() const { return std::nullopt; }
std::optional<std::vector<unsigned>> gpu_monitor::compute_processes() const { return std::nullopt; }

#endif

}  // namespace memlab::bench
