// 03: 32x32 tiles of A and B staged through shared memory: each element fetched from
// global memory is reused 32 times from on-chip memory. Out-of-range elements are
// stored as zeros so partial tiles need no special inner loop.
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
constexpr int kTile = 32;

__global__ void smem_tiled_kernel(problem p, int tiles_n) {
  __shared__ float as[kTile][kTile];
  __shared__ float bs[kTile][kTile];
  int const tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  int const tn = static_cast<int>(blockIdx.x) % tiles_n, tm = static_cast<int>(blockIdx.x) / tiles_n;
  int const row = tm * kTile + ty, col = tn * kTile + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < p.k; k0 += kTile) {
    as[ty][tx] = (row < p.m && k0 + tx < p.k) ? p.a[static_cast<long long>(row) * p.lda + k0 + tx] : 0.f;
    bs[ty][tx] = (k0 + ty < p.k && col < p.n) ? p.b[static_cast<long long>(k0 + ty) * p.ldb + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += as[ty][kk] * bs[kk][tx];
    __syncthreads();
  }
  if (row < p.m && col < p.n) store_c(p.c, p.ldc, row, col, acc, p.alpha, p.beta);
}
}  // namespace

void launch_smem_tiled(problem const& p, cudaStream_t s) {
  int const tm = ceil_div(p.m, kTile), tn = ceil_div(p.n, kTile);
  smem_tiled_kernel<<<static_cast<unsigned>(tm) * tn, dim3(kTile, kTile), 0, s>>>(p, tn);
  MEMLAB_CHECK_LAUNCH();
}
cudaFuncAttributes attributes_smem_tiled(bool) { return func_attributes(smem_tiled_kernel); }

}  // namespace memlab::detail::gemm
