#pragma once
// A kernel that does nothing but independent FP32 FMAs: the measured FP32 ceiling.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace memlab::detail {

inline constexpr int fma_chains = 8;  ///< independent accumulators per thread (hides FMA latency)

/// Each thread t runs `fma_chains` chains acc = fma(acc, a, b) for `iterations` steps,
/// starting from seeds[t % seed_count] + chain, and writes the sum of its chains to out[t].
/// Flops: threads * fma_chains * iterations * 2.
void fma_peak(float* out, float const* seeds, std::size_t seed_count, int blocks, int threads, int iterations,
              float a, float b, cudaStream_t stream);

/// The same computation on the host, for thread `t` (std::fma in float: bitwise equal).
float fma_peak_reference(float seed, int iterations, float a, float b);

}  // namespace memlab::detail
