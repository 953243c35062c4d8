#pragma once
// What memlab-mpi writes into its record besides the rows (docs/link.md, "memlab-mpi"): the
// declaration of link.nccl_mpi, the header (device, build, timing policy) and the job's
// layout (ranks, hosts, GPUs per host). No MPI and no CUDA here: the CPU tests build a record
// with it and read it back through the report's reader.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/experiment.hpp"
#include "bench/record.hpp"
#include "mpi/options.hpp"

namespace memlab::mpi {

/// What rank 0 gathers from every rank (plain bytes: MPI_Gather as MPI_BYTE between hosts of
/// one architecture).
struct rank_info {
  char host[256];
  char gpu_name[256];
  char pci_bus_id[32];
  int local_rank, local_size, device, visible_gpus, shared;
};

/// `mpirun -np N`, and `-H host:k,...` when the ranks spanned several hosts.
std::string mpirun_prefix(std::vector<rank_info> const& ranks);

/// The record's `mpi`: ranks, hosts, per_host (ranks, gpus_visible, gpus_used), rank_map,
/// the MPI library and NCCL's version, and how ranks were mapped and timed.
nlohmann::json mpi_json(std::vector<rank_info> const& ranks, std::string const& library, std::string const& nccl_version);

/// link.nccl_mpi over `o.bytes` (filled) and `o.collectives`: link.nccl's declaration.
bench::experiment declaration(options const& o);

struct job_header {
  nlohmann::json device;        ///< rank 0's GPU (bench::to_json(device_info))
  nlohmann::json image;         ///< bench::to_json(running_image())
  nlohmann::json mpi;           ///< mpi_json
  std::string nvml;             ///< rank 0's NVML status
  std::string command_line;
  bench::timing_options timing;
  std::uint64_t seed = 0;
};

/// Writes the header and the experiment's entry (status "aborted" until end_record: a record
/// left by a job that died says so) and flushes.
void start_record(bench::run_record& rec, bench::experiment const& e, job_header const& h);
/// Marks the experiment completed or failed, stamps `finished`, flushes.
void end_record(bench::run_record& rec, bool failed);
/// The row's `repro`: the mpirun line that reruns it.
std::string row_repro(std::string const& prefix, bench::row const& r, std::uint64_t seed);

}  // namespace memlab::mpi
