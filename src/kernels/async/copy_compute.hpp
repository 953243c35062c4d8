#pragma once
// Copy-and-compute through shared memory (seed 002): a block stages a batch of the input
// in shared memory, computes on it, writes the result, and moves to its next batch. The
// variants differ only in how the batch reaches shared memory and how the block waits.
//
// Element i of the output, in the batch (tile) t = i / block_threads holding c elements:
//   out[i] = chain(in[i]) + in[t*B + (c - 1 - local)]      (componentwise, local = i - t*B)
// where chain(x) applies `fmas` fused multiply-adds x = fma(x, a, b) per float. Reading the
// mirrored element makes every thread depend on a value another thread copied, so the
// shared-memory stage and its synchronisation are load-bearing.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "memlab/detail/splitmix64.hpp"

namespace memlab::async {

/// How a batch travels from global to shared memory.
enum class copy_method {
  plain,            ///< load to a register, store to shared, two __syncthreads per batch
  cg_memcpy_async,  ///< cooperative_groups::memcpy_async + cooperative_groups::wait
  cuda_barrier,     ///< cuda::memcpy_async completing on a block-scoped cuda::barrier
  pipeline,         ///< cuda::memcpy_async into a block-scoped cuda::pipeline of `stages` stages
  bulk_copy,        ///< cp.async.bulk issued by one thread, completing on an mbarrier (sm_90+)
};

struct copy_compute_config {
  copy_method method = copy_method::plain;
  int stages = 1;            ///< pipeline: 1..4; bulk_copy: 1..4; others: 1
  int element_bytes = 16;    ///< 4 (float), 8 (float2) or 16 (float4)
  bool aligned_hint = false; ///< pass cuda::aligned_size_t<16> for whole batches
  int fmas = 0;              ///< fused multiply-adds per float of each element, >= 0
  int block_threads = 256;   ///< batch size in elements; a multiple of 32, <= 1024
  int grid_blocks = 0;       ///< blocks launched (each loops over batches); 0: one per batch
};

/// The FMA chain's constants: x -> x*a + b has the fixed point 1, so values stay in [-1, 1].
inline constexpr float chain_a = 0.9990234375f;  // 1 - 2^-10
inline constexpr float chain_b = 0.0009765625f;  // 2^-10

/// Parses "plain", "cg_memcpy_async", "cuda_barrier", "pipeline_<s>stage", "bulk_copy",
/// "bulk_copy_<s>stage" into method and stages; throws memlab::error otherwise.
void parse_variant(std::string const& name, copy_method& method, int& stages);

/// Dynamic shared memory the launch uses (stages x block_threads x element_bytes).
std::size_t copy_compute_smem_bytes(copy_compute_config const& cfg);

/// Resident blocks per SM for this configuration (cudaOccupancyMaxActiveBlocksPerMultiprocessor);
/// 0 when its shared memory exceeds the device's opt-in limit per block.
int copy_compute_max_blocks_per_sm(copy_compute_config const& cfg);

/// The kernel copy_compute launches for `cfg`, for memlab::compiled_arch and require_arch.
void const* copy_compute_kernel(copy_compute_config const& cfg);

/// The architecture `method` needs in the compiled image (memlab/arch.hpp), with the
/// instruction that needs it; 0 when any image runs it. libcu++'s and cooperative groups'
/// memcpy_async fall back to synchronous copies below sm_80, so only bulk_copy needs one.
int copy_compute_needed_arch(copy_method method, char const** instruction = nullptr);

/// Runs the copy-and-compute kernel over `n` elements of cfg.element_bytes bytes.
/// `in` and `out` must be 16-byte aligned and must not overlap. bulk_copy needs code
/// compiled for sm_90 or newer (memlab::error otherwise, before any launch).
void copy_compute(copy_compute_config const& cfg, void* out, void const* in, std::size_t n,
                  cudaStream_t stream = nullptr);

// ---------------------------------------------------------------------------------------
// Seeded input generation shared by the experiments, the tests and the host references.

/// The value of float number `index` for `seed`: k / 32768 with k in [-32768, 32767],
/// from a splitmix64 hash. Quantised so a host reference can tabulate chain() once.
__host__ __device__ constexpr std::uint32_t quantized_code(std::uint64_t seed, std::uint64_t index) {
  return static_cast<std::uint32_t>(memlab::detail::splitmix64(seed, index) >> 48);  // 16 bits
}
__host__ __device__ constexpr float quantized_value(std::uint32_t code) {
  return static_cast<float>(static_cast<int>(code) - 32768) / 32768.0f;
}

/// Fills `floats` floats with quantized_value(quantized_code(seed, i)) on the device.
void fill_quantized(float* data, std::size_t floats, std::uint64_t seed, cudaStream_t stream = nullptr);

}  // namespace memlab::async
