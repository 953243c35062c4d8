#pragma once
// Runs selected experiments over their axes, times and verifies each point, and
// appends rows to the run record as each experiment completes.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/ceilings.hpp"
#include "bench/gpu_monitor.hpp"
#include "bench/measurement.hpp"
#include "bench/record.hpp"
#include "bench/state.hpp"
#include "memlab/buffer.hpp"

namespace memlab::bench {

/// User overrides of axis values: experiment id ("" = every experiment with that axis)
/// -> axis name -> values.
struct axis_override {
  std::string experiment;  ///< "" applies to every selected experiment that has the axis
  std::string axis;
  std::string values;      ///< as typed: "1,2,4", "0:32", "0:32:8", "2^10:2^20"
};

/// Parses an override "[id:]name=values". Throws usage_error when malformed.
axis_override parse_axis_override(std::string const& text);
/// Expands the values text for `ax`; throws usage_error naming the bad value.
std::vector<param_value> parse_axis_values(axis const& ax, std::string const& text);
/// `s` cut at every `sep`, empty fields kept ("a,,b," -> "a", "", "b", ""): the list syntax of
/// axis values and of memlab-mpi's options, whose parsers report empty items.
std::vector<std::string> split_fields(std::string const& s, char sep);

/// Every point of `exp`'s axes (cartesian product, first axis slowest), with the
/// overrides applied. Throws usage_error for an override naming an axis `exp` lacks.
std::vector<std::map<std::string, param_value>> expand_points(experiment const& exp, bool quick,
                                                              std::vector<axis_override> const& overrides);

/// The overrides as the run applies them: each one without an experiment ("-a axis=values") becomes
/// one per experiment of `selected` (those the user named) that has the axis, so the ceilings a run
/// adds before them (with_ceilings) keep their own axes; a scoped one stays as it is. Throws
/// usage_error for an unscoped axis no experiment of `selected` has.
std::vector<axis_override> scope_overrides(std::vector<axis_override> const& overrides,
                                           std::vector<experiment const*> const& selected);

/// The device's PCI address as sysfs and NVML spell it: "0000:65:00.0".
std::string pci_bus_id(device_info const& d);

/// What the runner shares with every state of a run.
class run_context {
 public:
  run_context(device_info dev, timing_options timing, bool quick, std::uint64_t seed);
  device_info const& device() const noexcept { return device_; }
  timing_options const& timing() const noexcept { return timing_; }
  bool quick() const noexcept { return quick_; }
  std::uint64_t seed() const noexcept { return seed_; }
  cudaStream_t stream() const noexcept { return stream_.get(); }

  /// The standard sampling policy (see state::exec and docs/timing.md): a launch shorter
  /// than batch_below_ms is timed in batches (CUDA graphs of N and 2N launches, or launches
  /// back to back when the launcher cannot be captured), a sample being the slope (t(2N) -
  /// t(N)) / N; NVML is read before and after. `batched`: in batches whatever the probe says (at
  /// least 2 launches), so that a pair one of whose launches is batched times the other alike.
  measurement measure(launcher const& launch, bool batched = false);

  /// `ours` and `peer` timed in alternation, one launch each per round (the order flips every
  /// round), so that both medians come from the same stretch of clocks, power and heat: on a
  /// GPU at its power cap, two measurements taken one after the other see different clocks
  /// (docs/timing.md, "Paired with the peer"). The stopping rule runs on ours; the NVML window
  /// spans both. With `in_blocks` (the experiment's paired_in_blocks), where the longer launch
  /// takes paired_blocks_above_ms or more, the two alternate in blocks instead
  /// (measure_paired_blocks: each at the clock its own power sets, method "events_paired_blocks").
  /// A launch shorter than batch_below_ms (either of the two) takes measure() for
  /// each instead, one after the other, both in batches (like against like: a launch timed alone
  /// carries its launch overhead, a batched one none): batching needs one launcher per graph, and
  /// microsecond kernels do not move the board's power. Profile mode: one launch of each.
  std::pair<measurement, measurement> measure_paired(launcher const& ours, launcher const& peer, bool in_blocks = false);

  /// NVML for this run's GPU (status() says whether it is there).
  gpu_monitor const& gpu() const noexcept { return *gpu_; }
  /// The GPU's state now against the previous reading (for timings experiments take themselves).
  gpu_window gpu_since_last_reading();
  /// Times an empty kernel with measure(): the record's meta launch_floor_us and launch_floor.
  nlohmann::json launch_floor();
  /// --persistence-check: warns on `err` (and returns the warnings for the record) when
  /// another process has a context on the GPU, or the SM clock under load is below its max.
  nlohmann::json persistence_check(std::ostream& err);

  measured_ceilings ceilings;  ///< published by the ceilings experiments, carried between slices
  std::map<std::string, measurement> peer_cache;

 private:
  device_info device_;
  timing_options timing_;
  bool quick_;
  std::uint64_t seed_;
  // A blocking stream: it synchronizes with the legacy default stream, so setup done
  // with plain cudaMemcpy/cudaMemset (or fill_bytes() without a stream) is ordered
  // before the launches an experiment issues on stream().
  memlab::stream stream_{cudaStreamDefault};
  memlab::event start_, stop_;
  memlab::device_buffer<char> flush_;  ///< 2x L2, allocated once, zeroed; memset or read before cold samples
  memlab::device_buffer<int> flush_sink_{1};  ///< the read flush's never-written output
  /// Evicts L2 before a cold sample, as timing_.flush says (memset or read of flush_).
  void flush_l2(cudaStream_t s);
  std::unique_ptr<gpu_monitor> gpu_;
  std::optional<gpu_reading> last_reading_;

  /// One sample: L2 flushed first in cold mode, then `issue()` between the two events on the
  /// run's stream; its milliseconds (every timed path goes through here).
  template <class Issue>
  double timed_ms(Issue const& issue);
  /// One launch of `launch` on the run's stream, its launch error checked.
  void launch_once(launcher const& launch);

  /// measure_paired's path for long launches: blocks of each side's launches one after another
  /// (paired_block_settle_ms not kept, then paired_block_ms kept), alternating
  /// paired_block_rounds times, ours first in even rounds (docs/timing.md, "Paired in blocks").
  std::pair<measurement, measurement> measure_paired_blocks(launcher const& ours, launcher const& peer);

  /// measure()'s batched path: samples (ms per launch) of `launch` in batches of about n.
  std::vector<double> sample_batches(launcher const& launch, int n, timing_options const& t, measurement& m);
};

struct run_options {
  int device = 0;
  std::vector<std::string> selection;  ///< ids or families; empty = default suite
  std::vector<axis_override> overrides;
  timing_options timing;
  bool quick = false;
  std::uint64_t seed = 20261122;
  std::string output_dir;                ///< run.json lands here
  std::string command_line;
  bool progress = true;                  ///< progress lines on stderr
  /// The memlab executable that runs experiments in worker processes (`memlab __worker`),
  /// so that a kernel that breaks its CUDA context costs one experiment. "" runs them in
  /// this process, where such a kernel ends the run.
  std::string worker_executable;
  bool persistence_check = false;        ///< warn about other processes and low clocks at start
};

struct run_summary {
  int rows = 0, passed = 0, failed = 0, not_verified = 0, skipped = 0, errors = 0;
  int lost_experiments = 0;  ///< experiments that ended in an error (lost context, dead worker)
  bool aborted = false;      ///< the run stopped early: a signal, or a lost context in-process
  int signal = 0;            ///< SIGINT or SIGTERM when a signal stopped the run
  std::string abort_reason;
};

/// Runs the selection; the record is flushed to output_dir/run.json after every
/// experiment. SIGINT/SIGTERM stop it after the point in flight (summary.signal set);
/// a second one at once. Throws usage_error for a bad selection or override (before any work),
/// memlab::error when no device is usable.
run_summary run(run_options const& opt, run_record& record);

}  // namespace memlab::bench
