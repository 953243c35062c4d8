#pragma once
// Process isolation for a run. A sticky CUDA error (an illegal address, a trap) leaves the
// process's context unusable until the process ends, so the runner executes experiments
// in a worker process (`memlab __worker`, not for users) and restarts one for the
// remaining experiments when a worker loses its context or dies; the run itself (the
// record, the summary, signals) lives in the parent, as ctest keeps a test per process.
//
// The worker reports on a pipe, one JSON object a line:
//   {"t":"started","info":{"image":..,"nvml":..,...}}
//   {"t":"begin","id":ID,"points":N}   {"t":"point","id":ID,"label":"a=1 b=2"}
//   {"t":"row","row":{...}}             {"t":"end","id":ID,"status":S,"ceilings":{..}}
//   {"t":"fatal","message":TEXT}        (an error before or outside any experiment)
// and exits 0 (every experiment done), 3 (context lost), 4 (fatal) or 128+signal
// (stopped by SIGINT/SIGTERM forwarded by the parent).
#include <atomic>
#include <string>

#include "bench/execute.hpp"

namespace memlab::bench {

inline constexpr int worker_exit_context_lost = 3;
inline constexpr int worker_exit_fatal = 4;

/// The worker's whole life: runs `plan_json`, reporting on file descriptor `fd`.
int worker_main(std::string const& plan_json, int fd);

/// Encodes one sink event as a protocol line (without the newline).
std::string encode_started(nlohmann::json const& info);
std::string encode_begin(std::string const& id, int points);
std::string encode_point(std::string const& id, std::string const& label);
std::string encode_row(row const& r);
std::string encode_end(std::string const& id, std::string const& status, measured_ceilings const& ceilings);
std::string encode_fatal(std::string const& message);

/// Decodes one protocol line into calls on `sink`. Returns the fatal message of a fatal
/// line (else ""). Throws memlab::error on a malformed line.
std::string decode_line(std::string const& line, run_sink& sink);

/// Parent side: runs `plan` in worker processes started from `executable`, restarting
/// one after a worker loses its context or dies, until every experiment has ended or a
/// signal stopped the run. `signals` counts SIGINT/SIGTERM received by the parent (the
/// first is forwarded to the worker, which stops after its current point; a second kills
/// it). Throws memlab::error when a worker fails before it starts any experiment.
void run_isolated(std::string const& executable, run_plan plan, run_sink& sink, std::atomic<int> const& signals);

/// SIGINT/SIGTERM handling for a run: the handler counts signals and remembers the last
/// one; installed for the lifetime of the guard, the previous handlers restored after.
/// With `exit_on_second`, a second signal ends the process at once (_exit(128 + signal)):
/// the record on disk is the one written after the last finished experiment.
class signal_guard {
 public:
  explicit signal_guard(bool exit_on_second);
  ~signal_guard();
  signal_guard(signal_guard const&) = delete;
  signal_guard& operator=(signal_guard const&) = delete;
  static std::atomic<int>& count();
  static int last_signal();  ///< SIGINT or SIGTERM; 0 when none

 private:
  struct saved;
  saved* saved_;
};

}  // namespace memlab::bench
