#pragma once
// memlab::reduce_sum: the sum of a device array, written to a device pointer.
//
// One kernel launch for any length (a GPU-filling grid of 16-byte loads; the block that
// finishes last sums the per-block partials). The result is deterministic for a given
// device (a fixed summation order). float sums accumulate in float, double in double;
// int sums wrap modulo 2^32, so they are exact whenever the true sum fits in an int.
//
// Workspace: the launch needs reduce_sum_workspace_bytes() bytes of device memory holding
// a counter and the partials. Give your own (256-byte aligned, zero-filled once before
// its first use; every call leaves it zeroed again; one workspace per concurrently
// running call), or use the overload without one, which takes it from the stream-ordered
// allocator (cudaMallocAsync/cudaFreeAsync) on every call.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace memlab {

/// Bytes of workspace reduce_sum needs (the same for every length and type).
std::size_t reduce_sum_workspace_bytes() noexcept;

/// *out = in[0] + ... + in[n-1] (0 for n == 0), issued on `stream`, asynchronous.
/// Throws memlab::error when out is null, in is null with n > 0, in is not aligned to its
/// element, or the workspace is null, misaligned or smaller than reduce_sum_workspace_bytes().
void reduce_sum(float const* in, std::size_t n, float* out, void* workspace, std::size_t workspace_bytes,
                cudaStream_t stream = nullptr);
void reduce_sum(double const* in, std::size_t n, double* out, void* workspace, std::size_t workspace_bytes,
                cudaStream_t stream = nullptr);
void reduce_sum(int const* in, std::size_t n, int* out, void* workspace, std::size_t workspace_bytes,
                cudaStream_t stream = nullptr);

/// The same, with a workspace allocated and freed in stream order for this call.
void reduce_sum(float const* in, std::size_t n, float* out, cudaStream_t stream = nullptr);
void reduce_sum(double const* in, std::size_t n, double* out, cudaStream_t stream = nullptr);
void reduce_sum(int const* in, std::size_t n, int* out, cudaStream_t stream = nullptr);

}  // namespace memlab
