#include "cli/cli.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "bench/image.hpp"
#include "bench/record.hpp"
#include "bench/runner.hpp"
#include "bench/worker.hpp"
#include "memlab/device.hpp"
#include "memlab/error.hpp"
#include "memlab/version.hpp"
#include "report/report.hpp"

namespace memlab::cli {

namespace {

using bench::usage_error;

std::string human_bytes(double b) {
  char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  std::ostringstream os;
  os << std::setprecision(b < 10 ? 3 : 4) << b << " " << units[u];
  return os.str();
}

void print_device(device_info const& d, std::ostream& out) {
  auto line = [&](char const* k, auto const& v) { out << "  " << std::left << std::setw(34) << k << v << "\n"; };
  out << "Device " << d.index << ": " << d.name << "\n";
  line("compute capability", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor));
  line("multiprocessors (SMs)", d.sm_count);
  line("global memory", human_bytes(static_cast<double>(d.global_mem_bytes)));
  line("L2 cache", human_bytes(static_cast<double>(d.l2_bytes)));
  line("persisting L2 max (set-aside)", human_bytes(static_cast<double>(d.persisting_l2_max_bytes)));
  line("shared memory per SM", human_bytes(static_cast<double>(d.smem_per_sm_bytes)));
  line("shared memory per block", human_bytes(static_cast<double>(d.smem_per_block_bytes)));
  line("shared memory per block (opt-in)", human_bytes(static_cast<double>(d.smem_per_block_optin_bytes)));
  line("registers per SM", d.regs_per_sm);
  line("registers per block", d.regs_per_block);
  line("max threads per SM", d.max_threads_per_sm);
  line("max threads per block", d.max_threads_per_block);
  line("warp size", d.warp_size);
  line("asyncEngineCount (copy engines)", d.async_engine_count);
  line("canMapHostMemory", d.can_map_host_memory ? "yes" : "no");
  line("unifiedAddressing", d.unified_addressing ? "yes" : "no");
  line("integrated", d.integrated ? "yes" : "no");
  line("SM clock (max)", std::to_string(d.sm_clock_khz / 1000) + " MHz");
  line("memory clock", std::to_string(d.mem_clock_khz / 1000) + " MHz");
  line("memory bus width", std::to_string(d.mem_bus_width_bits) + " bits");
  std::ostringstream bw;
  bw << std::fixed << std::setprecision(1) << d.dram_peak_gbps() << " GB/s (2 x clock x bus width)";
  line("theoretical DRAM bandwidth", bw.str());
}

std::string default_output_dir() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "memlab-results/%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

void write_view(std::string const& path, std::string const& text, std::ostream& out) {
  if (path == "-") {
    out << text;
    return;
  }
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream f(path);
  if (!f || !(f << text)) throw error("cannot write " + path);
}

/// This program's own path, for the worker processes of a run (MEMLAB_WORKER_EXECUTABLE
/// overrides it, for programs that call run_cli in-process, such as the tests).
std::string self_executable() {
  if (char const* env = std::getenv("MEMLAB_WORKER_EXECUTABLE"); env && *env) return env;
  std::error_code ec;
  auto const p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw error("cannot find this program's path (/proc/self/exe): " + ec.message());
  return p.string();
}

/// The command as typed, with the program named `memlab`: the path it was started from
/// belongs to the machine that ran it, not in a record others read.
std::string joined_command_line(std::vector<std::string> args) {
  if (!args.empty()) args[0] = "memlab";
  std::string out;
  for (auto const& a : args) {
    bool const quote = a.find_first_of(" \t'\"") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + a + "'" : a);
  }
  return out;
}

}  // namespace

int run_cli(std::vector<std::string> const& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"memlab: CUDA memory optimizations as verified kernels and measured experiments", "memlab"};
  app.set_version_flag("--version", std::string("memlab ") + MEMLAB_VERSION + " (" + MEMLAB_GIT_REVISION + ")");
  app.require_subcommand(1);
  app.fallthrough(false);

  // memlab device
  auto* device_cmd = app.add_subcommand("device", "What this GPU is: SMs, L2, shared memory, copy engines, peak bandwidth");
  int device_index = -1;
  bool device_json = false;
  device_cmd->add_option("-d,--device", device_index, "Device index (default: every device)");
  device_cmd->add_flag("--json", device_json, "Print JSON");

  // memlab list
  auto* list_cmd = app.add_subcommand("list", "Every experiment id, one a line, with a description");
  bool list_verbose = false;
  list_cmd->add_flag("-v,--verbose", list_verbose, "Also show axes, seed section and default-suite membership");
  bool list_json = false;
  list_cmd->add_flag("--json", list_json,
                     "Every experiment's declaration (axes, metrics, headline, seed figures, prose, plots) as the "
                     "record carries it");

  // memlab run
  auto* run_cmd = app.add_subcommand("run", "Run experiments (no argument: the default suite) on one GPU");
  std::vector<std::string> selection, axis_texts;
  bench::run_options ro;
  std::string output_dir, json_path, csv_path, md_path;
  bool hot = false, no_report = false, no_progress = false;
  run_cmd->add_option("experiments", selection, "Experiment ids or families (see `memlab list`)");
  run_cmd->add_option("-d,--device", ro.device, "CUDA device index")->capture_default_str();
  run_cmd->add_option("-o,--output", output_dir, "Folder for run.json, run.md and the report (default: memlab-results/<time>)");
  run_cmd->add_option("-a,--axis", axis_texts,
                      "Axis override [id:]axis=values (without id: the named experiments with that axis, not the "
                      "ceilings a run adds); values: 1,2,4 | lo:hi[:step] | 2^lo:2^hi (powers of two)");
  run_cmd->add_flag("--quick", ro.quick, "Small sweeps and short time budgets (a smoke run)");
  run_cmd->add_flag("--profile", ro.timing.profile, "Launch each selected variant once, untimed loop (for ncu)");
  run_cmd->add_flag("--hot", hot, "Hot caches: do not flush L2 before each sample (default: cold)");
  run_cmd->add_option("--max-noise", ro.timing.max_noise, "Stop sampling below this relative standard deviation")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  run_cmd->add_option("--timeout", ro.timing.timeout_s, "Seconds of sampling per measurement at most")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  run_cmd->add_option("--min-samples", ro.timing.min_samples, "Samples at least")->check(CLI::Range(1, 100000))->capture_default_str();
  run_cmd->add_option("--seed", ro.seed, "Seed of the random inputs")->capture_default_str();
  run_cmd->add_option("--json", json_path, "Also write the JSON record to FILE ('-': stdout)");
  run_cmd->add_option("--csv", csv_path, "Write CSV to FILE ('-': stdout)");
  run_cmd->add_option("--md", md_path, "Write the Markdown tables to FILE ('-': stdout, the default)");
  run_cmd->add_flag("--no-report", no_report, "Do not render the report (report.md and plots) at the end");
  run_cmd->add_flag("--no-progress", no_progress, "No progress lines on stderr");
  bool in_process = false;
  run_cmd->add_flag("--in-process", in_process,
                    "Run the experiments in this process (for a debugger); by default they run in a worker "
                    "process, restarted after a kernel breaks its CUDA context, so one broken kernel costs "
                    "one experiment");

  // memlab __worker: the process that executes a run's experiments (not for users).
  auto* worker_cmd = app.add_subcommand("__worker", "");
  worker_cmd->group("");
  std::string worker_plan;
  int worker_fd = -1;
  worker_cmd->add_option("--plan", worker_plan)->required();
  worker_cmd->add_option("--fd", worker_fd)->required();
  run_cmd->add_flag("--discard-throttled", ro.timing.discard_throttled,
                    "Retake rows whose samples NVML saw throttled for power or heat (3 times at most, then keep them flagged)");
  run_cmd->add_option("--flush", ro.timing.flush,
                      "How a cold sample evicts L2: read (read a 2 x L2 buffer: no dirty lines left) or write (memset it, as nvbench does)")
      ->check(CLI::IsMember({"read", "write"}))
      ->capture_default_str();
  run_cmd->add_flag("--persistence-check", ro.persistence_check,
                    "Warn when another process is on the GPU or the SM clock under load is below its max (the run goes on)");

  // memlab report
  auto* report_cmd = app.add_subcommand("report", "Render a run record as Markdown with plots");
  report::report_options rep;
  bool no_plots = false;
  report_cmd->add_option("record", rep.record_path, "run.json")->required();
  report_cmd->add_option("-o,--output", rep.out_dir, "Output folder (default: the record's folder)");
  report_cmd->add_flag("--no-plots", no_plots, "Markdown only");
  report_cmd->add_flag("--headlines", rep.headlines,
                       "Print only the headline table (each experiment's declared answer) on stdout, linked to the "
                       "record's report.md; writes nothing (the README's table is this)");

  // memlab compare
  auto* compare_cmd = app.add_subcommand("compare", "Compare two run records row by row");
  report::compare_options cmp;
  compare_cmd->add_option("baseline", cmp.baseline, "A.json")->required();
  compare_cmd->add_option("candidate", cmp.candidate, "B.json")->required();
  compare_cmd->add_option("--threshold", cmp.threshold, "Slowdown fraction counted as a regression (exit 1)")
      ->check(CLI::Range(0.0, 10.0))
      ->capture_default_str();
  compare_cmd->add_flag("--repeat", cmp.repeat,
                        "A and B are two runs of the same build: check they agree within 3% and that the rows' "
                        "noise is calibrated; exit 1 if not");

  std::vector<char const*> argv;
  for (auto const& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (CLI::CallForHelp const&) {
    out << app.help();
    return exit_ok;
  } catch (CLI::CallForAllHelp const&) {
    out << app.help("", CLI::AppFormatMode::All);
    return exit_ok;
  } catch (CLI::CallForVersion const&) {
    out << std::string("memlab ") + MEMLAB_VERSION + " (" + MEMLAB_GIT_REVISION + ")" << "\n";
    return exit_ok;
  } catch (CLI::ParseError const& e) {
    std::string msg = e.what();
    if (msg.empty()) msg = "a subcommand is required: device, list, run, report or compare";
    err << "memlab: error: " << msg << " (see memlab --help)\n";
    return exit_usage;
  }

  try {
    if (*worker_cmd) return bench::worker_main(worker_plan, worker_fd);
    if (*device_cmd) {
      int const count = device_count();
      if (count == 0) throw error("no CUDA device is present (cudaGetDeviceCount found none)");
      nlohmann::json all = nlohmann::json::array();
      for (int i = 0; i < count; ++i) {
        if (device_index >= 0 && i != device_index) continue;
        device_info const d = query_device(i);
        MEMLAB_CUDA_CHECK(cudaSetDevice(i));
        bench::image_info const img = bench::running_image();
        if (device_json) {
          auto j = bench::to_json(d);
          j["image"] = bench::to_json(img);
          all.push_back(j);
        } else {
          print_device(d, out);
          out << "  " << std::left << std::setw(34) << "memlab built for" << MEMLAB_CUDA_ARCHITECTURES << "\n";
          out << "  " << std::left << std::setw(34) << "memlab code that runs here" << img.description << "\n";
        }
      }
      if (device_index >= count) (void)query_device(device_index);  // one-line out-of-range error
      if (device_json) out << (all.size() == 1 ? all[0] : all).dump(2) << "\n";
      return exit_ok;
    }

    if (*list_cmd) {
      auto const& all = bench::registry::instance().all();
      if (list_json) {
        auto decls = nlohmann::json::array();
        for (auto const& e : all)
          if (e.listed) decls.push_back(bench::declaration_json(e));
        out << decls.dump(1) << "\n";
        return exit_ok;
      }
      std::size_t width = 0;
      for (auto const& e : all) width = std::max(width, e.id.size());
      for (auto const& e : all) {
        if (!e.listed) continue;
        out << std::left << std::setw(static_cast<int>(width) + 2) << e.id << e.description << "\n";
        if (list_verbose) {
          out << "    seed: " << (e.seed_ref.empty() ? "-" : e.seed_ref)
              << (e.default_suite ? "; in the default suite" : "; not in the default suite") << "\n";
          for (auto const& ax : e.axes) {
            out << "    axis " << ax.name << ":";
            for (auto const& v : ax.values) out << " " << bench::to_string(v);
            if (!ax.quick_values.empty()) {
              out << "  (quick:";
              for (auto const& v : ax.quick_values) out << " " << bench::to_string(v);
              out << ")";
            }
            out << "\n";
          }
        }
      }
      return exit_ok;
    }

    if (*run_cmd) {
      ro.selection = selection;
      for (auto const& t : axis_texts) ro.overrides.push_back(bench::parse_axis_override(t));
      ro.timing.cold = !hot;
      if (ro.quick) {
        ro.timing.timeout_s = std::min(ro.timing.timeout_s, 0.25);
        ro.timing.max_noise = std::max(ro.timing.max_noise, 0.02);
        ro.timing.min_samples = std::min(ro.timing.min_samples, 5);
      }
      ro.output_dir = output_dir.empty() ? default_output_dir() : output_dir;
      ro.command_line = joined_command_line(args);
      ro.progress = !no_progress;
      if (!in_process) ro.worker_executable = self_executable();
      // Usage errors (selection, overrides) surface before the device is touched.
      (void)bench::registry::instance().select(ro.selection);
      bench::run_record record((std::filesystem::path(ro.output_dir) / "run.json").string());
      record.meta["command_line"] = ro.command_line;
      bench::run_summary sum;
      std::string fatal;
      try {
        sum = bench::run(ro, record);
      } catch (usage_error const&) {
        throw;
      } catch (std::exception const& e) {
        fatal = e.what();
      }
      if (!fatal.empty() && record.rows.empty() && !record.meta.contains("device")) {
        // Nothing ran (no device, bad index): one line, no files left behind.
        err << "memlab: error: " << fatal << "\n";
        return exit_failure;
      }
      if (!fatal.empty()) {
        record.meta["aborted"] = fatal;
        record.flush();
      }
      std::string const md = report::run_markdown(record.to_json());
      write_view((std::filesystem::path(ro.output_dir) / "run.md").string(), md, out);
      if (!json_path.empty()) write_view(json_path, record.to_json().dump(1) + "\n", out);
      if (!csv_path.empty()) write_view(csv_path, bench::to_csv(record), out);
      if (!md_path.empty()) {
        write_view(md_path, md, out);
      } else if (json_path != "-" && csv_path != "-") {
        out << md;
      }
      if (!no_report && !ro.timing.profile) {
        report::report_options r;
        r.record_path = record.path();
        r.out_dir = ro.output_dir;
        std::ostringstream report_out;
        if (report::render(r, report_out, err) != 0) err << "memlab: the report could not be rendered (see above)\n";
      }
      err << "memlab: " << sum.rows << " rows: " << sum.passed << " passed, " << sum.failed << " failed, "
          << sum.not_verified << " not verified, " << sum.skipped << " skipped, " << sum.errors << " errors; record "
          << record.path() << "\n";
      if (!fatal.empty()) {
        err << "memlab: error: " << fatal << "\n";
        return exit_failure;
      }
      if (sum.signal) {
        err << "memlab: run stopped by a signal; the record keeps every finished row\n";
        return 128 + sum.signal;  // 130 for SIGINT, 143 for SIGTERM, as a shell reports them
      }
      if (sum.aborted) {
        err << "memlab: error: run stopped early: " << sum.abort_reason << "\n";
        return exit_failure;
      }
      if (sum.lost_experiments > 0)
        err << "memlab: " << sum.lost_experiments
            << " experiment(s) ended in an error that broke the CUDA context; the run went on in a fresh process\n";
      return (sum.failed > 0 || sum.errors > 0) ? exit_failure : exit_ok;
    }

    if (*report_cmd) {
      rep.plots = !no_plots;
      return report::render(rep, out, err);
    }
    if (*compare_cmd) return report::compare(cmp, out, err);
  } catch (usage_error const& e) {
    err << "memlab: error: " << e.what() << "\n";
    return exit_usage;
  } catch (std::exception const& e) {
    err << "memlab: error: " << e.what() << "\n";
    return exit_failure;
  }
  return exit_ok;
}

}  // namespace memlab::cli
