// Rung 2: mma.sync m16n8k16 fed by ldmatrix from a 4-stage cp.async pipeline. 128 x 256
// tiles, k slices of 32, eight warps (2 x 4) of 64 x 64: per k16 step a warp issues 8
// ldmatrix.x4 for 32 mma (4 per ldmatrix; 64 x 32 warps managed 2.7), and a block does twice
// the MMA work between two barriers of its 128 x 128 predecessor (docs/tc-gemm.md). Shared rows are 64 bytes (four 16-byte
// chunks); chunk c of row r lives at c ^ ((r >> 1) & 3), so the eight rows one ldmatrix
// phase reads (and the eight chunks a cp.async phase writes) hit eight different 16-byte
// bank groups: no conflicts without padding. Needs the canonical K-major layout and
// 16-byte aligned rows (docs/tc-gemm.md); the k tail is zero-filled by cp.async's src-size.
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {

/// Element offset of (row, 16-byte chunk) in a tile of 32-element (64-byte) rows, swizzled.
__host__ __device__ constexpr int mma_sync_swizzle(int row, int chunk) { return row * 32 + ((chunk ^ ((row >> 1) & 3)) * 8); }

namespace {

constexpr int bm = 128, bn = 256, bk = 32, stages = 4, threads = 256;
constexpr int warp_n = 64, n8_per_warp = warp_n / 8;  // eight m16n8 column blocks per warp
static_assert(n8_per_warp % 2 == 0 && 4 * warp_n == bn, "ldmatrix.x4 loads B fragments in pairs; 4 warps span bn");
static_assert(bk == 32, "mma_sync_swizzle assumes 64-byte rows");
constexpr int tile_elems = (bm + bn) * bk;  // one stage: A tile then B tile
constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * tile_elems * 2;  // 96 KB: fits sm_86/89's 99 KB
static_assert((bm + bn) * bk / 8 % threads == 0, "each thread copies whole 16-byte chunks");


template <class In>
__global__ void __launch_bounds__(threads) mma_sync_kernel(problem p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  extern __shared__ __align__(128) unsigned char smem_raw[];
  In* smem = reinterpret_cast<In*>(smem_raw);
  std::int64_t const tiles_m = (p.m + bm - 1) / bm;
  // Blocks walk down M first: neighbours share the B tile.
  std::int64_t const row0 = (static_cast<std::int64_t>(blockIdx.x) % tiles_m) * bm;
  std::int64_t const col0 = (static_cast<std::int64_t>(blockIdx.x) / tiles_m) * bn;
  int const tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  int const wm = (warp / 4) * 64, wn = (warp % 4) * warp_n;
  In const* a = static_cast<In const*>(p.a);
  In const* b = static_cast<In const*>(p.b);
  int const nk = static_cast<int>((p.k + bk - 1) / bk);

  auto load_stage = [&](int slot, int kb) {
    In* sa = smem + slot * tile_elems;
    In* sb = sa + bm * bk;
    std::int64_t const k0 = static_cast<std::int64_t>(kb) * bk;
#pragma unroll
    for (int i = 0; i < (bm + bn) * bk / 8 / threads; ++i) {
      int const idx = tid + i * threads;  // 16-byte chunk of the stage: A's 512, then B's 1024
      bool const is_a = idx < bm * bk / 8;
      int const local = is_a ? idx : idx - bm * bk / 8;
      int const r = local / 4, ch = local % 4;
      std::int64_t const g = (is_a ? row0 : col0) + r;
      std::int64_t const gk = k0 + ch * 8;
      bool const row_ok = g < (is_a ? p.m : p.n);
      std::int64_t const left = p.k - gk;
      int const bytes = (row_ok && left > 0) ? static_cast<int>(left >= 8 ? 16 : left * 2) : 0;
      In const* src = is_a ? a : b;
      if (bytes > 0) src += g * (is_a ? p.a_si : p.b_sj) + gk;
      cp_async_16(smem_addr((is_a ? sa : sb) + mma_sync_swizzle(r, ch)), src, bytes);
    }
  };

  float acc[4][n8_per_warp][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < n8_per_warp; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

#pragma unroll
  for (int s = 0; s < stages - 1; ++s) {
    if (s < nk) load_stage(s, s);
    cp_async_commit();
  }
  for (int kb = 0; kb < nk; ++kb) {
    cp_async_wait<stages - 2>();  // slice kb has landed (this thread's copies)
    __syncthreads();              // ... everyone's; and everyone is done with slice kb - 1
    if (kb + stages - 1 < nk) load_stage((kb + stages - 1) % stages, kb + stages - 1);
    cp_async_commit();
    In const* sa = smem + (kb % stages) * tile_elems;
    In const* sb = sa + bm * bk;
#pragma unroll
    for (int kk = 0; kk < bk / 8; kk += 2) {  // k16 steps, in 8-element chunks
      // B's eight n8 fragments stay in registers for the step; A's four m16 fragments are
      // loaded one at a time next to their eight mma (12 registers fewer than holding all four:
      // 64 x 64 warps fit 255 registers without spilling).
      std::uint32_t fb[n8_per_warp][2];
#pragma unroll
      for (int j = 0; j < n8_per_warp / 2; ++j) {
        int const r = wn + 16 * j + (lane / 16) * 8 + lane % 8;
        std::uint32_t t[4];
        ldmatrix_x4(t, smem_addr(sb + mma_sync_swizzle(r, kk + (lane / 8) % 2)));
        fb[2 * j][0] = t[0];
        fb[2 * j][1] = t[1];
        fb[2 * j + 1][0] = t[2];
        fb[2 * j + 1][1] = t[3];
      }
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        std::uint32_t fa[4];
        ldmatrix_x4(fa, smem_addr(sa + mma_sync_swizzle(wm + 16 * i + lane % 16, kk + lane / 16)));
#pragma unroll
        for (int j = 0; j < n8_per_warp; ++j) mma_16816<In>(acc[i][j], fa, fb[j][0], fb[j][1]);
      }
    }
  }
  cp_async_wait<0>();

  int const g = lane / 4, t4 = lane % 4;
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < n8_per_warp; ++j) {
      std::int64_t const r = row0 + wm + 16 * i + g;
      std::int64_t const c = col0 + wn + 8 * j + 2 * t4;
      store_pair<In>(p, r, c, acc[i][j][0], acc[i][j][1]);
      store_pair<In>(p, r + 8, c, acc[i][j][2], acc[i][j][3]);
    }
#else
  __trap();  // cp.async, ldmatrix and BF16 mma.sync need sm_80: the host refuses first
#endif
}

}  // namespace

template <class In>
void launch_mma_sync(problem const& p, cudaStream_t st) {
  std::int64_t const blocks = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
  MEMLAB_EXPECTS(blocks <= 0x7fffffff, "too many 128 x 256 tiles for one grid");
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(mma_sync_kernel<In>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem_bytes)));
  mma_sync_kernel<In><<<static_cast<unsigned>(blocks), threads, smem_bytes, st>>>(p);
  MEMLAB_CHECK_LAUNCH();
}

void const* kernel_mma_sync() { return reinterpret_cast<void const*>(mma_sync_kernel<__nv_bfloat16>); }
std::size_t smem_mma_sync() { return smem_bytes; }

template void launch_mma_sync<__half>(problem const&, cudaStream_t);
template void launch_mma_sync<__nv_bfloat16>(problem const&, cudaStream_t);

}  // namespace memlab::detail::gemm_tc
