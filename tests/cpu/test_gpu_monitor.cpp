// The NVML monitor's pure parts (reason names, the window summary), and that it degrades to
// a status line without a driver instead of failing.
#include <gtest/gtest.h>

#include <algorithm>

#include "bench/gpu_monitor.hpp"

using namespace memlab::bench;

namespace {

bool has(std::vector<std::string> const& v, std::string const& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

gpu_reading reading(double t, unsigned sm, unsigned mem, double power, unsigned temp, std::uint64_t reasons) {
  gpu_reading r;
  r.t_s = t;
  r.sm_mhz = sm;
  r.mem_mhz = mem;
  r.power_w = power;
  r.temp_c = temp;
  r.reasons = reasons;
  return r;
}

}  // namespace

TEST(GpuMonitor, ReasonNamesFollowTheBits) {
  auto n = reason_names(reason::sw_power_cap | reason::hw_thermal | reason::gpu_idle);
  ASSERT_EQ(n.size(), 3u);
  EXPECT_EQ(n[0], "gpu_idle");
  EXPECT_EQ(n[1], "sw_power_cap");
  EXPECT_EQ(n[2], "hw_thermal");
  EXPECT_TRUE(reason_names(0).empty());
  EXPECT_EQ(reason_names(0x10000).at(0), "0x10000") << "unknown bits are kept, not dropped";
  EXPECT_TRUE(has(reason_names(reason::hw_power_brake | reason::hw_slowdown | reason::sw_thermal), "hw_power_brake"));
}

TEST(GpuMonitor, WindowTakesTheRangeAndTheOrOfReasons) {
  auto const a = reading(10.0, 1980, 2619, 120.0, 40, reason::gpu_idle);
  auto const b = reading(10.5, 1755, 2619, 650.0, 52, reason::sw_power_cap);
  auto const w = summarize_window(a, b);
  EXPECT_EQ(w.gpu["sm_clock_mhz"]["min"], 1755.0);
  EXPECT_EQ(w.gpu["sm_clock_mhz"]["max"], 1980.0);
  EXPECT_EQ(w.gpu["temp_c"]["max"], 52.0);
  EXPECT_DOUBLE_EQ(w.gpu["window_s"].get<double>(), 0.5);
  auto const reasons = w.gpu["clocks_event_reasons"].get<std::vector<std::string>>();
  EXPECT_TRUE(has(reasons, "gpu_idle"));
  EXPECT_TRUE(has(reasons, "sw_power_cap"));
  EXPECT_TRUE(w.throttled);
  EXPECT_EQ(w.throttle_reasons, std::vector<std::string>{"sw_power_cap"}) << "idle is not throttling";
}

TEST(GpuMonitor, IdleOrBoostIsNotThrottling) {
  auto const w = summarize_window(reading(0, 1980, 2619, 90, 35, reason::gpu_idle),
                                  reading(1, 1980, 2619, 300, 38, reason::applications_clocks));
  EXPECT_FALSE(w.throttled);
  EXPECT_TRUE(w.throttle_reasons.empty());
}

TEST(GpuMonitor, ViolationCountersCatchThrottlingBetweenTheReadings) {
  auto a = reading(0, 1980, 2619, 90, 35, 0), b = reading(2, 1980, 2619, 90, 35, 0);
  a.power_violation_ns = 1'000'000'000;
  b.power_violation_ns = 1'250'000'000;  // 250 ms held below the clocks for power in between
  a.thermal_violation_ns = b.thermal_violation_ns = 7;
  a.energy_mj = 1'000'000;
  b.energy_mj = 1'800'000;  // 800 J in 2 s
  auto const w = summarize_window(a, b);
  EXPECT_TRUE(w.throttled);
  EXPECT_EQ(w.throttle_reasons, std::vector<std::string>{"power_violation"});
  EXPECT_DOUBLE_EQ(w.gpu["power_violation_ms"].get<double>(), 250.0);
  EXPECT_DOUBLE_EQ(w.gpu["thermal_violation_ms"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(w.gpu["power_w"]["avg"].get<double>(), 400.0);
}

TEST(GpuMonitor, ShortWindowsGiveNoAveragePower) {
  // 20 ms: the energy counter may have stepped once (here 45 J, "2250 W") or not at all.
  auto a = reading(0, 1980, 2619, 600, 35, 0), b = reading(0.02, 1980, 2619, 600, 35, 0);
  a.energy_mj = 1'000'000;
  b.energy_mj = 1'045'000;
  auto const w = summarize_window(a, b);
  EXPECT_FALSE(w.gpu["power_w"].contains("avg")) << w.gpu.dump();
  EXPECT_DOUBLE_EQ(w.gpu["power_w"]["max"].get<double>(), 600.0);
}

TEST(GpuMonitor, WithoutTheGpuItSaysWhyAndReadsNothing) {
  // No GPU at this bus id, whether or not the machine has a driver (and the build may lack
  // nvml.h): the monitor must construct, say why, and return no readings.
  gpu_monitor m("0000:00:00.0");
  if (m.available()) GTEST_SKIP() << "NVML is present here";
  EXPECT_TRUE(m.status() == "not built" || m.status().rfind("unavailable: ", 0) == 0) << m.status();
  EXPECT_FALSE(m.read().has_value());
  EXPECT_FALSE(m.max_sm_mhz().has_value());
  EXPECT_FALSE(m.compute_processes().has_value());
}
