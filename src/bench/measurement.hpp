#pragma once
// What one timing of a launch yields (docs/timing.md): per-launch samples summarised, the
// noise a second run would see, how the samples were taken, and the GPU's state meanwhile.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/gpu_monitor.hpp"
#include "bench/stats.hpp"

namespace memlab::bench {

/// The same launch timed one at a time with events (see measurement::cold_events).
struct alone_timing {
  sample_summary summary;
  noise_estimate noise;
};

struct measurement {
  sample_summary summary;          ///< of the per-launch times, in ms
  noise_estimate noise;            ///< what the row reports as `noise`
  std::string method = "events";  ///< "events", "events_paired", "events_paired_blocks", "graph_batch", "launch_batch", "host"
  int batch = 1;                   ///< N: a sample is (time of 2N launches - time of N) / N
  std::string note;                ///< why a batch was not a graph, when it was not
  gpu_window gpu;                  ///< NVML before and after the samples (gpu null: not read)
  /// Batched rows whose probe came within a factor of two of batch_below_ms: the launch also
  /// timed alone with events (cold, as an unbatched row is), so that a second run whose probe
  /// fell on the other side of the threshold is compared like with like (docs/timing.md).
  std::optional<alone_timing> cold_events;
  /// events_paired_blocks: the blocks' shape, for the row's `timing.blocks` (rounds, settle_ms,
  /// kept_ms, and this side's launches kept).
  nlohmann::json blocks;

  /// The row's `timing` object: method, batch, noise_method, the two estimates, rel_stdev.
  nlohmann::json timing_json() const {
    nlohmann::json j = {{"method", method},
                        {"batch", batch},
                        {"noise_method", noise.method},
                        {"noise_bootstrap", noise.bootstrap},
                        {"noise_chunks", noise.chunk_spread ? nlohmann::json(*noise.chunk_spread) : nlohmann::json()},
                        {"noise_floor", noise.floor},
                        {"rel_stdev", summary.noise}};
    if (!note.empty()) j["note"] = note;
    if (batch > 1) {
      j["per_launch"] = "slope: (time of 2N launches - time of N launches) / N";
      j["cache"] = "warm: launches back to back, each finds what the previous one left in L2";
    }
    if (!blocks.is_null()) j["blocks"] = blocks;
    if (cold_events)
      j["cold_events"] = {{"ms", cold_events->summary.median},
                          {"noise", cold_events->noise.noise},
                          {"samples", cold_events->summary.samples},
                          {"why", "the probe was within 2x of the batching threshold: also timed one launch at a "
                                  "time, as a run that did not batch it would"}};
    return j;
  }
};

}  // namespace memlab::bench
