#pragma once
// The experiments' one seeded input: element i of the stream for `seed`, generated on the
// device by fill_seeded and regenerated on the host for a reference (a host fill and
// upload of 2^28 elements would dominate a run).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memlab/detail/splitmix64.hpp"
#include "memlab/error.hpp"

namespace memlab::experiments {

/// float: uniform in [-1, 1) with 24 random bits; double: 53 bits; both exactly
/// representable. int: uniform in [-100, 100].
template <class T>
__host__ __device__ inline T seeded_value(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t const h = memlab::detail::splitmix64(seed, i);
  if constexpr (std::is_same_v<T, float>) return static_cast<float>(h >> 40) * 0x1p-23f - 1.0f;
  else if constexpr (std::is_same_v<T, double>) return static_cast<double>(h >> 11) * 0x1p-52 - 1.0;
  else return static_cast<int>((h >> 33) % 201u) - 100;
}

template <class T>
__global__ void fill_seeded_kernel(T* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = seeded_value<T>(seed, i);
}

/// out[i] = seeded_value<T>(seed, i) for i < n, enqueued on `stream`.
template <class T>
void fill_seeded(T* out, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  if (n == 0) return;
  int const grid = static_cast<int>(std::min<std::size_t>((n + 255) / 256, 4096));
  fill_seeded_kernel<T><<<grid, 256, 0, stream>>>(out, n, seed);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::experiments
