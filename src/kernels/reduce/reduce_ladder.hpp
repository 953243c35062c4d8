#pragma once
// Host entry points of the reduction ladder (seed 003 and the steps after it), for the
// experiment and the tests. Each step sums in[0, n) into *out on `stream`.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace memlab::kernels::reduce {

enum class step {
  interleaved_divergent = 1,  ///< tid % (2*stride): divergence and bank conflicts
  interleaved,                ///< seed 003: index = 2*stride*tid: bank conflicts
  sequential,                 ///< seed 003: tid + stride: conflict-free
  first_add,                  ///< two elements per thread added during the load
  warp_shuffle,               ///< the last 64 partials by warp shuffles
  vectorized,                 ///< a GPU-filling grid, 16-byte loads, Unroll in flight; two launches
  single_pass,                ///< step 6 in one launch (last block sums the partials)
};

std::vector<step> all_steps();
char const* name(step s) noexcept;
/// Throws memlab::error for an unknown name.
step step_from_name(std::string const& name);
/// Launches per call for length n (steps 1..5 need one pass per factor of the block's span).
int launches(step s, std::size_t n);

/// Workspace for `sum` (bytes): ping-pong partial buffers for steps 1..5, the partials
/// (and, for single_pass, a ticket counter) for steps 6 and 7.
template <class T>
std::size_t workspace_bytes(step s, std::size_t n);

/// Sums in[0, n) into *out (n == 0 gives 0). The workspace must hold workspace_bytes(s, n)
/// bytes, 256-byte aligned; for single_pass it must be zero-filled before its first use
/// (every call leaves it zeroed again). T: float, double, int (int wraps modulo 2^32).
template <class T>
void sum(step s, T const* in, std::size_t n, T* out, void* workspace, std::size_t workspace_bytes,
         cudaStream_t stream);

/// Blocks the vectorized / single-pass steps launch for length n on the current device.
int persistent_grid(std::size_t n, std::size_t elem_bytes);

}  // namespace memlab::kernels::reduce
