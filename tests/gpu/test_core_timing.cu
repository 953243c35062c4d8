// The harness's timing on a GPU: which method a launch gets (events, a graph of N launches,
// back-to-back launches when capture fails), that a batch sample is ms per launch, and the
// launch floor. Run by the GPU job; skips without a device.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "bench/runner.hpp"
#include "bench/state.hpp"
#include "gpu_test.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

// Timing under compute-sanitizer (MEMLAB_TEST_SMALL=1) measures the instrumentation.
#define MEMLAB_SKIP_UNDER_SANITIZER() \
  do {                                \
    if (memlab::test::small_sizes()) GTEST_SKIP() << "timings mean nothing under compute-sanitizer"; \
  } while (0)

namespace {

using namespace memlab::bench;

/// Spins for about `cycles` SM clock cycles: a kernel of a chosen length.
__global__ void spin(long long cycles, int* sink) {
  long long const t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  if (threadIdx.x == 0 && sink) *sink = 1;
}

/// Spins for about `ns` nanoseconds of the global timer: a kernel of a fixed length whatever
/// the SM clock does (a clock64 spin's time follows the clock).
__global__ void spin_ns(unsigned long long ns) {
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

timing_options fast_policy() {
  timing_options t;
  t.min_time_s = 0.005;
  t.min_samples = 10;
  t.timeout_s = 0.5;
  return t;
}

long long cycles_for_us(double us) {
  int khz = 0;
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  return static_cast<long long>(us * 1e-3 * khz);
}

TEST(CoreTiming, ShortKernelsAreTimedAsAGraphOfLaunches) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  memlab::device_buffer<int> sink(1);
  long long const c = cycles_for_us(5.0);
  measurement const m = ctx.measure([&](cudaStream_t s) { spin<<<1, 32, 0, s>>>(c, sink.data()); });
  EXPECT_EQ(m.method, "graph_batch") << m.note;
  EXPECT_GE(m.batch, 2);
  EXPECT_GE(m.batch * m.summary.median, batch_target_ms * 0.5) << "a sample is a whole batch";
  // ms per launch: a 5 us spin (at the base clock; boost runs it faster) plus little overhead.
  EXPECT_GT(m.summary.median, 0.001);
  EXPECT_LT(m.summary.median, 0.010);
  // Batched samples of a fixed spin can agree to the event timer's resolution: the noise
  // may be exactly 0, but it is a relative spread, finite and small.
  EXPECT_GE(m.noise.noise, 0.0);
  EXPECT_LT(m.noise.noise, 0.5);
}

/// Adds one to *counter: which of several buffers a captured launch was given.
__global__ void bump(int* counter) {
  if (threadIdx.x == 0) atomicAdd(counter, 1);
}

TEST(CoreTiming, ABatchKeepsEachLaunchsOwnArguments) {
  // The tensor-core ladder's decode points rotate over copies of B (docs/timing.md, "Streamed
  // weights") through a launcher that takes the next copy at every call: the graph a batch
  // captures must hold each call's own pointer, not the first call's replayed.
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  constexpr int copies = 5;
  memlab::device_buffer<int> counters(copies);
  counters.fill_bytes(0);
  measurement const m = ctx.measure([&, i = 0](cudaStream_t s) mutable {
    bump<<<1, 32, 0, s>>>(counters.data() + (i++ % copies));
  });
  ASSERT_EQ(m.method, "graph_batch") << m.note;
  ASSERT_GE(m.batch, copies);
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<int> const h = counters.download();
  int const total = std::accumulate(h.begin(), h.end(), 0);
  // Consecutive calls cycle, so every copy gets about a fifth of the launches: a replayed graph
  // of N launches gives one copy at most one launch more than the others, and there are about
  // total / N replays. A graph that kept the first call's pointer would give copy 0 them all.
  int const slack = total / m.batch + 8;
  for (int c = 0; c < copies; ++c) {
    EXPECT_GT(h[c], total / copies - slack) << "copy " << c << " of " << total << " launches";
    EXPECT_LT(h[c], total / copies + slack) << "copy " << c << " of " << total << " launches";
  }
}

TEST(CoreTiming, LaunchersThatSynchronizeFallBackToBackToBackLaunches) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  memlab::device_buffer<int> sink(1);
  long long const c = cycles_for_us(5.0);
  measurement const m = ctx.measure([&](cudaStream_t s) {
    spin<<<1, 32, 0, s>>>(c, sink.data());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s));  // not capturable
  });
  EXPECT_EQ(m.method, "launch_batch");
  EXPECT_NE(m.note.find("graph capture failed"), std::string::npos) << m.note;
  EXPECT_GE(m.batch, 2);
  EXPECT_EQ(cudaSuccess, cudaGetLastError()) << "the capture error is cleared";
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
}

TEST(CoreTiming, BatchedLaunchesNearTheThresholdAreAlsoTimedAlone) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  // 37 us of the global timer (a clock64 spin's length follows the SM clock, and an idle GPU
  // starts below its maximum): batched (under 50 us) but in the gray band (at least 25 us), so a
  // run whose probe lands above 50 us has a like-for-like timing to meet.
  measurement const m = ctx.measure([&](cudaStream_t s) { spin_ns<<<1, 32, 0, s>>>(37000ull); });
  ASSERT_GT(m.batch, 1);
  ASSERT_TRUE(m.cold_events.has_value());
  EXPECT_GT(m.cold_events->summary.samples, 0);
  // Alone, a launch also pays its gap: no faster than batched, and within a few us of it.
  EXPECT_GE(m.cold_events->summary.median, 0.98 * m.summary.median);
  EXPECT_LT(m.cold_events->summary.median, m.summary.median + 0.02);
  EXPECT_TRUE(m.timing_json().contains("cold_events"));
  // A 5 us spin is far below the band: batched only.
  measurement const s5 = ctx.measure([&](cudaStream_t s) { spin<<<1, 32, 0, s>>>(cycles_for_us(5.0), nullptr); });
  EXPECT_FALSE(s5.cold_events.has_value());
}

TEST(CoreTiming, ANoiseFloorRaisesTheReportedNoiseAndSaysWhy) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  experiment e;
  e.id = "test.floor";
  state s(ctx, e, {});
  // 100 us of the global timer: a clock64 spin of the same length read 15.6% noise on an H200
  // whose clock moved during the samples.
  s.exec([&](cudaStream_t st) { spin_ns<<<1, 32, 0, st>>>(100000ull); });
  ASSERT_TRUE(s.result().noise.has_value());
  EXPECT_LT(*s.result().noise, 0.15) << "a fixed spin is steadier than the floor set next";
  s.set_noise_floor(0.15, "because");
  EXPECT_DOUBLE_EQ(*s.result().noise, 0.15);
  EXPECT_EQ(s.result().timing["noise_method"], "floor");
  EXPECT_EQ(s.result().timing["noise_floor_why"], "because");
  EXPECT_THROW(s.set_noise_floor(1.5, "no"), memlab::error);
}

// Paired timing: two launchers in alternation give each its own median (a 60 us and an 80 us
// spin of the global timer read as such), the same number of samples, one NVML window, and take
// turns launch by launch (blocks asked for, but both under their threshold); a microsecond
// launcher falls back to measure() for each, both batched.
TEST(CoreTiming, PairedTimingAlternatesTwoLaunchersAndKeepsTheirMedians) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  std::string order;  // 'o' for each launch of ours, 'p' for the peer's, in issue order
  auto const m = ctx.measure_paired(
      [&](cudaStream_t s) {
        order += 'o';
        spin_ns<<<1, 32, 0, s>>>(60000ull);
      },
      [&](cudaStream_t s) {
        order += 'p';
        spin_ns<<<1, 32, 0, s>>>(80000ull);
      },
      /*in_blocks=*/true);
  static_assert(paired_blocks_above_ms > 0.09, "the two spins stay under the blocks' threshold, asked or not");
  EXPECT_EQ(m.first.method, "events_paired");
  EXPECT_EQ(m.second.method, "events_paired");
  EXPECT_TRUE(m.first.blocks.is_null());
  EXPECT_EQ(m.first.summary.samples, m.second.summary.samples);
  EXPECT_NEAR(m.first.summary.median, 0.06, 0.01);
  EXPECT_NEAR(m.second.summary.median, 0.08, 0.012);
  EXPECT_EQ(order.find("ooo"), std::string::npos) << "launch by launch, never three of one side in a row: " << order.substr(0, 64);
  EXPECT_EQ(order.find("ppp"), std::string::npos) << order.substr(0, 64);
  auto const fast = ctx.measure_paired([&](cudaStream_t s) { spin_ns<<<1, 32, 0, s>>>(5000ull); },
                                       [&](cudaStream_t s) { spin_ns<<<1, 32, 0, s>>>(200000ull); });
  EXPECT_NE(fast.first.method, "events_paired") << "a 5 us launch is batched, not paired";
  EXPECT_GT(fast.first.batch, 1);
  // Like against like: the 200 us side is batched too, though its own probe would time it alone.
  EXPECT_GT(fast.second.batch, 1) << "one side batched, the other alone";
  EXPECT_EQ(fast.second.method, fast.first.method);
  EXPECT_NEAR(fast.second.summary.median, 0.2, 0.02);
}

// Launches of paired_blocks_above_ms and more alternate in blocks: after the warm-up and the
// probe (one of each at a time), ours runs alone, then the peer (two blocks, one per round),
// then ours again, each block at least paired_block_settle_ms + paired_block_ms long; each side
// keeps its own median, and the row says how it was timed.
TEST(CoreTiming, LongPairedLaunchesAlternateInBlocks) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  static_assert(paired_block_rounds == 2, "the order below is ours, peer, peer, ours");
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  std::string order;
  auto const m = ctx.measure_paired(
      [&](cudaStream_t s) {
        order += 'o';
        spin_ns<<<1, 32, 0, s>>>(200000ull);
      },
      [&](cudaStream_t s) {
        order += 'p';
        spin_ns<<<1, 32, 0, s>>>(400000ull);
      },
      /*in_blocks=*/true);
  EXPECT_EQ(m.first.method, "events_paired_blocks");
  EXPECT_EQ(m.second.method, "events_paired_blocks");
  EXPECT_NEAR(m.first.summary.median, 0.2, 0.02);
  EXPECT_NEAR(m.second.summary.median, 0.4, 0.03);
  ASSERT_FALSE(m.first.blocks.is_null());
  EXPECT_EQ(m.first.blocks["rounds"], paired_block_rounds);
  EXPECT_EQ(m.first.blocks["launches_kept"], m.first.summary.samples);
  // A kept block of 200 us launches spans paired_block_ms: hundreds of launches, not a handful.
  EXPECT_GT(m.first.summary.samples, 2 * static_cast<int>(paired_block_ms / 0.2 / 4));
  EXPECT_GT(m.second.summary.samples, 2 * static_cast<int>(paired_block_ms / 0.4 / 4));
  // The sampling phase begins where the warm-up's and the probe's alternation ends ("op" x n).
  std::size_t const start = order.find("oooo");
  ASSERT_NE(start, std::string::npos) << order.substr(0, 64);
  std::string const blocks = order.substr(start);
  std::size_t const o1 = blocks.find('p'), p1 = blocks.find('o', o1);
  ASSERT_NE(o1, std::string::npos);
  ASSERT_NE(p1, std::string::npos);
  EXPECT_EQ(blocks.find('p', p1), std::string::npos) << "ours, then the peer's two blocks, then ours: three runs";
  // Each block is the settling launches plus the kept ones: at least (settle + kept) / launch.
  EXPECT_GE(static_cast<double>(o1), (paired_block_settle_ms + paired_block_ms) / 0.2 / 2);
  EXPECT_GE(static_cast<double>(p1 - o1), 2 * (paired_block_settle_ms + paired_block_ms) / 0.4 / 2);
  EXPECT_GE(static_cast<double>(blocks.size() - p1), (paired_block_settle_ms + paired_block_ms) / 0.2 / 2);

  // Through a row: an experiment that declares paired_in_blocks gets blocks, one that does not
  // keeps launch-by-launch alternation at the same lengths.
  for (bool const declared : {true, false}) {
    experiment e;
    e.id = "test.paired";
    e.paired_in_blocks = declared;
    state st(ctx, e, {});
    st.exec_paired([&](cudaStream_t s) { spin_ns<<<1, 32, 0, s>>>(300000ull); }, "slower",
                   [&](cudaStream_t s) { spin_ns<<<1, 32, 0, s>>>(450000ull); });
    row const r = st.finish();
    ASSERT_TRUE(r.ratio_to_peer.has_value());
    EXPECT_NEAR(*r.ratio_to_peer, 1.5, 0.1);
    EXPECT_EQ(r.peer, "slower");
    std::string const method = declared ? "events_paired_blocks" : "events_paired";
    EXPECT_EQ(r.timing["method"], method);
    EXPECT_EQ(r.timing.contains("blocks"), declared);
    EXPECT_EQ(r.extra["peer_timing"]["method"], method);
  }
}

TEST(CoreTiming, LongKernelsKeepOneLaunchPerSample) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  long long const c = cycles_for_us(200.0);
  measurement const m = ctx.measure([&](cudaStream_t s) { spin<<<1, 32, 0, s>>>(c, nullptr); });
  EXPECT_EQ(m.method, "events");
  EXPECT_EQ(m.batch, 1);
  EXPECT_GT(m.summary.median, 0.05);
}

TEST(CoreTiming, LaunchFloorIsAFewMicroseconds) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  auto const f = ctx.launch_floor();
  EXPECT_EQ(f["method"], "graph_batch");
  EXPECT_GT(f["us"].get<double>(), 0.3);
  EXPECT_LT(f["us"].get<double>(), 20.0);
}

TEST(CoreTiming, NvmlEitherReadsTheGpuOrSaysWhyNot) {
  MEMLAB_REQUIRE_GPU();
  MEMLAB_SKIP_UNDER_SANITIZER();
  run_context ctx(memlab::query_device(0), fast_policy(), false, 1);
  measurement const m = ctx.measure([&](cudaStream_t s) { spin<<<1, 32, 0, s>>>(cycles_for_us(100.0), nullptr); });
  if (ctx.gpu().available()) {
    ASSERT_TRUE(m.gpu.gpu.is_object());
    EXPECT_GT(m.gpu.gpu["sm_clock_mhz"]["max"].get<double>(), 100.0);
    EXPECT_TRUE(m.gpu.gpu.contains("clocks_event_reasons"));
  } else {
    EXPECT_TRUE(m.gpu.gpu.is_null());
    EXPECT_FALSE(ctx.gpu().status().empty());
  }
}

}  // namespace
