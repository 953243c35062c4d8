#pragma once
// The harness's one sampling policy, over any sampler: state::exec's event-timed launches
// and the timings experiments take themselves (host clock, several streams) alike.
// No CUDA here, so the rule is unit-tested on the CPU.
#include <functional>
#include <string>
#include <vector>

namespace memlab::bench {

struct timing_options {
  bool cold = true;          ///< flush L2 before every sample
  /// How the flush evicts L2: "read" (the default) reads a 2 x L2 buffer (clean lines,
  /// evicted for free); "write" memsets it (L2 is left full of dirty lines, whose write-back
  /// the timed launch then pays: nvbench's way). docs/timing.md, "The flush".
  std::string flush = "read";
  double max_noise = 0.01;   ///< stop once the relative standard deviation is below this
  double min_time_s = 0.02;  ///< at least this much sampled time ...
  int min_samples = 10;      ///< ... and at least this many samples
  int max_samples = 1000;
  double timeout_s = 1.0;    ///< wall-clock budget per measurement
  int warmup = 1;            ///< untimed calls first
  bool profile = false;      ///< one sample, no warm-up (for ncu)
  bool discard_throttled = false;  ///< retake rows whose samples NVML saw throttled (at most 3 times)
};

/// The stopping rule in words, for the record's meta.
inline constexpr char const* stop_rule_text =
    "after warmup, sample until >= min_samples and >= min_time_s of GPU time and stdev/mean <= max_noise; "
    "or max_samples; or timeout_s of wall time with >= 3 samples. Paired rows of experiments declaring "
    "paired_in_blocks whose longer launch takes >= paired_blocks.above_ms: paired_blocks.rounds rounds of "
    "blocks instead (each side settle_ms not kept, then kept_ms kept, at least min_launches)";

/// Calls one_sample() (returns milliseconds) `warmup` times and discards the results, then
/// samples until at least min_samples and min_time_s are collected and the relative standard
/// deviation is at most max_noise, or max_samples are taken, or timeout_s of wall time has
/// passed with at least 3 samples. Profile mode: one sample, no warm-up.
/// `launches_per_sample`: a batched sample reports milliseconds per launch of N launches, so
/// it counts N times its value toward min_time_s (the GPU time it actually took).
std::vector<double> sample_until_stable(std::function<double()> const& one_sample, timing_options const& t,
                                        int launches_per_sample = 1);

/// Kernels whose single launch takes less than this are timed in batches of N launches a
/// sample: a few microseconds are within the events' resolution and the launch gaps.
inline constexpr double batch_below_ms = 0.05;
/// Batched rows whose probe is at least this are also timed one launch at a time (the gray
/// band below batch_below_ms where a second run's probe may land on the other side).
inline constexpr double cold_also_above_ms = batch_below_ms / 2;
/// Paired rows of an experiment that declares paired_in_blocks (experiment.hpp), whose longer
/// launch (by the probe) takes at least this, are timed in blocks: each side launches one after
/// another for paired_block_settle_ms (not kept) and then for paired_block_ms (kept), the sides
/// taking turns paired_block_rounds times, the order flipping (ours, peer, peer, ours). At the
/// power cap the clock follows the running kernel's power with a lag of tens of milliseconds
/// (H100, 8192^3: right after cublasLt, rung 2's launches took 2.8-3.0 ms for the first 50 ms and
/// 2.6-2.8 from 100 ms on; docs/timing.md, "Paired in blocks"), so launches
/// alternated one by one all run at the clock their mix sets, and a kernel that spends less power
/// a cycle than its peer loses the clock it would run at on its own (and one that spends more
/// gains it). In blocks each runs at its own.
inline constexpr double paired_blocks_above_ms = 0.1;
inline constexpr double paired_block_settle_ms = 100.0;
inline constexpr double paired_block_ms = 150.0;
inline constexpr int paired_block_rounds = 2;
/// A kept block holds at least this many launches, however long each takes.
inline constexpr int paired_block_min_launches = 3;
/// A batch is sized to take at least this long on the GPU.
inline constexpr double batch_target_ms = 0.1;
inline constexpr int max_batch = 4096;

/// Launches per sample for a kernel whose launch takes `per_launch_ms`: 1 at or above
/// batch_below_ms (and for a non-positive or non-finite time); else ceil(batch_target_ms /
/// per_launch_ms), at least 2 and at most max_batch.
int batch_size_for(double per_launch_ms);

/// The smallest power of two >= n (1 for n <= 1): batch sizes are powers of two, so two runs
/// whose probes differ a little still time the same N.
int pow2_at_least(int n);

/// `t` for slow or inherently noisy measurements: at most `wall_s` seconds of sampling and
/// no more than `min_samples` required samples.
timing_options capped(timing_options t, double wall_s, int min_samples = 5);

}  // namespace memlab::bench
