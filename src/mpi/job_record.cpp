#include "mpi/job_record.hpp"

#include <algorithm>
#include <set>

#include "bench/runner.hpp"
#include "experiments/link_collectives.hpp"

namespace memlab::mpi {

namespace {
std::vector<std::string> hosts_in_order(std::vector<rank_info> const& ranks) {
  std::vector<std::string> order;
  for (auto const& r : ranks)
    if (std::find(order.begin(), order.end(), r.host) == order.end()) order.emplace_back(r.host);
  return order;
}
}  // namespace

std::string mpirun_prefix(std::vector<rank_info> const& ranks) {
  std::string out = "mpirun -np " + std::to_string(ranks.size());
  auto const hosts = hosts_in_order(ranks);
  if (hosts.size() > 1) {
    std::string list;
    for (auto const& h : hosts) {
      auto const k = std::count_if(ranks.begin(), ranks.end(), [&](rank_info const& r) { return h == r.host; });
      list += (list.empty() ? "" : ",") + h + ":" + std::to_string(k);
    }
    out += " -H " + list;
  }
  return out;
}

nlohmann::json mpi_json(std::vector<rank_info> const& ranks, std::string const& library, std::string const& nccl_version) {
  nlohmann::json per_host = nlohmann::json::array(), rank_map = nlohmann::json::array();
  auto const hosts = hosts_in_order(ranks);
  for (auto const& h : hosts) {
    int k = 0, visible = 0;
    std::set<int> used;
    for (auto const& r : ranks)
      if (h == r.host) {
        ++k;
        visible = r.visible_gpus;
        used.insert(r.device);
      }
    per_host.push_back({{"host", h}, {"ranks", k}, {"gpus_visible", visible}, {"gpus_used", used.size()}});
  }
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    auto const& r = ranks[i];
    rank_map.push_back({{"rank", i},
                        {"host", r.host},
                        {"local_rank", r.local_rank},
                        {"device", r.device},
                        {"gpu", r.gpu_name},
                        {"pci_bus_id", r.pci_bus_id},
                        {"shares_gpu", r.shared != 0}});
  }
  return {{"ranks", ranks.size()},
          {"hosts", hosts.size()},
          {"per_host", per_host},
          {"rank_map", rank_map},
          {"library", library},
          {"nccl_version", nccl_version},
          {"local_rank_from", "MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): rank among its host's ranks, modulo the "
                              "host's visible GPUs"},
          {"timing", "per sample: MPI_Barrier, then CUDA events on every rank's stream around the operations; the "
                     "sample is the max over ranks (MPI_Allreduce MAX); rank 0's sampling policy decides, for all, "
                     "when to stop"}};
}

bench::experiment declaration(options const& o) {
  std::vector<std::string> names;
  for (link::collective c : o.collectives) names.emplace_back(link::collective_name(c));
  bench::experiment e = link_exp::collective_declaration(o.bytes, {}, names);
  e.id = "link.nccl_mpi";
  e.description = "NCCL collectives with one process per GPU under MPI (memlab-mpi): algorithm and bus bandwidth "
                  "(nccl-tests' definitions), checked against the host on every rank";
  e.describe_axis("bytes", "bytes", "nccl-tests' size: the larger buffer of one rank (memlab-mpi --bytes 8:4G)", true);
  e.prose = {"link.nccl's collectives, one process per GPU and NCCL's unique id shared through MPI, so the ranks may "
             "sit on several hosts. The time of a row is the slowest rank's (events on each rank's stream, max over "
             "ranks). Bus bandwidth (nccl-tests: all_reduce x 2(n-1)/n, all_gather, reduce_scatter and alltoall "
             "x (n-1)/n, broadcast and reduce x 1) is comparable across rank counts; the record's `mpi` says "
             "how many ranks ran on how many hosts.",
             "On one host, bus bandwidth within a few percent of link.nccl's in-process rows at the same sizes; "
             "across hosts, large sizes level at the network's rate (InfiniBand or RoCE, per NIC), not NVLink's.",
             ""};
  e.plots.push_back(bench::line_plot("link_nccl_mpi.png", "NCCL bus bandwidth against size (MPI ranks)", "bytes",
                                     "extra.bus_gbps", {"variant"}));
  e.body = [](bench::state&) {};  // memlab-mpi runs the points itself, not the runner
  e.default_suite = false;
  return e;
}

void start_record(bench::run_record& rec, bench::experiment const& e, job_header const& h) {
  auto& m = rec.meta;
  m["format_version"] = bench::record_format_version;
  m["command_line"] = h.command_line;
  m["started"] = bench::utc_now_iso();
  m["finished"] = nullptr;
  m["device"] = h.device;
  m["build"] = bench::build_json();
  m["image"] = h.image;
  m["isolation"] = "one process per GPU under MPI (memlab-mpi); the device is rank 0's, mpi.rank_map lists all";
  m["timing"] = bench::timing_policy_json(h.timing, false, h.seed);
  m["nvml"] = h.nvml;
  m["host_affinity"] = {{"applied", false}, {"reason", "memlab-mpi leaves CPU binding to mpirun (--bind-to)"}};
  m["ceilings"] = bench::to_json(bench::measured_ceilings{});
  m["mpi"] = h.mpi;
  nlohmann::json entry = bench::declaration_json(e);
  entry["points"] = bench::expand_points(e, false, {}).size();
  entry["status"] = "aborted";
  m["experiments"] = nlohmann::json::array({entry});
  rec.flush();
}

void end_record(bench::run_record& rec, bool failed) {
  rec.meta["experiments"][0]["status"] = failed ? "failed" : "completed";
  rec.meta["finished"] = bench::utc_now_iso();
  rec.flush();
}

std::string row_repro(std::string const& prefix, bench::row const& r, std::uint64_t seed) {
  std::string out = prefix + " memlab-mpi --collectives " + r.variant;
  if (r.params.contains("bytes")) out += " --bytes " + r.params["bytes"].dump();
  if (seed != options{}.seed) out += " --seed " + std::to_string(seed);
  return out;
}

}  // namespace memlab::mpi
