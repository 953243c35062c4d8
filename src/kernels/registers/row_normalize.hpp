#pragma once
// Register pressure (seed 004): one kernel, built several times under different register
// budgets. Each thread normalizes one row of row_length floats that it keeps in registers
// (mean, then variance around the mean, then the scaled row): all row_length values stay
// live across three passes, so the kernel wants about row_length + 10 registers. A tighter
// budget (__launch_bounds__ with minBlocksPerSM, or __maxnreg__) buys occupancy but spills
// the row to local memory; a looser one keeps it in registers with fewer warps per SM.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace memlab::registers {

inline constexpr int row_length = 64;
inline constexpr int row_block = 256;
inline constexpr float row_eps = 1e-5f;

/// The builds of the kernel: what the compiler was told about the register budget.
struct build {
  char const* name;
  char const* attribute;  ///< the source annotation, for the record
};
std::vector<build> const& builds();

struct build_info {
  int num_regs = 0;             ///< cudaFuncAttributes::numRegs
  std::size_t local_bytes = 0;  ///< cudaFuncAttributes::localSizeBytes (spill space per thread)
  int max_threads = 0;          ///< cudaFuncAttributes::maxThreadsPerBlock
  int blocks_per_sm = 0;        ///< cudaOccupancyMaxActiveBlocksPerMultiprocessor at row_block
};
/// Throws memlab::error for an unknown build name.
build_info query(std::string const& name);

/// Rows are stored column-major (element k of row r at in[k * rows + r]) so that a warp's
/// loads of element k are coalesced. out[k][r] = (in[k][r] - mean_r) / sqrt(var_r + eps).
void row_normalize(std::string const& name, float const* in, float* out, std::int64_t rows, cudaStream_t stream);

}  // namespace memlab::registers
