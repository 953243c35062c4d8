#include <cmath>

#include "kernels/ceilings/fma_peak.hpp"
#include "memlab/error.hpp"

namespace memlab::detail {

namespace {
__global__ void fma_peak_kernel(float* out, float const* seeds, std::size_t seed_count, int iterations, float a,
                                float b) {
  std::size_t const t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  float const s = seeds[t % seed_count];
  float acc[fma_chains];
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) acc[c] = s + static_cast<float>(c);
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int c = 0; c < fma_chains; ++c) acc[c] = __fmaf_rn(acc[c], a, b);
  }
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < fma_chains; ++c) sum += acc[c];
  out[t] = sum;
}
}  // namespace

void fma_peak(float* out, float const* seeds, std::size_t seed_count, int blocks, int threads, int iterations, float a,
              float b, cudaStream_t stream) {
  MEMLAB_EXPECTS(out && seeds && seed_count > 0, "null or empty argument");
  fma_peak_kernel<<<blocks, threads, 0, stream>>>(out, seeds, seed_count, iterations, a, b);
  MEMLAB_CHECK_LAUNCH();
}

float fma_peak_reference(float seed, int iterations, float a, float b) {
  float acc[fma_chains];
  for (int c = 0; c < fma_chains; ++c) acc[c] = seed + static_cast<float>(c);
  for (int i = 0; i < iterations; ++i)
    for (int c = 0; c < fma_chains; ++c) acc[c] = std::fmaf(acc[c], a, b);
  float sum = 0.f;
  for (int c = 0; c < fma_chains; ++c) sum += acc[c];
  return sum;
}

}  // namespace memlab::detail
