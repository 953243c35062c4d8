#pragma once
// Warp entanglement of asynchronous copies (seed 002 §6): commit and arrive-on issued by a
// converged warp count once per warp; issued by divergent lanes they count once per group.
// Both kernels compute out[i] = chain(in[i]) (copy_compute.hpp's FMA chain, per float) on
// float4 elements, each thread staging its own elements through shared memory.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace memlab::async {

enum class entangled_op {
  commit_wait,  ///< per-thread cp.async, 4-stage commit groups, cp.async.wait_group 3
  arrive_on,    ///< per-thread cp.async, arrive-on to a block mbarrier, 2 stages
};

struct entanglement_config {
  entangled_op op = entangled_op::commit_wait;
  /// The warp issues its copies and commits (or arrive-ons) in `split` divergent groups of
  /// lanes (lane % split): 1 keeps the warp converged, 32 makes every lane issue alone.
  int split = 1;
  /// The seed's remedy: the copies stay divergent, but the warp reconverges (__syncwarp)
  /// before one converged commit or arrive-on. Separates the cost of divergent issue from
  /// the entanglement of the commit itself.
  bool reconverge = false;
  int fmas = 16;
  int block_threads = 256;  ///< a multiple of 32
  int grid_blocks = 0;      ///< 0: enough blocks for one element per thread
};

inline constexpr int commit_wait_stages = 4;

/// Dynamic shared memory of the launch.
std::size_t warp_entanglement_smem_bytes(entanglement_config const& cfg);

/// The kernel warp_entanglement launches for `op`, for memlab::compiled_arch and require_arch.
void const* warp_entanglement_kernel(entangled_op op);

/// The architecture `op` needs in the compiled image, with the instruction that needs it:
/// cp.async (sm_80) for commit_wait; mbarrier try_wait (sm_90) for arrive_on.
int warp_entanglement_needed_arch(entangled_op op, char const** instruction = nullptr);

/// Runs the kernel over `n` float4 elements (passed as 4n floats). Needs code compiled for
/// sm_80 (commit_wait) or sm_90 (arrive_on): memlab::error otherwise, before any launch.
/// Pointers 16-byte aligned, not overlapping.
void warp_entanglement(entanglement_config const& cfg, float* out, float const* in, std::size_t n,
                       cudaStream_t stream = nullptr);

}  // namespace memlab::async
