// memlab report: a complete record, a partial one, an unreadable one, and the plots.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/plots.hpp"
#include "report/record.hpp"
#include "report/record_view.hpp"
#include "report/report.hpp"
#include "test_report_util.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using memlab::test::count_of;
using memlab::test::scratch_dir;
using memlab::test::slurp;

std::string const data_dir = MEMLAB_TEST_DATA_DIR;
std::string const complete_fixture = data_dir + "/synthetic_run_h100.json";
std::string const partial_fixture = data_dir + "/synthetic_run_partial.json";
std::string const reference_record = std::string(MEMLAB_SOURCE_DIR) + "/results/nvidia-h200/run.json";
std::string const format1_record = std::string(MEMLAB_SOURCE_DIR) + "/results/nvidia-h200/earlier/reference-ffd0a65.json";

struct rendered {
  int rc;
  std::string md, out, err;
};

rendered render(std::string const& record, scratch_dir const& d, bool plots = false, std::string python = "") {
  memlab::report::report_options o;
  o.record_path = record;
  o.out_dir = d.path().string();
  o.plots = plots;
  o.python = std::move(python);
  std::ostringstream out, err;
  int rc = memlab::report::render(o, out, err);
  std::string md = fs::exists(d.path() / "report.md") ? slurp(d.file("report.md")) : "";
  return {rc, md, out.str(), err.str()};
}

TEST(Report, CompleteRecordHasHeaderSectionsAndSeedFigures) {
  scratch_dir d;
  auto r = render(complete_fixture, d);
  ASSERT_EQ(r.rc, 0) << r.err;
  // Header: GPU, version and revision, command line, ceilings.
  EXPECT_NE(r.md.find("# memlab report: NVIDIA H100 80GB HBM3"), std::string::npos);
  EXPECT_NE(r.md.find("synthetic000"), std::string::npos);
  EXPECT_NE(r.md.find("memlab run all"), std::string::npos);
  EXPECT_NE(r.md.find("cudaMemcpy D2D **2950 GB/s**"), std::string::npos);
  EXPECT_NE(r.md.find("FP32 FMA peak **51.2 TFLOP/s**"), std::string::npos);
  EXPECT_NE(r.md.find("Synthetic test fixture"), std::string::npos);
  EXPECT_EQ(r.md.find("Partial run"), std::string::npos);
  // One section per experiment in the record.
  json rec = json::parse(slurp(complete_fixture));
  for (auto const& e : rec["experiments"])
    EXPECT_EQ(count_of(r.md, "\n## " + e["id"].get<std::string>() + "\n"), 1) << e["id"];
  // The seeds' figures, from the record's declarations, as a table beside this GPU's rows.
  for (char const* fig : {"| offsetCopy, aligned | 790 GB/s | Tesla V100 | 000 §9.2.1.3 |",
                          "| sharedABMultiply | 196 GB/s | Tesla V100 | 000 §9.2.3.2 |",
                          "| TILE_SIZE 64 | 83.6 ms | Tesla P100 | 001 §2 |", "**+50%**"})
    EXPECT_NE(r.md.find(fig), std::string::npos) << fig;
  // Axes with their units and meaning, and the prose, come from the record too.
  EXPECT_NE(r.md.find("- `offset` (elements): first element read, in floats past a 128-byte boundary"),
            std::string::npos);
  EXPECT_NE(r.md.find("**What to look for.** The dips between multiples of 8"), std::string::npos);
  // Tables carry time with noise, bandwidth, ratio to the peer and the model.
  EXPECT_NE(r.md.find("| variant | params | median ms ± noise |"), std::string::npos);
  EXPECT_NE(r.md.find("of cublas"), std::string::npos);
  EXPECT_NE(r.md.find("of cudaMemcpy D2D"), std::string::npos);
  EXPECT_NE(r.md.find("measured/model"), std::string::npos);
  EXPECT_NE(r.md.find("local_bytes=15.8 KiB"), std::string::npos);  // registers and spills beside the time
  // At a glance: each experiment's declared headline row, before the sections. gemm.ladder's is the
  // best rung at 8192^3 against cuBLAS (the failed 4097 row is never it).
  auto glance = r.md.find("### At a glance");
  ASSERT_NE(glance, std::string::npos);
  EXPECT_LT(glance, r.md.find("\n## ceilings.d2d_copy\n"));
  auto ladder = r.md.find("| [gemm.ladder](#gemmladder) | How close does the best rung come to cuBLAS SGEMM at 8192³? | "
                          "cp_async_128x128 (shape=8192) |",
                          glance);
  ASSERT_NE(ladder, std::string::npos) << r.md.substr(glance, 3000);
  EXPECT_NE(r.md.find("of cublas |", ladder), std::string::npos);
  // A baseline comparison: coalescing.offset's offset 1 against offset 0.
  EXPECT_NE(r.md.find("× slower than (elements=134217728, offset=0) |", glance), std::string::npos)
      << r.md.substr(glance, 3000);
}

/// The issue's two wrong headlines, on the committed H200 run: transpose's must be a transposing
/// kernel at the largest size, reduce's the largest size's best step, each against its peer.
TEST(Report, HeadlinesAreTheDeclaredRowsOnTheReferenceRun) {
  scratch_dir d;
  auto r = render(reference_record, d);
  ASSERT_EQ(r.rc, 0) << r.err;
  auto glance = r.md.find("### At a glance");
  ASSERT_NE(glance, std::string::npos);
  auto line = [&](std::string const& id) {
    auto at = r.md.find("| [" + id + "](", glance);
    return at == std::string::npos ? std::string() : r.md.substr(at, r.md.find('\n', at) - at);
  };
  std::string transpose = line("transpose.square");
  EXPECT_NE(transpose.find("| tile64 (n=8192, raster_group=32) |"), std::string::npos) << transpose;
  EXPECT_NE(transpose.find("of cublasSgeam |"), std::string::npos) << transpose;
  EXPECT_EQ(transpose.find("| copy ("), std::string::npos) << transpose;
  std::string reduce = line("reduce.sum");
  EXPECT_NE(reduce.find("(dtype=float, elements=268435456) |"), std::string::npos) << reduce;
  EXPECT_NE(reduce.find("of cub |"), std::string::npos) << reduce;
  std::string ladder = line("gemm.ladder");
  EXPECT_NE(ladder.find("shape=8192) |"), std::string::npos) << ladder;
  // Every experiment with verified rows has its headline line.
  for (char const* id : {"coalescing.offset", "coalescing.stride", "gemm.guide_ab", "l2.persist", "transfer.bandwidth",
                         "smem.bank_stride", "async.copy_compute"})
    EXPECT_FALSE(line(id).empty()) << id;
}

/// Format-1 records (results/nvidia-h200/earlier/) still render: rows, no declarations.
TEST(Report, FormatOneRecordRendersItsRowsWithoutDeclarations) {
  scratch_dir d;
  auto r = render(format1_record, d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.md.find("carries rows but no declarations"), std::string::npos);
  EXPECT_NE(r.md.find("\n## transpose.square\n"), std::string::npos);
  EXPECT_NE(r.md.find("| variant | params | median ms ± noise |"), std::string::npos);
  EXPECT_EQ(r.md.find("**What to look for.**"), std::string::npos);
  EXPECT_NE(r.md.find("carry no declaration (a format-1 record)"), std::string::npos);
}

TEST(Report, FailedRowsStandOutAndSkippedRowsGiveReasons) {
  scratch_dir d;
  auto r = render(complete_fixture, d);
  ASSERT_EQ(r.rc, 0) << r.err;
  // The one failed row: in the summary with its rerun line, and marked in its table.
  auto summary = r.md.find("### ❌ Failed rows");
  ASSERT_NE(summary, std::string::npos) << r.md.substr(0, 3000);
  EXPECT_NE(r.md.find("memlab run gemm.ladder -a shape=4097", summary), std::string::npos);
  EXPECT_NE(r.md.find("| ❌ **cp_async_128x128** |"), std::string::npos);
  EXPECT_NE(r.md.find("max_rel_error 0.0213 > 0.0041"), std::string::npos);
  EXPECT_NE(r.md.find("**1 failed verification"), std::string::npos);
  EXPECT_NE(r.md.find("status **failed**"), std::string::npos);
  // Skipped rows are listed with their reason, not put in the table.
  EXPECT_NE(r.md.find("Skipped (2):"), std::string::npos);
  EXPECT_EQ(count_of(r.md, "needs 2 or more GPUs; this machine has 1"), 2);
}

TEST(Report, WithoutPlotsTheMarkdownIsStillWrittenAndNamesTheMissingPlots) {
  scratch_dir d;
  auto r = render(complete_fixture, d, /*plots=*/true, /*python=*/"/nonexistent/python3");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.md.find("Plots were not drawn"), std::string::npos);
  EXPECT_NE(r.md.find("python3-matplotlib"), std::string::npos);
  EXPECT_NE(r.md.find("pip install matplotlib"), std::string::npos);
  for (char const* png : {"coalescing_offset.png", "coalescing_stride.png", "transfer_bandwidth.png",
                          "transfer_overlap.png", "l2_persist.png", "seed_thread_tile.png", "seed_smem_tile.png",
                          "gemm_ladder.png", "reduce_sum.png"})
    EXPECT_NE(r.md.find(std::string("`plots/") + png + "`"), std::string::npos) << png;
  EXPECT_EQ(r.md.find("![", 0), std::string::npos) << "no image links to PNGs that do not exist";
  EXPECT_NE(r.err.find("python3-matplotlib"), std::string::npos) << r.err;  // the install command, printed
}

TEST(Report, PartialRecordRendersWithNotes) {
  scratch_dir d;
  auto r = render(partial_fixture, d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.md.find("**Partial run**"), std::string::npos);
  EXPECT_NE(r.md.find("**The run stopped early**: cudaErrorIllegalAddress"), std::string::npos);
  EXPECT_NE(r.md.find("cudaMemcpy D2D not measured"), std::string::npos);
  EXPECT_NE(r.md.find("was **aborted**"), std::string::npos);
  EXPECT_NE(r.md.find("lack fields"), std::string::npos);
  EXPECT_NE(r.md.find("## Rows without an experiment id"), std::string::npos);
  EXPECT_NE(r.md.find("## smem.unlisted"), std::string::npos);
  EXPECT_NE(r.md.find("not in the record's list of experiments"), std::string::npos);
  EXPECT_NE(r.md.find("**ERROR**: cudaErrorLaunchOutOfResources"), std::string::npos);
  EXPECT_NE(r.md.find("## l2.persist"), std::string::npos);  // listed with no rows
  EXPECT_NE(r.md.find("No rows were recorded"), std::string::npos);
  EXPECT_NE(r.md.find("## transfer.overlap"), std::string::npos);
}

/// A record of the wrong shape is refused with one line naming the first offending path, exit 2,
/// and no report: an empty report for a broken file would pass for a run that measured nothing.
TEST(Report, WrongShapeIsAOneLineErrorNamingThePath) {
  scratch_dir d;
  for (auto const& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {R"({"rows": "nope"})", "odd.json: rows: expected an array, found a string"},
           {R"({"format_version": 2, "experiments": [], "rows": "nope"})", "odd.json: rows: expected an array, found a string"},
           {R"({"rows": []})", "odd.json: missing key 'format_version'"},
           {R"({"format_version": 3, "rows": []})", "odd.json: format_version: expected 1 or 2, found 3"},
           {R"({"format_version": 2, "rows": []})", "odd.json: missing key 'experiments'"},
           {R"({"format_version": 1, "rows": [{"experiment": "a.b", "variant": "", "params": {}}, null]})",
            "odd.json: rows[1]: expected an object, found null"},
           {R"({"format_version": 1, "rows": [{"experiment": "a.b", "variant": "", "params": [1, 2]}]})",
            "odd.json: rows[0].params: expected an object, found an array"},
           {R"({"format_version": 1, "rows": [{"experiment": "a.b", "variant": "", "params": {}, "median_ms": "1"}]})",
            "odd.json: rows[0].median_ms: expected a number or null, found a string"},
           {R"({"format_version": 2, "rows": [], "experiments": [{"id": "a.b", "axes": []}]})",
            "odd.json: experiments[0]: missing key 'metrics'"},
           {R"({"format_version": 1, "device": [], "rows": []})", "odd.json: device: expected an object or null, found an array"}}) {
    auto r = render(d.write("odd.json", text), d);
    EXPECT_EQ(r.rc, 2) << text;
    EXPECT_EQ(count_of(r.err, "\n"), 1) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << text << "\n" << r.err;
    EXPECT_TRUE(r.md.empty()) << text;
  }
}

TEST(Report, DefaultOutputFolderIsTheRecordsFolder) {
  scratch_dir d;
  std::string rec = d.write("run.json", slurp(partial_fixture));
  memlab::report::report_options o;
  o.record_path = rec;
  o.plots = false;
  std::ostringstream out, err;
  ASSERT_EQ(memlab::report::render(o, out, err), 0) << err.str();
  EXPECT_TRUE(fs::exists(d.path() / "report.md"));
}

TEST(Report, PlotsAreDrawnWhenMatplotlibIsThere) {
  if (memlab::report::detail::find_python_with_matplotlib().empty()) GTEST_SKIP() << "no python3 with matplotlib";
  if (memlab::report::detail::find_plot_script().empty()) GTEST_SKIP() << "report/plots.py not found";
  scratch_dir d;
  auto r = render(complete_fixture, d, /*plots=*/true);
  ASSERT_EQ(r.rc, 0) << r.err;
  // Every declared plot of an experiment with rows is drawn and linked from its section.
  auto rec = memlab::report::read_record(complete_fixture);
  std::size_t n = 0;
  for (auto const& e : rec.experiments) {
    bool timed = false;  // an experiment whose rows were all skipped has nothing to draw
    for (auto const* row : rec.rows)
      timed |= (*row)["experiment"] == e.id && (*row)["median_ms"].is_number() && !(*row)["skipped"].is_string();
    if (!timed) continue;
    for (auto const& p : e.plots) {
      ++n;
      fs::path png = d.path() / "plots" / p.file;
      ASSERT_TRUE(fs::exists(png)) << p.file << "\n" << slurp(d.file("plots/plots.log"));
      std::ifstream f(png, std::ios::binary);
      char magic[4] = {};
      f.read(magic, 4);
      EXPECT_EQ(std::string(magic + 1, 3), "PNG") << p.file;
      EXPECT_NE(r.md.find("](plots/" + p.file + ")"), std::string::npos) << p.file;
    }
  }
  EXPECT_GE(n, 10u);
  EXPECT_EQ(r.md.find("Plot not drawn"), std::string::npos);
  // A partial record draws what it can and still succeeds.
  scratch_dir d2;
  auto partial = render(partial_fixture, d2, /*plots=*/true);
  EXPECT_EQ(partial.rc, 0) << partial.err;
}

TEST(ReportFormat, NumbersAndParams) {
  using namespace memlab::report::detail;
  EXPECT_EQ(fmt(2950.1), "2950");
  EXPECT_EQ(fmt(12.84), "12.8");
  EXPECT_EQ(fmt(1.0), "1");
  EXPECT_EQ(fmt(0.4123), "0.412");
  EXPECT_EQ(fmt(std::optional<double>{}), "—");
  EXPECT_EQ(fmt_bytes(1 << 30), "1 GiB");
  EXPECT_EQ(fmt_bytes(1536.0 * 1024), "1.5 MiB");
  EXPECT_EQ(params_text(json{{"offset", 3}, {"bytes", 67108864}, {"memory", "pinned"}}),
            "bytes=64 MiB, memory=pinned, offset=3");
  EXPECT_EQ(params_text(json()), "—");
  EXPECT_EQ(cell("a|b\nc"), "a\\|b c");
  EXPECT_EQ(anchor("gemm.seed_thread_tile"), "gemmseed_thread_tile");
}

}  // namespace

TEST(Report, ThrottledRowsAreMarkedAndSummarised) {
  scratch_dir d;
  json rec = json::parse(slurp(complete_fixture));
  ASSERT_FALSE(rec["rows"].empty());
  std::vector<int> timed;  // the first two timed rows
  for (std::size_t i = 0; i < rec["rows"].size() && timed.size() < 2; ++i)
    if (rec["rows"][i].value("median_ms", json()).is_number() && rec["rows"][i].value("error", json()).is_null())
      timed.push_back(static_cast<int>(i));
  ASSERT_EQ(timed.size(), 2u);
  std::string const exp = rec["rows"][timed[0]]["experiment"].get<std::string>();
  std::string const exp2 = rec["rows"][timed[1]]["experiment"].get<std::string>();
  rec["rows"][timed[0]]["throttled"] = true;
  rec["rows"][timed[0]]["throttle_reasons"] = {"sw_power_cap"};
  rec["rows"][timed[1]]["throttled"] = true;
  rec["rows"][timed[1]]["throttle_reasons"] = {"sw_power_cap", "hw_slowdown"};
  rec["launch_floor_us"] = 2.5;
  rec["launch_floor"] = {{"us", 2.5}, {"method", "graph_batch"}, {"batch", 40}};
  rec["nvml"] = "unavailable: cannot load libnvidia-ml.so.1";
  auto r = render(d.write("run.json", rec), d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_GE(count_of(r.md, "⚠ throttled"), 2) << "the row's cell and the summary's legend";
  EXPECT_NE(r.md.find("2 row(s) were timed while the GPU throttled"), std::string::npos) << r.md;
  // One line by experiment with each reason's count, then every row folded, one a line.
  std::string const line = exp == exp2 ? exp + " 2 (sw_power_cap 2, hw_slowdown 1)."
                                       : exp + " 1 (sw_power_cap 1); " + exp2 + " 1 (sw_power_cap 1, hw_slowdown 1).";
  EXPECT_NE(r.md.find("retakes them): " + line), std::string::npos) << r.md.substr(0, 3000);
  EXPECT_NE(r.md.find("<details><summary>The 2 throttled row(s)</summary>"), std::string::npos);
  EXPECT_EQ(count_of(r.md, "\n- " + exp + " ") + (exp == exp2 ? 0 : count_of(r.md, "\n- " + exp2 + " ")), 2)
      << r.md.substr(0, 3000);
  EXPECT_NE(r.md.find("): sw_power_cap, hw_slowdown\n"), std::string::npos);
  EXPECT_NE(r.md.find("| Launch floor | 2.5 µs per launch (an empty kernel, graph_batch, 40 launches a sample)"),
            std::string::npos) << r.md.substr(0, 3000);
  EXPECT_NE(r.md.find("| NVML | unavailable: cannot load libnvidia-ml.so.1 |"), std::string::npos);
}

// Where one side of a paired ratio was timed alone and the other batched (each probe picks its
// own method when either launch is under 50 us), the ratio says so; alike methods say nothing.
TEST(Report, PeerRatiosSayWhenTheTwoSidesWereTimedDifferently) {
  scratch_dir d;
  json rec = json::parse(slurp(complete_fixture));
  std::vector<std::size_t> with_peer;
  for (std::size_t i = 0; i < rec["rows"].size(); ++i)
    if (rec["rows"][i].value("ratio_to_peer", json()).is_number()) with_peer.push_back(i);
  ASSERT_GE(with_peer.size(), 2u);
  for (std::size_t i : with_peer) {  // every ratio alike first: both sides batched
    rec["rows"][i]["timing"]["method"] = "graph_batch";
    rec["rows"][i]["extra"]["peer_timing"] = {{"method", "graph_batch"}, {"batch", 4}};
  }
  rec["rows"][with_peer[0]]["timing"]["method"] = "events";
  rec["rows"][with_peer[1]]["extra"]["peer_timing"]["method"] = "events_paired";
  auto r = render(d.write("run.json", rec), d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_of(r.md, "(ours timed alone, the peer batched)"), 1) << r.md.substr(0, 3000);
  EXPECT_EQ(count_of(r.md, "(ours batched, the peer timed alone)"), 1);
}

// An experiment that declares paired_in_blocks says so in its section, once; the others do not; a
// declaration of the wrong type is refused with its path.
TEST(Report, AnExperimentTimedInBlocksSaysSo) {
  scratch_dir d;
  json rec = json::parse(slurp(complete_fixture));
  ASSERT_GE(rec["experiments"].size(), 2u);
  rec["experiments"][1]["paired_in_blocks"] = true;
  // The threshold the report names is the record's own (meta timing.paired_blocks), not the build's.
  rec["timing"]["paired_blocks"] = {{"above_ms", 0.25}};
  auto r = render(d.write("run.json", rec), d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(count_of(r.md, "**Timing.** Where a row and its peer take 0.25 ms or more, they alternate in blocks"), 1) << r.md.substr(0, 3000);
  std::string const id = rec["experiments"][1]["id"];
  auto const section = r.md.find("\n## " + id + "\n"), timing = r.md.find("**Timing.** Where a row");
  ASSERT_NE(section, std::string::npos);
  EXPECT_GT(timing, section) << "in the declaring experiment's section";
  rec["experiments"][1]["paired_in_blocks"] = "yes";
  auto bad = render(d.write("bad.json", rec), d);
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("paired_in_blocks"), std::string::npos) << bad.err;
}

// A declared summary table is filled from the record alone: a metric of another experiment's
// row, a device property, a published figure with its numbered source, and "—" for a row
// the record does not hold.
TEST(Report, SummaryTableCellsComeFromTheRecord) {
  scratch_dir d;
  json rec = json::parse(slurp(complete_fixture));
  json const* aligned = nullptr;
  for (auto const& r : rec["rows"])
    if (r["experiment"] == "coalescing.offset" && r["params"]["offset"] == 0 && r.value("verified", "") == "passed")
      aligned = &r;
  ASSERT_NE(aligned, nullptr);
  double const gbps = (*aligned)["gbps"].get<double>();
  json table = {{"title", "Atlas of the test"},
                {"note", "a note under the table"},
                {"columns", json::array({{{"label", "bandwidth"}, {"unit", "GB/s"}},
                                         {{"label", "size"}, {"unit", "bytes"}},
                                         {{"label", "published"}, {"unit", "GB/s"}}})},
                {"rows", json::array({
                    {{"label", "aligned copy"},
                     {"cells", json::array({{{"experiment", "coalescing.offset"}, {"where", {{"offset", {"0"}}}},
                                             {"metric", "gbps"}, {"pick", ""}},
                                            {{"device", "l2_bytes"}},
                                            {{"value", 790}, {"source", "the Guide (V100)"}}})}},
                    {{"label", "not run"},
                     {"cells", json::array({{{"experiment", "nothing.here"}, {"where", json::object()},
                                             {"metric", "gbps"}, {"pick", "max"}},
                                            json::object(),
                                            {{"value", 1000}, {"source", "the Guide (V100)"}}})}}})}};
  rec["experiments"][0]["tables"] = json::array({table});
  rec["device"]["l2_bytes"] = 52428800;
  auto r = render(d.write("run.json", rec), d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.md.find("**Atlas of the test.**"), std::string::npos) << r.md;
  EXPECT_NE(r.md.find("| bandwidth (GB/s) | size | published (GB/s) |"), std::string::npos);
  EXPECT_NE(r.md.find("| aligned copy | " + memlab::report::detail::fmt(gbps) + " | " +
                      memlab::report::detail::fmt_bytes(52428800) + " | 790 [1] |"),
            std::string::npos)
      << r.md;
  EXPECT_NE(r.md.find("| not run | — |  | 1000 [1] |"), std::string::npos) << r.md;
  EXPECT_EQ(count_of(r.md, "[1] the Guide (V100)"), 1);
  EXPECT_NE(r.md.find("a note under the table"), std::string::npos);
}

// "max" in a cell's filter is the largest axis value among the verified rows, counting rows
// verified without a time of their own (a swept staircase records no median).
TEST(Report, SummaryTableMaxCountsVerifiedRowsWithoutTiming) {
  scratch_dir d;
  json rec = json::parse(slurp(complete_fixture));
  double top = -1;
  for (auto& r : rec["rows"])
    if (r["experiment"] == "coalescing.offset" && r.value("verified", "") == "passed") {
      double const off = r["params"]["offset"].get<double>();
      r["median_ms"] = nullptr;
      r["extra"]["offset_seen"] = off;
      top = std::max(top, off);
    }
  ASSERT_GE(top, 1);
  json table = {{"title", "Untimed rows"},
                {"columns", json::array({{{"label", "offset"}, {"unit", ""}}})},
                {"rows", json::array({{{"label", "largest"},
                                       {"cells", json::array({{{"experiment", "coalescing.offset"},
                                                               {"where", {{"offset", {"max"}}}},
                                                               {"metric", "extra.offset_seen"},
                                                               {"pick", ""}}})}}})}};
  rec["experiments"][0]["tables"] = json::array({table});
  auto r = render(d.write("run.json", rec), d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.md.find("| largest | " + memlab::report::detail::fmt(top) + " |"), std::string::npos) << r.md;
}

TEST(Report, SummaryTableOfTheWrongShapeIsRefusedWithItsPath) {
  scratch_dir d;
  json rec = json::parse(slurp(complete_fixture));
  rec["experiments"][0]["tables"] = json::array({{{"title", "t"},
                                                  {"columns", json::array({{{"label", "a"}, {"unit", ""}}})},
                                                  {"rows", json::array({{{"label", "r"}, {"cells", json::array()}}})}}});
  auto r = render(d.write("run.json", rec), d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("tables[0].rows[0].cells"), std::string::npos) << r.err;
}
