#include "bench/execute.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "bench/affinity.hpp"
#include "bench/image.hpp"
#include "bench/record.hpp"  // timing_options <-> JSON
#include "memlab/error.hpp"

namespace memlab::bench {

// ------------------------------------------------------------------ the plan

nlohmann::json to_json(run_plan const& p) {
  nlohmann::json overrides = nlohmann::json::array();
  for (auto const& o : p.overrides) overrides.push_back({{"experiment", o.experiment}, {"axis", o.axis}, {"values", o.values}});
  auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"device", p.device},
          {"experiments", p.experiments},
          {"overrides", overrides},
          {"timing", p.timing},
          {"quick", p.quick},
          {"seed", p.seed},
          {"ceilings", to_json(p.ceilings)},
          {"progress", p.progress},
          {"total_points", p.total_points},
          {"done_points", p.done_points},
          {"elapsed_s", p.elapsed_s},
          {"first_slice", p.first_slice},
          {"persistence_check", p.persistence_check}};
}

run_plan plan_from_json(nlohmann::json const& j) {
  run_plan p;
  p.device = j.at("device").get<int>();
  p.experiments = j.at("experiments").get<std::vector<std::string>>();
  for (auto const& o : j.at("overrides"))
    p.overrides.push_back({o.at("experiment").get<std::string>(), o.at("axis").get<std::string>(),
                           o.at("values").get<std::string>()});
  p.timing = j.at("timing").get<timing_options>();
  p.quick = j.at("quick").get<bool>();
  p.seed = j.at("seed").get<std::uint64_t>();
  p.ceilings = ceilings_from_json(j.at("ceilings"));
  p.progress = j.at("progress").get<bool>();
  p.total_points = j.at("total_points").get<int>();
  p.done_points = j.at("done_points").get<int>();
  p.elapsed_s = j.at("elapsed_s").get<double>();
  p.first_slice = j.at("first_slice").get<bool>();
  p.persistence_check = j.at("persistence_check").get<bool>();
  return p;
}

std::string point_label(std::map<std::string, param_value> const& p) {
  std::string out;
  for (auto const& [k, v] : p) out += (out.empty() ? "" : " ") + k + "=" + to_string(v);
  return out;
}

// ------------------------------------------------------------------ the loop

namespace {

std::string format_duration(double s) {
  char buf[32];
  int const m = static_cast<int>(s) / 60;
  std::snprintf(buf, sizeof buf, "%d:%02d", m, static_cast<int>(s) % 60);
  return buf;
}

/// True when the context is unusable (a sticky error such as an illegal address): a
/// second synchronize still fails where a plain launch error would have been cleared.
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
  explicit progress_printer(run_plan const& plan)
      : enabled_(plan.progress),
        tty_(isatty(STDERR_FILENO) != 0),
        total_(plan.total_points),
        done_(plan.done_points),
        before_s_(plan.elapsed_s) {
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
    double const elapsed = before_s_ + std::chrono::duration<double>(now - t0_).count();
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
  void end_experiment(experiment const& e, std::string const& status, int failed) {
    if (!enabled_) return;
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - exp_t0_).count();
    if (tty_) std::fprintf(stderr, "\r\033[K");
    std::string note = failed ? " (" + std::to_string(failed) + " failed)" : "";
    if (status == "aborted" || status == "error") note += " [" + status + "]";
    std::fprintf(stderr, "memlab: %-28s done in %.1f s%s\n", e.id.c_str(), s, note.c_str());
  }

 private:
  bool enabled_, tty_;
  int total_, done_;
  double before_s_;
  std::chrono::steady_clock::time_point t0_, last_, exp_t0_;
};

bool counts_as_failed(row const& r) { return r.error || (!r.skipped && r.check.status == verdict::failed); }

/// What the run's first event says of the context: the image, NVML, the host affinity and,
/// for the first slice, the launch floor and the persistence check.
nlohmann::json context_info(run_plan const& plan, run_context& ctx, nlohmann::json const& affinity) {
  nlohmann::json info = {{"image", to_json(running_image())}, {"nvml", ctx.gpu().status()}, {"host_affinity", affinity}};
  if (plan.first_slice) {
    if (!plan.timing.profile) {  // what a launch costs by itself, timed like the rows
      info["launch_floor"] = ctx.launch_floor();
      info["launch_floor_us"] = info["launch_floor"]["us"];
    }
    if (plan.persistence_check) info["persistence_check"] = ctx.persistence_check(std::cerr);
  }
  return info;
}

/// Runs one point's body: a skip or an exception becomes the row's reason; `lost` is set when
/// the exception left the context unusable.
row run_point(run_context& ctx, experiment const& exp, std::string const& id,
              std::map<std::string, param_value> const& point, std::string* lost_reason, bool& lost) {
  state st(ctx, exp, point);
  try {
    exp.body(st);
  } catch (skip_exception const& s) {
    st.result().skipped = s.reason;
  } catch (std::exception const& e) {
    st.result().error = e.what();
    std::fprintf(stderr, "%smemlab: error in %s %s: %s\n", isatty(STDERR_FILENO) ? "\r\033[K" : "", id.c_str(),
                 point_label(point).c_str(), e.what());
    lost = context_broken(lost_reason);
  }
  return st.finish();
}

/// Runs every point of experiment `id` and ends it: completed, or interrupted (a stop was
/// asked: the experiment is `aborted`), or context_lost (it ends with status `error`).
execute_result run_experiment(std::string const& id, run_plan const& plan, run_context& ctx, run_sink& sink,
                              progress_printer& progress, std::atomic<int> const* stop, std::string* lost_reason) {
  experiment const* exp = registry::instance().find(id);
  if (!exp) throw error("the plan names an unknown experiment '" + id + "'");
  auto const points = expand_points(*exp, plan.quick, plan.overrides);
  sink.begin_experiment(id, static_cast<int>(points.size()));
  progress.begin_experiment(*exp, static_cast<int>(points.size()));
  int failed_here = 0;
  std::string status;
  for (auto const& point : points) {
    if (stop && stop->load() != 0) {
      status = "aborted";
      break;
    }
    sink.begin_point(id, point_label(point));
    bool lost = false;
    row const r = run_point(ctx, *exp, id, point, lost_reason, lost);
    failed_here += counts_as_failed(r) ? 1 : 0;
    sink.add_row(r);
    progress.point(*exp, point);
    if (lost) {
      status = "error";
      break;
    }
  }
  if (status.empty()) status = failed_here ? "failed" : "completed";
  progress.end_experiment(*exp, status, failed_here);
  sink.end_experiment(id, status, ctx.ceilings);
  if (status == "error") return execute_result::context_lost;
  return status == "aborted" ? execute_result::interrupted : execute_result::completed;
}

}  // namespace

execute_result execute(run_plan const& plan, run_sink& sink, std::atomic<int> const* stop, std::string* lost_reason) {
  device_info const dev = query_device(plan.device);
  MEMLAB_CUDA_CHECK(cudaSetDevice(plan.device));
  // Before any host buffer or thread exists: what they touch lands on the GPU's node.
  nlohmann::json const affinity = bind_near_device(pci_bus_id(dev));
  run_context ctx(dev, plan.timing, plan.quick, plan.seed);
  sink.started(context_info(plan, ctx, affinity));
  ctx.ceilings = plan.ceilings;
  progress_printer progress(plan);
  for (std::string const& id : plan.experiments) {
    execute_result const r = run_experiment(id, plan, ctx, sink, progress, stop, lost_reason);
    if (r != execute_result::completed) return r;
  }
  return execute_result::completed;
}

}  // namespace memlab::bench
