// memlab report: a complete record, a partial one, an unreadable one, and the plots.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "report/catalog.hpp"
#include "report/plots.hpp"
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
  // The seeds' figures beside this GPU's.
  for (char const* fig : {"790 GB/s", "119.9 GB/s", "195.5 GB/s", "12.8 GB/s", "199.4 GB/s", "83.6 ms", "+50%"})
    EXPECT_NE(r.md.find(fig), std::string::npos) << fig;
  // Tables carry time with noise, bandwidth, ratio to the peer and the model.
  EXPECT_NE(r.md.find("| variant | params | median ms ± noise |"), std::string::npos);
  EXPECT_NE(r.md.find("of cublas"), std::string::npos);
  EXPECT_NE(r.md.find("of cudaMemcpy D2D"), std::string::npos);
  EXPECT_NE(r.md.find("measured/model"), std::string::npos);
  EXPECT_NE(r.md.find("local_bytes=15.8 KiB"), std::string::npos);  // registers and spills beside the time
  // At a glance: each experiment's best verified row, before the sections (the failed 4097 row is not it).
  auto glance = r.md.find("### At a glance");
  ASSERT_NE(glance, std::string::npos);
  EXPECT_LT(glance, r.md.find("\n## ceilings\n"));
  EXPECT_NE(r.md.find("| [gemm.ladder](#gemmladder) | cp_async_128x128 (shape=4096) |", glance), std::string::npos);
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
  for (char const* png : {"roofline.png", "coalescing_offset.png", "coalescing_stride.png", "transfer_bandwidth.png",
                          "transfer_overlap.png", "l2_persist.png", "seed_thread_tile.png", "seed_smem_tile.png",
                          "gemm_ladder.png", "transfer_timeline.png"})
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
  EXPECT_NE(r.md.find("**ERROR**: cudaErrorLaunchOutOfResources"), std::string::npos);
  EXPECT_NE(r.md.find("## l2.persist"), std::string::npos);  // listed with no rows
  EXPECT_NE(r.md.find("No rows were recorded"), std::string::npos);
  EXPECT_NE(r.md.find("## transfer.overlap"), std::string::npos);
}

TEST(Report, OddlyShapedRecordsNeverThrow) {
  scratch_dir d;
  for (std::string const& text :
       {std::string(R"({"rows": []})"), std::string(R"({"device": null, "rows": [null, 3, "x", {}]})"),
        std::string(R"({"experiments": [{"id": 5}, "x", {"id": "a.b", "status": 7}], "rows": {"not": "a list"}})"),
        std::string(R"({"synthetic_fixture": "yes", "format_version": "1", "memlab": [], "aborted": 3,
                        "experiments": null, "rows": [{"experiment": "a.b", "skipped": true, "error": 5}]})"),
        std::string(R"({"device": {"name": 12}, "ceilings": 3, "timing": [], "finished": 0,
                        "rows": [{"experiment": "a.b", "params": [1, 2], "predicted": {"gbps": "x"},
                                  "extra": {"timeline": 5}, "verification": 3, "median_ms": "1"}]})")}) {
    auto r = render(d.write("odd.json", text), d);
    EXPECT_EQ(r.rc, 0) << text << "\n" << r.err;
    EXPECT_NE(r.md.find("# memlab report"), std::string::npos) << text;
  }
}

TEST(Report, UnreadableFileIsAOneLineErrorAndExitTwo) {
  scratch_dir d;
  for (auto const& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"missing.json", ""}, {"garbage.json", "this is not json"}, {"array.json", "[1, 2, 3]"},
           {"other.json", R"({"name": "a package.json, not a record"})"}}) {
    std::string path = text.empty() ? d.file(name) : d.write(name, text);
    auto r = render(path, d);
    EXPECT_EQ(r.rc, 2) << name;
    EXPECT_EQ(count_of(r.err, "\n"), 1) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    EXPECT_TRUE(r.md.empty()) << name << ": no report for an unreadable record";
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
  json rec = json::parse(slurp(complete_fixture));
  auto plans = memlab::report::detail::plan_plots(rec);
  ASSERT_GE(plans.size(), 10u);
  for (auto const& p : plans) {
    fs::path png = d.path() / "plots" / p.file;
    ASSERT_TRUE(fs::exists(png)) << p.file << "\n" << slurp(d.file("plots/plots.log"));
    std::ifstream f(png, std::ios::binary);
    char magic[4] = {};
    f.read(magic, 4);
    EXPECT_EQ(std::string(magic + 1, 3), "PNG") << p.file;
    EXPECT_NE(r.md.find("](plots/" + p.file + ")"), std::string::npos) << p.file;
  }
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
  int timed = -1;
  for (std::size_t i = 0; i < rec["rows"].size() && timed < 0; ++i)
    if (rec["rows"][i].value("median_ms", json()).is_number() && rec["rows"][i].value("error", json()).is_null())
      timed = static_cast<int>(i);
  ASSERT_GE(timed, 0);
  rec["rows"][timed]["throttled"] = true;
  rec["rows"][timed]["throttle_reasons"] = {"sw_power_cap"};
  rec["launch_floor_us"] = 2.5;
  rec["launch_floor"] = {{"us", 2.5}, {"method", "graph_batch"}, {"batch", 40}};
  rec["nvml"] = "unavailable: cannot load libnvidia-ml.so.1";
  auto r = render(d.write("run.json", rec), d);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_GE(count_of(r.md, "⚠ throttled"), 2) << "the row's cell and the summary's legend";
  EXPECT_NE(r.md.find("1 row(s) were timed while the GPU throttled"), std::string::npos) << r.md;
  EXPECT_NE(r.md.find("sw_power_cap"), std::string::npos);
  EXPECT_NE(r.md.find("| Launch floor | 2.5 µs per launch (an empty kernel, graph_batch, 40 launches a sample)"),
            std::string::npos) << r.md.substr(0, 3000);
  EXPECT_NE(r.md.find("| NVML | unavailable: cannot load libnvidia-ml.so.1 |"), std::string::npos);
}
