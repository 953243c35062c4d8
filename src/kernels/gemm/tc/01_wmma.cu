// Rung 1: WMMA fragments from shared memory. 64 x 64 tiles, k slices of 32, four warps of
// 32 x 32 (2 x 2 fragments of 16 x 16 x 16). Operands are staged element by element with
// bounds checks, coalesced along whichever index is contiguous, so this rung takes every
// layout, leading dimension and alignment: the ladder's baseline and the library's fallback.
#include <mma.h>

#include <algorithm>

#include "kernels/gemm/tc/tc_kernels.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {
namespace {

constexpr int bm = 64, bn = 64, bk = 32, pad = 8, threads = 128;

template <class In>
__device__ void wmma_body(problem const& p) {
  using namespace nvcuda;
  __shared__ __align__(128) In as[bm][bk + pad];
  __shared__ __align__(128) In bs[bn][bk + pad];  // B' stored n-major: a col_major k x n fragment
  __shared__ __align__(128) float cs[bm][bn + 4];
  std::int64_t const tiles_n = (p.n + bn - 1) / bn;
  std::int64_t const row0 = (static_cast<std::int64_t>(blockIdx.x) / tiles_n) * bm;
  std::int64_t const col0 = (static_cast<std::int64_t>(blockIdx.x) % tiles_n) * bn;
  int const tid = threadIdx.x, warp = tid / 32;
  int const wm = (warp / 2) * 32, wn = (warp % 2) * 32;
  In const* a = static_cast<In const*>(p.a);
  In const* b = static_cast<In const*>(p.b);
  In const zero = from_float<In>(0.f);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  bool const a_kmajor = p.a_sk == 1, b_kmajor = p.b_sk == 1;
  for (std::int64_t k0 = 0; k0 < p.k; k0 += bk) {
    for (int e = tid; e < bm * bk; e += threads) {
      // Consecutive threads take consecutive addresses: along k when k is contiguous.
      int const r = a_kmajor ? e / bk : e % bm, kk = a_kmajor ? e % bk : e / bm;
      std::int64_t const gi = row0 + r, gk = k0 + kk;
      as[r][kk] = (gi < p.m && gk < p.k) ? a[gi * p.a_si + gk * p.a_sk] : zero;
    }
    for (int e = tid; e < bn * bk; e += threads) {
      int const c = b_kmajor ? e / bk : e % bn, kk = b_kmajor ? e % bk : e / bn;
      std::int64_t const gj = col0 + c, gk = k0 + kk;
      bs[c][kk] = (gj < p.n && gk < p.k) ? b[gj * p.b_sj + gk * p.b_sk] : zero;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < bk; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, In, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, In, wmma::col_major> fb[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &as[wm + 16 * i][kk], bk + pad);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &bs[wn + 16 * j][kk], bk + pad);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&cs[wm + 16 * i][wn + 16 * j], acc[i][j], bn + 4, wmma::mem_row_major);
  __syncthreads();
  for (int e = tid; e < bm * bn / 2; e += threads) {
    int const r = e / (bn / 2), c = 2 * (e % (bn / 2));
    store_pair<In>(p, row0 + r, col0 + c, cs[r][c], cs[r][c + 1]);
  }
}

template <class In>
__global__ void __launch_bounds__(threads) wmma_kernel(problem p) {
  if constexpr (std::is_same_v<In, __half>) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
    wmma_body<In>(p);
#else
    __trap();
#endif
  } else {
    // BF16 fragments need sm_80 (Turing's tensor cores have no BF16).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    wmma_body<In>(p);
#else
    __trap();
#endif
  }
}

template <class In>
__global__ void scale_c_kernel(problem p) {
  std::int64_t const pairs_per_row = (p.n + 1) / 2;
  std::int64_t const total = p.m * pairs_per_row;
  for (std::int64_t e = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    store_pair<In>(p, e / pairs_per_row, 2 * (e % pairs_per_row), 0.f, 0.f);
}

}  // namespace

template <class In>
void launch_wmma(problem const& p, cudaStream_t st) {
  std::int64_t const blocks = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
  MEMLAB_EXPECTS(blocks <= 0x7fffffff, "too many 64 x 64 tiles for one grid");
  wmma_kernel<In><<<static_cast<unsigned>(blocks), threads, 0, st>>>(p);
  MEMLAB_CHECK_LAUNCH();
}

template <class In>
void launch_scale_c(problem const& p, cudaStream_t st) {
  // alpha * 0 + beta * C: store_pair's beta == 0 path writes zeros without reading C.
  std::int64_t const pairs = p.m * ((p.n + 1) / 2);
  int const grid = static_cast<int>(std::min<std::int64_t>((pairs + 255) / 256, 4096));
  scale_c_kernel<In><<<grid, 256, 0, st>>>(p);
  MEMLAB_CHECK_LAUNCH();
}

template <class In>
void const* kernel_wmma() {
  return reinterpret_cast<void const*>(wmma_kernel<In>);
}

template void launch_wmma<__half>(problem const&, cudaStream_t);
template void launch_wmma<__nv_bfloat16>(problem const&, cudaStream_t);
template void launch_scale_c<__half>(problem const&, cudaStream_t);
template void launch_scale_c<__nv_bfloat16>(problem const&, cudaStream_t);
template void const* kernel_wmma<__half>();
template void const* kernel_wmma<__nv_bfloat16>();

}  // namespace memlab::detail::gemm_tc
