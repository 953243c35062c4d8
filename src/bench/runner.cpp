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

#include "bench/execute.hpp"
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

std::vector<std::string> split(std::string const& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream is(s);
  while (std::getline(is, cur, sep)) out.push_back(cur);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
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

}  // namespace

std::vector<param_value> parse_axis_values(axis const& ax, std::string const& text) {
  std::vector<param_value> out;
  for (std::string const& item : split(text, ',')) {
    if (item.empty()) throw usage_error("empty value in '" + text + "' for axis '" + ax.name + "'");
    switch (ax.kind) {
      case axis_kind::integer: {
        auto const parts = split(item, ':');
        if (parts.size() == 1) {
          auto v = parse_int(item, ax);
          check_bounds(ax, v, item);
          out.emplace_back(v);
        } else if (parts.size() == 2 || parts.size() == 3) {
          bool const pow2 = parts[0].rfind("2^", 0) == 0;
          auto lo = parse_int(parts[0], ax), hi = parse_int(parts[1], ax);
          std::int64_t step = parts.size() == 3 ? parse_int(parts[2], ax) : 1;
          if (step <= 0 || hi < lo) throw usage_error("bad range '" + item + "' for axis '" + ax.name + "'");
          if (pow2) {
            for (auto v = lo; v <= hi; v *= 2) {
              check_bounds(ax, v, std::to_string(v));
              out.emplace_back(v);
            }
          } else {
            if ((hi - lo) / step > 100000) throw usage_error("range '" + item + "' has too many values");
            for (auto v = lo; v <= hi; v += step) {
              check_bounds(ax, v, std::to_string(v));
              out.emplace_back(v);
            }
          }
        } else {
          throw usage_error("bad range '" + item + "' for axis '" + ax.name + "'");
        }
        break;
      }
      case axis_kind::floating: {
        std::size_t used = 0;
        double v = 0;
        try {
          v = std::stod(item, &used);
        } catch (...) {
          used = 0;
        }
        if (used == 0 || used != item.size() || !std::isfinite(v))
          throw usage_error("bad value '" + item + "' for axis '" + ax.name + "'");
        out.emplace_back(v);
        break;
      }
      case axis_kind::string: {
        bool known = false;
        for (auto const& v : ax.values)
          if (std::get<std::string>(v) == item) known = true;
        if (!known) {
          std::string choices;
          for (auto const& v : ax.values) choices += (choices.empty() ? "" : ", ") + std::get<std::string>(v);
          throw usage_error("unknown value '" + item + "' for axis '" + ax.name + "' (one of: " + choices + ")");
        }
        out.emplace_back(item);
        break;
      }
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

// ------------------------------------------------------------------ run context

run_context::run_context(device_info dev, timing_options timing, bool quick, std::uint64_t seed)
    : device_(std::move(dev)), timing_(timing), quick_(quick), seed_(seed) {
  // Twice the L2, so a memset evicts everything the previous sample left.
  if (timing_.cold) flush_ = device_buffer<char>(std::max<std::size_t>(2 * device_.l2_bytes, 1 << 20));
}

sample_summary run_context::measure(launcher const& launch, std::vector<double>* samples_out) {
  cudaStream_t const s = stream_.get();
  std::vector<double> const samples = sample_until_stable(
      [&] {
        if (timing_.cold) flush_.fill_bytes(0, s);
        start_.record(s);
        launch(s);
        MEMLAB_CHECK_LAUNCH();
        stop_.record(s);
        stop_.synchronize();
        return static_cast<double>(stop_.elapsed_since(start_));
      },
      timing_);
  if (samples_out) *samples_out = samples;
  return summarize(samples);
}

// ------------------------------------------------------------------ the run

namespace {

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

/// Builds the record from what the executing loop reports, in this process or a worker:
/// rows as they come, the experiment's entry and a flush as each experiment ends.
class record_sink final : public run_sink {
 public:
  record_sink(run_record& rec, run_summary& sum) : rec_(rec), sum_(sum) {}
  void started(nlohmann::json const& image) override {
    if (!rec_.meta.contains("image")) rec_.meta["image"] = image;
  }
  void begin_experiment(std::string const& id, int points) override {
    points_ = points;
    failed_ = 0;
    (void)id;
  }
  void begin_point(std::string const&, std::string const&) override {}
  void add_row(row const& r) override {
    rec_.rows.push_back(r);
    ++sum_.rows;
    if (r.error) {
      ++sum_.errors;
      ++failed_;
    } else if (r.skipped) {
      ++sum_.skipped;
    } else if (r.check.status == verdict::passed) {
      ++sum_.passed;
    } else if (r.check.status == verdict::failed) {
      ++sum_.failed;
      ++failed_;
    } else {
      ++sum_.not_verified;
    }
  }
  void end_experiment(std::string const& id, std::string const& status, std::optional<double> ceiling_gbps,
                      std::optional<double> fp32_peak_tflops) override {
    experiment const* e = registry::instance().find(id);
    rec_.meta["experiments"].push_back({{"id", id},
                                        {"description", e ? e->description : ""},
                                        {"seed_ref", e ? e->seed_ref : ""},
                                        {"points", points_},
                                        {"status", status}});
    if (status == "error") ++sum_.lost_experiments;
    auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
    rec_.meta["ceilings"] = {{"d2d_copy_gbps", opt(ceiling_gbps)}, {"fp32_peak_tflops", opt(fp32_peak_tflops)}};
    rec_.flush();  // a crash later loses only the experiment in flight
  }

 private:
  run_record& rec_;
  run_summary& sum_;
  int points_ = 0, failed_ = 0;
};

nlohmann::json build_json() {
  return {{"cuda_architectures", MEMLAB_CUDA_ARCHITECTURES}, {"cuda_compiler", MEMLAB_CUDA_COMPILER}};
}

}  // namespace

run_summary run(run_options const& opt, run_record& record) {
  auto& reg = registry::instance();
  std::vector<experiment const*> selected = reg.select(opt.selection);
  // Every bandwidth row is compared with the ceiling measured in the same run.
  bool needs_ceiling = false;
  for (auto const* e : selected) needs_ceiling = needs_ceiling || e->needs_ceiling;
  if (needs_ceiling) {
    std::vector<experiment const*> ceilings;
    for (auto const& e : reg.all())
      if (e.family() == "ceilings" && std::find(selected.begin(), selected.end(), &e) == selected.end())
        ceilings.push_back(&e);
    selected.insert(selected.begin(), ceilings.begin(), ceilings.end());
  }
  // Validate every override and expand every point before any GPU work.
  for (auto const& o : opt.overrides) {
    if (o.experiment.empty()) {
      bool any = false;
      for (auto const* e : selected)
        for (auto const& ax : e->axes) any = any || ax.name == o.axis;
      if (!any) throw usage_error("no selected experiment has an axis '" + o.axis + "'");
    } else if (std::find_if(selected.begin(), selected.end(), [&](auto const* e) { return e->id == o.experiment; }) ==
               selected.end()) {
      throw usage_error("axis override names experiment '" + o.experiment + "', which is not selected");
    }
  }
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

  // The device query creates no context: the parent of isolated workers stays off the GPU.
  device_info const dev = query_device(opt.device);  // throws: no device / bad index

  record.meta["format_version"] = record_format_version;
  record.meta["started"] = now_iso();
  record.meta["finished"] = nullptr;
  record.meta["device"] = to_json(dev);
  record.meta["build"] = build_json();
  record.meta["isolation"] = opt.worker_executable.empty() ? "in-process" : "worker process per run slice";
  record.meta["timing"] = {{"cold", opt.timing.cold},           {"max_noise", opt.timing.max_noise},
                           {"min_time_s", opt.timing.min_time_s}, {"min_samples", opt.timing.min_samples},
                           {"max_samples", opt.timing.max_samples}, {"timeout_s", opt.timing.timeout_s},
                           {"warmup", opt.timing.warmup},         {"profile", opt.timing.profile},
                           {"quick", opt.quick},                  {"seed", opt.seed}};
  record.meta["ceilings"] = {{"d2d_copy_gbps", nullptr}, {"fp32_peak_tflops", nullptr}};
  record.meta["experiments"] = nlohmann::json::array();
  record.flush();

  run_summary sum;
  record_sink sink(record, sum);
  {
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
  if (sum.signal) {
    sum.aborted = true;
    sum.abort_reason = std::string("stopped by ") + (sum.signal == SIGTERM ? "SIGTERM" : "SIGINT");
  }
  record.meta["finished"] = now_iso();
  if (sum.aborted) record.meta["aborted"] = sum.abort_reason;
  record.flush();
  return sum;
}

}  // namespace memlab::bench
