#pragma once
// The single-pass reduction (step 7) as the library runs it: grid size and workspace layout.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace memlab::kernels::reduce {

/// Most blocks a single-pass launch uses (one partial each).
inline constexpr int single_pass_max_blocks = 2048;
/// Workspace layout: the ticket counter, then the partials at this offset.
inline constexpr std::size_t single_pass_partials_offset = 256;
inline constexpr std::size_t single_pass_workspace_bytes = single_pass_partials_offset + single_pass_max_blocks * 8;

/// Blocks for length n: enough to fill every SM once (threads per SM / block size), never
/// more than the input needs for one full unrolled iteration per thread, at least one.
int single_pass_grid(std::size_t n, std::size_t elem_bytes);

/// Launches the single-pass kernel (n >= 1). The workspace's counter must be zero.
template <class T>
void launch_single_pass(T const* in, std::size_t n, T* out, void* workspace, cudaStream_t stream);

}  // namespace memlab::kernels::reduce
