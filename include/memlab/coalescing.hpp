#pragma once
// Global-memory coalescing kernels (Best Practices Guide 9.2.1): the Guide's
// offsetCopy and strideCopy, and an aligned copy with 4-, 8- or 16-byte accesses.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace memlab {

/// out[i + offset] = in[i + offset] for i in [0, n): one element per thread, so a warp's
/// 128-byte request straddles 32-byte sectors unless offset is a multiple of 8 floats.
/// Both arrays need n + offset elements.
void offset_copy(float* out, float const* in, std::size_t n, int offset, cudaStream_t stream = nullptr);

/// out[i * stride] = in[i * stride] for i in [0, n): a warp touches min(4*stride, 32) sectors.
/// Both arrays need (n - 1) * stride + 1 elements.
void stride_copy(float* out, float const* in, std::size_t n, int stride, cudaStream_t stream = nullptr);

/// Copies `bytes` (a multiple of 4) with `access_bytes` (4, 8 or 16) per load and store;
/// each thread issues `unroll` (1, 2, 4 or 8) loads before its stores. Pointers must be
/// aligned to access_bytes; a tail that is not a whole access is copied with 4-byte accesses.
void vector_copy(void* out, void const* in, std::size_t bytes, int access_bytes, int unroll,
                 cudaStream_t stream = nullptr);

}  // namespace memlab
