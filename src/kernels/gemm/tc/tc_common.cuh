#pragma once
// The tensor-core GEMM ladder's shared pieces: the problem as the kernels see it, the
// epilogue (alpha/beta, bounds, BF16/FP16/FP32 output) and the PTX wrappers of the
// asynchronous rungs. See docs/tc-gemm.md.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "memlab/gemm_tc.hpp"
#include "kernels/gemm/tc/wgmma_desc.hpp"

namespace memlab::detail::gemm_tc {

/// C (m x n, row stride ldc) = alpha * A' * B' + beta * C with A'(i, kk) = a[i * a_si + kk * a_sk]
/// and B'(kk, j) = b[j * b_sj + kk * b_sk]. The canonical (K-major) layout has a_sk = b_sk = 1.
struct problem {
  std::int64_t m = 0, n = 0, k = 0;
  void const* a = nullptr;
  std::int64_t a_si = 0, a_sk = 1;
  void const* b = nullptr;
  std::int64_t b_sj = 0, b_sk = 1;
  void* c = nullptr;
  std::int64_t ldc = 0;
  float alpha = 1.f, beta = 0.f;
  bool c_f32 = false;  ///< C is FP32 (else the input type)
  bool c_pair = false; ///< two adjacent columns of C may be written as one 4- or 8-byte store
};

/// What the rungs derive from the input type In: its gemm_tc_input, the elements in one 128-byte
/// swizzled row of K (a k-block: 64 of BF16/FP16, 128 of FP8; 4 wgmma slices of 32 bytes
/// either way) and the 16-bit type C takes when it is not FP32 (BF16 for FP8 inputs).
template <class In>
struct operand_traits {
  static_assert(sizeof(In) == 1 || sizeof(In) == 2, "16-bit or 8-bit inputs");
  static constexpr int k_block = 128 / static_cast<int>(sizeof(In));
  static constexpr gemm_tc_input type = std::is_same_v<In, __half>          ? gemm_tc_input::f16
                                        : std::is_same_v<In, __nv_fp8_e4m3> ? gemm_tc_input::e4m3
                                                                            : gemm_tc_input::bf16;
  using c16 = std::conditional_t<sizeof(In) == 1, __nv_bfloat16, In>;
};

template <class T>
__host__ __device__ inline float to_float(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else return __bfloat162float(v);
}
template <class T>
__host__ __device__ inline T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(v);
  else return __float2bfloat16_rn(v);
}

/// Two values converted to the 16-bit type Out, packed in one 32-bit word (the first in the low
/// half): one 4-byte store of two adjacent columns, or one register of an stmatrix.
template <class Out>
__device__ __forceinline__ std::uint32_t pack_pair(float v0, float v1) {
  Out pair[2] = {from_float<Out>(v0), from_float<Out>(v1)};
  std::uint32_t bits;
  memcpy(&bits, pair, 4);
  return bits;
}

/// Writes C(row, col) = alpha * v + beta * C (inside the matrix: the caller checks), the
/// arithmetic of store_pair one element at a time. beta == 0 never reads C.
template <class C16>
__device__ __forceinline__ void store_one(problem const& p, std::int64_t row, std::int64_t col, float v) {
  std::int64_t const off = row * p.ldc + col;
  v *= p.alpha;
  if (p.c_f32) {
    float* c = static_cast<float*>(p.c) + off;
    if (p.beta != 0.f) v += p.beta * c[0];
    c[0] = v;
  } else {
    C16* c = static_cast<C16*>(p.c) + off;
    if (p.beta != 0.f) v += p.beta * to_float(c[0]);
    c[0] = from_float<C16>(v);
  }
}

/// Writes C(row, col) and C(row, col + 1) (col even) = alpha * v + beta * C, inside the matrix
/// only. beta == 0 never reads C.
template <class In>
__device__ __forceinline__ void store_pair(problem const& p, std::int64_t row, std::int64_t col, float v0, float v1) {
  if (row >= p.m || col >= p.n) return;
  bool const two = col + 1 < p.n;
  std::int64_t const off = row * p.ldc + col;
  if (p.c_f32) {
    float* c = static_cast<float*>(p.c) + off;
    v0 *= p.alpha;
    v1 *= p.alpha;
    if (p.beta != 0.f) {
      v0 += p.beta * c[0];
      if (two) v1 += p.beta * c[1];
    }
    if (two && p.c_pair) {
      *reinterpret_cast<float2*>(c) = make_float2(v0, v1);
    } else {
      c[0] = v0;
      if (two) c[1] = v1;
    }
  } else {
    In* c = static_cast<In*>(p.c) + off;
    v0 *= p.alpha;
    v1 *= p.alpha;
    if (p.beta != 0.f) {
      v0 += p.beta * to_float(c[0]);
      if (two) v1 += p.beta * to_float(c[1]);
    }
    if (two && p.c_pair) {
      *reinterpret_cast<std::uint32_t*>(c) = pack_pair<In>(v0, v1);
    } else {
      c[0] = from_float<In>(v0);
      if (two) c[1] = from_float<In>(v1);
    }
  }
}

// ---- PTX wrappers (sm_75: ldmatrix, mma.sync m16n8k8; sm_80: cp.async, mma.sync m16n8k16; sm_90: mbarrier tx, TMA) ----

__device__ __forceinline__ std::uint32_t smem_addr(void const* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
/// D += A * B, m16n8k8 with FP16 operands and FP32 accumulators: Turing's mma.sync shape (sm_75).
__device__ __forceinline__ void mma_m16n8k8_f16(float (&d)[4], std::uint32_t a0, std::uint32_t a1, std::uint32_t b0) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a0), "r"(a1), "r"(b0));
}
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
/// 16-byte cp.async that copies the first `src_bytes` (0..16) and zero-fills the rest.
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, void const* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
/// The same, asking L2 to fetch the whole 128-byte line from DRAM: rung 2's k slices read 64
/// bytes of a row, and the line's other half is the next slice's.
__device__ __forceinline__ void cp_async_16_l2_128(std::uint32_t dst, void const* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
/// D += A * B over 32 bytes of K, FP32 accumulators: m16n8k16 for BF16/FP16, m16n8k32 for FP8
/// E4M3 (sm_89+; the fragments' registers hold the same bytes, 4 FP8 values where 2 16-bit ones).
template <class In>
__device__ __forceinline__ void mma_sync_step(float (&d)[4], std::uint32_t const (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  if constexpr (std::is_same_v<In, __nv_fp8_e4m3>) {
#if __CUDA_ARCH__ >= 890
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
    __trap();  // FP8 mma.sync needs sm_89: the host refuses first
#endif
  } else if constexpr (std::is_same_v<In, __half>) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}
#endif

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
/// Makes the initialised barriers visible to the other threads and to the TMA unit.
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/// Arrives once and announces `bytes` more bytes the asynchronous copies will complete.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
/// The time a waiting thread may be suspended in one try_wait before it polls again (ns; PTX's
/// suspendTimeHint, CUTLASS's ClusterBarrier uses the same), so that waiting warps sleep rather
/// than poll. Measured level with polling on the ladder's and the few-tile rows, and 11-13% faster
/// for rung 6 at the decode batch (H200; docs/tc-gemm.md, "Session 33").
constexpr std::uint32_t mbar_suspend_hint_ns = 0x989680;
/// Waits until the phase of parity `parity` has completed (a fresh barrier: parity 1 passes).
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
        "selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity), "r"(mbar_suspend_hint_ns)
        : "memory");
  } while (done == 0);
}
/// 2-D TMA tile load: box at (x = inner coordinate, y = outer) into shared memory, completing
/// on `bar`. Out-of-bounds parts of the box are filled with zeros (and still count as bytes).
__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, void const* tmap, std::uint64_t* bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(
          dst),
      "l"(tmap), "r"(x), "r"(y), "r"(smem_addr(bar))
      : "memory");
}

// ---- sm_90 thread-block clusters, TMA multicast and the TMA store (rung 6) ----
__device__ __forceinline__ unsigned cluster_ctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
/// Every thread of every CTA of the cluster arrives and waits (release/acquire at cluster
/// scope). Not .aligned: callers may sit in divergent code.
__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
/// The address of `addr` (this CTA's shared memory) in CTA `cta` of the cluster.
__device__ __forceinline__ std::uint32_t cluster_map(std::uint32_t addr, unsigned cta) {
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(cta));
  return remote;
}
__device__ __forceinline__ unsigned cluster_nctarank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}
/// A 16-byte load from a cluster shared-memory address (cluster_map's result).
__device__ __forceinline__ float4 ld_shared_cluster_v4(std::uint32_t addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr)
               : "memory");
  return v;
}
/// Arrives once on the barrier at the same shared-memory offset as `bar` in CTA `cta` of the
/// cluster (this CTA included). Default semantics (release at CTA scope), as CUTLASS's
/// ClusterBarrier: what it publishes is that this warp's wgmma reads of the slot are complete
/// (wgmma.wait_group), and a .release.cluster would add a MEMBAR.GPU to every k-block.
__device__ __forceinline__ void mbar_arrive_cluster(std::uint64_t* bar, unsigned cta) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(cluster_map(smem_addr(bar), cta)) : "memory");
}
/// tma_load_2d into the same shared-memory offset of every CTA in `cta_mask`, completing
/// `box bytes` on the barrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(std::uint32_t dst, void const* tmap, std::uint64_t* bar, int x,
                                                      int y, std::uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, "
      "{%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(tmap), "r"(x), "r"(y), "r"(smem_addr(bar)), "h"(cta_mask)
      : "memory");
}
/// Boxes j0 .. j0 + Boxes - 1 of one k-block of an operand stored k x rows (B k x n, A k x m),
/// through its map of boxes of 64 k-rows x 64 columns (128 bytes, swizzled): box j holds columns
/// col0 + 64 j .. of k-rows k0 .. k0 + 63 and lands at dst + j x 8 KB, the layout smem_desc_mn
/// describes; multicast to the CTAs in `mask` where it is not 0.
template <int Boxes>
__device__ __forceinline__ void tma_load_mn(std::uint32_t dst, void const* tmap, std::uint64_t* bar, int col0, int k0, int j0 = 0,
                                            std::uint16_t mask = 0) {
#pragma unroll
  for (int i = 0; i < Boxes; ++i) {
    int const j = j0 + i;
    if (mask != 0) tma_load_2d_multicast(dst + j * 8192, tmap, bar, col0 + j * 64, k0, mask);
    else tma_load_2d(dst + j * 8192, tmap, bar, col0 + j * 64, k0);
  }
}
/// A flag in global memory published to, and read by, other CTAs of the grid (rung 6's stream-K
/// partials): release and acquire at GPU scope.
__device__ __forceinline__ void st_release_gpu(unsigned long long* p, unsigned long long v) {
  asm volatile("st.release.gpu.global.u64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_acquire_gpu(unsigned long long const* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
  return v;
}
/// Orders this thread's generic-proxy shared-memory writes before later async-proxy reads (TMA store).
__device__ __forceinline__ void fence_proxy_async_smem() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
/// Named barrier `id` (1..15) over `count` threads.
__device__ __forceinline__ void named_bar_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
/// Arrives on named barrier `id` over `count` threads without waiting (the other side of a
/// bar.sync on the same barrier).
__device__ __forceinline__ void named_bar_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
/// 2-D TMA store of the box at (x = inner coordinate, y = outer) from shared memory; parts of
/// the box outside the tensor are not written.
__device__ __forceinline__ void tma_store_2d(void const* tmap, std::uint32_t src, int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(tmap), "r"(x),
               "r"(y), "r"(src)
               : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// At most N of this thread's bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
/// At most N of this thread's bulk groups are incomplete (writes done and visible).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
/// stmatrix .x4: four 8 x 8 matrices of 16-bit values, register j of every lane holding the
/// (row lane / 4, columns 2 (lane % 4) and + 1) pair of matrix j (the mma/wgmma accumulator
/// layout); lane i gives the shared-memory address of row i % 8 of matrix i / 8 (16 bytes).
__device__ __forceinline__ void stmatrix_x4(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1, std::uint32_t r2,
                                            std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
/// stmatrix .x4 .trans: as stmatrix_x4, each 8 x 8 matrix stored transposed: lane i's address
/// takes column i % 8 of matrix i / 8, i.e. the 8 rows' values of that column (16 bytes).
__device__ __forceinline__ void stmatrix_x4_trans(std::uint32_t addr, std::uint32_t r0, std::uint32_t r1, std::uint32_t r2,
                                                  std::uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}
__device__ __forceinline__ void st_shared_f32(std::uint32_t addr, float a) {
  asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(addr), "f"(a) : "memory");
}
__device__ __forceinline__ void st_shared_v2_f32(std::uint32_t addr, float a, float b) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(a), "f"(b) : "memory");
}
__device__ __forceinline__ float ld_shared_f32(std::uint32_t addr) {
  float v;
  asm volatile("ld.shared.f32 %0, [%1];\n" : "=f"(v) : "r"(addr) : "memory");
  return v;
}
__device__ __forceinline__ void st_shared_b32(std::uint32_t addr, std::uint32_t v) {
  asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
#endif

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
/// The warpgroup of this thread, warp-uniform as far as the compiler knows (a shuffle from lane 0,
/// as CUTLASS's canonical_warp_group_idx does): a branch on it is uniform, so ptxas may keep the
/// k-loop's slot index and descriptors in uniform registers (docs/tc-gemm.md, "Session 34").
__device__ __forceinline__ int warpgroup_index() { return __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 128, 0); }
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
/// Keeps the accumulators in registers across the asynchronous wgmma (no copies to locals).
template <int R>
__device__ __forceinline__ void fence_regs(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <unsigned Regs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Regs));
}
template <unsigned Regs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Regs));
}
/// Programmatic dependent launch (sm_90; launched with cluster_launch_config's `programmatic`):
/// the kernel may start while the previous kernel in the stream is finishing, so every thread
/// waits here, after its setup (barriers, cluster sync) and before any global-memory access,
/// until that kernel has completed and its writes are visible.
__device__ __forceinline__ void grid_dependency_wait() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }
/// Lets the next kernel in the stream begin launching once every CTA of this grid has said so or
/// exited (it still waits in grid_dependency_wait for this grid to complete). Rungs 4-6 say so
/// once a CTA's last tile's MMAs are done, before its epilogue: the next kernel's launch and setup
/// then overlap this one's last stores (docs/tc-gemm.md, "Session 20": +3-10% at one-wave shapes
/// and the decode batch; issued after the producer's last load instead, the decode batch lost 2%).
__device__ __forceinline__ void launch_dependents() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
#endif

/// Row and column, inside a 64 x N wgmma accumulator tile, of accumulator register pair
/// r (= 4 j + 2 h, h in {0, 1}) of thread t of the warpgroup: the m16n8 C-fragment layout,
/// repeated over N / 8 column blocks, each warp owning 16 rows.
__host__ __device__ constexpr int wgmma_acc_row(int t, int r) { return (t / 32) * 16 + (t % 32) / 4 + 8 * ((r / 2) % 2); }
__host__ __device__ constexpr int wgmma_acc_col(int t, int r) { return 8 * (r / 4) + 2 * (t % 4); }

/// Grouped (L2-aware) tile order: runs of `group` M tiles walk down one column of N tiles
/// before moving right, so consecutive tiles share B (and the group's A stays in L2).
__host__ __device__ constexpr void grouped_tile(int t, int tiles_m, int tiles_n, int group, int& tm, int& tn) {
  int const per_group = group * tiles_n;
  int const first_m = (t / per_group) * group;
  int const size = (tiles_m - first_m) < group ? (tiles_m - first_m) : group;
  int const in_group = t % per_group;
  tm = first_m + in_group % size;
  tn = in_group / size;
}

}  // namespace memlab::detail::gemm_tc
