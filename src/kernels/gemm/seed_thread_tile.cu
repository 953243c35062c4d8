// Seed 001 §1-2: each thread computes a TILE x TILE block of C straight from global
// memory (no shared memory), TILE = 1 .. 64, in 16x16-thread blocks. The per-thread
// accumulator array is TILE^2 floats: from TILE = 16 on it exceeds the 255-register
// limit and spills to local memory -- the cliff in the seed's table.
#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {
constexpr int kBlock = 16;

template <int TILE>
__global__ void seed_thread_tile_kernel(int n, float const* __restrict__ a, float const* __restrict__ b,
                                        float* __restrict__ c) {
  int const row0 = (static_cast<int>(blockIdx.y) * kBlock + static_cast<int>(threadIdx.y)) * TILE;
  int const col0 = (static_cast<int>(blockIdx.x) * kBlock + static_cast<int>(threadIdx.x)) * TILE;
  if (row0 >= n || col0 >= n) return;
  // Unrolled, the arrays could live in registers; from TILE = 32 on they cannot (1024+
  // accumulators), and unrolling 4096 FFMAs only slows the compiler: they stay in local memory.
  constexpr int kUnroll = TILE <= 16 ? TILE : 1;
  float sum[TILE][TILE];
#pragma unroll kUnroll
  for (int i = 0; i < TILE; ++i)
#pragma unroll kUnroll
    for (int j = 0; j < TILE; ++j) sum[i][j] = 0.f;
  for (int k = 0; k < n; ++k) {
    float av[TILE], bv[TILE];
#pragma unroll kUnroll
    for (int i = 0; i < TILE; ++i) {
      av[i] = row0 + i < n ? a[static_cast<long long>(row0 + i) * n + k] : 0.f;
      bv[i] = col0 + i < n ? b[static_cast<long long>(k) * n + col0 + i] : 0.f;
    }
#pragma unroll kUnroll
    for (int i = 0; i < TILE; ++i)
#pragma unroll kUnroll
      for (int j = 0; j < TILE; ++j) sum[i][j] += av[i] * bv[j];
  }
#pragma unroll kUnroll
  for (int i = 0; i < TILE; ++i)
#pragma unroll kUnroll
    for (int j = 0; j < TILE; ++j)
      if (row0 + i < n && col0 + j < n) c[static_cast<long long>(row0 + i) * n + col0 + j] = sum[i][j];
}

template <int TILE>
void launch_tile(int n, float const* a, float const* b, float* c, cudaStream_t s) {
  int const blocks = ceil_div(ceil_div(n, TILE), kBlock);
  seed_thread_tile_kernel<TILE><<<dim3(blocks, blocks), dim3(kBlock, kBlock), 0, s>>>(n, a, b, c);
  MEMLAB_CHECK_LAUNCH();
}
}  // namespace

std::vector<int> const& seed_thread_tiles() {
  static std::vector<int> const tiles{1, 2, 4, 8, 16, 32, 64};
  return tiles;
}

void launch_seed_thread_tile(int tile, int n, float const* a, float const* b, float* c, cudaStream_t s) {
  switch (tile) {
    case 1: return launch_tile<1>(n, a, b, c, s);
    case 2: return launch_tile<2>(n, a, b, c, s);
    case 4: return launch_tile<4>(n, a, b, c, s);
    case 8: return launch_tile<8>(n, a, b, c, s);
    case 16: return launch_tile<16>(n, a, b, c, s);
    case 32: return launch_tile<32>(n, a, b, c, s);
    case 64: return launch_tile<64>(n, a, b, c, s);
    default: MEMLAB_EXPECTS(false, "thread tile must be 1, 2, 4, 8, 16, 32 or 64");
  }
}

cudaFuncAttributes seed_thread_tile_attributes(int tile) {
  switch (tile) {
    case 1: return func_attributes(seed_thread_tile_kernel<1>);
    case 2: return func_attributes(seed_thread_tile_kernel<2>);
    case 4: return func_attributes(seed_thread_tile_kernel<4>);
    case 8: return func_attributes(seed_thread_tile_kernel<8>);
    case 16: return func_attributes(seed_thread_tile_kernel<16>);
    case 32: return func_attributes(seed_thread_tile_kernel<32>);
    case 64: return func_attributes(seed_thread_tile_kernel<64>);
    default: MEMLAB_EXPECTS(false, "thread tile must be 1, 2, 4, 8, 16, 32 or 64");
  }
}

}  // namespace memlab::detail::gemm
