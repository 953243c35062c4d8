// 05: 2D register blocking. 128x128 block tile, BK = 8, 8x8 outputs per thread: per k
// step a thread reads 8 values of A and 8 of B from shared memory and does 64 FMAs
// (4 FMAs per shared load instead of 1).
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
constexpr int kBM = 128, kBN = 128, kBK = 8, kTM = 8, kTN = 8;
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 256
constexpr int kLoadsA = kBM * kBK / kThreads, kLoadsB = kBK * kBN / kThreads;

__global__ void __launch_bounds__(kThreads) blocktile_2d_kernel(problem p, int tiles_n) {
  __shared__ float as[kBM][kBK];
  __shared__ float bs[kBK][kBN];
  int const tid = static_cast<int>(threadIdx.x);
  int const tn = static_cast<int>(blockIdx.x) % tiles_n, tm = static_cast<int>(blockIdx.x) / tiles_n;
  int const m0 = tm * kBM, n0 = tn * kBN;
  int const trow = tid / (kBN / kTN), tcol = tid % (kBN / kTN);
  float acc[kTM][kTN] = {};
  for (int k0 = 0; k0 < p.k; k0 += kBK) {
#pragma unroll
    for (int it = 0; it < kLoadsA; ++it) {
      int const e = tid + it * kThreads, m = e / kBK, k = e % kBK;
      as[m][k] = (m0 + m < p.m && k0 + k < p.k) ? p.a[static_cast<long long>(m0 + m) * p.lda + k0 + k] : 0.f;
    }
#pragma unroll
    for (int it = 0; it < kLoadsB; ++it) {
      int const e = tid + it * kThreads, k = e / kBN, n = e % kBN;
      bs[k][n] = (k0 + k < p.k && n0 + n < p.n) ? p.b[static_cast<long long>(k0 + k) * p.ldb + n0 + n] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float a[kTM], b[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) a[i] = as[trow * kTM + i][kk];
#pragma unroll
      for (int j = 0; j < kTN; ++j) b[j] = bs[kk][tcol * kTN + j];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i)
#pragma unroll
    for (int j = 0; j < kTN; ++j) {
      int const r = m0 + trow * kTM + i, c = n0 + tcol * kTN + j;
      if (r < p.m && c < p.n) store_c(p.c, p.ldc, r, c, acc[i][j], p.alpha, p.beta);
    }
}
}  // namespace

void launch_blocktile_2d(problem const& p, cudaStream_t s) {
  int const tm = ceil_div(p.m, kBM), tn = ceil_div(p.n, kBN);
  blocktile_2d_kernel<<<static_cast<unsigned>(tm) * tn, kThreads, 0, s>>>(p, tn);
  MEMLAB_CHECK_LAUNCH();
}
cudaFuncAttributes attributes_blocktile_2d(bool) { return func_attributes(blocktile_2d_kernel); }

}  // namespace memlab::detail::gemm
