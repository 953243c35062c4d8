#pragma once
// What one timing of a launch yields (docs/timing.md): per-launch samples summarised, the
// noise a second run would see, how the samples were taken, and the GPU's state meanwhile.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/gpu_monitor.hpp"
#include "bench/stats.hpp"

namespace memlab::bench {

struct measurement {
  sample_summary summary;          ///< of the per-launch times, in ms
  noise_estimate noise;            ///< what the row reports as `noise`
  std::string method = "events";  ///< "events", "graph_batch", "launch_batch", "host"
  int batch = 1;                   ///< N: a sample is (time of 2N launches - time of N) / N
  std::string note;                ///< why a batch was not a graph, when it was not
  gpu_window gpu;                  ///< NVML before and after the samples (gpu null: not read)

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
    return j;
  }
};

}  // namespace memlab::bench
