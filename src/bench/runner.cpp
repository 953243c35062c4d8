#include "bench/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <set>
#include <sstream>

#include "memlab/error.hpp"

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

std::string format_duration(double s) {
  char buf[32];
  int const m = static_cast<int>(s) / 60;
  std::snprintf(buf, sizeof buf, "%d:%02d", m, static_cast<int>(s) % 60);
  return buf;
}

std::string point_label(std::map<std::string, param_value> const& p) {
  std::string out;
  for (auto const& [k, v] : p) out += (out.empty() ? "" : " ") + k + "=" + to_string(v);
  return out;
}

/// True when the context is unusable (a sticky error such as an illegal address).
bool context_broken(std::string* why) {
  cudaError_t const first = cudaDeviceSynchronize();
  (void)cudaGetLastError();
  if (first == cudaSuccess) return false;
  cudaError_t const again = cudaDeviceSynchronize();
  (void)cudaGetLastError();
  if (again == cudaSuccess) return false;
  *why = std::string(cudaGetErrorName(again)) + ": " + cudaGetErrorString(again);
  return true;
}

class progress_printer {
 public:
  progress_printer(bool enabled, int total) : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0), total_(total) {
    t0_ = last_ = std::chrono::steady_clock::now();
  }
  void begin_experiment(experiment const& e, int points) {
    if (!enabled_) return;
    exp_t0_ = std::chrono::steady_clock::now();
    if (!tty_) std::fprintf(stderr, "memlab: %-28s %4d points ...\n", e.id.c_str(), points);
  }
  void point(experiment const& e, std::map<std::string, param_value> const& p) {
    ++done_;
    if (!enabled_) return;
    auto const now = std::chrono::steady_clock::now();
    double const elapsed = std::chrono::duration<double>(now - t0_).count();
    std::string left = "?";
    if (done_ > 0 && done_ < total_) left = "~" + format_duration(elapsed / done_ * (total_ - done_));
    if (tty_) {
      std::string line = "[" + std::to_string(done_) + "/" + std::to_string(total_) + "] " + e.id + " " +
                         point_label(p) + "  " + format_duration(elapsed) + " elapsed, " + left + " left";
      if (line.size() > 110) line.resize(110);
      std::fprintf(stderr, "\r\033[K%s", line.c_str());
    } else if (std::chrono::duration<double>(now - last_).count() > 10.0) {
      std::fprintf(stderr, "memlab:   %d/%d points, %s elapsed, %s left\n", done_, total_,
                   format_duration(elapsed).c_str(), left.c_str());
      last_ = now;
    }
  }
  void end_experiment(experiment const& e, int failed) {
    if (!enabled_) return;
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - exp_t0_).count();
    if (tty_) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "memlab: %-28s done in %.1f s%s\n", e.id.c_str(), s,
                 failed ? (" (" + std::to_string(failed) + " failed)").c_str() : "");
  }

 private:
  bool enabled_, tty_;
  int total_, done_ = 0;
  std::chrono::steady_clock::time_point t0_, last_, exp_t0_;
};

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
  std::vector<std::vector<std::map<std::string, param_value>>> points;
  int total = 0;
  for (auto const* e : selected) {
    points.push_back(expand_points(*e, opt.quick, opt.overrides));
    total += static_cast<int>(points.back().size());
  }

  device_info const dev = query_device(opt.device);  // throws: no device / bad index
  MEMLAB_CUDA_CHECK(cudaSetDevice(opt.device));

  record.meta["format_version"] = record_format_version;
  record.meta["started"] = now_iso();
  record.meta["finished"] = nullptr;
  record.meta["device"] = to_json(dev);
  record.meta["timing"] = {{"cold", opt.timing.cold},           {"max_noise", opt.timing.max_noise},
                           {"min_time_s", opt.timing.min_time_s}, {"min_samples", opt.timing.min_samples},
                           {"max_samples", opt.timing.max_samples}, {"timeout_s", opt.timing.timeout_s},
                           {"warmup", opt.timing.warmup},         {"profile", opt.timing.profile},
                           {"quick", opt.quick},                  {"seed", opt.seed}};
  record.meta["ceilings"] = {{"d2d_copy_gbps", nullptr}, {"fp32_peak_tflops", nullptr}};
  record.meta["experiments"] = nlohmann::json::array();
  record.flush();

  run_context ctx(dev, opt.timing, opt.quick, opt.seed);
  progress_printer progress(opt.progress, total);
  run_summary sum;

  for (std::size_t ei = 0; ei < selected.size() && !sum.aborted; ++ei) {
    experiment const& exp = *selected[ei];
    progress.begin_experiment(exp, static_cast<int>(points[ei].size()));
    std::vector<row> rows;
    int failed_here = 0;
    for (auto const& point : points[ei]) {
      state st(ctx, exp, point);
      try {
        exp.body(st);
      } catch (skip_exception const& s) {
        st.result().skipped = s.reason;
      } catch (std::exception const& e) {
        st.result().error = e.what();
        std::fprintf(stderr, "%smemlab: error in %s %s: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "",
                     exp.id.c_str(), point_label(point).c_str(), e.what());
        std::string why;
        if (context_broken(&why)) {
          sum.aborted = true;
          sum.abort_reason = "the CUDA context is unusable after " + exp.id + " (" + why + ")";
        }
      }
      rows.push_back(st.finish());
      row const& r = rows.back();
      ++sum.rows;
      if (r.error) {
        ++sum.errors;
        ++failed_here;
      } else if (r.skipped) {
        ++sum.skipped;
      } else if (r.check.status == verdict::passed) {
        ++sum.passed;
      } else if (r.check.status == verdict::failed) {
        ++sum.failed;
        ++failed_here;
      } else {
        ++sum.not_verified;
      }
      progress.point(exp, point);
      if (sum.aborted) break;
    }
    record.append(rows);
    record.meta["experiments"].push_back({{"id", exp.id},
                                          {"description", exp.description},
                                          {"seed_ref", exp.seed_ref},
                                          {"points", points[ei].size()},
                                          {"status", sum.aborted ? "aborted" : failed_here ? "failed" : "completed"}});
    record.meta["ceilings"] = {{"d2d_copy_gbps", ctx.ceiling_gbps ? nlohmann::json(*ctx.ceiling_gbps) : nlohmann::json()},
                               {"fp32_peak_tflops",
                                ctx.fp32_peak_tflops ? nlohmann::json(*ctx.fp32_peak_tflops) : nlohmann::json()}};
    record.flush();  // a crash later loses only the experiment in flight
    progress.end_experiment(exp, failed_here);
  }
  record.meta["finished"] = now_iso();
  if (sum.aborted) record.meta["aborted"] = sum.abort_reason;
  record.flush();
  return sum;
}

}  // namespace memlab::bench
