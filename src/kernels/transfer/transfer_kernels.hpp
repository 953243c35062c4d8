#pragma once
// Device kernels and host helpers of the transfer family (Best Practices Guide §9.1):
// packing for batched transfers, a compute kernel of tunable cost for the overlap
// experiment, the element-wise kernels the zero-copy experiment runs over mapped host
// memory, and a fast seeded fill for large host buffers. No harness code here.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "memlab/detail/splitmix64.hpp"

namespace memlab::transfer {

// ---- batching: scattered pieces <-> one packed buffer -------------------------------
/// Gathers `pieces` pieces of `piece_bytes` bytes, the k-th at `scattered + k * stride`,
/// into `packed` (contiguous). 16-byte accesses when sizes and pointers allow.
void gather_pieces(void const* scattered, std::size_t stride, void* packed, std::size_t piece_bytes,
                   std::size_t pieces, cudaStream_t stream);
/// The inverse: piece k of `packed` goes to `scattered + k * stride`.
void scatter_pieces(void const* packed, void* scattered, std::size_t stride, std::size_t piece_bytes,
                    std::size_t pieces, cudaStream_t stream);

// ---- overlap: a kernel whose cost is set by an iteration count -------------------------
/// The affine map iterated by fma_chain: x <- x * a + b, contracting toward b / (1 - a) = 0.5.
inline constexpr float chain_a = 1.0f - 1.0f / 1024.0f;
inline constexpr float chain_b = 0.5f / 1024.0f;
/// out[i] = in[i] + f^iters(in[i]) with f(x) = fmaf(x, chain_a, chain_b). Adding in[i]
/// back keeps every output tied to its own input (a misplaced chunk cannot pass).
void fma_chain(float const* in, float* out, std::size_t n, int iters, cudaStream_t stream);
/// The closed form in double: x + a^k x + b (1 - a^k) / (1 - a). Independent of the loop.
double fma_chain_reference(float x, int iters);
/// A bound on |fma_chain - reference| for inputs in [-1, 1]: rounding errors are damped
/// by a each step, so they sum to at most ~ eps / (1 - a), whatever the iteration count.
double fma_chain_tolerance(int iters);

// ---- zero-copy: one coalesced pass over the data ------------------------------------
/// out[i] = a * in[i] + b. Either pointer may be mapped pinned host memory.
void affine(float const* in, float* out, std::size_t n, float a, float b, cudaStream_t stream);
/// out[i] += a * in[i] (the second pass that reads the input again).
void affine_accumulate(float const* in, float* out, std::size_t n, float a, cudaStream_t stream);

// ---- seeded random patterns, generated independently on either side ----------------------
/// 64-bit word i of the pattern for `seed` (splitmix64 of the index): the host and the
/// device compute the same words, so a copy can be checked without the reverse copy.
__host__ __device__ constexpr std::uint64_t pattern_word(std::uint64_t i, std::uint64_t seed) {
  return memlab::detail::splitmix64(seed, i);
}
/// Writes the pattern into host memory (`bytes` a multiple of 8).
void fill_pattern_host(void* p, std::size_t bytes, std::uint64_t seed);
/// Writes the pattern into device memory (`bytes` a multiple of 8).
void fill_pattern_device(void* p, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);
/// Counts the 8-byte words of device memory `p` that differ from the pattern; waits for `stream`.
std::size_t count_pattern_mismatches(void const* p, std::size_t bytes, std::uint64_t seed, cudaStream_t stream);
/// Seeded floats in [-1, 1) with 24 random bits each, for buffers too large for std::mt19937.
void fill_random_floats(float* p, std::size_t n, std::uint64_t seed);

}  // namespace memlab::transfer
