// memlab-mpi's record (src/mpi/job_record.hpp): the header, the declaration of link.nccl_mpi
// and the job's layout, with rows shaped as state::finish makes them, read back by the report's
// reader, rendered by memlab report and compared by memlab compare, as the lead will read a
// record the GPU machine wrote.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/record.hpp"
#include "bench/runner.hpp"
#include "mpi/job_record.hpp"
#include "report/record.hpp"
#include "report/report.hpp"
#include "test_report_util.hpp"

namespace {

using memlab::test::scratch_dir;
using memlab::test::slurp;
using namespace memlab;

mpi::rank_info rank(char const* host, int local_rank, int local_size, int device) {
  mpi::rank_info r{};
  std::snprintf(r.host, sizeof r.host, "%s", host);
  std::snprintf(r.gpu_name, sizeof r.gpu_name, "NVIDIA H200");
  std::snprintf(r.pci_bus_id, sizeof r.pci_bus_id, "0000:%02x:00.0", 0x18 + device);
  r.local_rank = local_rank;
  r.local_size = local_size;
  r.device = device;
  r.visible_gpus = 2;
  r.shared = 0;
  return r;
}

/// A record as memlab-mpi writes it for 2 ranks on one host, one row per point.
std::string write_job(scratch_dir const& d, std::string const& name, double scale) {
  mpi::options o = mpi::parse_options({"--collectives", "all_reduce,alltoall", "--bytes", "8,1M"});
  bench::experiment const e = mpi::declaration(o);
  std::vector<mpi::rank_info> const ranks = {rank("node1", 0, 2, 0), rank("node1", 1, 2, 1)};
  bench::run_record rec(d.file(name));
  mpi::job_header h;
  h.device = {{"name", "NVIDIA H200"}, {"cc", "9.0"}};
  h.image = {{"description", "sm_90a SASS"}};
  h.mpi = mpi::mpi_json(ranks, "Open MPI v4.1.4", "2.28.3");
  h.nvml = "not built";
  h.command_line = mpi::mpirun_prefix(ranks) + " memlab-mpi --collectives all_reduce,alltoall --bytes 8,1M";
  h.seed = o.seed;
  mpi::start_record(rec, e, h);
  for (auto const& point : bench::expand_points(e, false, {})) {
    bench::row r;
    r.experiment = e.id;
    r.variant = std::get<std::string>(point.at("variant"));
    r.params["bytes"] = std::get<std::int64_t>(point.at("bytes"));
    r.median_ms = 0.02 * scale;
    r.noise = 0.005;
    r.samples = 12;
    r.bytes = static_cast<double>(r.params["bytes"].get<std::int64_t>());
    r.gbps = r.bytes / (*r.median_ms * 1e-3) / 1e9;
    r.extra["bus_gbps"] = *r.gbps;
    r.check.status = bench::verdict::passed;
    r.check.error = 0;
    r.check.tolerance = 0;
    r.cold = false;
    r.timing = {{"method", "mpi_events_max_over_ranks"}, {"batch", 1}};
    r.repro = mpi::row_repro(mpi::mpirun_prefix(ranks), r, o.seed);
    rec.rows.push_back(r);
  }
  mpi::end_record(rec, false);
  return d.file(name);
}

}  // namespace

TEST(MpiRecord, LayoutCountsRanksHostsAndGpus) {
  std::vector<mpi::rank_info> const one = {rank("a", 0, 2, 0), rank("a", 1, 2, 1)};
  EXPECT_EQ("mpirun -np 2", mpi::mpirun_prefix(one));
  std::vector<mpi::rank_info> const two = {rank("a", 0, 2, 0), rank("a", 1, 2, 1), rank("b", 0, 1, 0)};
  EXPECT_EQ("mpirun -np 3 -H a:2,b:1", mpi::mpirun_prefix(two));
  nlohmann::json const j = mpi::mpi_json(two, "Open MPI", "2.28.3");
  EXPECT_EQ(3, j["ranks"]);
  EXPECT_EQ(2, j["hosts"]);
  EXPECT_EQ(2, j["per_host"][0]["ranks"]);
  EXPECT_EQ(2, j["per_host"][0]["gpus_used"]);
  EXPECT_EQ(1, j["per_host"][1]["gpus_used"]);
  EXPECT_EQ("b", j["rank_map"][2]["host"]);
  EXPECT_EQ(0, j["rank_map"][2]["device"]);
}

TEST(MpiRecord, TheReportReadsWhatMemlabMpiWrites) {
  scratch_dir d;
  std::string const path = write_job(d, "run.json", 1.0);
  auto const rec = report::read_record(path);  // throws record_error naming the first bad path
  nlohmann::json const doc = nlohmann::json::parse(slurp(path));
  EXPECT_EQ(2, doc["format_version"]);
  EXPECT_EQ("completed", doc["experiments"][0]["status"]);
  EXPECT_EQ(4, doc["experiments"][0]["points"]);
  EXPECT_EQ(4u, doc["rows"].size());
  EXPECT_EQ(2, doc["mpi"]["ranks"]);
  EXPECT_FALSE(doc["finished"].is_null());
  EXPECT_EQ("mpirun -np 2 memlab-mpi --collectives all_reduce --bytes 8", doc["rows"][0]["repro"]);
  report::report_options o;
  o.record_path = path;
  o.out_dir = d.file("report");
  o.plots = false;
  std::ostringstream out, err;
  ASSERT_EQ(0, report::render(o, out, err)) << err.str();
  std::string const md = slurp(d.file("report/report.md"));
  EXPECT_NE(std::string::npos, md.find("link.nccl_mpi"));
}

TEST(MpiRecord, CompareMatchesTwoJobsRowByRow) {
  scratch_dir d;
  report::compare_options c;
  c.baseline = write_job(d, "a.json", 1.0);
  c.candidate = write_job(d, "b.json", 2.0);  // twice as slow
  std::ostringstream out, err;
  int const rc = report::compare(c, out, err);
  EXPECT_EQ(1, rc) << out.str() << err.str();  // slower beyond the threshold: a regression
  EXPECT_NE(std::string::npos, out.str().find("all_reduce")) << out.str();
}
