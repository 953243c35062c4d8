#pragma once
// The run's measured ceilings: what the `ceilings` experiments publish (state::set_*) for the rows
// measured after them, carried from one worker process to the next in the plan and written to the
// record's meta.ceilings. Every ratio to a ceiling refers to a number measured in the same run.
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace memlab::bench {

struct measured_ceilings {
  std::optional<double> d2d_copy_gbps;     ///< ceilings.d2d_copy: cudaMemcpy device to device
  std::optional<double> fp32_peak_tflops;  ///< ceilings.fp32_fma: independent FFMAs
  /// ceilings.tensor: the tensor-core instruction's peak by "<instruction>.<input type>",
  /// e.g. "mma_sync.bf16", "wgmma.e4m3" (TFLOP/s, FP32 accumulators).
  std::map<std::string, double> tensor_peak_tflops;

  /// This, with what `later` measured (a later worker's slice) in place of what it repeats.
  void merge(measured_ceilings const& later);
  /// The tensor peak for `key`, if measured.
  std::optional<double> tensor_peak(std::string const& key) const;
};

/// {"d2d_copy_gbps": x|null, "fp32_peak_tflops": x|null, "tensor_peak_tflops": {key: x, ...}}:
/// the record's meta.ceilings (older records lack tensor_peak_tflops).
nlohmann::json to_json(measured_ceilings const& c);
/// Accepts what to_json writes, a missing key read as not measured.
measured_ceilings ceilings_from_json(nlohmann::json const& j);

}  // namespace memlab::bench
