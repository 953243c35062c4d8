// Rung 3: TMA loads into 128-byte-swizzled shared memory, consumed by wgmma straight from
// shared memory. 128 x 128 tiles, k slices of one 128-byte swizzle row (64 BF16/FP16 or 128 FP8
// elements), 4 stages, two warpgroups of 64 x 128 (m64n128k16, or k32 for FP8). No specialization: thread 0 issues the TMA copies,
// every thread waits on the stage's mbarrier, and a block barrier after each slice says the
// slot may be refilled. The tensor maps' zero fill covers every edge (m, n and the k tail).
#include <cuda.h>

#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/gemm/tc/wgmma_ops.cuh"
#include "memlab/error.hpp"

namespace memlab::detail::gemm_tc {
namespace {

constexpr int bm = 128, bn = 128, row_bytes = 128, stages = 4, threads = 256;
constexpr int a_bytes = bm * row_bytes, b_bytes = bn * row_bytes, stage_bytes = a_bytes + b_bytes;
constexpr std::size_t smem_bytes = static_cast<std::size_t>(stages) * stage_bytes + 1024;  // + alignment slack

template <class In>
__global__ void __launch_bounds__(threads) tma_wgmma_kernel(const __grid_constant__ CUtensorMap tmap_a,
                                                            const __grid_constant__ CUtensorMap tmap_b, problem p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(128) unsigned char smem_raw[];
  __shared__ std::uint64_t full[stages];
  // 128-byte swizzle atoms are 1024 bytes: the tiles must start on a 1024-byte boundary.
  std::uint32_t const base = (smem_addr(smem_raw) + 1023u) & ~1023u;
  std::int64_t const tiles_m = (p.m + bm - 1) / bm;
  int const tm = static_cast<int>(blockIdx.x % tiles_m), tn = static_cast<int>(blockIdx.x / tiles_m);
  int const tid = threadIdx.x, wg = warpgroup_index(), t = tid % 128;
  constexpr int bk = operand_traits<In>::k_block;
  int const nk = static_cast<int>((p.k + bk - 1) / bk);

  if (tid == 0) {
    for (int s = 0; s < stages; ++s) mbar_init(&full[s], 1);
    mbar_fence_init();
  }
  __syncthreads();
  auto issue = [&](int kb) {
    int const s = kb % stages;
    std::uint32_t const sa = base + s * stage_bytes, sb = sa + a_bytes;
    mbar_arrive_expect_tx(&full[s], stage_bytes);
    tma_load_2d(sa, &tmap_a, &full[s], kb * bk, tm * bm);
    tma_load_2d(sb, &tmap_b, &full[s], kb * bk, tn * bn);
  };
  if (tid == 0)
    for (int kb = 0; kb < stages && kb < nk; ++kb) issue(kb);

  float acc[bn / 2];
#pragma unroll
  for (int i = 0; i < bn / 2; ++i) acc[i] = 0.f;
  for (int kb = 0; kb < nk; ++kb) {
    int const s = kb % stages;
    mbar_wait(&full[s], (kb / stages) & 1);
    std::uint32_t const sa = base + s * stage_bytes + wg * 64 * 128, sb = base + s * stage_bytes + a_bytes;
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < row_bytes / 32; ++kk)
      wgmma_slice<In, 128>(acc, smem_desc_of(smem_desc_lo(sa) + kk * 2), smem_desc_of(smem_desc_lo(sb) + kk * 2));
    wgmma_commit();
    wgmma_wait<0>();
    fence_regs(acc);
    __syncthreads();  // every warpgroup is done reading slot s
    if (tid == 0 && kb + stages < nk) issue(kb + stages);
  }

  std::int64_t const row0 = static_cast<std::int64_t>(tm) * bm + wg * 64;
  std::int64_t const col0 = static_cast<std::int64_t>(tn) * bn;
#pragma unroll
  for (int r = 0; r < bn / 2; r += 2)
    store_pair<typename operand_traits<In>::c16>(p, row0 + wgmma_acc_row(t, r), col0 + wgmma_acc_col(t, r), acc[r], acc[r + 1]);
#else
  __trap();  // TMA + wgmma need an sm_90a image: the host refuses first
#endif
}

}  // namespace

template <class In>
void launch_tma_wgmma(problem const& p, cudaStream_t st) {
  std::int64_t const blocks = ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn);
  MEMLAB_EXPECTS(blocks <= 0x7fffffff, "too many 128 x 128 tiles for one grid");
  CUtensorMap ta, tb;
  make_tensor_map(&ta, p.a, operand_traits<In>::type, p.m, p.k, p.a_si, bm);
  make_tensor_map(&tb, p.b, operand_traits<In>::type, p.n, p.k, p.b_sj, bn);
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(tma_wgmma_kernel<In>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(smem_bytes)));
  tma_wgmma_kernel<In><<<static_cast<unsigned>(blocks), threads, smem_bytes, st>>>(ta, tb, p);
  MEMLAB_CHECK_LAUNCH();
}

void const* kernel_tma_wgmma() { return reinterpret_cast<void const*>(tma_wgmma_kernel<__nv_bfloat16>); }
std::size_t smem_tma_wgmma() { return smem_bytes; }

template void launch_tma_wgmma<__half>(problem const&, cudaStream_t);
template void launch_tma_wgmma<__nv_bfloat16>(problem const&, cudaStream_t);
template void launch_tma_wgmma<__nv_fp8_e4m3>(problem const&, cudaStream_t);

}  // namespace memlab::detail::gemm_tc
