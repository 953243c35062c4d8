#pragma once
// The one counter-based hash behind every seeded fill: inputs generated on the device can be
// regenerated on the host for a reference (a host fill and upload of 2^28 elements would
// dominate a run), and a copy can be checked on either side without copying back.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace memlab::detail {

/// splitmix64's finalizer of seed + (index + 1) x the golden-ratio increment: element
/// `index` of the stream for `seed`, independent of every other element.
__host__ __device__ constexpr std::uint64_t splitmix64(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed + (index + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace memlab::detail
