// 02: one output per thread, threadIdx.x walking along a row of C. A warp now reads one
// element of A (broadcast) and 32 consecutive floats of B per step, and writes 128
// contiguous bytes of C: every global access is coalesced.
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
constexpr int kTile = 32;

__global__ void coalesced_kernel(problem p, int tiles_n) {
  int const tn = static_cast<int>(blockIdx.x) % tiles_n, tm = static_cast<int>(blockIdx.x) / tiles_n;
  int const col = tn * kTile + static_cast<int>(threadIdx.x);
  int const row = tm * kTile + static_cast<int>(threadIdx.y);
  if (row >= p.m || col >= p.n) return;
  float const* a = p.a + static_cast<long long>(row) * p.lda;
  float acc = 0.f;
  for (int i = 0; i < p.k; ++i) acc += a[i] * p.b[static_cast<long long>(i) * p.ldb + col];
  store_c(p.c, p.ldc, row, col, acc, p.alpha, p.beta);
}
}  // namespace

void launch_coalesced(problem const& p, cudaStream_t s) {
  int const tm = ceil_div(p.m, kTile), tn = ceil_div(p.n, kTile);
  coalesced_kernel<<<static_cast<unsigned>(tm) * tn, dim3(kTile, kTile), 0, s>>>(p, tn);
  MEMLAB_CHECK_LAUNCH();
}
cudaFuncAttributes attributes_coalesced(bool) { return func_attributes(coalesced_kernel); }

}  // namespace memlab::detail::gemm
