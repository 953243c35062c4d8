// memlab compare: verdicts that respect noise, rows in one run only, GPU labels, exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cmath>
#include <sstream>

#include "report/report.hpp"
#include "test_report_util.hpp"

namespace {

using nlohmann::json;
using memlab::test::count_of;
using memlab::test::scratch_dir;

json timed_row(std::string const& variant, json params, double ms, double noise,
               std::string const& verified = "passed") {
  return {{"experiment", "demo.copy"}, {"variant", variant},      {"params", std::move(params)},
          {"median_ms", ms},           {"noise", noise},          {"bytes", 1e9},
          {"flops", 0},                {"gbps", 1e9 / (ms * 1e6)}, {"verified", verified},
          {"skipped", nullptr},        {"error", nullptr}};
}

json record(std::string const& gpu, json rows) {
  return {{"format_version", 1},
          {"memlab", {{"version", "0.1.0"}, {"git_revision", "test"}}},
          {"started", "2026-11-22T01:00:00Z"},
          {"finished", "2026-11-22T01:05:00Z"},
          {"device", {{"name", gpu}}},
          {"experiments", json::array({{{"id", "demo.copy"}, {"status", "completed"}}})},
          {"rows", std::move(rows)}};
}

struct result {
  int rc;
  std::string out, err;
};

result run_compare(scratch_dir const& d, json const& a, json const& b, double threshold = 0.05) {
  memlab::report::compare_options o;
  o.baseline = d.write("a.json", a);
  o.candidate = d.write("b.json", b);
  o.threshold = threshold;
  std::ostringstream out, err;
  int rc = memlab::report::compare(o, out, err);
  return {rc, out.str(), err.str()};
}

/// The verdict cell of the only matched row.
std::string verdict_of(std::string const& out) {
  auto table = out.find("| experiment | variant | params | A ms");
  if (table == std::string::npos) return "";
  auto row = out.find("| demo.copy |", table);
  if (row == std::string::npos) return "";
  auto end = out.find('\n', row);
  std::string line = out.substr(row, end - row);
  line.pop_back();  // trailing '|'
  return line.substr(line.rfind('|') + 1);
}

TEST(Compare, FasterWhenBeyondThresholdAndNoise) {
  scratch_dir d;
  auto r = run_compare(d, record("GPU X", {timed_row("v", {{"n", 1}}, 1.0, 0.01)}),
                       record("GPU X", {timed_row("v", {{"n", 1}}, 0.8, 0.01)}));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(verdict_of(r.out).find("faster"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| 0.8 |"), std::string::npos) << "B/A ratio column: " << r.out;
  // Per experiment: rows, geometric mean of B/A, and the verdict counts.
  EXPECT_NE(r.out.find("| demo.copy | 1 | 0.8 | 1 | 0 | 0 |"), std::string::npos) << r.out;
}

TEST(Compare, SlowerBeyondThresholdIsARegression) {
  scratch_dir d;
  auto r = run_compare(d, record("GPU X", {timed_row("v", {{"n", 1}}, 1.0, 0.01)}),
                       record("GPU X", {timed_row("v", {{"n", 1}}, 1.3, 0.01)}));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(verdict_of(r.out).find("slower"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Regressions (1)"), std::string::npos) << r.out;
}

TEST(Compare, SameWithinNoiseButSlowerWithoutIt) {
  scratch_dir d;
  // 12% slower: inside 2 x (4% + 4%) of noise, so "same"...
  auto noisy = run_compare(d, record("GPU X", {timed_row("v", {{"n", 1}}, 1.0, 0.04)}),
                           record("GPU X", {timed_row("v", {{"n", 1}}, 1.12, 0.04)}));
  EXPECT_EQ(noisy.rc, 0) << noisy.out;
  EXPECT_NE(verdict_of(noisy.out).find("same"), std::string::npos) << noisy.out;
  // ... but the same 12% with quiet samples is a regression.
  auto quiet = run_compare(d, record("GPU X", {timed_row("v", {{"n", 1}}, 1.0, 0.005)}),
                           record("GPU X", {timed_row("v", {{"n", 1}}, 1.12, 0.005)}));
  EXPECT_EQ(quiet.rc, 1) << quiet.out;
  EXPECT_NE(verdict_of(quiet.out).find("slower"), std::string::npos) << quiet.out;
}

// A row paired launch by launch in one run and in blocks in the other ran at different clocks at
// the power cap (docs/timing.md, "Paired in blocks"): the verdict says how each was timed; rows
// timed alike say nothing of it.
TEST(Compare, APairingMethodChangeIsNamedBesideTheVerdict) {
  scratch_dir d;
  json a = timed_row("v", {{"n", 1}}, 1.0, 0.01), b = timed_row("v", {{"n", 1}}, 0.95, 0.01);
  a["timing"] = {{"method", "events_paired"}, {"batch", 1}};
  b["timing"] = {{"method", "events_paired_blocks"}, {"batch", 1}};
  auto r = run_compare(d, record("GPU X", {a}), record("GPU X", {b}));
  EXPECT_NE(verdict_of(r.out).find("(timed events_paired in A, events_paired_blocks in B)"), std::string::npos) << r.out;
  b["timing"]["method"] = "events_paired";
  auto same = run_compare(d, record("GPU X", {a}), record("GPU X", {b}));
  EXPECT_EQ(verdict_of(same.out).find("timed "), std::string::npos) << same.out;
}

TEST(Compare, ThresholdSetsTheRegressionBound) {
  scratch_dir d;
  auto a = record("GPU X", {timed_row("v", {{"n", 1}}, 1.0, 0.002)});
  auto b = record("GPU X", {timed_row("v", {{"n", 1}}, 1.04, 0.002)});
  EXPECT_EQ(run_compare(d, a, b, 0.05).rc, 0);
  auto strict = run_compare(d, a, b, 0.01);
  EXPECT_EQ(strict.rc, 1) << strict.out;
}

TEST(Compare, RowsInOnlyOneRunAreListed) {
  scratch_dir d;
  auto a = record("GPU X", {timed_row("v", {{"n", 1}}, 1.0, 0.01), timed_row("gone", {{"n", 1}}, 1.0, 0.01),
                            timed_row("v", {{"n", 2}}, 2.0, 0.01)});
  auto b = record("GPU X", {timed_row("v", {{"n", 1}}, 1.0, 0.01), timed_row("new", {{"n", 1}}, 1.0, 0.01),
                            timed_row("v", {{"n", 3}}, 3.0, 0.01)});
  auto r = run_compare(d, a, b);
  EXPECT_EQ(r.rc, 0) << r.out;  // a missing row is listed, not a regression
  auto only_a = r.out.find("## Only in A (2)");
  auto only_b = r.out.find("## Only in B (2)");
  ASSERT_NE(only_a, std::string::npos) << r.out;
  ASSERT_NE(only_b, std::string::npos) << r.out;
  std::string a_part = r.out.substr(only_a, only_b - only_a), b_part = r.out.substr(only_b);
  EXPECT_NE(a_part.find("| gone |"), std::string::npos);
  EXPECT_NE(a_part.find("n=2"), std::string::npos);  // same variant, other params: a different row
  EXPECT_NE(b_part.find("| new |"), std::string::npos);
  EXPECT_NE(b_part.find("n=3"), std::string::npos);
  EXPECT_NE(r.out.find("**1 rows in both**"), std::string::npos) << r.out;
}

TEST(Compare, ParamsMatchWhateverTheirOrderInTheFile) {
  scratch_dir d;
  std::string a = R"({"format_version":1,"device":{"name":"G"},"rows":[{"experiment":"demo.copy","variant":"v",
      "params":{"m":1,"k":2},"median_ms":1.0,"noise":0.01,"verified":"passed"}]})";
  std::string b = R"({"format_version":1,"device":{"name":"G"},"rows":[{"experiment":"demo.copy","variant":"v",
      "params":{"k":2,"m":1},"median_ms":1.0,"noise":0.01,"verified":"passed"}]})";
  memlab::report::compare_options o;
  o.baseline = d.write("a.json", a);
  o.candidate = d.write("b.json", b);
  std::ostringstream out, err;
  EXPECT_EQ(memlab::report::compare(o, out, err), 0);
  EXPECT_NE(out.str().find("**1 rows in both**"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("Only in"), std::string::npos) << out.str();
}

TEST(Compare, DifferentGpusAreLabelled) {
  scratch_dir d;
  auto r = run_compare(d, record("NVIDIA H100 80GB HBM3", {timed_row("v", {{"n", 1}}, 1.0, 0.01)}),
                       record("NVIDIA H200", {timed_row("v", {{"n", 1}}, 0.9, 0.01)}));
  EXPECT_NE(r.out.find("Different GPUs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos);
  auto same = run_compare(d, record("G", {timed_row("v", {{"n", 1}}, 1.0, 0.01)}),
                          record("G", {timed_row("v", {{"n", 1}}, 1.0, 0.01)}));
  EXPECT_EQ(same.out.find("Different GPUs"), std::string::npos) << same.out;
  EXPECT_NE(verdict_of(same.out).find("same"), std::string::npos) << same.out;
}

TEST(Compare, DifferentL2FlushesAreLabelled) {
  scratch_dir d;
  auto with_flush = [](json r, char const* flush) {
    r["timing"] = {{"cold", true}, {"flush", flush}};
    return r;
  };
  json const rows = {timed_row("v", {{"n", 1}}, 1.0, 0.01)};
  auto r = run_compare(d, with_flush(record("G", rows), "write"), with_flush(record("G", rows), "read"));
  EXPECT_NE(r.out.find("Different L2 flushes** (write → read)"), std::string::npos) << r.out;
  // A record from before `timing.flush` flushed by writing.
  auto old = run_compare(d, record("G", rows), with_flush(record("G", rows), "write"));
  EXPECT_EQ(old.out.find("Different L2 flushes"), std::string::npos) << old.out;
  auto old_vs_read = run_compare(d, record("G", rows), with_flush(record("G", rows), "read"));
  EXPECT_NE(old_vs_read.out.find("Different L2 flushes"), std::string::npos) << old_vs_read.out;
}

TEST(Compare, NewlyFailingVerificationIsARegression) {
  scratch_dir d;
  auto r = run_compare(d, record("G", {timed_row("v", {{"n", 1}}, 1.0, 0.01)}),
                       record("G", {timed_row("v", {{"n", 1}}, 0.5, 0.01, "failed")}));
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(verdict_of(r.out).find("regression"), std::string::npos) << r.out;
}

TEST(Compare, SkippedRowsAreNotComparedAndNotRegressions) {
  scratch_dir d;
  auto skipped = timed_row("v", {{"n", 1}}, 1.0, 0.01);
  skipped["median_ms"] = nullptr;
  skipped["skipped"] = "needs 2 GPUs";
  auto r = run_compare(d, record("G", {timed_row("v", {{"n", 1}}, 1.0, 0.01)}), record("G", {skipped}));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(verdict_of(r.out).find("not compared"), std::string::npos) << r.out;
  EXPECT_NE(verdict_of(r.out).find("needs 2 GPUs"), std::string::npos) << r.out;
}

TEST(Compare, UnreadableInputExitsTwoWithOneLine) {
  scratch_dir d;
  memlab::report::compare_options o;
  o.baseline = d.file("missing.json");
  o.candidate = d.write("b.json", record("G", json::array()));
  std::ostringstream out, err;
  EXPECT_EQ(memlab::report::compare(o, out, err), 2);
  EXPECT_EQ(count_of(err.str(), "\n"), 1) << err.str();
  EXPECT_NE(err.str().find("missing.json"), std::string::npos) << err.str();

  o.baseline = d.write("bad.json", std::string("{\"rows\": [1, 2,"));
  std::ostringstream out2, err2;
  EXPECT_EQ(memlab::report::compare(o, out2, err2), 2);
  EXPECT_NE(err2.str().find("not valid JSON"), std::string::npos) << err2.str();
}

TEST(Compare, NegativeThresholdIsRejected) {
  scratch_dir d;
  auto r = run_compare(d, record("G", json::array()), record("G", json::array()), -0.1);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("threshold"), std::string::npos) << r.err;
}

}  // namespace

namespace {

using memlab::report::repeat_check::allowed_fraction;

/// A repeat pair: `rows` rows of `ms` in A; in B the first `off` rows are `shift` slower.
std::pair<json, json> repeat_pair(int rows, double ms, double noise, int off, double shift) {
  json a = json::array(), b = json::array();
  for (int i = 0; i < rows; ++i) {
    a.push_back(timed_row("v", {{"n", i}}, ms, noise));
    b.push_back(timed_row("v", {{"n", i}}, i < off ? ms * (1.0 + shift) : ms * (1.0 + noise / 4), noise));
  }
  return {record("G", a), record("G", b)};
}

result run_repeat(scratch_dir const& d, json const& a, json const& b) {
  memlab::report::compare_options o;
  o.baseline = d.write("a.json", a);
  o.candidate = d.write("b.json", b);
  o.repeat = true;
  std::ostringstream out, err;
  int rc = memlab::report::compare(o, out, err);
  return {rc, out.str(), err.str()};
}

}  // namespace

TEST(CompareRepeat, AllowedFractionIsFivePercentPlusBinomialSlack) {
  EXPECT_NEAR(allowed_fraction(400), 0.05 + 2 * std::sqrt(0.05 * 0.95 / 400), 1e-12);
  EXPECT_GT(allowed_fraction(20), allowed_fraction(400)) << "fewer rows, more slack";
  EXPECT_GT(allowed_fraction(100000), 0.05);
}

TEST(CompareRepeat, AgreeingRunsPass) {
  scratch_dir d;
  auto [a, b] = repeat_pair(100, 0.2, 0.01, 0, 0.0);
  auto r = run_repeat(d, a, b);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("Repeatability: ✅ passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 of 100 rows (0%) differ by more than their reported noise"), std::string::npos) << r.out;
}

TEST(CompareRepeat, ALongRowBeyondThreePercentFails) {
  scratch_dir d;
  // One 200 us row 5% slower with a 10% noise: within its noise, but long rows must hold 3%.
  auto [a, b] = repeat_pair(100, 0.2, 0.10, 1, 0.05);
  auto r = run_repeat(d, a, b);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("Rows beyond their tolerance (1)"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("failed"), std::string::npos);
}

TEST(CompareRepeat, MicrosecondRowsAreHeldToFivePercent) {
  scratch_dir d;
  // 10 us rows with 8% noise, 4% apart: within the microsecond rows' 5% and their noise.
  auto [a, b] = repeat_pair(50, 0.01, 0.08, 2, 0.04);
  auto r = run_repeat(d, a, b);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("0 rows above 50 µs and 0 headline rows are held to 3%, the other 50 (microsecond rows) to 5%"),
            std::string::npos)
      << r.out;
  // 7% apart: beyond 5% even though within the (8%) noise.
  auto [a2, b2] = repeat_pair(50, 0.01, 0.08, 1, 0.07);
  auto r2 = run_repeat(d, a2, b2);
  EXPECT_EQ(r2.rc, 1) << r2.out;
  EXPECT_NE(r2.out.find("Rows beyond their tolerance (1)"), std::string::npos) << r2.out;
}

TEST(CompareRepeat, NoiseThatUnderstatesTheSpreadFailsCalibration) {
  scratch_dir d;
  // 10 us rows claiming 0.5% noise, 20 of 100 off by 2%: each row is inside 3%, but 20% of
  // rows beyond their noise is far more than a 95% bound allows.
  auto [a, b] = repeat_pair(100, 0.01, 0.005, 20, 0.02);
  auto r = run_repeat(d, a, b);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("20 of 100 rows (20%)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("understates"), std::string::npos) << r.out;
  // Four of 100 beyond their noise is within 5% + slack.
  auto [a2, b2] = repeat_pair(100, 0.01, 0.005, 4, 0.02);
  EXPECT_EQ(run_repeat(d, a2, b2).rc, 0);
}

TEST(CompareRepeat, WithoutRepeatTheSameRecordsUseTheRegressionRule) {
  scratch_dir d;
  auto [a, b] = repeat_pair(100, 0.01, 0.005, 20, 0.02);
  auto r = run_compare(d, a, b);  // 2% is under the 5% threshold: no regression
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_EQ(r.out.find("Repeatability"), std::string::npos);
}

TEST(CompareRepeat, ABatchedRowMeetsAnUnbatchedOneThroughItsColdTiming) {
  scratch_dir d;
  // Run A batched the launch (warm, 42.8 us) and also timed it alone (50.3 us); run B's probe
  // fell above the threshold, so B timed it alone only (50.4 us). Like with like: the same.
  json a = timed_row("v", {{"n", 1}}, 0.0428, 0.005);
  a["timing"] = {{"method", "graph_batch"}, {"batch", 4}, {"cold_events", {{"ms", 0.0503}, {"noise", 0.005}}}};
  json b = timed_row("v", {{"n", 1}}, 0.0504, 0.005);
  b["timing"] = {{"method", "events"}, {"batch", 1}};
  auto r = run_repeat(d, record("G", {a}), record("G", {b}));
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(verdict_of(r.out).find("same"), std::string::npos) << r.out;
  // Without the cold timing the medians are all there is: 17.8% apart, beyond 5%.
  a["timing"].erase("cold_events");
  auto r2 = run_repeat(d, record("G", {a}), record("G", {b}));
  EXPECT_EQ(r2.rc, 1) << r2.out;
  // Both batched: the batched medians compare, the cold timing is not used.
  json b2 = a;
  b2["median_ms"] = 0.0429;
  b2["timing"]["cold_events"] = {{"ms", 0.07}, {"noise", 0.005}};
  auto r3 = run_repeat(d, record("G", {a}), record("G", {b2}));
  EXPECT_EQ(r3.rc, 0) << r3.out;
}
