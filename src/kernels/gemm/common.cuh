#pragma once
// Device helpers shared by the GEMM kernels.
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/gemm/gemm_kernels.hpp"
#include "memlab/error.hpp"

namespace memlab::detail::gemm {

constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

/// C[r][c] = alpha * acc + beta * C[r][c]; C is not read when beta == 0 (BLAS semantics:
/// a NaN already in C must not leak into the result).
__device__ __forceinline__ void store_c(float* c, long long ldc, int r, int col, float acc, float alpha,
                                        float beta) {
  float* p = c + static_cast<long long>(r) * ldc + col;
  *p = beta == 0.f ? alpha * acc : alpha * acc + beta * *p;
}

/// Maps a linear block index to a (tile_m, tile_n) pair so that consecutive blocks walk
/// down a column group of `group` tile rows: the blocks resident at once share B tiles
/// and A tiles in L2 instead of streaming all of B for every row of tiles.
struct tile_coord {
  int m, n;
};
__host__ __device__ constexpr tile_coord swizzle_tile(int pid, int tiles_m, int tiles_n, int group) {
  int const per_group = group * tiles_n;
  int const group_id = pid / per_group;
  int const first_m = group_id * group;
  int const rows = tiles_m - first_m < group ? tiles_m - first_m : group;
  int const in_group = pid % per_group;
  return {first_m + in_group % rows, in_group / rows};
}

// ---- cp.async (sm_80+): global -> shared without passing through registers -------------
__device__ __forceinline__ std::uint32_t smem_addr(void const* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}
// Below sm_80 (a build for an older target) the same helpers degrade to synchronous
// copies through registers, so device code using them still compiles for any
// architecture. The cp_async_* kernels do not run that imitation: below sm_80 their
// bodies trap, memlab::gemm refuses them (variant_entry::needs_arch) and its default
// picks warp_tiled.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define MEMLAB_GEMM_SYNC_COPY 1
#endif

/// 4-byte copy through L1; `valid` false zero-fills the destination without reading `src`.
__device__ __forceinline__ void cp_async_4(void* dst, void const* src, bool valid) {
#ifdef MEMLAB_GEMM_SYNC_COPY
  *static_cast<float*>(dst) = valid ? *static_cast<float const*>(src) : 0.f;
#else
  int const n = valid ? 4 : 0;
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(n));
#endif
}
/// 16-byte copy bypassing L1; `bytes` (0, 4, 8, 12 or 16) are read, the rest zero-filled.
__device__ __forceinline__ void cp_async_16(void* dst, void const* src, int bytes) {
#ifdef MEMLAB_GEMM_SYNC_COPY
  float* d = static_cast<float*>(dst);
  float const* s = static_cast<float const*>(src);
  for (int i = 0; i < 4; ++i) d[i] = i * 4 < bytes ? s[i] : 0.f;
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(bytes));
#endif
}
/// Unpredicated forms for tiles known to lie inside the matrices (no size operand to
/// compute). The shared-window address forms let a main loop step one 32-bit destination
/// register instead of converting a generic pointer per copy.
__device__ __forceinline__ void cp_async_4_full(std::uint32_t dst, void const* src) {
#ifdef MEMLAB_GEMM_SYNC_COPY
  *static_cast<float*>(__cvta_shared_to_generic(dst)) = *static_cast<float const*>(src);
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(dst), "l"(src));
#endif
}
__device__ __forceinline__ void cp_async_16_full(std::uint32_t dst, void const* src) {
#ifdef MEMLAB_GEMM_SYNC_COPY
  *static_cast<float4*>(__cvta_shared_to_generic(dst)) = *static_cast<float4 const*>(src);
#else
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src));
#endif
}
__device__ __forceinline__ void cp_async_4_full(void* dst, void const* src) { cp_async_4_full(smem_addr(dst), src); }
__device__ __forceinline__ void cp_async_16_full(void* dst, void const* src) { cp_async_16_full(smem_addr(dst), src); }
__device__ __forceinline__ void cp_async_commit() {
#ifndef MEMLAB_GEMM_SYNC_COPY
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#ifndef MEMLAB_GEMM_SYNC_COPY
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
#endif
}

/// Reads cudaFuncAttributes of a kernel (registers, local bytes, static shared memory).
template <class Kernel>
cudaFuncAttributes func_attributes(Kernel k) {
  cudaFuncAttributes a{};
  MEMLAB_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<void const*>(k)));
  return a;
}

}  // namespace memlab::detail::gemm
