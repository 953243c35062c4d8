// 01: one output per thread, threadIdx.x walking down a column of C. Consecutive lanes
// read consecutive *rows* of A (a 4*lda-byte stride) and write a column of C: no
// coalescing at all; B is read as a broadcast. The floor of the ladder.
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
constexpr int kTile = 32;

__global__ void naive_kernel(problem p, int tiles_m) {
  int const tm = static_cast<int>(blockIdx.x) % tiles_m, tn = static_cast<int>(blockIdx.x) / tiles_m;
  int const row = tm * kTile + static_cast<int>(threadIdx.x);
  int const col = tn * kTile + static_cast<int>(threadIdx.y);
  if (row >= p.m || col >= p.n) return;
  float const* a = p.a + static_cast<long long>(row) * p.lda;
  float acc = 0.f;
  for (int i = 0; i < p.k; ++i) acc += a[i] * p.b[static_cast<long long>(i) * p.ldb + col];
  store_c(p.c, p.ldc, row, col, acc, p.alpha, p.beta);
}
}  // namespace

void launch_naive(problem const& p, cudaStream_t s) {
  int const tm = ceil_div(p.m, kTile), tn = ceil_div(p.n, kTile);
  naive_kernel<<<static_cast<unsigned>(tm) * tn, dim3(kTile, kTile), 0, s>>>(p, tm);
  MEMLAB_CHECK_LAUNCH();
}
cudaFuncAttributes attributes_naive(bool) { return func_attributes(naive_kernel); }

}  // namespace memlab::detail::gemm
