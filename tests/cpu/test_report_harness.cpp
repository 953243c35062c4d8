// The report and compare read what the harness writes: a record built with
// memlab::bench::run_record and rows serialized by bench::to_json, not a hand-made file.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "bench/record.hpp"
#include "report/report.hpp"
#include "test_report_util.hpp"

namespace {

using memlab::test::scratch_dir;
using memlab::test::slurp;

memlab::bench::row harness_row(std::string const& variant, int offset, double ms) {
  memlab::bench::row r;
  r.experiment = "coalescing.offset";
  r.variant = variant;
  r.params = {{"offset", offset}, {"elements", 1 << 26}};
  r.median_ms = ms;
  r.noise = 0.004;
  r.min_ms = ms * 0.99;
  r.max_ms = ms * 1.02;
  r.samples = 40;
  r.bytes = 2.0 * 4 * (1 << 26);
  r.gbps = r.bytes / (ms * 1e6);
  r.check.status = memlab::bench::verdict::passed;
  r.check.error = 0;
  r.check.tolerance = 0;
  r.check.metric = "mismatches";
  r.peer = "cudaMemcpy D2D";
  r.ratio_to_peer = *r.gbps / 2900.0;
  r.predicted = {{"sectors_per_request", offset % 8 == 0 ? 4 : 5}, {"gbps", 2900.0 * 4 / (offset % 8 == 0 ? 4 : 5)}};
  r.repro = "memlab run coalescing.offset -a offset=" + std::to_string(offset);
  return r;
}

std::string write_record(scratch_dir const& d, std::string const& name, double slowdown, bool nan_row) {
  memlab::bench::run_record rec(d.file(name));
  rec.meta["format_version"] = memlab::bench::record_format_version;
  rec.meta["started"] = "2026-11-22T01:00:00Z";
  rec.meta["finished"] = "2026-11-22T01:01:00Z";
  rec.meta["command_line"] = "memlab run coalescing.offset";
  rec.meta["device"] = {{"name", "NVIDIA H100 80GB HBM3"}, {"cc", "9.0"}, {"sm_count", 132}};
  rec.meta["ceilings"] = {{"d2d_copy_gbps", 2900.0}, {"fp32_peak_tflops", nullptr}};
  // The experiment's entry as the runner writes it: the registered declaration, points and status.
  auto entry = memlab::bench::declaration_json(*memlab::bench::registry::instance().find("coalescing.offset"));
  entry["points"] = 4;
  entry["status"] = "completed";
  rec.meta["experiments"] = nlohmann::json::array({entry});
  for (int off : {0, 1, 2, 8})
    rec.rows.push_back(harness_row("offset_copy", off, (off % 8 == 0 ? 0.185 : 0.2) * (off == 1 ? slowdown : 1.0)));
  if (nan_row) {
    auto r = harness_row("offset_copy", 3, 0.2);
    r.check.status = memlab::bench::verdict::failed;
    r.check.error = INFINITY;  // written as "inf": the output held NaN
    r.check.metric = "max_abs";
    r.check.detail = "NaN at 17";
    rec.rows.push_back(r);
  }
  rec.flush();
  return rec.path();
}

TEST(ReportHarness, RendersARecordTheHarnessWrote) {
  scratch_dir d;
  std::string path = write_record(d, "run.json", 1.0, /*nan_row=*/true);
  memlab::report::report_options o;
  o.record_path = path;
  o.plots = false;
  std::ostringstream out, err;
  ASSERT_EQ(memlab::report::render(o, out, err), 0) << err.str();
  std::string md = slurp(d.file("report.md"));
  EXPECT_NE(md.find("## coalescing.offset"), std::string::npos);
  EXPECT_NE(md.find("790 GB/s"), std::string::npos);  // the seed's figure
  EXPECT_NE(md.find("elements=67108864, offset=1"), std::string::npos);
  EXPECT_NE(md.find("measured/model"), std::string::npos);
  EXPECT_NE(md.find("(max_abs inf"), std::string::npos) << "a NaN output's error is shown, not dropped";
  EXPECT_NE(md.find("rerun: `memlab run coalescing.offset -a offset=3`"), std::string::npos);
}

TEST(ReportHarness, ComparesTwoRecordsTheHarnessWrote) {
  scratch_dir d;
  memlab::report::compare_options o;
  o.baseline = write_record(d, "a.json", 1.0, false);
  o.candidate = write_record(d, "b.json", 1.25, false);
  std::ostringstream out, err;
  EXPECT_EQ(memlab::report::compare(o, out, err), 1) << out.str() << err.str();
  EXPECT_NE(out.str().find("**4 rows in both**: 0 faster, 1 slower, 3 same"), std::string::npos) << out.str();
}

/// An experiment nobody told the report about: its declaration alone (as the runner writes it)
/// gives the report its headline, axes, seed figure and plot. Nothing is registered elsewhere.
TEST(ReportHarness, ANewExperimentNeedsNothingButItsDeclaration) {
  namespace mb = memlab::bench;
  mb::experiment e;
  e.id = "newfamily.copy";
  e.description = "a copy nobody has seen before";
  e.axes = {mb::variant_axis({"plain", "wide"}), mb::pow2_axis("bytes", 20, 22)};
  e.describe_axis("variant", "", "how each thread copies");
  e.describe_axis("bytes", "bytes", "bytes copied", true);
  e.metrics = {mb::metrics::time(), mb::metrics::gbps()};
  e.headline = mb::best_row("Does the wide copy beat the plain one at the largest size?",
                            {{"bytes", {"max"}}, {"variant", {"wide"}}}, "gbps", "baseline", {{"variant", {"plain"}}});
  e.seed_figures = {{"plain copy", 700, "GB/s", "Tesla V100", "000 §9", {{"variant", "plain"}, {"bytes", "4194304"}}}};
  e.prose = {"A copy.", "The wide line above the plain one.", ""};
  e.plots = {mb::line_plot("newfamily_copy.png", "Copy bandwidth against size", "bytes", "gbps", {"variant"})};
  auto entry = mb::declaration_json(e);
  entry["points"] = 6;
  entry["status"] = "completed";

  scratch_dir d;
  mb::run_record rec(d.file("run.json"));
  rec.meta["format_version"] = mb::record_format_version;
  rec.meta["experiments"] = nlohmann::json::array({entry});
  for (std::string v : {"plain", "wide"})
    for (std::int64_t b : {1 << 20, 1 << 21, 1 << 22}) {
      mb::row r;
      r.experiment = e.id;
      r.variant = v;
      r.params = {{"bytes", b}};
      r.median_ms = (v == "wide" ? 0.5 : 1.0) * static_cast<double>(b) / 1e9;
      r.gbps = 2.0 * static_cast<double>(b) / (*r.median_ms * 1e6);
      r.check.status = mb::verdict::passed;
      rec.rows.push_back(r);
    }
  rec.flush();
  memlab::report::report_options o;
  o.record_path = rec.path();
  o.plots = false;
  std::ostringstream out, err;
  ASSERT_EQ(memlab::report::render(o, out, err), 0) << err.str();
  std::string md = slurp(d.file("report.md"));
  EXPECT_NE(md.find("| [newfamily.copy](#newfamilycopy) | Does the wide copy beat the plain one at the largest size? | "
                    "wide (bytes=4 MiB) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("2× faster than plain (bytes=4 MiB) |"), std::string::npos) << md;
  EXPECT_NE(md.find("- `bytes` (bytes): bytes copied"), std::string::npos);
  EXPECT_NE(md.find("| plain copy | 700 GB/s | Tesla V100 | 000 §9 |"), std::string::npos);
  EXPECT_NE(md.find("`plots/newfamily_copy.png`"), std::string::npos);  // declared, linked (not drawn here)
}

}  // namespace
