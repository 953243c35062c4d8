// Seed 001 §3 / seed 004 (PMPP ch. 5): w x w threads per block, each computing one
// output from w x w tiles of A and B staged in shared memory, tile width w = 1 .. 32 at
// run time (dynamic shared memory). Out-of-range tile elements load as zero, so any
// m, n, k works.
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
__global__ void seed_smem_tile_kernel(int w, int m, int n, int k, float const* __restrict__ a,
                                      float const* __restrict__ b, float* __restrict__ c) {
  extern __shared__ float tiles[];
  float* const as = tiles;          // w x w
  float* const bs = tiles + w * w;  // w x w
  int const tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  int const row = static_cast<int>(blockIdx.y) * w + ty, col = static_cast<int>(blockIdx.x) * w + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < k; k0 += w) {
    as[ty * w + tx] = (row < m && k0 + tx < k) ? a[static_cast<long long>(row) * k + k0 + tx] : 0.f;
    bs[ty * w + tx] = (k0 + ty < k && col < n) ? b[static_cast<long long>(k0 + ty) * n + col] : 0.f;
    __syncthreads();
    for (int kk = 0; kk < w; ++kk) acc += as[ty * w + kk] * bs[kk * w + tx];
    __syncthreads();
  }
  if (row < m && col < n) c[static_cast<long long>(row) * n + col] = acc;
}
}  // namespace

void launch_seed_smem_tile(int w, int m, int n, int k, float const* a, float const* b, float* c, cudaStream_t s) {
  MEMLAB_EXPECTS(w >= 1 && w <= 32, "shared tile width must be 1..32");
  int const gx = ceil_div(n, w), gy = ceil_div(m, w);
  MEMLAB_EXPECTS(gy <= 65535, "m / w exceeds the grid's y limit");
  if (gx == 0 || gy == 0) return;
  seed_smem_tile_kernel<<<dim3(gx, gy), dim3(w, w), 2 * w * w * sizeof(float), s>>>(w, m, n, k, a, b, c);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::detail::gemm
