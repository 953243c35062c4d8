// Warp-entanglement kernels (seed 002 §6). The divergent issue is a loop over lane groups
// with one group active per trip, so each group's commit or arrive-on executes on its own.
#include <algorithm>
#include <cstdint>

#include "kernels/async/copy_compute.hpp"
#include "kernels/async/entanglement.hpp"
#include "kernels/async/ptx.cuh"
#include "memlab/arch.hpp"
#include "memlab/error.hpp"

namespace memlab::async {
namespace {

__device__ __forceinline__ float4 chain4(float4 v, int fmas) {
#pragma unroll 4
  for (int k = 0; k < fmas; ++k) {
    v.x = __fmaf_rn(v.x, chain_a, chain_b);
    v.y = __fmaf_rn(v.y, chain_a, chain_b);
    v.z = __fmaf_rn(v.z, chain_a, chain_b);
    v.w = __fmaf_rn(v.w, chain_a, chain_b);
  }
  return v;
}

/// Thread `gtid` handles elements gtid, gtid + T, gtid + 2T, ... (T threads in the grid).
__device__ __forceinline__ std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::size_t grid_threads() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

__global__ void commit_wait_kernel(float4* __restrict__ out, float4 const* __restrict__ in, std::size_t n, int split,
                                   bool reconverge, int fmas) {
  constexpr int S = commit_wait_stages;
  extern __shared__ __align__(16) float4 slots[];  // S x blockDim.x, each thread owns a column
  std::size_t const g = global_thread(), T = grid_threads();
  // Trips are counted from the warp's first lane so the whole warp loops together
  // (__syncwarp below needs every lane); lanes past the end issue empty batches.
  std::size_t const lane0 = g - threadIdx.x % 32;
  std::size_t const trips = lane0 < n ? (n - lane0 + T - 1) / T : 0;
  int const group = static_cast<int>(threadIdx.x % 32) % split;
  auto slot = [&](std::size_t k) { return &slots[(k % S) * blockDim.x + threadIdx.x]; };
  auto issue = [&](std::size_t k) {
    bool const valid = k < trips && g + k * T < n;
    for (int q = 0; q < split; ++q) {
      if (group == q) {
        if (valid) detail::cp_async_16(slot(k), in + g + k * T);
        if (!reconverge) detail::cp_async_commit();  // one batch per call: empty past the end
      }
    }
    if (reconverge) {
      __syncwarp();
      detail::cp_async_commit();
    }
  };
  for (int s = 0; s + 1 < S; ++s) issue(s);
  for (std::size_t k = 0; k < trips; ++k) {
    issue(k + S - 1);
    // Waits for all but the S-1 newest batches: this thread's batch k, if the batch
    // sequence is this thread's own. Entangled, the newest batches are the warp's.
    detail::cp_async_wait_prior<S - 1>();
    if (g + k * T < n) out[g + k * T] = chain4(*slot(k), fmas);
  }
  detail::cp_async_wait_prior<0>();
}

__global__ void arrive_on_kernel(float4* __restrict__ out, float4 const* __restrict__ in, std::size_t n, int split,
                                 bool reconverge, int fmas) {
  extern __shared__ __align__(16) float4 slots[];  // 2 x blockDim.x
  __shared__ alignas(8) std::uint64_t bars[2];
  if (threadIdx.x == 0) {
    detail::mbarrier_init(&bars[0], blockDim.x);
    detail::mbarrier_init(&bars[1], blockDim.x);
  }
  __syncthreads();
  std::size_t const g = global_thread(), T = grid_threads();
  std::size_t const first = static_cast<std::size_t>(blockIdx.x) * blockDim.x;  // the block's thread 0
  std::size_t const trips = first < n ? (n - first + T - 1) / T : 0;           // block-uniform
  int const group = static_cast<int>(threadIdx.x % 32) % split;
  auto slot = [&](std::size_t k) { return &slots[(k % 2) * blockDim.x + threadIdx.x]; };
  auto issue = [&](std::size_t k) {
    for (int q = 0; q < split; ++q) {
      if (group == q) {
        std::size_t const i = g + k * T;
        if (i < n) detail::cp_async_16(slot(k), in + i);
        // Every thread arrives once per phase, after its own copy lands.
        if (!reconverge) detail::cp_async_arrive_noinc(&bars[k % 2]);
      }
    }
    if (reconverge) {
      __syncwarp();
      detail::cp_async_arrive_noinc(&bars[k % 2]);
    }
  };
  if (trips > 0) issue(0);
  for (std::size_t k = 0; k < trips; ++k) {
    if (k + 1 < trips) issue(k + 1);
    detail::mbarrier_wait_parity(&bars[k % 2], static_cast<std::uint32_t>((k / 2) & 1));
    std::size_t const i = g + k * T;
    if (i < n) out[i] = chain4(*slot(k), fmas);
  }
}

void validate(entanglement_config const& cfg) {
  MEMLAB_EXPECTS(cfg.split >= 1 && cfg.split <= 32, "split must be in [1, 32]");
  MEMLAB_EXPECTS(cfg.fmas >= 0, "fmas must be >= 0");
  MEMLAB_EXPECTS(cfg.block_threads >= 32 && cfg.block_threads <= 1024 && cfg.block_threads % 32 == 0,
                 "block_threads must be a multiple of 32 in [32, 1024]");
  MEMLAB_EXPECTS(cfg.grid_blocks >= 0, "grid_blocks must be >= 0");
}

}  // namespace

std::size_t warp_entanglement_smem_bytes(entanglement_config const& cfg) {
  validate(cfg);
  int const stages = cfg.op == entangled_op::commit_wait ? commit_wait_stages : 2;
  return static_cast<std::size_t>(stages) * cfg.block_threads * sizeof(float4);
}

void const* warp_entanglement_kernel(entangled_op op) {
  return op == entangled_op::commit_wait ? reinterpret_cast<void const*>(commit_wait_kernel)
                                         : reinterpret_cast<void const*>(arrive_on_kernel);
}

int warp_entanglement_needed_arch(entangled_op op, char const** instruction) {
  if (instruction != nullptr) *instruction = op == entangled_op::commit_wait ? "cp.async" : "mbarrier.try_wait";
  return op == entangled_op::commit_wait ? arch::cp_async : arch::bulk_copy;
}

void warp_entanglement(entanglement_config const& cfg, float* out, float const* in, std::size_t n,
                       cudaStream_t stream) {
  validate(cfg);
  if (n == 0) return;
  MEMLAB_EXPECTS(out != nullptr && in != nullptr, "null pointer");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0,
                 "in and out must be 16-byte aligned");
  MEMLAB_EXPECTS(out + 4 * n <= in || in + 4 * n <= out, "in and out must not overlap");
  char const* instruction = "";
  int const need = warp_entanglement_needed_arch(cfg.op, &instruction);
  require_arch(warp_entanglement_kernel(cfg.op), need, instruction);
  std::size_t const smem = warp_entanglement_smem_bytes(cfg);
  std::size_t const needed = (n + cfg.block_threads - 1) / cfg.block_threads;
  std::size_t grid = cfg.grid_blocks > 0 ? std::min<std::size_t>(cfg.grid_blocks, needed) : needed;
  grid = std::min<std::size_t>(grid, 0x7FFFFFFF);
  auto* o = reinterpret_cast<float4*>(out);
  auto const* i = reinterpret_cast<float4 const*>(in);
  if (cfg.op == entangled_op::commit_wait) {
    if (smem > 48 * 1024)
      MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(commit_wait_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             static_cast<int>(smem)));
    commit_wait_kernel<<<static_cast<unsigned>(grid), cfg.block_threads, smem, stream>>>(o, i, n, cfg.split, cfg.reconverge, cfg.fmas);
  } else {
    arrive_on_kernel<<<static_cast<unsigned>(grid), cfg.block_threads, smem, stream>>>(o, i, n, cfg.split, cfg.reconverge, cfg.fmas);
  }
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::async
