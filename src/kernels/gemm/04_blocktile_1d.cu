// 04: 1D register blocking. A 64x64 block tile with BK = 8; each thread computes a column
// of 8 outputs, so one value of B read from shared memory feeds 8 FMAs and the A values
// are warp-wide broadcasts.
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
constexpr int kBM = 64, kBN = 64, kBK = 8, kTM = 8;
constexpr int kThreads = kBM * kBN / kTM;  // 512
static_assert(kBM * kBK == kThreads && kBK * kBN == kThreads, "one element of A and B per thread");

__global__ void __launch_bounds__(kThreads) blocktile_1d_kernel(problem p, int tiles_n) {
  __shared__ float as[kBM][kBK];
  __shared__ float bs[kBK][kBN];
  int const tid = static_cast<int>(threadIdx.x);
  int const tn = static_cast<int>(blockIdx.x) % tiles_n, tm = static_cast<int>(blockIdx.x) / tiles_n;
  int const m0 = tm * kBM, n0 = tn * kBN;
  int const a_m = tid / kBK, a_k = tid % kBK;   // loads run along k: 32-byte row segments
  int const b_k = tid / kBN, b_n = tid % kBN;
  int const col = tid % kBN, row0 = (tid / kBN) * kTM;
  float acc[kTM] = {};
  for (int k0 = 0; k0 < p.k; k0 += kBK) {
    as[a_m][a_k] = (m0 + a_m < p.m && k0 + a_k < p.k) ? p.a[static_cast<long long>(m0 + a_m) * p.lda + k0 + a_k] : 0.f;
    bs[b_k][b_n] = (k0 + b_k < p.k && n0 + b_n < p.n) ? p.b[static_cast<long long>(k0 + b_k) * p.ldb + n0 + b_n] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      float const b = bs[kk][col];
#pragma unroll
      for (int i = 0; i < kTM; ++i) acc[i] += as[row0 + i][kk] * b;
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < kTM; ++i)
    if (m0 + row0 + i < p.m && n0 + col < p.n) store_c(p.c, p.ldc, m0 + row0 + i, n0 + col, acc[i], p.alpha, p.beta);
}
}  // namespace

void launch_blocktile_1d(problem const& p, cudaStream_t s) {
  int const tm = ceil_div(p.m, kBM), tn = ceil_div(p.n, kBN);
  blocktile_1d_kernel<<<static_cast<unsigned>(tm) * tn, kThreads, 0, s>>>(p, tn);
  MEMLAB_CHECK_LAUNCH();
}
cudaFuncAttributes attributes_blocktile_1d(bool) { return func_attributes(blocktile_1d_kernel); }

}  // namespace memlab::detail::gemm
