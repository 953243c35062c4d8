#pragma once
// The per-point interface an experiment body works with, modelled on nvbench's state:
// declare bytes and flops, verify against a reference, then time the launch.
//
//   void body(state& s) {
//     auto n = s.get_int("elements");
//     ... allocate, fill with s.seed(), poison output ...
//     kernel<<<g, b, 0, s.stream()>>>(...);           // checked run
//     s.set_verification(compare_exact(out.download(), reference));
//     s.add_reads<float>(n); s.add_writes<float>(n);
//     s.exec([&](cudaStream_t st) { kernel<<<g, b, 0, st>>>(...); });
//   }
//   // Bandwidth rows: e.ceiling = ceiling_relation::peer in the registration block makes the
//   // run's cudaMemcpy D2D the peer of every row without one of its own.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bench/experiment.hpp"
#include "bench/measurement.hpp"
#include "bench/sampling.hpp"
#include "bench/stats.hpp"
#include "bench/verify.hpp"
#include "memlab/device.hpp"

namespace memlab::bench {

class run_context;

/// A launch to time: issues its work on the stream it is given.
using launcher = std::function<void(cudaStream_t)>;


/// One result row (see docs/RECORD.md).
struct row {
  std::string experiment;
  std::string variant;
  nlohmann::json params = nlohmann::json::object();
  std::optional<double> median_ms, noise, min_ms, max_ms;
  int samples = 0;
  double bytes = 0.0;  ///< bytes read + written per launch
  double flops = 0.0;  ///< floating-point operations per launch
  std::optional<double> gbps, tflops;
  verification check;
  std::optional<std::string> peer;
  std::optional<double> peer_median_ms, ratio_to_peer;
  std::optional<double> ratio_to_ceiling;  ///< gbps / measured cudaMemcpy D2D gbps
  nlohmann::json predicted;                ///< null, or the model's prediction
  nlohmann::json extra = nlohmann::json::object();
  std::optional<std::string> skipped;      ///< why this point was not run
  std::optional<std::string> error;        ///< the error that stopped this point
  bool cold = true;
  std::string repro;                       ///< the memlab command that reruns this row
  nlohmann::json timing;                   ///< method, batch, noise_method, ... (null: not timed)
  std::string nvml = "not built";          ///< "ok", "not built" or "unavailable: <reason>"
  nlohmann::json gpu;                      ///< clocks, power, temperature, reasons over the samples
  std::optional<bool> throttled;           ///< null when NVML did not read the GPU
  std::vector<std::string> throttle_reasons;
  int retakes = 0;                         ///< times retaken for throttling (--discard-throttled)
};

/// How many times --discard-throttled retakes a throttled row before keeping it flagged.
inline constexpr int max_throttle_retakes = 3;

nlohmann::json to_json(row const& r);
row row_from_json(nlohmann::json const& j);

/// Thrown by state::skip to unwind the body; caught by the runner.
struct skip_exception {
  std::string reason;
};

class state {
 public:
  state(run_context& ctx, experiment const& exp, std::map<std::string, param_value> point);

  // ---- identity -------------------------------------------------------------
  experiment const& exp() const noexcept { return *exp_; }
  std::string const& variant() const noexcept { return row_.variant; }
  std::int64_t get_int(std::string const& axis) const;
  double get_float(std::string const& axis) const;  ///< integer axes convert
  std::string const& get_string(std::string const& axis) const;
  bool has_param(std::string const& axis) const { return point_.count(axis) != 0; }
  device_info const& device() const noexcept;
  std::uint64_t seed() const noexcept { return seed_; }  ///< fresh per point, reproducible per run seed
  bool quick() const noexcept;
  bool profile() const noexcept;
  /// The stream timed launches run on. It is a blocking stream: work issued before on the
  /// legacy default stream (cudaMemcpy, cudaMemset, buffer.fill_bytes()) completes first.
  cudaStream_t stream() const noexcept;
  timing_options const& timing() const noexcept;

  // ---- declarations: GB/s, TFLOP/s and % of ceiling are derived from these ---
  void add_bytes_read(double bytes) { row_.bytes += bytes; }
  void add_bytes_written(double bytes) { row_.bytes += bytes; }
  void add_flops(double flops) { row_.flops += flops; }
  template <class T>
  void add_reads(std::size_t count) { add_bytes_read(static_cast<double>(count) * sizeof(T)); }
  template <class T>
  void add_writes(std::size_t count) { add_bytes_written(static_cast<double>(count) * sizeof(T)); }

  // ---- timing ---------------------------------------------------------------
  /// Times `launch`: warm-up, then one launch per sample between two events on
  /// stream(), L2 flushed before each sample in cold mode, until the noise bound or
  /// the time budget is reached. Everything else (allocation, upload) stays outside.
  void exec(launcher const& launch);
  /// Same policy for a peer library doing the same work; measured once per point
  /// (the variant axis aside) and reused by every variant. Sets peer, peer_median_ms
  /// and ratio_to_peer = peer_median_ms / median_ms (> 1: faster than the peer).
  void exec_peer(std::string const& name, launcher const& launch);
  /// Times `launch` (as exec) and the peer `peer_launch` under `peer_name` in alternation,
  /// one launch of each a round, so that the row's ratio_to_peer compares the two at the same
  /// clocks and power (run_context::measure_paired). Not cached: each row measures its own
  /// pair. Sets the row's timing as exec does, and peer, peer_median_ms, extra.peer_noise and
  /// extra.peer_timing; --discard-throttled retakes the pair.
  void exec_paired(launcher const& launch, std::string const& peer_name, launcher const& peer_launch);
  /// The standard policy on any launch without recording it as this row's timing.
  sample_summary measure(launcher const& launch);
  /// `measure`, once per point (the variant axis aside) under `name` and shared by every
  /// variant's row, like exec_peer's peer: a reference measured in the point itself, so a
  /// row does not depend on which other points ran.
  sample_summary measure_once(std::string const& name, launcher const& launch);
  /// `a` and `b` timed in alternation (run_context::measure_paired), once per point under `name`
  /// like measure_once: which of two peers is the faster, at the same clocks and power.
  std::pair<sample_summary, sample_summary> measure_paired_once(std::string const& name, launcher const& a,
                                                                launcher const& b);
  /// For timings the experiment takes itself (host-side or multi-stream): milliseconds per
  /// sample in the order taken; `method` says how ("events" or "host").
  void set_samples(std::vector<double> const& ms, std::string const& method = "events");
  /// Raises this row's between-run noise floor above the harness's (stats.hpp) when what it
  /// times varies between processes for reasons the samples of one run cannot show: copies
  /// over PCIe and through host memory (between_run_noise_floor_host). `why` goes into the
  /// row's timing.noise_floor_why. Applies to the timing taken before or after the call.
  void set_noise_floor(double floor, std::string why);
  /// What a batched launch of this row finds in L2, where the experiment gives each launch its
  /// own inputs instead of the previous launch's (docs/timing.md, "Streamed weights"): replaces
  /// the harness's "warm" text in timing.cache of a batched timing taken after the call.
  void set_batch_cache(std::string text) { batch_cache_ = std::move(text); }
  /// Records a peer measured by the experiment itself (ratio = peer_ms / median_ms).
  void set_peer(std::string const& name, double peer_median_ms);

  // ---- results ---------------------------------------------------------------
  void set_verification(verification v) { row_.check = std::move(v); }
  void set_predicted(nlohmann::json p) { row_.predicted = std::move(p); }
  void set_extra(std::string const& key, nlohmann::json value) { row_.extra[key] = std::move(value); }
  /// Only for the ceilings experiment: publishes the measured D2D copy bandwidth.
  void set_ceiling_gbps(double gbps);
  /// Publishes the measured FP32 FMA peak (TFLOP/s) for roofline and % of peak.
  void set_fp32_peak_tflops(double tflops);
  /// Publishes the measured peak of a tensor-core instruction, keyed "<instruction>.<input>"
  /// (e.g. "mma_sync.bf16", "wgmma.e4m3"): the ceiling of the GEMM rows that use it.
  void set_tensor_peak_tflops(std::string const& key, double tflops);
  /// The run's measured ceilings, if measured yet.
  std::optional<double> ceiling_gbps() const;
  std::optional<double> fp32_peak_tflops() const;
  std::optional<double> tensor_peak_tflops(std::string const& key) const;
  /// Reads this row against the run's measured peak of the tensor-core instruction `key` issues
  /// ("mma_sync.bf16", "wgmma.f16", ...): finish() adds extra.pct_of_tensor_peak (and
  /// extra.tensor_peak, the key) when ceilings.tensor measured it earlier in the run.
  void compare_with_tensor_peak(std::string key) { tensor_peak_key_ = std::move(key); }
  /// Stops this point, recording it as skipped with `reason` (never returns).
  [[noreturn]] void skip(std::string reason);
  /// Skips unless `kernel`, as compiled into this binary and run on this device, can use
  /// `instruction` (which needs `arch`, e.g. 90): memlab::unavailable_reason is the reason.
  void require_arch(void const* kernel, int arch, std::string const& instruction);

  row& result() noexcept { return row_; }
  row finish();  ///< derives gbps/tflops/ratios; called by the runner

 private:
  void take(measurement const& m);
  /// exec_peer's and measure_once's cache: `launch` measured once per point and name.
  measurement const& measured_in_point(std::string const& name, launcher const& launch);
  /// The peer cache's key of `name` at this row's point (experiment, parameters, cold or hot): what
  /// measured_in_point and measure_paired_once measure once and share across the point's variants.
  std::string point_key(std::string const& name) const;

  void apply_noise_floor();

  double noise_floor_ = 0.0;  ///< set_noise_floor's (0: the harness's alone)
  std::string noise_floor_why_;
  std::string batch_cache_;      ///< set_batch_cache's (empty: the harness's text)
  std::string tensor_peak_key_;  ///< compare_with_tensor_peak's (empty: none)
  run_context* ctx_;
  experiment const* exp_;
  std::map<std::string, param_value> point_;
  std::uint64_t seed_;
  row row_;
};

}  // namespace memlab::bench
