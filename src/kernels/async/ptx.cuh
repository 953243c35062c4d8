#pragma once
// The handful of Hopper PTX instructions the async, bulk-copy and hierarchy kernels issue
// directly: mbarrier objects in shared memory, cp.async.bulk (TMA without a tensor map), 2-D TMA
// loads through a tensor map (also multicast), and the thread-block cluster's rank, barrier and
// remote arrival. (The tensor-core GEMM keeps its own set in gemm/tc/tc_common.cuh.)
#include <cuda.h>

#include <cstdint>

namespace memlab::async::detail {

__device__ __forceinline__ std::uint32_t smem_address(void const* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// mbarrier and cp.async need sm_80, the bulk copy, expect_tx and try_wait sm_90. The host
// code refuses kernels whose image lacks them (memlab::require_arch, asked of the kernel,
// not the device); on older targets these compile to a trap, the safety net.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MEMLAB_ASYNC_HAS_BULK 1
#else
#define MEMLAB_ASYNC_HAS_BULK 0
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MEMLAB_ASYNC_HAS_CP_ASYNC 1
#else
#define MEMLAB_ASYNC_HAS_CP_ASYNC 0
#endif

/// Initialises an mbarrier expecting `count` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
#if MEMLAB_ASYNC_HAS_CP_ASYNC
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_address(bar)), "r"(count) : "memory");
#else
  __trap();
#endif
}

/// Makes the initialised barriers visible to the async proxy (the TMA unit) before first use.
__device__ __forceinline__ void fence_barrier_init() {
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

/// One arrival that also raises the phase's expected transaction count by `bytes`.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_address(bar)), "r"(bytes)
               : "memory");
#else
  __trap();
#endif
}

/// One plain arrival.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_address(bar)) : "memory");
#else
  __trap();
#endif
}

/// Spins until the phase with parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
#if MEMLAB_ASYNC_HAS_BULK
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(smem_address(bar)), "r"(parity)
        : "memory");
#else
    __trap();
#endif
  } while (!done);
}

/// Bulk copy of `bytes` (a multiple of 16; both addresses 16-byte aligned) from global to
/// this block's shared memory; completion is signalled to `bar` as transaction bytes.
__device__ __forceinline__ void bulk_copy_global_to_shared(void* dst, void const* src, std::uint32_t bytes,
                                                           std::uint64_t* bar) {
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_address(dst)),
               "l"(src), "r"(bytes), "r"(smem_address(bar))
               : "memory");
#else
  __trap();
#endif
}

/// cp.async of 16 bytes (L1 bypassed), tracked by the executing thread's commit groups.
__device__ __forceinline__ void cp_async_16(void* dst, void const* src) {
#if MEMLAB_ASYNC_HAS_CP_ASYNC
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_address(dst)), "l"(src) : "memory");
#else
  __trap();
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if MEMLAB_ASYNC_HAS_CP_ASYNC
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void cp_async_wait_prior() {
#if MEMLAB_ASYNC_HAS_CP_ASYNC
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}
/// Arrive-on: the barrier sees one arrival of this thread once its prior cp.async complete
/// (.noinc: the arrival counts toward the barrier's expected count).
__device__ __forceinline__ void cp_async_arrive_noinc(std::uint64_t* bar) {
#if MEMLAB_ASYNC_HAS_CP_ASYNC
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(smem_address(bar)) : "memory");
#else
  __trap();
#endif
}

/// One 2-D TMA load of the box at (x elements, y rows) of `map` into `dst`, completion as
/// transaction bytes on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, CUtensorMap const* map, std::uint32_t x, std::uint32_t y,
                                            std::uint64_t* bar) {
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(bar))
      : "memory");
#else
  __trap();
#endif
}

/// tma_load_2d into the same offset of every CTA of the cluster in `cta_mask`, completing on the
/// barrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, CUtensorMap const* map, std::uint32_t x,
                                                      std::uint32_t y, std::uint64_t* bar, std::uint16_t cta_mask) {
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, "
      "%3}], [%4], %5;" ::"r"(smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(smem_address(bar)), "h"(cta_mask)
      : "memory");
#else
  __trap();
#endif
}

/// This CTA's rank in its cluster (0 outside a cluster launch).
__device__ __forceinline__ std::uint32_t cluster_ctarank() {
  std::uint32_t r = 0;
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#else
  __trap();
#endif
  return r;
}

/// Every thread of every CTA of the cluster arrives and waits (release / acquire at cluster scope).
__device__ __forceinline__ void cluster_sync_all() {
#if MEMLAB_ASYNC_HAS_BULK
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
#else
  __trap();
#endif
}

/// One arrival on the barrier at `bar`'s offset in CTA `cta` of the cluster (this one included).
__device__ __forceinline__ void mbarrier_arrive_cluster(std::uint64_t* bar, std::uint32_t cta) {
#if MEMLAB_ASYNC_HAS_BULK
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_address(bar)), "r"(cta));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
#else
  __trap();
#endif
}

}  // namespace memlab::async::detail
