#pragma once
// Shared-memory bank conflicts (seed 003). Shared memory is 32 banks of 4-byte words; a warp
// request is served in "wavefronts", each able to deliver one word per bank (any number of
// lanes may share a word: broadcast/multicast). A request whose lanes touch k distinct words
// in one bank needs k wavefronts. 8-, 16-, 32- and 64-bit requests are counted over the whole
// warp; 128-bit requests over each half-warp, and the halves' wavefronts add up. (The usual
// description splits 64-bit requests into half-warps and 128-bit ones into quarter-warps;
// that gives the same count for every pattern except broadcasts, where the H200 measured
// 1 wavefront for a 64-bit and 2 for a 128-bit broadcast: the whole-warp/half-warp rule.)
#include <cuda_runtime_api.h>

#include <cstdint>

namespace memlab::smem {

/// Lane `lane` of the microbenchmark reads the element at index (lane / group) * stride:
/// group 1 is a plain stride, stride 0 or group 32 a broadcast, other groups multicast.
__host__ __device__ constexpr int bank_element_index(int lane, int stride, int group) { return lane / group * stride; }

/// Wavefronts (serialized shared-memory passes) one warp request needs under the model above;
/// elem_bytes is 1, 2, 4, 8 or 16.
__host__ __device__ constexpr int bank_wavefronts(int elem_bytes, int stride, int group = 1) {
  int const words_per_elem = elem_bytes < 4 ? 1 : elem_bytes / 4;
  int const lanes_per_phase = elem_bytes <= 8 ? 32 : 16;
  int total = 0;
  for (int phase = 0; phase < 32 / lanes_per_phase; ++phase) {
    std::int64_t words[64] = {};  // at most 64 words per phase (32 lanes x 64 bits, 16 x 128)
    int count = 0;
    for (int l = phase * lanes_per_phase; l < (phase + 1) * lanes_per_phase; ++l) {
      std::int64_t const byte = static_cast<std::int64_t>(bank_element_index(l, stride, group)) * elem_bytes;
      for (int p = 0; p < words_per_elem; ++p) {
        std::int64_t const w = byte / 4 + p;
        bool seen = false;
        for (int k = 0; k < count; ++k) seen = seen || words[k] == w;
        if (!seen) words[count++] = w;
      }
    }
    int worst = 0;
    for (int bank = 0; bank < 32; ++bank) {
      int in_bank = 0;
      for (int k = 0; k < count; ++k) in_bank += (words[k] % 32 == bank) ? 1 : 0;
      worst = in_bank > worst ? in_bank : worst;
    }
    total += worst;
  }
  return total;
}

/// Seed 003's rule for 32-bit words: lanes t and t+n share a bank when n is a multiple of
/// 32/gcd(s,32), so each bank sees gcd(s,32) distinct words: odd strides are conflict-free.
__host__ __device__ constexpr int gcd_rule_degree(int stride) {
  int a = stride, b = 32;
  while (b != 0) {
    int const t = a % b;
    a = b;
    b = t;
  }
  return stride == 0 ? 1 : a;
}

__host__ __device__ constexpr bool gcd_rule_matches_model() {
  for (int s = 0; s <= 64; ++s)
    if (bank_wavefronts(4, s) != gcd_rule_degree(s)) return false;
  return true;
}
static_assert(gcd_rule_matches_model(), "the bank model must reproduce the gcd rule for 32-bit strides");
static_assert(bank_wavefronts(1, 1) == 1 && bank_wavefronts(2, 1) == 1, "bytes and halves of one word share it");
static_assert(bank_wavefronts(1, 8) == 2, "8-bit stride 8: lanes 16 apart hit the same bank, different words");
static_assert(bank_wavefronts(8, 1) == 2 && bank_wavefronts(16, 1) == 4, "wide accesses: 128 bytes per wavefront");
static_assert(bank_wavefronts(8, 0) == 1 && bank_wavefronts(16, 0) == 2, "wide broadcasts: one pass per half-warp at 128 bits");
static_assert(bank_wavefronts(8, 2) == 4 && bank_wavefronts(16, 2) == 8, "wide strides");
static_assert(bank_wavefronts(4, 32, 32) == 1, "broadcast: one word for the whole warp");
static_assert(bank_wavefronts(4, 32, 2) == 16, "pairs share a word: 16 distinct words in bank 0");

/// Loads per thread in the unrolled inner loop (each shifted by 128 bytes: same banks).
inline constexpr int bank_unroll = 16;
/// Dynamic shared memory the kernel uses, fixed for every access pattern so occupancy does
/// not change across the sweep; it covers strides up to bank_max_stride for 16-byte elements.
inline constexpr int bank_max_stride = 64;
inline constexpr int bank_smem_bytes = 31 * bank_max_stride * 16 + 16 + bank_unroll * 128;
inline constexpr int bank_block = 256;

/// Largest byte offset a lane reads plus the element (must fit bank_smem_bytes).
__host__ __device__ constexpr int bank_footprint(int elem_bytes, int stride, int group) {
  return bank_element_index(31, stride, group) * elem_bytes + elem_bytes + (bank_unroll - 1) * 128;
}

/// Blocks the microbenchmark launches: one full wave (resident blocks per SM x SMs).
int bank_grid(int sm_count);

/// Each thread fills shared memory from `fill` (bank_smem_bytes bytes), then performs
/// iters * bank_unroll volatile shared loads of elem_bytes at its lane's address (see
/// bank_element_index), adds every loaded 32-bit word (or byte / half) into a sum and
/// writes it to out[thread] (grid * bank_block entries).
void bank_stride_loads(unsigned const* fill, unsigned* out, int elem_bytes, int stride, int group, int iters, int grid,
                       cudaStream_t stream);

/// Host reference of what every thread of lane `lane` writes.
unsigned bank_stride_reference(unsigned char const* fill, int lane, int elem_bytes, int stride, int group, int iters);

}  // namespace memlab::smem
