#include "bench/runner.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>
#include <sstream>

#include "bench/empty_kernel.hpp"
#include "bench/execute.hpp"
#include "bench/flush_kernel.hpp"
#include "bench/worker.hpp"
#include "memlab/error.hpp"
#include "memlab/version.hpp"

namespace memlab::bench {

// ------------------------------------------------------------------ axis overrides

axis_override parse_axis_override(std::string const& text) {
  auto const eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw usage_error("axis override '" + text + "' is not of the form [experiment:]axis=values");
  axis_override o;
  std::string lhs = text.substr(0, eq);
  o.values = text.substr(eq + 1);
  auto const colon = lhs.rfind(':');
  if (colon != std::string::npos) {
    o.experiment = lhs.substr(0, colon);
    lhs = lhs.substr(colon + 1);
  }
  if (lhs.empty()) throw usage_error("axis override '" + text + "' names no axis");
  o.axis = lhs;
  return o;
}

namespace {

std::int64_t parse_int(std::string const& token, axis const& ax) {
  std::string t = token;
  bool pow2 = false;
  if (t.rfind("2^", 0) == 0) {
    pow2 = true;
    t = t.substr(2);
  }
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != t.size())
    throw usage_error("bad value '" + token + "' for integer axis '" + ax.name + "'");
  if (pow2) {
    if (v < 0 || v > 62) throw usage_error("bad value '" + token + "' for axis '" + ax.name + "': exponent out of range");
    v = 1ll << v;
  }
  return v;
}

void check_bounds(axis const& ax, std::int64_t v, std::string const& token) {
  if (!ax.allowed.empty() && std::find(ax.allowed.begin(), ax.allowed.end(), param_value{v}) == ax.allowed.end()) {
    std::string choices;
    for (auto const& a : ax.allowed) choices += (choices.empty() ? "" : ", ") + to_string(a);
    throw usage_error("value " + token + " for axis '" + ax.name + "' is not one of: " + choices);
  }
  if ((ax.min_value && v < *ax.min_value) || (ax.max_value && v > *ax.max_value)) {
    std::string range = "[" + (ax.min_value ? std::to_string(*ax.min_value) : std::string("-inf")) + ", " +
                        (ax.max_value ? std::to_string(*ax.max_value) : std::string("inf")) + "]";
    throw usage_error("value " + token + " for axis '" + ax.name + "' is out of range " + range);
  }
}

/// One item of an integer axis: a value, lo:hi[:step], or 2^lo:2^hi (doubling); appended to `out`.
void parse_integer_item(axis const& ax, std::string const& item, std::vector<param_value>& out) {
  auto const parts = split_fields(item, ':');
  if (parts.size() == 1) {
    auto v = parse_int(item, ax);
    check_bounds(ax, v, item);
    out.emplace_back(v);
    return;
  }
  if (parts.size() != 2 && parts.size() != 3) throw usage_error("bad range '" + item + "' for axis '" + ax.name + "'");
  bool const pow2 = parts[0].rfind("2^", 0) == 0;
  auto lo = parse_int(parts[0], ax), hi = parse_int(parts[1], ax);
  std::int64_t step = parts.size() == 3 ? parse_int(parts[2], ax) : 1;
  if (step <= 0 || hi < lo) throw usage_error("bad range '" + item + "' for axis '" + ax.name + "'");
  if (pow2) {
    for (auto v = lo; v <= hi; v *= 2) {
      check_bounds(ax, v, std::to_string(v));
      out.emplace_back(v);
    }
    return;
  }
  if ((hi - lo) / step > 100000) throw usage_error("range '" + item + "' has too many values");
  for (auto v = lo; v <= hi; v += step) {
    check_bounds(ax, v, std::to_string(v));
    out.emplace_back(v);
  }
}

double parse_floating_item(axis const& ax, std::string const& item) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(item, &used);
  } catch (...) {
    used = 0;
  }
  if (used == 0 || used != item.size() || !std::isfinite(v))
    throw usage_error("bad value '" + item + "' for axis '" + ax.name + "'");
  return v;
}

/// A string axis takes only the values it declares.
std::string parse_string_item(axis const& ax, std::string const& item) {
  bool known = false;
  for (auto const& v : ax.values)
    if (std::get<std::string>(v) == item) known = true;
  if (!known) {
    std::string choices;
    for (auto const& v : ax.values) choices += (choices.empty() ? "" : ", ") + std::get<std::string>(v);
    throw usage_error("unknown value '" + item + "' for axis '" + ax.name + "' (one of: " + choices + ")");
  }
  return item;
}

}  // namespace

std::vector<std::string> split_fields(std::string const& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::vector<param_value> parse_axis_values(axis const& ax, std::string const& text) {
  std::vector<param_value> out;
  for (std::string const& item : split_fields(text, ',')) {
    if (item.empty()) throw usage_error("empty value in '" + text + "' for axis '" + ax.name + "'");
    switch (ax.kind) {
      case axis_kind::integer: parse_integer_item(ax, item, out); break;
      case axis_kind::floating: out.emplace_back(parse_floating_item(ax, item)); break;
      case axis_kind::string: out.emplace_back(parse_string_item(ax, item)); break;
    }
  }
  return out;
}

std::vector<std::map<std::string, param_value>> expand_points(experiment const& exp, bool quick,
                                                              std::vector<axis_override> const& overrides) {
  std::vector<std::vector<param_value>> values;
  for (auto const& ax : exp.axes) {
    values.push_back(quick && !ax.quick_values.empty() ? ax.quick_values : ax.values);
  }
  for (auto const& o : overrides) {
    if (!o.experiment.empty() && o.experiment != exp.id) continue;
    bool found = false;
    for (std::size_t i = 0; i < exp.axes.size(); ++i) {
      if (exp.axes[i].name == o.axis) {
        values[i] = parse_axis_values(exp.axes[i], o.values);
        found = true;
      }
    }
    if (!found && !o.experiment.empty()) {
      std::string names;
      for (auto const& ax : exp.axes) names += (names.empty() ? "" : ", ") + ax.name;
      throw usage_error("experiment " + exp.id + " has no axis '" + o.axis + "' (axes: " +
                        (names.empty() ? "none" : names) + ")");
    }
  }
  std::vector<std::map<std::string, param_value>> points(1);
  for (std::size_t i = 0; i < exp.axes.size(); ++i) {
    std::vector<std::map<std::string, param_value>> next;
    for (auto const& p : points) {
      for (auto const& v : values[i]) {
        auto q = p;
        q[exp.axes[i].name] = v;
        next.push_back(std::move(q));
      }
    }
    points = std::move(next);
  }
  return points;
}

std::vector<axis_override> scope_overrides(std::vector<axis_override> const& overrides,
                                           std::vector<experiment const*> const& selected) {
  std::vector<axis_override> out;
  for (auto const& o : overrides) {
    if (!o.experiment.empty()) {
      out.push_back(o);
      continue;
    }
    bool any = false;
    for (auto const* e : selected)
      for (auto const& ax : e->axes)
        if (ax.name == o.axis) {
          out.push_back({e->id, o.axis, o.values});
          any = true;
        }
    if (!any) throw usage_error("no selected experiment has an axis '" + o.axis + "'");
  }
  return out;
}

// ------------------------------------------------------------------ run context

std::string pci_bus_id(device_info const& d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", d.pci_domain, d.pci_bus, d.pci_device);
  return buf;
}

namespace {

/// An instantiated graph of N captured launches; destroyed with the measurement.
struct graph_exec {
  cudaGraphExec_t exec = nullptr;
  graph_exec() = default;
  graph_exec(graph_exec const&) = delete;
  graph_exec& operator=(graph_exec const&) = delete;
  ~graph_exec() {
    if (exec) MEMLAB_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec));
  }
};

/// Captures `n` calls of `launch` on `s` into g. A launcher that synchronizes, copies with
/// cudaMemcpy, allocates or uses the legacy stream cannot be captured: the capture reports
/// an error (thread-local mode prohibits those calls), which is cleared (capture errors are
/// not sticky), and *why says what happened.
bool capture(launcher const& launch, cudaStream_t s, int n, graph_exec& g, std::string* why) {
  cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    *why = std::string("cannot capture: ") + cudaGetErrorName(e);
    return false;
  }
  std::string failed;
  try {
    for (int i = 0; i < n && failed.empty(); ++i) {
      launch(s);
      if (cudaError_t le = cudaGetLastError(); le != cudaSuccess) failed = cudaGetErrorName(le);
    }
  } catch (std::exception const& ex) {
    failed = ex.what();
  }
  cudaGraph_t graph = nullptr;
  e = cudaStreamEndCapture(s, &graph);  // always: leaves capture mode even after an error
  (void)cudaGetLastError();
  std::size_t nodes = 0;
  if (graph && failed.empty() && e == cudaSuccess) (void)cudaGraphGetNodes(graph, nullptr, &nodes);
  if (!failed.empty() || e != cudaSuccess || !graph || nodes == 0) {
    if (graph) MEMLAB_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
    *why = "graph capture failed (" +
           (!failed.empty() ? failed : e != cudaSuccess ? std::string(cudaGetErrorName(e)) : std::string("no work captured on the stream")) +
           ")";
    return false;
  }
  e = cudaGraphInstantiate(&g.exec, graph, 0);
  MEMLAB_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    g.exec = nullptr;
    *why = std::string("graph instantiation failed (") + cudaGetErrorName(e) + ")";
    return false;
  }
  return true;
}

}  // namespace

run_context::run_context(device_info dev, timing_options timing, bool quick, std::uint64_t seed)
    : device_(std::move(dev)), timing_(timing), quick_(quick), seed_(seed) {
  // Twice the L2, so a memset evicts everything the previous sample left.
  MEMLAB_EXPECTS(timing_.flush == "write" || timing_.flush == "read",
                 "the L2 flush is 'write' or 'read', not '" + timing_.flush + "'");
  if (timing_.cold) {
    flush_ = device_buffer<char>(std::max<std::size_t>(2 * device_.l2_bytes, 1 << 20));
    flush_.fill_bytes(0);  // the read flush's sum of zeros never writes its sink
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }
  gpu_ = std::make_unique<gpu_monitor>(pci_bus_id(device_));
}

void run_context::flush_l2(cudaStream_t s) {
  if (timing_.flush == "read") {
    flush_l2_by_reading(flush_.data(), flush_.size(), flush_sink_.data(), device_.sm_count, s);
  } else {
    flush_.fill_bytes(0, s);
  }
}

template <class Issue>
double run_context::timed_ms(Issue const& issue) {
  cudaStream_t const s = stream_.get();
  if (timing_.cold) flush_l2(s);
  start_.record(s);
  issue();
  stop_.record(s);
  stop_.synchronize();
  return static_cast<double>(stop_.elapsed_since(start_));
}

void run_context::launch_once(launcher const& launch) {
  launch(stream_.get());
  MEMLAB_CHECK_LAUNCH();
}

/// A microsecond launch, timed as the slope of batches: one sample is the time of 2N launches
/// back to back minus the time of N, over N. What a single batch's time also holds cancels:
/// the graph launch, the first launch's cold L2 (the flush comes before each batch) and the
/// drain at the end; so the result no longer depends on N, which the probe picks from noisy
/// single launches. N is a power of two sized from one timed batch (back to back, launches
/// overlap their gaps, so they are shorter than the probe's).
std::vector<double> run_context::sample_batches(launcher const& launch, int n, timing_options const& t,
                                                measurement& m) {
  cudaStream_t const s = stream_.get();
  auto launches = [&](int count) {
    for (int i = 0; i < count; ++i) launch_once(launch);
  };
  n = pow2_at_least(n);
  graph_exec g1, g2;
  std::string why;
  bool graph = capture(launch, s, n, g1, &why) && capture(launch, s, 2 * n, g2, &why);
  auto run = [&](graph_exec const& g) { MEMLAB_CUDA_CHECK(cudaGraphLaunch(g.exec, s)); };
  double const per = (graph ? timed_ms([&] { run(g1); }) : timed_ms([&] { launches(n); })) / n;  // uploads g1
  if (per * n < 0.5 * batch_target_ms && n < max_batch) {
    int const bigger = pow2_at_least(batch_size_for(per));
    if (bigger > n) {
      n = bigger;
      if (graph) {
        graph_exec b1, b2;
        if (capture(launch, s, n, b1, &why) && capture(launch, s, 2 * n, b2, &why)) {
          std::swap(g1.exec, b1.exec);
          std::swap(g2.exec, b2.exec);
        } else {
          graph = false;
        }
      }
    }
  }
  if (graph) {  // uploads both graphs
    (void)timed_ms([&] { run(g1); });
    (void)timed_ms([&] { run(g2); });
  }
  m.batch = n;
  m.method = graph ? "graph_batch" : "launch_batch";
  if (!graph) m.note = why + "; timed as back-to-back launches";
  auto const slope = [&] {
    double const one = graph ? timed_ms([&] { run(g1); }) : timed_ms([&] { launches(n); });
    double const two = graph ? timed_ms([&] { run(g2); }) : timed_ms([&] { launches(2 * n); });
    return (two - one) / n;
  };
  return sample_until_stable(slope, t, 3 * n);
}

measurement run_context::measure(launcher const& launch, bool batched) {
  measurement m;
  // NVML is read only outside timed regions: after the warm-up and the probe (so the clocks
  // are those of a busy GPU, not an idle one's) and after the last sample.
  std::optional<gpu_reading> before;
  auto one = [&] { launch_once(launch); };
  std::vector<double> samples;
  if (timing_.profile) {
    before = gpu_->read();
    samples = sample_until_stable([&] { return timed_ms(one); }, timing_);  // one launch, for ncu
  } else {
    for (int i = 0; i < timing_.warmup; ++i) one();
    // Three single launches say whether this is a microsecond kernel.
    std::vector<double> probe;
    for (int i = 0; i < 3; ++i) probe.push_back(timed_ms(one));
    double const probed = median(probe);
    int n = batch_size_for(probed);
    if (batched) n = std::max(n, 2);
    before = gpu_->read();
    timing_options t = timing_;
    t.warmup = 0;
    if (n == 1) {
      samples = sample_until_stable([&] { return timed_ms(one); }, t);
    } else {
      samples = sample_batches(launch, n, t, m);
      if (probed >= cold_also_above_ms) {
        auto const alone = sample_until_stable([&] { return timed_ms(one); }, t);
        m.cold_events = alone_timing{summarize(alone), estimate_noise(alone, between_run_noise_floor)};
      }
    }
  }
  std::optional<gpu_reading> const after = gpu_->read();
  if (before && after) m.gpu = summarize_window(*before, *after);
  if (after) last_reading_ = after;
  m.summary = summarize(samples);
  m.noise = estimate_noise(samples, m.batch > 1 ? between_run_noise_floor_batched : between_run_noise_floor);
  return m;
}

std::pair<measurement, measurement> run_context::measure_paired(launcher const& ours, launcher const& peer, bool in_blocks) {
  auto timed = [&](launcher const& l) { return timed_ms([&] { launch_once(l); }); };
  if (timing_.profile) return {measure(ours), measure(peer)};
  for (int i = 0; i < timing_.warmup; ++i) {
    launch_once(ours);
    launch_once(peer);
  }
  std::vector<double> probe_a, probe_b;
  for (int i = 0; i < 3; ++i) {
    probe_a.push_back(timed(ours));
    probe_b.push_back(timed(peer));
  }
  if (batch_size_for(median(probe_a)) > 1 || batch_size_for(median(probe_b)) > 1) {
    // Both in batches: a launch just over the threshold timed alone beside a batched peer carried
    // its launch overhead into the ratio (1024x4096x4096 FP16, H100: 0.906 against 0.967 like for
    // like; docs/timing.md).
    measurement a = measure(ours, true);
    measurement b = measure(peer, true);
    return {std::move(a), std::move(b)};
  }
  if (in_blocks && std::max(median(probe_a), median(probe_b)) >= paired_blocks_above_ms)
    return measure_paired_blocks(ours, peer);
  std::optional<gpu_reading> const before = gpu_->read();
  timing_options t = timing_;
  t.warmup = 0;
  std::vector<double> peer_samples;
  bool peer_first = true;
  std::vector<double> const ours_samples = sample_until_stable(
      [&] {
        if (peer_first) peer_samples.push_back(timed(peer));
        double const a = timed(ours);
        if (!peer_first) peer_samples.push_back(timed(peer));
        peer_first = !peer_first;
        return a;
      },
      t);
  std::optional<gpu_reading> const after = gpu_->read();
  std::pair<measurement, measurement> m;
  for (auto* x : {&m.first, &m.second}) {
    x->method = "events_paired";
    if (before && after) x->gpu = summarize_window(*before, *after);
  }
  if (after) last_reading_ = after;
  m.first.summary = summarize(ours_samples);
  m.first.noise = estimate_noise(ours_samples, between_run_noise_floor);
  m.second.summary = summarize(peer_samples);
  m.second.noise = estimate_noise(peer_samples, between_run_noise_floor);
  return m;
}

std::pair<measurement, measurement> run_context::measure_paired_blocks(launcher const& ours, launcher const& peer) {
  using clock = std::chrono::steady_clock;
  auto const ms_since = [](clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(clock::now() - t0).count();
  };
  auto timed = [&](launcher const& l) { return timed_ms([&] { launch_once(l); }); };
  // One block: launches one after another (each cold in cold mode, between its own events, as
  // a paired sample is) until the clock has settled to this kernel's power, then the kept ones.
  auto block = [&](launcher const& l, std::vector<double>& kept) {
    auto const t0 = clock::now();
    do (void)timed(l);
    while (ms_since(t0) < paired_block_settle_ms);
    auto const t1 = clock::now();
    int n = 0;
    do {
      kept.push_back(timed(l));
      ++n;
    } while (ms_since(t1) < paired_block_ms || n < paired_block_min_launches);
  };
  std::optional<gpu_reading> const before = gpu_->read();
  std::vector<double> ours_samples, peer_samples;
  for (int r = 0; r < paired_block_rounds; ++r) {
    if (r % 2 == 0) {
      block(ours, ours_samples);
      block(peer, peer_samples);
    } else {
      block(peer, peer_samples);
      block(ours, ours_samples);
    }
  }
  std::optional<gpu_reading> const after = gpu_->read();
  std::pair<measurement, measurement> m;
  for (auto [x, v] : {std::pair{&m.first, &ours_samples}, std::pair{&m.second, &peer_samples}}) {
    x->method = "events_paired_blocks";
    if (before && after) x->gpu = summarize_window(*before, *after);
    x->summary = summarize(*v);
    x->noise = estimate_noise(*v, between_run_noise_floor);
    x->blocks = {{"rounds", paired_block_rounds},
                 {"settle_ms", paired_block_settle_ms},
                 {"kept_ms", paired_block_ms},
                 {"launches_kept", v->size()}};
  }
  if (after) last_reading_ = after;
  return m;
}

gpu_window run_context::gpu_since_last_reading() {
  std::optional<gpu_reading> const now = gpu_->read();
  if (!now) return {};
  gpu_window w = summarize_window(last_reading_.value_or(*now), *now);
  last_reading_ = now;
  return w;
}

nlohmann::json run_context::launch_floor() {
  measurement const m = measure([](cudaStream_t st) { launch_empty_kernel(st); });
  return {{"us", m.summary.median * 1e3}, {"method", m.method}, {"batch", m.batch}, {"noise", m.noise.noise}};
}

nlohmann::json run_context::persistence_check(std::ostream& err) {
  nlohmann::json warnings = nlohmann::json::array();
  auto warn = [&](std::string const& w) {
    err << "memlab: warning: " << w << "\n";
    warnings.push_back(w);
  };
  if (!gpu_->available()) {
    warn("--persistence-check cannot check the GPU: NVML " + gpu_->status());
    return {{"warnings", warnings}};
  }
  nlohmann::json j = nlohmann::json::object();
  // NVML lists host PIDs, which differ from getpid() inside a container; this process holds
  // a context on the GPU by now, so any entry beyond one is another process.
  if (auto pids = gpu_->compute_processes()) {
    j["compute_processes"] = *pids;
    if (pids->size() > 1) {
      std::string list;
      for (unsigned p : *pids)
        if (p != static_cast<unsigned>(getpid())) list += (list.empty() ? "" : ", ") + std::to_string(p);
      warn(std::to_string(pids->size() - 1) + " other process(es) have a context on the GPU (PIDs seen: " + list +
           "): timings will share the GPU");
    }
  } else {
    warn("NVML cannot list the GPU's compute processes");
  }
  // An idle GPU lowers its clocks, so the clock is read while a queue of empty kernels runs.
  // The host blocks once the launch queue is full, so when the loop ends about a queue's
  // worth (milliseconds) is still running: the reading is taken then.
  for (int i = 0; i < 20000; ++i) launch_empty_kernel(stream_.get());
  MEMLAB_CHECK_LAUNCH();
  auto const r = gpu_->read();
  stream_.synchronize();
  auto const max = gpu_->max_sm_mhz();
  if (r && r->sm_mhz && max) {
    j["sm_clock_mhz"] = *r->sm_mhz;
    j["max_sm_clock_mhz"] = *max;
    auto const reasons = reason_names(r->reasons.value_or(0));
    j["clocks_event_reasons"] = reasons;
    if (*r->sm_mhz + 0.01 * *max < *max) {  // 1%: clocks move in steps of about 15 MHz
      std::string why;
      for (auto const& n : reasons) why += (why.empty() ? "" : ", ") + n;
      warn("SM clock under load is " + std::to_string(*r->sm_mhz) + " MHz, below its max " + std::to_string(*max) +
           " MHz" + (why.empty() ? "" : " (reasons: " + why + ")") +
           ": locked or capped clocks, power or heat; timings will be slower than the GPU can run");
    }
  } else {
    warn("NVML cannot read the SM clock or its max");
  }
  j["warnings"] = warnings;
  return j;
}

// ------------------------------------------------------------------ the run

namespace {

/// Builds the record from what the executing loop reports, in this process or a worker:
/// rows as they come, the experiment's entry and a flush as each experiment ends.
class record_sink final : public run_sink {
 public:
  record_sink(run_record& rec, run_summary& sum) : rec_(rec), sum_(sum) {}
  /// The first worker's context: the image, NVML, the launch floor, the persistence check.
  void started(nlohmann::json const& info) override {
    for (auto const& [key, value] : info.items())
      if (!rec_.meta.contains(key)) rec_.meta[key] = value;
  }
  void begin_experiment(std::string const&, int points) override { points_ = points; }
  void begin_point(std::string const&, std::string const&) override {}
  void add_row(row const& r) override {
    rec_.rows.push_back(r);
    ++sum_.rows;
    if (r.error) {
      ++sum_.errors;
    } else if (r.skipped) {
      ++sum_.skipped;
    } else if (r.check.status == verdict::passed) {
      ++sum_.passed;
    } else if (r.check.status == verdict::failed) {
      ++sum_.failed;
    } else {
      ++sum_.not_verified;
    }
  }
  void end_experiment(std::string const& id, std::string const& status, measured_ceilings const& ceilings) override {
    experiment const* e = registry::instance().find(id);
    // The declaration travels with the rows, so the record alone makes the report.
    experiment unknown;
    unknown.id = id;
    nlohmann::json entry = declaration_json(e ? *e : unknown);
    entry["points"] = points_;
    entry["status"] = status;
    rec_.meta["experiments"].push_back(std::move(entry));
    if (status == "error") ++sum_.lost_experiments;
    rec_.meta["ceilings"] = to_json(ceilings);
    rec_.flush();  // a crash later loses only the experiment in flight
  }

 private:
  run_record& rec_;
  run_summary& sum_;
  int points_ = 0;
};

/// Every bandwidth row is compared with the ceiling measured in the same run: the ceilings
/// experiments go first when a selected experiment declares a ceiling relation.
std::vector<experiment const*> with_ceilings(std::vector<experiment const*> selected) {
  bool needs_ceiling = false;
  for (auto const* e : selected) needs_ceiling = needs_ceiling || e->ceiling != ceiling_relation::none;
  if (needs_ceiling) {
    std::vector<experiment const*> ceilings;
    for (auto const& e : registry::instance().all())
      if (e.family() == "ceilings" && std::find(selected.begin(), selected.end(), &e) == selected.end())
        ceilings.push_back(&e);
    selected.insert(selected.begin(), ceilings.begin(), ceilings.end());
  }
  return selected;
}

/// Every scoped override names a selected experiment (one the user named, or a ceiling added for them).
void check_overrides(std::vector<axis_override> const& overrides, std::vector<experiment const*> const& selected) {
  for (auto const& o : overrides)
    if (std::find_if(selected.begin(), selected.end(), [&](auto const* e) { return e->id == o.experiment; }) == selected.end())
      throw usage_error("axis override names experiment '" + o.experiment + "', which is not selected");
}

/// The plan the executing loop runs; every point is expanded here, before any GPU work.
run_plan make_plan(run_options const& opt, std::vector<experiment const*> const& selected) {
  run_plan plan;
  for (auto const* e : selected) {
    plan.total_points += static_cast<int>(expand_points(*e, opt.quick, opt.overrides).size());
    plan.experiments.push_back(e->id);
  }
  plan.device = opt.device;
  plan.overrides = opt.overrides;
  plan.timing = opt.timing;
  plan.quick = opt.quick;
  plan.seed = opt.seed;
  plan.progress = opt.progress;
  plan.persistence_check = opt.persistence_check;
  return plan;
}

/// The record's header, flushed before the first row: format, device, build, timing policy.
void write_header(run_record& record, run_options const& opt, device_info const& dev) {
  record.meta["format_version"] = record_format_version;
  record.meta["started"] = utc_now_iso();
  record.meta["finished"] = nullptr;
  record.meta["device"] = to_json(dev);
  record.meta["build"] = build_json();
  record.meta["isolation"] = opt.worker_executable.empty() ? "in-process" : "worker process per run slice";
  record.meta["timing"] = timing_policy_json(opt.timing, opt.quick, opt.seed);
  record.meta["ceilings"] = to_json(measured_ceilings{});
  record.meta["experiments"] = nlohmann::json::array();
  record.flush();
}

/// Runs the plan in this process or in workers, under the signal guard; notes in `sum` a
/// lost context (in-process) and the signal that stopped the run.
void execute_plan(run_options const& opt, run_plan const& plan, run_sink& sink, run_summary& sum) {
  signal_guard guard(/*exit_on_second=*/opt.worker_executable.empty());
  if (opt.worker_executable.empty()) {
    std::string lost;
    if (execute(plan, sink, &signal_guard::count(), &lost) == execute_result::context_lost) {
      sum.aborted = true;
      sum.abort_reason = "the CUDA context is unusable (" + lost + "); run without --in-process to go on after it";
    }
  } else {
    run_isolated(opt.worker_executable, plan, sink, signal_guard::count());
  }
  sum.signal = signal_guard::count().load() > 0 ? signal_guard::last_signal() : 0;
}

}  // namespace

run_summary run(run_options const& opt, run_record& record) {
  std::vector<experiment const*> const named = registry::instance().select(opt.selection);
  std::vector<experiment const*> const selected = with_ceilings(named);
  run_options scoped = opt;
  scoped.overrides = scope_overrides(opt.overrides, named);
  check_overrides(scoped.overrides, selected);
  run_plan const plan = make_plan(scoped, selected);

  // The device query creates no context: the parent of isolated workers stays off the GPU.
  device_info const dev = query_device(opt.device);  // throws: no device / bad index
  write_header(record, opt, dev);

  run_summary sum;
  record_sink sink(record, sum);
  execute_plan(opt, plan, sink, sum);
  if (sum.signal) {
    sum.aborted = true;
    sum.abort_reason = std::string("stopped by ") + (sum.signal == SIGTERM ? "SIGTERM" : "SIGINT");
  }
  record.meta["finished"] = utc_now_iso();
  if (sum.aborted) record.meta["aborted"] = sum.abort_reason;
  record.flush();
  return sum;
}

}  // namespace memlab::bench
