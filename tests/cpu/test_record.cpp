#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "bench/record.hpp"
#include "memlab/error.hpp"
#include "report/report.hpp"

using namespace memlab::bench;
namespace fs = std::filesystem;

namespace {

/// run.md as memlab run writes it: the report's renderer over the record's JSON.
std::string markdown_of(run_record rec) {
  rec.meta["format_version"] = record_format_version;
  rec.meta["experiments"] = nlohmann::json::array();
  return memlab::report::run_markdown(rec.to_json());
}
row sample_row(verdict v) {
  row r;
  r.experiment = "coalescing.offset";
  r.variant = "";
  r.params = {{"offset", 3}};
  r.median_ms = 0.5;
  r.noise = 0.01;
  r.samples = 20;
  r.bytes = 1e9;
  r.gbps = 2000.0;
  r.check.status = v;
  r.check.metric = "mismatches";
  r.check.error = v == verdict::failed ? 7 : 0;
  r.check.detail = v == verdict::failed ? "7 of 10 differ" : "";
  r.peer = "cudaMemcpy D2D";
  r.ratio_to_peer = 0.9;
  r.predicted = {{"sectors_per_request", 5}};
  r.repro = "memlab run coalescing.offset -a offset=3";
  return r;
}

fs::path temp_dir(char const* name) {
  auto d = fs::temp_directory_path() / ("memlab_test_" + std::string(name) + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST(Record, EveryRowHasTheDocumentedKeys) {
  run_record rec;
  rec.rows.push_back(sample_row(verdict::passed));
  auto j = rec.to_json();
  ASSERT_TRUE(j.contains("memlab"));
  EXPECT_TRUE(j["memlab"].contains("git_revision"));
  auto const& r = j["rows"][0];
  for (char const* key : {"experiment", "variant", "params", "median_ms", "noise", "bytes", "flops", "gbps", "tflops",
                          "verified", "peer", "ratio_to_peer", "predicted"})
    EXPECT_TRUE(r.contains(key)) << key;
  EXPECT_TRUE(r["tflops"].is_null()) << "not meaningful for a copy";
  EXPECT_EQ(r["verified"], "passed");
  EXPECT_EQ(r["params"]["offset"], 3);
}

TEST(Record, FlushIsAtomicAndRoundTrips) {
  auto dir = temp_dir("flush");
  run_record rec((dir / "sub" / "run.json").string());
  rec.meta["command_line"] = "memlab run coalescing";
  rec.rows.push_back(sample_row(verdict::passed));
  rec.flush();
  EXPECT_TRUE(fs::exists(dir / "sub" / "run.json"));
  EXPECT_FALSE(fs::exists(dir / "sub" / "run.json.tmp")) << "the temporary file is renamed away";
  rec.rows.push_back(sample_row(verdict::failed));
  rec.flush();
  auto back = run_record::load((dir / "sub" / "run.json").string());
  ASSERT_EQ(back.rows.size(), 2u);
  EXPECT_EQ(back.rows[1].check.status, verdict::failed);
  EXPECT_EQ(back.rows[0].params["offset"], 3);
  EXPECT_DOUBLE_EQ(*back.rows[0].median_ms, 0.5);
  EXPECT_EQ(back.meta["command_line"], "memlab run coalescing");
  fs::remove_all(dir);
}

TEST(Record, LoadRejectsWhatIsNotARecord) {
  auto dir = temp_dir("load");
  EXPECT_THROW(run_record::load((dir / "missing.json").string()), memlab::error);
  std::ofstream(dir / "garbage.json") << "{not json";
  EXPECT_THROW(run_record::load((dir / "garbage.json").string()), memlab::error);
  std::ofstream(dir / "norows.json") << "{\"device\": {}}";
  EXPECT_THROW(run_record::load((dir / "norows.json").string()), memlab::error);
  fs::remove_all(dir);
}

TEST(Record, FailedRowsShowInEveryView) {
  run_record rec;
  rec.rows.push_back(sample_row(verdict::passed));
  rec.rows.push_back(sample_row(verdict::failed));
  auto md = markdown_of(rec);
  EXPECT_NE(md.find("**FAILED**"), std::string::npos);
  EXPECT_NE(md.find("### ❌ Failed rows"), std::string::npos);
  auto csv = to_csv(rec);
  EXPECT_NE(csv.find(",failed,"), std::string::npos);
  EXPECT_NE(csv.find("7 of 10 differ"), std::string::npos);
  auto json = rec.to_json().dump();
  EXPECT_NE(json.find("\"verified\":\"failed\""), std::string::npos);
}

TEST(Record, SkippedAndErrorRowsKeepTheirReason) {
  run_record rec;
  row r = sample_row(verdict::not_verified);
  r.skipped = "needs compute capability 9.0";
  r.median_ms.reset();
  r.gbps.reset();
  rec.rows.push_back(r);
  row e = sample_row(verdict::not_verified);
  e.error = "out of device memory: cudaErrorMemoryAllocation";
  rec.rows.push_back(e);
  auto md = markdown_of(rec);
  EXPECT_NE(md.find("needs compute capability 9.0"), std::string::npos);
  EXPECT_NE(md.find("out of device memory"), std::string::npos);
  auto j = rec.to_json();
  EXPECT_TRUE(j["rows"][0]["median_ms"].is_null());
  EXPECT_EQ(j["rows"][1]["error"], "out of device memory: cudaErrorMemoryAllocation");
}

TEST(Record, TimingAndGpuStateRoundTrip) {
  row r = sample_row(verdict::passed);
  r.timing = {{"method", "graph_batch"}, {"batch", 40}, {"noise_method", "chunks"}};
  r.nvml = "ok";
  r.gpu = {{"sm_clock_mhz", {{"min", 1755}, {"max", 1980}}}};
  r.throttled = true;
  r.throttle_reasons = {"sw_power_cap"};
  r.retakes = 3;
  auto const j = to_json(r);
  for (char const* key : {"timing", "nvml", "gpu", "throttled", "throttle_reasons", "retakes"})
    EXPECT_TRUE(j.contains(key)) << key;
  row const back = row_from_json(j);
  EXPECT_EQ(back.timing["method"], "graph_batch");
  EXPECT_EQ(back.timing["batch"], 40);
  EXPECT_EQ(back.nvml, "ok");
  EXPECT_EQ(back.gpu["sm_clock_mhz"]["min"], 1755);
  ASSERT_TRUE(back.throttled.has_value());
  EXPECT_TRUE(*back.throttled);
  EXPECT_EQ(back.throttle_reasons, std::vector<std::string>{"sw_power_cap"});
  EXPECT_EQ(back.retakes, 3);
  // Without NVML readings "throttled" is null, not false: unknown is not "not throttled".
  EXPECT_TRUE(to_json(sample_row(verdict::passed))["throttled"].is_null());
  run_record rec;
  rec.rows.push_back(r);
  EXPECT_NE(markdown_of(rec).find("⚠ throttled"), std::string::npos);
  EXPECT_NE(to_csv(rec).find(",graph_batch,40,true\n"), std::string::npos) << to_csv(rec);
}
