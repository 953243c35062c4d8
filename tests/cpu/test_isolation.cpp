// Process isolation and signals: the worker protocol, the plan, the image description (CPU),
// and on a GPU the memlab executable itself: a kernel that breaks its context costs one
// experiment, SIGINT/SIGTERM stop a run with its record intact and exit 130/143.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "bench/execute.hpp"
#include "bench/image.hpp"
#include "bench/worker.hpp"
#include "kernels/ceilings/tensor_peak.hpp"
#include "memlab/error.hpp"
#include "memlab/version.hpp"

namespace {

using namespace memlab::bench;
namespace fs = std::filesystem;

/// Records what a decoder hands it.
struct capture_sink final : run_sink {
  std::vector<std::string> events;
  std::vector<row> rows;
  void started(nlohmann::json const& info) override {
    events.push_back("started " + info["image"].value("description", ""));
  }
  void begin_experiment(std::string const& id, int points) override {
    events.push_back("begin " + id + " " + std::to_string(points));
  }
  void begin_point(std::string const& id, std::string const& label) override { events.push_back("point " + id + " " + label); }
  void add_row(row const& r) override {
    rows.push_back(r);
    events.push_back("row " + r.experiment);
  }
  void end_experiment(std::string const& id, std::string const& status, measured_ceilings const& m) override {
    auto const c = m.d2d_copy_gbps, f = m.fp32_peak_tflops;
    std::string tensor;
    for (auto const& [key, v] : m.tensor_peak_tflops) tensor += " " + key + "=" + std::to_string(static_cast<int>(v));
    events.push_back("end " + id + " " + status + " " + (c ? std::to_string(static_cast<int>(*c)) : "-") + " " +
                     (f ? std::to_string(static_cast<int>(*f)) : "-") + tensor);
  }
};

bool have_gpu() {
  int n = 0;
  bool const ok = cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  (void)cudaGetLastError();
  return ok;
}

}  // namespace

TEST(WorkerProtocol, EveryEventSurvivesTheRoundTrip) {
  row r;
  r.experiment = "coalescing.offset";
  r.variant = "v";
  r.params = {{"offset", 3}};
  r.median_ms = 1.25;
  r.error = "boom";
  r.check.status = verdict::failed;
  capture_sink sink;
  measured_ceilings ended_with;
  ended_with.d2d_copy_gbps = 4100.5;
  ended_with.tensor_peak_tflops = {{"mma_sync.bf16", 480.2}, {"wgmma.e4m3", 1300.9}};
  for (auto const& line : {encode_started({{"image", {{"description", "sm_90a SASS"}}}}), encode_begin("coalescing.offset", 7),
                           encode_point("coalescing.offset", "offset=3"), encode_row(r),
                           encode_end("coalescing.offset", "failed", ended_with)}) {
    EXPECT_EQ(line.find('\n'), std::string::npos) << "one event, one line";
    EXPECT_EQ(decode_line(line, sink), "");
  }
  std::vector<std::string> const want = {"started sm_90a SASS", "begin coalescing.offset 7",
                                         "point coalescing.offset offset=3", "row coalescing.offset",
                                         "end coalescing.offset failed 4100 - mma_sync.bf16=480 wgmma.e4m3=1300"};
  EXPECT_EQ(sink.events, want);
  ASSERT_EQ(sink.rows.size(), 1u);
  EXPECT_EQ(sink.rows[0].params["offset"], 3);
  EXPECT_EQ(*sink.rows[0].median_ms, 1.25);
  EXPECT_EQ(*sink.rows[0].error, "boom");
  EXPECT_EQ(sink.rows[0].check.status, verdict::failed);
  EXPECT_EQ(decode_line(encode_fatal("no device"), sink), "no device");
}

TEST(WorkerProtocol, MalformedLinesAreErrorsNotCrashes) {
  capture_sink sink;
  EXPECT_THROW(decode_line("{not json", sink), memlab::error);
  EXPECT_THROW(decode_line(R"({"t":"row"})", sink), memlab::error);
  EXPECT_THROW(decode_line(R"({"t":"teleport"})", sink), memlab::error);
  EXPECT_TRUE(sink.events.empty());
}

TEST(RunPlan, RoundTripsThroughJson) {
  run_plan p;
  p.device = 1;
  p.experiments = {"ceilings.d2d_copy", "reduce.sum"};
  p.overrides = {{"reduce.sum", "n", "2^10:2^12"}};
  p.timing.cold = false;
  p.timing.max_noise = 0.03;
  p.timing.flush = "write";
  p.timing.discard_throttled = true;
  p.timing.warmup = 3;
  p.quick = true;
  p.seed = 42;
  p.ceilings.d2d_copy_gbps = 4100.0;
  p.ceilings.tensor_peak_tflops["wgmma.bf16"] = 650.5;
  p.total_points = 30;
  p.done_points = 12;
  p.elapsed_s = 3.5;
  run_plan const q = plan_from_json(nlohmann::json::parse(to_json(p).dump()));
  EXPECT_EQ(q.device, 1);
  EXPECT_EQ(q.experiments, p.experiments);
  ASSERT_EQ(q.overrides.size(), 1u);
  EXPECT_EQ(q.overrides[0].values, "2^10:2^12");
  EXPECT_FALSE(q.timing.cold);
  EXPECT_DOUBLE_EQ(q.timing.max_noise, 0.03);
  EXPECT_EQ(q.timing.flush, "write");
  EXPECT_TRUE(q.timing.discard_throttled);
  EXPECT_EQ(q.timing.warmup, 3);
  EXPECT_TRUE(q.quick);
  EXPECT_EQ(q.seed, 42u);
  EXPECT_EQ(*q.ceilings.d2d_copy_gbps, 4100.0);
  EXPECT_FALSE(q.ceilings.fp32_peak_tflops.has_value());
  EXPECT_EQ(q.ceilings.tensor_peak("wgmma.bf16"), 650.5);
  EXPECT_FALSE(q.ceilings.tensor_peak("mma_sync.bf16").has_value());
  EXPECT_EQ(q.done_points, 12);
}

TEST(ImageInfo, SassWhenTheBuildHasTheDevicesArchitectureElsePtxJit) {
  auto sass = describe_image("90a", 90, 90, 90);
  EXPECT_FALSE(sass.jit);
  EXPECT_EQ(sass.description, "sm_90a SASS");
  auto ptx = describe_image("75-virtual", 90, 90, 75);
  EXPECT_TRUE(ptx.jit);
  EXPECT_EQ(ptx.description, "compute_75 PTX, JIT-compiled for sm_90");
  // SASS of sm_80 runs on sm_86 unchanged.
  auto ampere = describe_image("75-real;80-real;90a-real;120-virtual", 86, 80, 80);
  EXPECT_FALSE(ampere.jit);
  EXPECT_EQ(ampere.description, "sm_80 SASS");
  // A virtual-only entry of the same number is no SASS.
  EXPECT_TRUE(describe_image("80-virtual", 80, 80, 80).jit);
}

// ---------------------------------------------------------------- the executable, on a GPU

namespace {

struct child_result {
  int exit_code = -1;
  nlohmann::json record;
  std::string err;
};

fs::path fresh_dir(std::string const& name) {
  fs::path d = fs::temp_directory_path() / ("memlab_isolation_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Starts `memlab run ARGS -o dir`; `signals` are sent after `delay` (then 50 ms apart).
child_result run_memlab(std::vector<std::string> args, fs::path const& dir, std::vector<int> const& signals = {},
                        std::chrono::milliseconds delay = std::chrono::milliseconds(0)) {
  args.insert(args.begin(), {MEMLAB_EXE_PATH, "run"});
  for (std::string const& a : std::vector<std::string>{"-o", dir.string(), "--no-report", "--md", (dir / "out.md").string()})
    args.push_back(a);
  fs::path const err_path = dir / "stderr.txt";
  pid_t const pid = fork();
  if (pid == 0) {
    int const fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) dup2(fd, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (!signals.empty()) {
    std::this_thread::sleep_for(delay);
    for (int s : signals) {
      kill(pid, s);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  child_result r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  std::ifstream in(dir / "run.json");
  if (in) r.record = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return r;
}

std::vector<nlohmann::json> rows_of(nlohmann::json const& rec, std::string const& id) {
  std::vector<nlohmann::json> out;
  for (auto const& r : rec["rows"])
    if (r["experiment"] == id) out.push_back(r);
  return out;
}

std::string status_of(nlohmann::json const& rec, std::string const& id) {
  for (auto const& e : rec["experiments"])
    if (e["id"] == id) return e["status"];
  return "";
}

}  // namespace

class BrokenKernel : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(BrokenKernel, CostsOneExperimentAndTheRunGoesOn) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU";
  auto const& [variant, expected] = GetParam();
  fs::path const dir = fresh_dir(variant);
  // Experiments run in id order: selftest.healthy comes after selftest.fault.
  auto r = run_memlab({"selftest.fault", "selftest.healthy", "-a", "selftest.fault:variant=" + variant}, dir);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_TRUE(r.record.is_object()) << "run.json is valid JSON: " << r.err;
  auto const fault = rows_of(r.record, "selftest.fault");
  ASSERT_EQ(fault.size(), 1u);
  ASSERT_TRUE(fault[0]["error"].is_string());
  EXPECT_NE(fault[0]["error"].get<std::string>().find(expected), std::string::npos) << fault[0]["error"];
  EXPECT_EQ(status_of(r.record, "selftest.fault"), "error");
  // The experiment after it ran, verified, in a fresh process.
  std::vector<std::string> order;
  for (auto const& e : r.record["experiments"]) order.push_back(e["id"]);
  auto const at = [&](std::string const& id) { return std::find(order.begin(), order.end(), id) - order.begin(); };
  EXPECT_LT(at("selftest.fault"), at("selftest.healthy")) << "the broken experiment came first";
  auto const after = rows_of(r.record, "selftest.healthy");
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]["verified"], "passed") << after[0].dump();
  EXPECT_GT(after[0]["median_ms"].get<double>(), 0.0);
  EXPECT_EQ(status_of(r.record, "selftest.healthy"), "completed");
  // The record says what ran.
  EXPECT_EQ(r.record["build"]["cuda_architectures"], MEMLAB_CUDA_ARCHITECTURES);
  EXPECT_TRUE(r.record["image"]["description"].is_string());
  EXPECT_TRUE(r.record["launch_floor_us"].is_number()) << "measured by the first worker";
  EXPECT_TRUE(r.record["nvml"].is_string());
  EXPECT_FALSE(r.record.contains("aborted"));
  // No path of the machine that ran it: the program is started by its absolute path here.
  EXPECT_EQ(r.record["command_line"].get<std::string>().rfind("memlab run selftest.fault", 0), 0u)
      << r.record["command_line"];
}

INSTANTIATE_TEST_SUITE_P(Faults, BrokenKernel,
                         ::testing::Values(std::make_pair("illegal_address", "illegal memory access"),
                                           std::make_pair("trap", "cudaErrorLaunchFailure"),
                                           std::make_pair("abort", "SIGABRT")),
                         [](auto const& info) { return info.param.first; });

TEST(Signals, SigintStopsTheRunWithExit130AndAValidRecord) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU";
  fs::path const dir = fresh_dir("sigint");
  // selftest.delay (5 s) runs first, selftest.healthy is queued behind it.
  auto r = run_memlab({"selftest.delay", "selftest.healthy"}, dir, {SIGINT}, std::chrono::milliseconds(2500));
  EXPECT_EQ(r.exit_code, 130) << r.err;
  ASSERT_TRUE(r.record.is_object()) << r.err;
  EXPECT_EQ(status_of(r.record, "selftest.delay"), "aborted");
  auto const done = rows_of(r.record, "selftest.delay");
  EXPECT_GE(done.size(), 1u) << "the points finished before the signal are kept";
  EXPECT_LT(done.size(), 50u);
  EXPECT_TRUE(rows_of(r.record, "selftest.healthy").empty()) << "nothing starts after the signal";
  EXPECT_NE(r.record.value("aborted", "").find("SIGINT"), std::string::npos);
  EXPECT_TRUE(r.record["finished"].is_string());
}

TEST(Signals, SigtermExits143) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU";
  fs::path const dir = fresh_dir("sigterm");
  auto r = run_memlab({"selftest.delay"}, dir, {SIGTERM}, std::chrono::milliseconds(2500));
  EXPECT_EQ(r.exit_code, 143) << r.err;
  ASSERT_TRUE(r.record.is_object()) << r.err;
  EXPECT_EQ(status_of(r.record, "selftest.delay"), "aborted");
}

TEST(Signals, ASecondSigintStopsAtOnceWithTheRecordIntact) {
  if (!have_gpu()) GTEST_SKIP() << "needs a GPU";
  fs::path const dir = fresh_dir("sigint2");
  auto const t0 = std::chrono::steady_clock::now();
  auto r = run_memlab({"selftest.delay"}, dir, {SIGINT, SIGINT}, std::chrono::milliseconds(2500));
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_LT(s, 4.5) << "the 5 s experiment was not waited for";
  ASSERT_TRUE(r.record.is_object()) << "the record on disk is valid JSON: " << r.err;
}

TEST(MeasuredCeilings, ALaterSliceAddsToWhatEarlierOnesMeasured) {
  measured_ceilings early, later;
  early.d2d_copy_gbps = 3000.0;
  early.fp32_peak_tflops = 60.0;
  early.tensor_peak_tflops = {{"mma_sync.bf16", 400.0}, {"wgmma.bf16", 700.0}};
  later.fp32_peak_tflops = 61.0;
  later.tensor_peak_tflops = {{"wgmma.bf16", 710.0}, {"wgmma.e4m3", 1400.0}};
  early.merge(later);
  EXPECT_EQ(*early.d2d_copy_gbps, 3000.0);  // not measured again: kept
  EXPECT_EQ(*early.fp32_peak_tflops, 61.0);
  EXPECT_EQ(early.tensor_peak("mma_sync.bf16"), 400.0);
  EXPECT_EQ(early.tensor_peak("wgmma.bf16"), 710.0);
  EXPECT_EQ(early.tensor_peak("wgmma.e4m3"), 1400.0);
}

TEST(MeasuredCeilings, OldRecordsWithoutTensorPeaksStillRead) {
  auto const c = ceilings_from_json(nlohmann::json::parse(R"({"d2d_copy_gbps": 2900.0, "fp32_peak_tflops": null})"));
  EXPECT_EQ(*c.d2d_copy_gbps, 2900.0);
  EXPECT_FALSE(c.fp32_peak_tflops.has_value());
  EXPECT_TRUE(c.tensor_peak_tflops.empty());
  auto const back = ceilings_from_json(to_json(c));
  EXPECT_EQ(*back.d2d_copy_gbps, 2900.0);
  EXPECT_TRUE(to_json(c).at("tensor_peak_tflops").is_object());
}

// The ceilings experiment publishes under this key and the GEMM rows read by it: records carry it
// (meta.ceilings.tensor_peak_tflops, extra.tensor_peak), so its spelling is part of the format.
TEST(MeasuredCeilings, TensorPeakKeysNameTheInstructionAndTheType) {
  using memlab::gemm_tc_input;
  using memlab::detail::tensor_instruction;
  EXPECT_EQ(memlab::detail::tensor_peak_key(tensor_instruction::mma_sync, gemm_tc_input::bf16), "mma_sync.bf16");
  EXPECT_EQ(memlab::detail::tensor_peak_key(tensor_instruction::mma_sync, gemm_tc_input::f16), "mma_sync.f16");
  EXPECT_EQ(memlab::detail::tensor_peak_key(tensor_instruction::wgmma, gemm_tc_input::e4m3), "wgmma.e4m3");
  EXPECT_EQ(memlab::detail::tensor_peak_key(tensor_instruction::wgmma, gemm_tc_input::bf16), "wgmma.bf16");
}
