// Copy-and-compute kernels (seed 002): the same batch loop with five ways of staging a
// batch in shared memory. See copy_compute.hpp for the computation and docs/async.md.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>

#include <cuda/barrier>
#include <cuda/pipeline>

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/async/copy_compute.hpp"
#include "kernels/async/ptx.cuh"
#include "memlab/arch.hpp"
#include "memlab/error.hpp"

// A __shared__ cuda::barrier or pipeline_shared_state is initialised by init()/the
// pipeline, not by a constructor run per block: the diagnostic does not apply.
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace memlab::async {
namespace {

namespace cg = cooperative_groups;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__device__ __forceinline__ float chain(float x, int fmas) {
#pragma unroll 4
  for (int k = 0; k < fmas; ++k) x = __fmaf_rn(x, chain_a, chain_b);
  return x;
}
__device__ __forceinline__ float apply(float v, float w, int fmas) { return __fadd_rn(chain(v, fmas), w); }
__device__ __forceinline__ float2 apply(float2 v, float2 w, int fmas) {
  return make_float2(apply(v.x, w.x, fmas), apply(v.y, w.y, fmas));
}
__device__ __forceinline__ float4 apply(float4 v, float4 w, int fmas) {
  return make_float4(apply(v.x, w.x, fmas), apply(v.y, w.y, fmas), apply(v.z, w.z, fmas), apply(v.w, w.w, fmas));
}

/// Batch `k` of this block: batches are dealt round-robin, block b takes b, b+G, b+2G, ...
struct batch {
  std::size_t base;
  int count;
};
__device__ __forceinline__ batch batch_of(std::size_t k, std::size_t n) {
  std::size_t const B = blockDim.x;
  std::size_t const base = (static_cast<std::size_t>(blockIdx.x) + k * gridDim.x) * B;
  return {base, static_cast<int>(min(B, n - base))};
}
/// Batches this block processes.
__device__ __forceinline__ std::size_t batches_of_block(std::size_t n) {
  std::size_t const B = blockDim.x;
  std::size_t const total = (n + B - 1) / B;
  return blockIdx.x < total ? (total - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
}

/// Every thread reads its own element and the mirrored one, which another thread copied.
template <class T>
__device__ __forceinline__ void compute_batch(T* out, T const* stage, batch const& b, int fmas) {
  int const i = static_cast<int>(threadIdx.x);
  if (i < b.count) out[b.base + i] = apply(stage[i], stage[b.count - 1 - i], fmas);
}

template <class T>
__device__ __forceinline__ T* stage_buffer() {
  extern __shared__ __align__(128) unsigned char smem_raw[];
  return reinterpret_cast<T*>(smem_raw);
}

// ---- 1. plain: global -> register -> shared, then two block barriers ------------------
template <class T>
__global__ void plain_kernel(T* __restrict__ out, T const* __restrict__ in, std::size_t n, int fmas) {
  T* stage = stage_buffer<T>();
  std::size_t const batches = batches_of_block(n);
  for (std::size_t k = 0; k < batches; ++k) {
    batch const b = batch_of(k, n);
    if (static_cast<int>(threadIdx.x) < b.count) stage[threadIdx.x] = in[b.base + threadIdx.x];
    __syncthreads();  // every copy landed before anyone reads a neighbour's element
    compute_batch(out, stage, b, fmas);
    __syncthreads();  // every read done before the next batch overwrites the stage
  }
}

// ---- 2. cooperative_groups::memcpy_async + wait ------------------------------------------
template <class T, bool Aligned>
__global__ void cg_kernel(T* __restrict__ out, T const* __restrict__ in, std::size_t n, int fmas) {
  T* stage = stage_buffer<T>();
  auto block = cg::this_thread_block();
  std::size_t const batches = batches_of_block(n);
  for (std::size_t k = 0; k < batches; ++k) {
    batch const b = batch_of(k, n);
    std::size_t const bytes = sizeof(T) * b.count;
    if (Aligned && b.count == static_cast<int>(blockDim.x))
      cg::memcpy_async(block, stage, in + b.base, cuda::aligned_size_t<16>(bytes));
    else
      cg::memcpy_async(block, stage, in + b.base, bytes);
    cg::wait(block);
    compute_batch(out, stage, b, fmas);
    block.sync();
  }
}

// ---- 3. cuda::memcpy_async on a block-scoped cuda::barrier --------------------------------
template <class T, bool Aligned>
__global__ void barrier_kernel(T* __restrict__ out, T const* __restrict__ in, std::size_t n, int fmas) {
  T* stage = stage_buffer<T>();
  auto block = cg::this_thread_block();
  __shared__ block_barrier bar;
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  std::size_t const batches = batches_of_block(n);
  for (std::size_t k = 0; k < batches; ++k) {
    batch const b = batch_of(k, n);
    std::size_t const bytes = sizeof(T) * b.count;
    // With 16-byte alignment known at compile time, CCCL on sm_90 turns this into one
    // cp.async.bulk completing on the barrier's transaction count.
    if (Aligned && b.count == static_cast<int>(blockDim.x))
      cuda::memcpy_async(block, stage, in + b.base, cuda::aligned_size_t<16>(bytes), bar);
    else
      cuda::memcpy_async(block, stage, in + b.base, bytes, bar);
    bar.arrive_and_wait();
    compute_batch(out, stage, b, fmas);
    block.sync();
  }
}

// ---- 4./5. cuda::pipeline with Stages stages (the Guide's with_staging pattern) -------------
template <class T, bool Aligned, int Stages>
__global__ void pipeline_kernel(T* __restrict__ out, T const* __restrict__ in, std::size_t n, int fmas) {
  T* stage = stage_buffer<T>();
  auto block = cg::this_thread_block();
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, Stages> state;
  auto pipe = cuda::make_pipeline(block, &state);
  std::size_t const B = blockDim.x;
  std::size_t const batches = batches_of_block(n);
  // Only real batches are committed: a stage committed past the end would never be
  // waited on, leaving its barrier phase pending at exit (synccheck: missing wait).
  auto issue = [&](std::size_t k) {
    if (k >= batches) return;  // block-uniform
    pipe.producer_acquire();
    batch const b = batch_of(k, n);
    T* dst = stage + (k % Stages) * B;
    std::size_t const bytes = sizeof(T) * b.count;
    if (Aligned && b.count == static_cast<int>(B))
      cuda::memcpy_async(block, dst, in + b.base, cuda::aligned_size_t<16>(bytes), pipe);
    else
      cuda::memcpy_async(block, dst, in + b.base, bytes, pipe);
    pipe.producer_commit();
  };
  for (int s = 0; s < Stages; ++s) issue(s);
  for (std::size_t k = 0; k < batches; ++k) {
    pipe.consumer_wait();
    compute_batch(out, stage + (k % Stages) * B, batch_of(k, n), fmas);
    pipe.consumer_release();
    issue(k + Stages);
  }
}

// ---- 6. cp.async.bulk into shared memory on Stages mbarriers -------------------------------
template <class T, int Stages>
__global__ void bulk_kernel(T* __restrict__ out, T const* __restrict__ in, std::size_t n, int fmas) {
  T* stage = stage_buffer<T>();
  __shared__ alignas(8) std::uint64_t bars[Stages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < Stages; ++s) detail::mbarrier_init(&bars[s], 1);
    detail::fence_barrier_init();
  }
  __syncthreads();
  std::size_t const B = blockDim.x;
  std::size_t const batches = batches_of_block(n);
  // One thread issues the whole batch; the copy engine counts the bytes into the barrier.
  // A batch's byte count is rounded down to 16; the few elements past it (only in the last,
  // partial batch) are loaded by threads after the wait.
  auto issue = [&](std::size_t k) {
    if (threadIdx.x == 0 && k < batches) {
      batch const b = batch_of(k, n);
      std::uint32_t const bytes = static_cast<std::uint32_t>(sizeof(T) * b.count) & ~15u;
      std::uint64_t* bar = &bars[k % Stages];
      if (bytes > 0) {
        detail::mbarrier_arrive_expect_tx(bar, bytes);
        detail::bulk_copy_global_to_shared(stage + (k % Stages) * B, in + b.base, bytes, bar);
      } else {
        detail::mbarrier_arrive(bar);
      }
    }
  };
  for (int s = 0; s + 1 < Stages; ++s) issue(s);
  for (std::size_t k = 0; k < batches; ++k) {
    issue(k + Stages - 1);  // into the stage the previous iteration released
    batch const b = batch_of(k, n);
    T* cur = stage + (k % Stages) * B;
    detail::mbarrier_wait_parity(&bars[k % Stages], static_cast<std::uint32_t>((k / Stages) & 1));
    int const bulk_elems = static_cast<int>(((sizeof(T) * b.count) & ~std::size_t{15}) / sizeof(T));
    if (bulk_elems < b.count) {  // block-uniform: only a partial last batch
      int const i = static_cast<int>(threadIdx.x);
      if (i >= bulk_elems && i < b.count) cur[i] = in[b.base + i];
      __syncthreads();
    }
    compute_batch(out, cur, b, fmas);
    __syncthreads();  // the stage is free for the copy issued next iteration
  }
}

template <class T>
using kernel_fn = void (*)(T*, T const*, std::size_t, int);

template <class T, bool Aligned>
kernel_fn<T> pipeline_for(int stages) {
  switch (stages) {
    case 1: return pipeline_kernel<T, Aligned, 1>;
    case 2: return pipeline_kernel<T, Aligned, 2>;
    case 3: return pipeline_kernel<T, Aligned, 3>;
    default: return pipeline_kernel<T, Aligned, 4>;
  }
}

template <class T>
kernel_fn<T> select_kernel(copy_compute_config const& cfg) {
  bool const a = cfg.aligned_hint;
  switch (cfg.method) {
    case copy_method::plain: return plain_kernel<T>;
    case copy_method::cg_memcpy_async: return a ? cg_kernel<T, true> : cg_kernel<T, false>;
    case copy_method::cuda_barrier: return a ? barrier_kernel<T, true> : barrier_kernel<T, false>;
    case copy_method::pipeline: return a ? pipeline_for<T, true>(cfg.stages) : pipeline_for<T, false>(cfg.stages);
    case copy_method::bulk_copy:
      switch (cfg.stages) {
        case 1: return bulk_kernel<T, 1>;
        case 2: return bulk_kernel<T, 2>;
        case 3: return bulk_kernel<T, 3>;
        default: return bulk_kernel<T, 4>;
      }
  }
  return plain_kernel<T>;
}

void validate(copy_compute_config const& cfg) {
  MEMLAB_EXPECTS(cfg.element_bytes == 4 || cfg.element_bytes == 8 || cfg.element_bytes == 16,
                 "element_bytes must be 4, 8 or 16");
  MEMLAB_EXPECTS(cfg.block_threads >= 32 && cfg.block_threads <= 1024 && cfg.block_threads % 32 == 0,
                 "block_threads must be a multiple of 32 in [32, 1024]");
  MEMLAB_EXPECTS(cfg.fmas >= 0, "fmas must be >= 0");
  MEMLAB_EXPECTS(cfg.grid_blocks >= 0, "grid_blocks must be >= 0");
  bool const staged = cfg.method == copy_method::pipeline || cfg.method == copy_method::bulk_copy;
  MEMLAB_EXPECTS(staged ? (cfg.stages >= 1 && cfg.stages <= 4) : cfg.stages == 1,
                 "stages must be 1..4 for pipeline and bulk_copy, 1 otherwise");
}

/// Dynamic plus static shared memory of the launch, checked against the device's opt-in
/// limit per block (64 KB on sm_75, 99 KB on sm_86/89, 163 KB on sm_80, 227 KB on sm_90).
template <class T>
bool fits(kernel_fn<T> k, std::size_t smem) {
  int dev = 0, optin = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  cudaFuncAttributes a{};
  MEMLAB_CUDA_CHECK(cudaFuncGetAttributes(&a, reinterpret_cast<void const*>(k)));
  return smem + a.sharedSizeBytes <= static_cast<std::size_t>(optin);
}

template <class T>
void configure_smem(kernel_fn<T> k, std::size_t smem) {
  // Above 48 KiB a kernel must opt in to more dynamic shared memory.
  if (smem > 48 * 1024)
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
}

template <class T>
void launch(copy_compute_config const& cfg, void* out, void const* in, std::size_t n, cudaStream_t stream) {
  kernel_fn<T> k = select_kernel<T>(cfg);
  char const* instruction = "";
  if (int const need = copy_compute_needed_arch(cfg.method, &instruction); need > 0)
    require_arch(reinterpret_cast<void const*>(k), need, instruction);
  std::size_t const smem = copy_compute_smem_bytes(cfg);
  // Every device gives 48 KiB without opting in, and these kernels' static shared memory is
  // a few barriers: only larger stages need the device's limit (kept off the timed path).
  if (smem > 32 * 1024)
    MEMLAB_EXPECTS(fits(k, smem), std::to_string(smem) +
                                      " bytes of shared memory per block exceed this device's opt-in limit");
  configure_smem(k, smem);
  std::size_t const batches = (n + cfg.block_threads - 1) / cfg.block_threads;
  std::size_t grid = cfg.grid_blocks > 0 ? std::min<std::size_t>(cfg.grid_blocks, batches) : batches;
  grid = std::min<std::size_t>(grid, 0x7FFFFFFF);
  k<<<static_cast<unsigned>(grid), cfg.block_threads, smem, stream>>>(static_cast<T*>(out), static_cast<T const*>(in),
                                                                       n, cfg.fmas);
  MEMLAB_CHECK_LAUNCH();
}

template <class T>
int occupancy(copy_compute_config const& cfg) {
  kernel_fn<T> k = select_kernel<T>(cfg);
  std::size_t const smem = copy_compute_smem_bytes(cfg);
  if (!fits(k, smem)) return 0;
  configure_smem(k, smem);
  int blocks = 0;
  MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, k, cfg.block_threads, smem));
  return blocks;
}

__global__ void fill_quantized_kernel(float* data, std::size_t floats, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < floats;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = quantized_value(quantized_code(seed, i));
}

}  // namespace

void parse_variant(std::string const& name, copy_method& method, int& stages) {
  auto staged = [&](std::string const& prefix, copy_method m) {
    // "<prefix>_<s>stage" with s in 1..4
    if (name.size() == prefix.size() + 7 && name.compare(0, prefix.size() + 1, prefix + "_") == 0 &&
        name.compare(name.size() - 5, 5, "stage") == 0) {
      char const c = name[prefix.size() + 1];
      if (c >= '1' && c <= '4') {
        method = m;
        stages = c - '0';
        return true;
      }
    }
    return false;
  };
  stages = 1;
  if (name == "plain") method = copy_method::plain;
  else if (name == "cg_memcpy_async") method = copy_method::cg_memcpy_async;
  else if (name == "cuda_barrier") method = copy_method::cuda_barrier;
  else if (name == "bulk_copy") method = copy_method::bulk_copy;
  else if (!staged("pipeline", copy_method::pipeline) && !staged("bulk_copy", copy_method::bulk_copy))
    MEMLAB_EXPECTS(false, "unknown copy variant '" + name + "'");
}

std::size_t copy_compute_smem_bytes(copy_compute_config const& cfg) {
  validate(cfg);
  return static_cast<std::size_t>(cfg.stages) * cfg.block_threads * cfg.element_bytes;
}

int copy_compute_max_blocks_per_sm(copy_compute_config const& cfg) {
  validate(cfg);
  switch (cfg.element_bytes) {
    case 4: return occupancy<float>(cfg);
    case 8: return occupancy<float2>(cfg);
    default: return occupancy<float4>(cfg);
  }
}

void const* copy_compute_kernel(copy_compute_config const& cfg) {
  validate(cfg);
  switch (cfg.element_bytes) {
    case 4: return reinterpret_cast<void const*>(select_kernel<float>(cfg));
    case 8: return reinterpret_cast<void const*>(select_kernel<float2>(cfg));
    default: return reinterpret_cast<void const*>(select_kernel<float4>(cfg));
  }
}

int copy_compute_needed_arch(copy_method method, char const** instruction) {
  if (method != copy_method::bulk_copy) return 0;
  if (instruction != nullptr) *instruction = "cp.async.bulk";
  return arch::bulk_copy;
}

void copy_compute(copy_compute_config const& cfg, void* out, void const* in, std::size_t n, cudaStream_t stream) {
  validate(cfg);
  if (n == 0) return;
  MEMLAB_EXPECTS(out != nullptr && in != nullptr, "null pointer");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(out) % 16 == 0 && reinterpret_cast<std::uintptr_t>(in) % 16 == 0,
                 "in and out must be 16-byte aligned");
  auto const* ob = static_cast<char const*>(out);
  auto const* ib = static_cast<char const*>(in);
  std::size_t const bytes = n * cfg.element_bytes;
  MEMLAB_EXPECTS(ob + bytes <= ib || ib + bytes <= ob, "in and out must not overlap");
  switch (cfg.element_bytes) {
    case 4: launch<float>(cfg, out, in, n, stream); break;
    case 8: launch<float2>(cfg, out, in, n, stream); break;
    default: launch<float4>(cfg, out, in, n, stream); break;
  }
}

void fill_quantized(float* data, std::size_t floats, std::uint64_t seed, cudaStream_t stream) {
  if (floats == 0) return;
  MEMLAB_EXPECTS(data != nullptr, "null pointer");
  std::size_t const blocks = std::min<std::size_t>((floats + 255) / 256, 65536);
  fill_quantized_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(data, floats, seed);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::async
