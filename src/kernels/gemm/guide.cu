// CUDA C++ Best Practices Guide 9.2.3.2 / 9.2.3.3 (seed 000): the w = 32 products used to
// teach shared memory. Block = 32x32 threads, one output each.
//   C = A B   (A: m x 32, B: 32 x n)  simple (A re-read per warp through L1), coalesced
//             (A's tile read once, coalesced, into shared memory), shared_ab (B too).
//   C = A A^T (A: m x 32, C: m x m)   simple (the second operand read down a column:
//             a 128-byte stride per lane), coalesced (read coalesced, transposed in shared
//             memory: 32-way bank conflicts), padded ([32][33]: conflict-free).
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
constexpr int kW = guide_tile;

__global__ void ab_simple(int m, int n, float const* __restrict__ a, float const* __restrict__ b, float* __restrict__ c) {
  int const row = static_cast<int>(blockIdx.y) * kW + static_cast<int>(threadIdx.y);
  int const col = static_cast<int>(blockIdx.x) * kW + static_cast<int>(threadIdx.x);
  if (row >= m || col >= n) return;
  float sum = 0.f;
  for (int i = 0; i < kW; ++i) sum += a[row * kW + i] * b[static_cast<long long>(i) * n + col];
  c[static_cast<long long>(row) * n + col] = sum;
}

__global__ void ab_coalesced(int m, int n, float const* __restrict__ a, float const* __restrict__ b, float* __restrict__ c) {
  __shared__ float a_tile[kW][kW];
  int const tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  int const row = static_cast<int>(blockIdx.y) * kW + ty, col = static_cast<int>(blockIdx.x) * kW + tx;
  a_tile[ty][tx] = row < m ? a[row * kW + tx] : 0.f;
  __syncwarp();  // a warp reads back only the row it wrote
  if (row >= m || col >= n) return;
  float sum = 0.f;
  for (int i = 0; i < kW; ++i) sum += a_tile[ty][i] * b[static_cast<long long>(i) * n + col];
  c[static_cast<long long>(row) * n + col] = sum;
}

__global__ void ab_shared(int m, int n, float const* __restrict__ a, float const* __restrict__ b, float* __restrict__ c) {
  __shared__ float a_tile[kW][kW];
  __shared__ float b_tile[kW][kW];
  int const tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  int const row = static_cast<int>(blockIdx.y) * kW + ty, col = static_cast<int>(blockIdx.x) * kW + tx;
  a_tile[ty][tx] = row < m ? a[row * kW + tx] : 0.f;
  b_tile[ty][tx] = col < n ? b[static_cast<long long>(ty) * n + col] : 0.f;
  __syncthreads();
  if (row >= m || col >= n) return;
  float sum = 0.f;
  for (int i = 0; i < kW; ++i) sum += a_tile[ty][i] * b_tile[i][tx];
  c[static_cast<long long>(row) * n + col] = sum;
}

__global__ void aat_simple(int m, float const* __restrict__ a, float* __restrict__ c) {
  int const row = static_cast<int>(blockIdx.y) * kW + static_cast<int>(threadIdx.y);
  int const col = static_cast<int>(blockIdx.x) * kW + static_cast<int>(threadIdx.x);
  if (row >= m || col >= m) return;
  float sum = 0.f;
  for (int i = 0; i < kW; ++i) sum += a[row * kW + i] * a[col * kW + i];
  c[static_cast<long long>(row) * m + col] = sum;
}

template <int PAD>
__global__ void aat_tiled(int m, float const* __restrict__ a, float* __restrict__ c) {
  __shared__ float a_tile[kW][kW];
  __shared__ float t_tile[kW][kW + PAD];
  int const tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  int const row = static_cast<int>(blockIdx.y) * kW + ty, col = static_cast<int>(blockIdx.x) * kW + tx;
  int const trow = static_cast<int>(blockIdx.x) * kW + ty;  // rows of A that become columns of C
  a_tile[ty][tx] = row < m ? a[row * kW + tx] : 0.f;
  // Coalesced read, transposed write: lanes tx write column tx of one row -- without the
  // pad, 32 addresses 32 floats apart, all in one bank.
  t_tile[tx][ty] = trow < m ? a[trow * kW + tx] : 0.f;
  __syncthreads();
  if (row >= m || col >= m) return;
  float sum = 0.f;
  for (int i = 0; i < kW; ++i) sum += a_tile[ty][i] * t_tile[i][tx];
  c[static_cast<long long>(row) * m + col] = sum;
}
}  // namespace

void launch_guide_ab(guide_ab_kernel which, int m, int n, float const* a, float const* b, float* c, cudaStream_t s) {
  MEMLAB_EXPECTS(m >= 0 && n >= 0 && ceil_div(m, kW) <= 65535, "guide C=AB: bad shape");
  if (m == 0 || n == 0) return;
  dim3 const grid(ceil_div(n, kW), ceil_div(m, kW)), block(kW, kW);
  switch (which) {
    case guide_ab_kernel::simple: ab_simple<<<grid, block, 0, s>>>(m, n, a, b, c); break;
    case guide_ab_kernel::coalesced: ab_coalesced<<<grid, block, 0, s>>>(m, n, a, b, c); break;
    case guide_ab_kernel::shared_ab: ab_shared<<<grid, block, 0, s>>>(m, n, a, b, c); break;
  }
  MEMLAB_CHECK_LAUNCH();
}

void launch_guide_aat(guide_aat_kernel which, int m, float const* a, float* c, cudaStream_t s) {
  MEMLAB_EXPECTS(m >= 0 && ceil_div(m, kW) <= 65535, "guide C=AA^T: bad shape");
  if (m == 0) return;
  dim3 const grid(ceil_div(m, kW), ceil_div(m, kW)), block(kW, kW);
  switch (which) {
    case guide_aat_kernel::simple: aat_simple<<<grid, block, 0, s>>>(m, a, c); break;
    case guide_aat_kernel::coalesced: aat_tiled<0><<<grid, block, 0, s>>>(m, a, c); break;
    case guide_aat_kernel::padded: aat_tiled<1><<<grid, block, 0, s>>>(m, a, c); break;
  }
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::detail::gemm
