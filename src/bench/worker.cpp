#include "bench/worker.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <vector>

#include "memlab/error.hpp"

namespace memlab::bench {

// ------------------------------------------------------------------ signals

namespace {
std::atomic<int> g_signal_count{0};
std::atomic<int> g_last_signal{0};
std::atomic<bool> g_exit_on_second{false};

extern "C" void on_stop_signal(int signo) {
  g_last_signal.store(signo);
  if (g_signal_count.fetch_add(1) >= 1 && g_exit_on_second.load()) _exit(128 + signo);
}
}  // namespace

struct signal_guard::saved {
  struct sigaction old_int, old_term;
};

signal_guard::signal_guard(bool exit_on_second) : saved_(new saved) {
  g_signal_count.store(0);
  g_last_signal.store(0);
  g_exit_on_second.store(exit_on_second);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking read returns EINTR so the parent can act
  sigaction(SIGINT, &sa, &saved_->old_int);
  sigaction(SIGTERM, &sa, &saved_->old_term);
}

signal_guard::~signal_guard() {
  sigaction(SIGINT, &saved_->old_int, nullptr);
  sigaction(SIGTERM, &saved_->old_term, nullptr);
  delete saved_;
}

std::atomic<int>& signal_guard::count() { return g_signal_count; }
int signal_guard::last_signal() { return g_last_signal.load(); }

// ------------------------------------------------------------------ protocol

std::string encode_started(nlohmann::json const& info) {
  return nlohmann::json{{"t", "started"}, {"info", info}}.dump();
}
std::string encode_begin(std::string const& id, int points) {
  return nlohmann::json{{"t", "begin"}, {"id", id}, {"points", points}}.dump();
}
std::string encode_point(std::string const& id, std::string const& label) {
  return nlohmann::json{{"t", "point"}, {"id", id}, {"label", label}}.dump();
}
std::string encode_row(row const& r) { return nlohmann::json{{"t", "row"}, {"row", to_json(r)}}.dump(); }
std::string encode_end(std::string const& id, std::string const& status, measured_ceilings const& ceilings) {
  return nlohmann::json{{"t", "end"}, {"id", id}, {"status", status}, {"ceilings", to_json(ceilings)}}.dump();
}
std::string encode_fatal(std::string const& message) {
  return nlohmann::json{{"t", "fatal"}, {"message", message}}.dump();
}

std::string decode_line(std::string const& line, run_sink& sink) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
    std::string const t = j.at("t").get<std::string>();
    if (t == "started") {
      sink.started(j.at("info"));
    } else if (t == "begin") {
      sink.begin_experiment(j.at("id").get<std::string>(), j.at("points").get<int>());
    } else if (t == "point") {
      sink.begin_point(j.at("id").get<std::string>(), j.at("label").get<std::string>());
    } else if (t == "row") {
      sink.add_row(row_from_json(j.at("row")));
    } else if (t == "end") {
      sink.end_experiment(j.at("id").get<std::string>(), j.at("status").get<std::string>(),
                          ceilings_from_json(j.at("ceilings")));
    } else if (t == "fatal") {
      return j.at("message").get<std::string>();
    } else {
      throw error("unknown worker message type '" + t + "'");
    }
  } catch (nlohmann::json::exception const& e) {
    throw error("malformed worker message (" + std::string(e.what()) + "): " + line.substr(0, 120));
  }
  return {};
}

// ------------------------------------------------------------------ worker side

namespace {

void write_all(int fd, std::string const& text) {
  char const* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t const n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw error("the worker cannot report to the runner: " + std::string(std::strerror(errno)));
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

class pipe_sink final : public run_sink {
 public:
  explicit pipe_sink(int fd) : fd_(fd) {}
  void started(nlohmann::json const& info) override { send(encode_started(info)); }
  void begin_experiment(std::string const& id, int points) override { send(encode_begin(id, points)); }
  void begin_point(std::string const& id, std::string const& label) override { send(encode_point(id, label)); }
  void add_row(row const& r) override { send(encode_row(r)); }
  void end_experiment(std::string const& id, std::string const& status, measured_ceilings const& c) override {
    send(encode_end(id, status, c));
  }
  void send(std::string const& line) { write_all(fd_, line + "\n"); }

 private:
  int fd_;
};

}  // namespace

int worker_main(std::string const& plan_json, int fd) {
  signal_guard guard(/*exit_on_second=*/true);
  pipe_sink sink(fd);
  try {
    run_plan const plan = plan_from_json(nlohmann::json::parse(plan_json));
    std::string lost;
    switch (execute(plan, sink, &signal_guard::count(), &lost)) {
      case execute_result::completed: return 0;
      case execute_result::context_lost: return worker_exit_context_lost;
      case execute_result::interrupted: return 128 + (signal_guard::last_signal() ? signal_guard::last_signal() : SIGINT);
    }
  } catch (std::exception const& e) {
    try {
      sink.send(encode_fatal(e.what()));
    } catch (...) {
    }
    return worker_exit_fatal;
  }
  return 0;
}

// ------------------------------------------------------------------ parent side

namespace {

/// Tracks what the worker has said, forwarding every event to the run's sink.
class tracking_sink final : public run_sink {
 public:
  explicit tracking_sink(run_sink& out) : out_(out) {}
  void started(nlohmann::json const& info) override { out_.started(info); }
  void begin_experiment(std::string const& id, int points) override {
    in_flight = id;
    label.clear();
    started_any = true;
    out_.begin_experiment(id, points);
  }
  void begin_point(std::string const& id, std::string const& l) override {
    label = l;
    out_.begin_point(id, l);
  }
  void add_row(row const& r) override {
    ++points_done;
    out_.add_row(r);
  }
  void end_experiment(std::string const& id, std::string const& status, measured_ceilings const& c) override {
    ended.insert(id);
    in_flight.clear();
    ceilings.merge(c);
    out_.end_experiment(id, status, c);
  }

  std::string in_flight, label;
  std::set<std::string> ended;
  bool started_any = false;
  int points_done = 0;
  measured_ceilings ceilings;  ///< what the slice's ended experiments reported

 private:
  run_sink& out_;
};

std::string signal_text(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    default: return "signal " + std::to_string(sig);
  }
}

struct worker_process {
  pid_t pid = -1;
  int read_fd = -1;
};

worker_process spawn_worker(std::string const& executable, run_plan const& plan) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw error("cannot create a pipe for the worker: " + std::string(std::strerror(errno)));
  std::string const plan_text = to_json(plan).dump();
  pid_t const parent = getpid();
  pid_t const pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    throw error("cannot start a worker process: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec. The worker has its own process group, so a
    // terminal's Ctrl-C reaches the parent alone, which forwards it; it dies with the parent.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (dup2(fds[1], 3) < 0) _exit(127);  // dup2 clears O_CLOEXEC on the copy
    char fd_arg[] = "3";
    char const* argv[] = {executable.c_str(), "__worker", "--fd", fd_arg, "--plan", plan_text.c_str(), nullptr};
    execv(executable.c_str(), const_cast<char* const*>(argv));
    _exit(127);
  }
  close(fds[1]);
  return {pid, fds[0]};
}

/// Reads the worker's events into `track` until its pipe closes, forwarding the user's
/// signals to it; closes the pipe and returns the last fatal error it reported ("" if none).
std::string pump_events(worker_process const& w, tracking_sink& track, std::atomic<int> const& signals,
                        int& forwarded) {
  std::string pending, fatal;
  char buf[1 << 16];
  for (;;) {
    int const seen = signals.load();
    if (seen > forwarded) {
      // First signal: the worker finishes its point and stops. Second: at once.
      kill(w.pid, seen >= 2 ? SIGKILL : SIGINT);
      forwarded = seen;
    }
    ssize_t const n = ::read(w.read_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending.append(buf, static_cast<std::size_t>(n));
    std::size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      std::string const line = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      std::string const f = decode_line(line, track);
      if (!f.empty()) fatal = f;
    }
  }
  close(w.read_fd);
  return fatal;
}

/// Waits for the worker to end; returns its wait status.
int reap(worker_process const& w) {
  int status = 0;
  while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/// How a worker ended.
struct worker_end {
  int status;         ///< from waitpid
  std::string fatal;  ///< the last fatal error it reported, or ""
};

std::string exit_text(int status) {
  return WIFEXITED(status) ? "exit code " + std::to_string(WEXITSTATUS(status)) : signal_text(WTERMSIG(status));
}

/// The worker died inside an experiment: one error row says where, and the experiment ends
/// with status `error`.
void report_worker_death(tracking_sink const& track, worker_end const& end, run_plan const& plan, run_sink& sink) {
  row r;
  r.experiment = track.in_flight;
  r.error = "the worker process died (" + exit_text(end.status) + ")" +
            (track.label.empty() ? std::string() : " during " + track.label) +
            (end.fatal.empty() ? std::string() : ": " + end.fatal) + "; the run went on in a fresh process";
  r.repro = "memlab run " + track.in_flight;
  sink.add_row(r);
  sink.end_experiment(track.in_flight, "error", plan.ceilings);
}

/// After a worker ended: false when the run is over (everything ran, or the user stopped it),
/// true when a fresh worker takes the `remaining` experiments. Throws when the worker could
/// not run anything or made no progress.
bool run_goes_on(std::string const& executable, worker_end const& end, tracking_sink const& track,
                 run_plan const& plan, run_sink& sink, std::atomic<int> const& signals,
                 std::vector<std::string>& remaining) {
  bool const exited = WIFEXITED(end.status);
  if (exited && WEXITSTATUS(end.status) == 0 && remaining.empty()) return false;
  if (signals.load() > 0) {
    // Stopped by the user: the experiment in flight keeps its finished points.
    if (!track.in_flight.empty()) {
      sink.end_experiment(track.in_flight, "aborted", plan.ceilings);
    }
    return false;
  }
  if (!track.started_any && !end.fatal.empty()) throw error(end.fatal);
  if (!track.started_any)
    throw error("the worker process (" + executable + ") ended before running anything (" + exit_text(end.status) +
                ")");
  if (!track.in_flight.empty()) {
    // The run goes on with the next experiment in a fresh process.
    report_worker_death(track, end, plan, sink);
    remaining.erase(std::find(remaining.begin(), remaining.end(), track.in_flight));
    return true;
  }
  if (!end.fatal.empty()) throw error(end.fatal);
  if (track.ended.empty()) throw error("the worker process made no progress (" + exit_text(end.status) + ")");
  return true;
}

}  // namespace

void run_isolated(std::string const& executable, run_plan plan, run_sink& sink, std::atomic<int> const& signals) {
  auto const t0 = std::chrono::steady_clock::now();
  std::vector<std::string> remaining = plan.experiments;
  int points_before = plan.done_points;
  int forwarded = 0;
  while (!remaining.empty()) {
    plan.experiments = remaining;
    plan.done_points = points_before;
    plan.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    tracking_sink track(sink);
    worker_process const w = spawn_worker(executable, plan);
    plan.first_slice = false;  // later workers skip the launch floor and the persistence check
    std::string const fatal = pump_events(w, track, signals, forwarded);
    int const status = reap(w);
    points_before += track.points_done;
    for (auto const& id : track.ended) remaining.erase(std::find(remaining.begin(), remaining.end(), id));
    plan.ceilings.merge(track.ceilings);
    if (!run_goes_on(executable, {status, fatal}, track, plan, sink, signals, remaining)) return;
  }
}

}  // namespace memlab::bench
