#pragma once
// The part of a run that touches the GPU: experiments executed in order, point by point,
// with what they produce handed to a sink. The same loop runs in the `memlab run` process
// (--in-process) or in a worker process that the runner starts (the default), so that a
// kernel that breaks its CUDA context costs one experiment, not the run (worker.hpp).
#include <atomic>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/runner.hpp"

namespace memlab::bench {

/// What one executing process is asked to do: a slice of the run's experiments.
struct run_plan {
  int device = 0;
  std::vector<std::string> experiments;  ///< resolved ids, in run order
  std::vector<axis_override> overrides;
  timing_options timing;
  bool quick = false;
  std::uint64_t seed = 0;
  measured_ceilings ceilings;  ///< measured earlier in the run
  bool progress = true;
  int total_points = 0;    ///< points in the whole run (progress)
  int done_points = 0;     ///< points finished before this slice (progress)
  double elapsed_s = 0.0;  ///< run time before this slice (progress)
  bool first_slice = true;         ///< measures the launch floor (and the persistence check)
  bool persistence_check = false;  ///< warn about other processes and low clocks at start
};
nlohmann::json to_json(run_plan const& p);
run_plan plan_from_json(nlohmann::json const& j);

/// Receives what the executing loop produces, in order.
class run_sink {
 public:
  virtual ~run_sink() = default;
  /// Once per executing process, before its first experiment: record keys of its context:
  /// `image` (image.hpp), `nvml`, and on the run's first slice `launch_floor[_us]` and
  /// `persistence_check`.
  virtual void started(nlohmann::json const& info) = 0;
  virtual void begin_experiment(std::string const& id, int points) = 0;
  virtual void begin_point(std::string const& id, std::string const& label) = 0;
  virtual void add_row(row const& r) = 0;
  /// status: completed | failed | aborted (stopped by a signal) | error (context lost).
  /// `ceilings`: the run's measured ceilings after it (what it published included).
  virtual void end_experiment(std::string const& id, std::string const& status, measured_ceilings const& ceilings) = 0;
};

enum class execute_result { completed, context_lost, interrupted };

/// Runs the plan's experiments. A sticky CUDA error ends the experiment in flight with an
/// `error` row and returns context_lost (the caller needs a fresh process to go on); `stop`
/// set by a signal handler ends the experiment in flight after its current point.
/// `lost_reason` receives the sticky error's text.
execute_result execute(run_plan const& plan, run_sink& sink, std::atomic<int> const* stop, std::string* lost_reason);

/// "name=value ..." for progress and error lines.
std::string point_label(std::map<std::string, param_value> const& p);

}  // namespace memlab::bench
