#pragma once
// memlab-mpi's command line and its rank-to-GPU rule (docs/link.md, "Beyond one host"): pure
// functions, no MPI and no CUDA, so the CPU tests check them on any machine.
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/link/partition.hpp"

namespace memlab::mpi {

struct options {
  std::vector<link::collective> collectives;  ///< in the order given (default: every collective)
  std::vector<std::int64_t> bytes;            ///< nccl-tests' sizes (empty: link.nccl's default sweep)
  std::string output_dir = "memlab-mpi-results";  ///< run.json lands here (rank 0)
  bool allow_shared_gpu = false;              ///< more ranks than GPUs on a host: share them
  std::uint64_t seed = 20261122;              ///< the run seed (memlab run's default)
  bool help = false;
};

/// The exit statuses of memlab-mpi (also what mpirun returns, from MPI_Abort's code).
inline constexpr int exit_failed = 1;    ///< a row failed verification, or NCCL/CUDA failed
inline constexpr int exit_usage = 2;     ///< bad command line
inline constexpr int exit_no_gpu = 77;   ///< a host has no GPU or fewer GPUs than ranks (ctest: skipped)

/// Parses argv[1..]. Throws memlab::bench::usage_error with a one-line message naming the bad item.
options parse_options(std::vector<std::string> const& args);

/// One size: 8, 64K, 16M, 4G (binary multiples, any case) or 2^20.
std::int64_t parse_size(std::string const& text);
/// A comma list of SIZE, LO:HI (doubling, as nccl-tests' -b LO -e HI -f 2) or LO:HI:F
/// (multiplied by F each step). Every size a multiple of 4 (floats) in [4, 4G].
std::vector<std::int64_t> parse_bytes(std::string const& text);
/// A comma list of collective names, or "all"; duplicates dropped.
std::vector<link::collective> parse_collectives(std::string const& text);

/// memlab-mpi --help.
std::string usage_text();

/// Which GPU a rank uses: its rank among the `local_ranks` ranks of its host, modulo the
/// GPUs visible there. `error` (one line) when there is none to give it.
struct gpu_choice {
  int device = -1;
  bool shared = false;  ///< another rank of this host uses the same GPU
  std::string error;
};
gpu_choice gpu_for_rank(int local_rank, int local_ranks, int visible_gpus, bool allow_shared_gpu);

}  // namespace memlab::mpi
