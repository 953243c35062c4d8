#pragma once
// Array reverse through shared memory (seed 003): out[i] = in[n-1-i]. Each block stages one
// tile of the input in shared memory and writes it back mirrored, so every thread reads a
// slot another thread wrote (the barrier is what makes that legal) and both global
// accesses stay coalesced.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace memlab::smem {

/// Block size of the static-shared-memory kernel (its tile is a compile-time array).
inline constexpr int reverse_static_block = 256;
/// Elements each thread of the static and dynamic kernels moves. One int per thread leaves
/// too few bytes in flight to cover DRAM latency (the first H200 run reached 55% of the copy
/// ceiling); four, loaded block-stride so every load stays coalesced, keep more in flight.
inline constexpr int reverse_items = 4;

__host__ __device__ constexpr std::size_t align_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

/// One dynamic shared allocation carved into a char, an int and a float array of `count`
/// elements each. The chars come first on purpose: with an odd count the int array must be
/// moved up to the next 4-byte boundary, which is the alignment the carve has to handle.
struct carved_layout {
  std::size_t char_offset, int_offset, float_offset, bytes;
};
__host__ __device__ constexpr carved_layout carve_char_int_float(std::size_t count) {
  std::size_t const c = 0;
  std::size_t const i = align_up(c + count * sizeof(char), alignof(int));
  std::size_t const f = align_up(i + count * sizeof(int), alignof(float));
  return {c, i, f, align_up(f + count * sizeof(float), 16)};
}
static_assert(carve_char_int_float(97).int_offset == 100, "ints start at the next 4-byte boundary");
static_assert(carve_char_int_float(97).float_offset == 100 + 4 * 97, "floats follow the ints");
static_assert(carve_char_int_float(256).int_offset == 256, "no padding when the chars fill whole words");

/// Reverse through a static __shared__ int[reverse_static_block * reverse_items] tile.
void reverse_static(int const* in, int* out, std::int64_t n, cudaStream_t stream);
/// Reverse through an extern __shared__ tile of `block * reverse_items` ints sized at launch.
void reverse_dynamic(int const* in, int* out, std::int64_t n, int block, cudaStream_t stream);
/// Reverses a char, an int and a float array at once through one carved dynamic allocation
/// (carve_char_int_float(block).bytes bytes per block, one element of each per thread).
void reverse_carved(char const* in_c, int const* in_i, float const* in_f, char* out_c, int* out_i, float* out_f,
                    std::int64_t n, int block, cudaStream_t stream);

}  // namespace memlab::smem
