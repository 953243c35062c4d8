#pragma once
// The tensor-core ladder's launchers (src/kernels/gemm/tc/NN_*.cu), called by gemm_tc.cu.
// Each launcher takes a validated problem with m, n, k > 0 and the layout and alignment its
// rung needs (docs/tc-gemm.md); the TMA rungs build their tensor maps from it.
#include <cuda_runtime_api.h>

#include <string>

#include "kernels/gemm/tc/tc_common.cuh"

namespace memlab::detail::gemm_tc {

template <class In> void launch_wmma(problem const& p, cudaStream_t st);
/// Rung 2 splits K where its tiles fill at most half of `sm_count` SMs (split_k.hpp).
template <class In> void launch_mma_sync(problem const& p, cudaStream_t st, int sm_count);
/// The ways rung 2 splits K for an m x n x k problem of In on the current device (1: no split).
template <class In> int mma_sync_split_count(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count);
/// What rung 2 runs for that problem, as a record's row names it: "128x128, 5 stages, 2 blocks/SM"
/// and, where it splits K, ", K split 4 ways".
template <class In> std::string mma_sync_kernel_name(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count);
template <class In> void launch_tma_wgmma(problem const& p, cudaStream_t st);
template <class In> void launch_warp_specialized(problem const& p, cudaStream_t st);
template <class In> void launch_persistent(problem const& p, cudaStream_t st, int sm_count);
/// What rung 5 runs for an m x n x k problem of In on the current device (split_k.hpp's
/// plan_persistent), as a record's row names it: "persistent 128x256", "64x64, a tile a CTA",
/// "128x128, K split 2 ways in a cluster", ...
/// `b_kn`: B stored k x n (rung 5 reads it in place, and keeps 64 x 128 and 128 x 128 tiles where K-major B
/// takes 64 x 96, 128 x 96 or 128 x 112: its MN-major boxes are 64 columns wide).
template <class In>
std::string persistent_kernel_name(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count, bool b_kn = false);
template <class In> void launch_cluster(problem const& p, cudaStream_t st);
/// Whether the problem's B is stored k x n (op_b = n: gemm_tc_unavailable lets rungs 4-6 take it
/// for BF16 and FP16 only), so that the kernel reads it MN-major (wgmma's transposed B): rungs 4
/// and 5's `Bkn` kernels, and rung 6's cooperative ones.
inline bool b_stored_kn(problem const& p) { return p.b_sk != 1; }
/// Whether the problem's A is stored k x m (op_a = t: gemm_tc_unavailable lets rung 6 take it for
/// BF16 and FP16 only), so that rung 6's cooperative kernels read it MN-major (wgmma's transposed A).
inline bool a_stored_km(problem const& p) { return p.a_sk != 1; }
/// C = beta * C (k = 0 or alpha = 0 never needs the operands).
template <class In> void launch_scale_c(problem const& p, cudaStream_t st);

/// A per-device memory pool for the ladder's stream-ordered scratch (rung 2's split partials,
/// repacked operands) that keeps up to 64 MB after a synchronization: the default pool returns
/// everything to the driver there, and the next call would map it again.
cudaMemPool_t scratch_pool();

/// A kernel of each rung, for memlab::compiled_arch (every rung file is compiled alike).
template <class In> void const* kernel_wmma();
void const* kernel_mma_sync();
void const* kernel_tma_wgmma();

/// Dynamic shared memory each rung asks for.
std::size_t smem_mma_sync();
std::size_t smem_tma_wgmma();
std::size_t smem_warp_specialized();
std::size_t smem_cluster();

/// The launch of `grid` blocks of `threads` with `smem` bytes of dynamic shared memory on `st`,
/// in clusters of `cluster` blocks along x (no cluster attribute when `cluster` is 1); `attr`
/// (two of them) must outlive the configuration. For cudaLaunchKernelEx and
/// cudaOccupancyMaxActiveClusters. `programmatic`: a programmatic dependent launch (the
/// kernel may begin while the stream's previous kernel finishes; it must call
/// grid_dependency_wait before touching global memory): rungs 4-6, whose launches then overlap
/// the previous call's epilogue (cuBLAS's Hopper kernels carry the same wait; docs/tc-gemm.md,
/// "Session 20").
inline cudaLaunchConfig_t cluster_launch_config(cudaLaunchAttribute (&attr)[2], unsigned cluster, unsigned grid,
                                                unsigned threads, std::size_t smem, cudaStream_t st,
                                                bool programmatic = false) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = st;
  cfg.attrs = attr;
  cfg.numAttrs = 0;
  if (cluster > 1) {
    attr[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
    attr[cfg.numAttrs].val.clusterDim.x = cluster;
    attr[cfg.numAttrs].val.clusterDim.y = 1;
    attr[cfg.numAttrs].val.clusterDim.z = 1;
    ++cfg.numAttrs;
  }
  if (programmatic) {
    attr[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
    ++cfg.numAttrs;
  }
  return cfg;
}

/// Encodes a 2-D TMA descriptor over a K-major matrix of `type` (rows x k, row stride ld
/// elements) with boxes of 128 bytes of k (64 16-bit or 128 FP8 elements) x box_rows and
/// 128-byte swizzle.
void make_tensor_map(void* tmap, void const* base, gemm_tc_input type, std::int64_t rows, std::int64_t k, std::int64_t ld,
                     int box_rows);

}  // namespace memlab::detail::gemm_tc

namespace memlab::detail::gemm_tc {
/// Encodes a 2-D TMA descriptor for storing into C (rows x cols, row stride ld elements; FP32,
/// FP16 or BF16) with boxes of box_bytes x box_rows: 128 bytes a row with 128-byte swizzle, 64
/// with 64-byte swizzle, or another multiple of 16 below 128 unswizzled; `tail`: unswizzled
/// whatever its size (the tail box of a tile the others do not divide, which the kernels write
/// row by row: 64 bytes for 16 FP32 columns at BN = 144 or 176). C's base must be 16-byte aligned
/// and ld * element size a multiple of 16.
void make_store_map(void* tmap, void* base, bool f32, bool f16, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                    int box_rows, int box_bytes, bool tail = false);
}  // namespace memlab::detail::gemm_tc
