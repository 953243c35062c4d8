#pragma once
// Kernels of the link family (docs/link.md): an SM copy for peer and mapped host memory,
// a flag ping-pong between two GPUs, a dependent-load chase, and seeded small-integer data
// for the collectives (exact sums in any order). No harness code here.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "memlab/detail/splitmix64.hpp"

namespace memlab::link {

/// Copies `bytes` from `src` to `dst` with SM loads and stores: 16-byte vectors, four in
/// flight per thread, `blocks` CTAs of 512 threads (0: 4 per SM of the current device).
/// Either side may be peer memory (with peer access enabled) or mapped pinned host memory.
/// 16-byte aligned pointers take the vector path; the bytes past the last vector are copied
/// one by one (as are all of them when a pointer is not 16-byte aligned).
void sm_copy(void* dst, void const* src, std::size_t bytes, int blocks, cudaStream_t stream);
/// CTAs sm_copy uses for `blocks` = 0 on the current device.
int sm_copy_default_blocks();

/// One side of a ping-pong of `rounds` round trips through two flags: `mine` in this GPU's
/// memory (polled), `theirs` in the other GPU's (written). The initiator writes base+2i+1 and
/// waits for base+2i+2; the responder waits for base+2i+1 and answers base+2i+2. Values grow
/// from call to call (the caller passes a fresh `base`), so the flags are never reset.
/// A wait longer than 10 s traps (the other side never ran).
void pingpong(std::uint32_t* mine, std::uint32_t* theirs, int rounds, std::uint32_t base, bool initiator,
              cudaStream_t stream);

/// Holds `stream` until the host writes a value >= `ticket` into `*flag` (mapped pinned host
/// memory, as the device addresses it), or `timeout_ms` has passed (then it just returns: a
/// host blocked on a full launch queue cannot deadlock with it). Work queued behind it then
/// runs back to back, without the host's issue time between operations.
void gate(std::uint32_t const* flag, std::uint32_t ticket, unsigned timeout_ms, cudaStream_t stream);

/// One thread follows `next` (index -> index, L1 bypassed) for `steps` steps from 0 and
/// writes the last index to `*last`. `next` may be peer or mapped host memory.
void chase(std::uint32_t const* next, std::size_t steps, std::uint32_t* last, cudaStream_t stream);

/// Element i of rank r's input for `seed`: a small integer in [-8, 8] as a float, so every sum
/// of up to 2^20 of them is exact in float whatever the order of the additions.
__host__ __device__ constexpr float seeded_small_int(std::uint64_t seed, int rank, std::uint64_t i) {
  return static_cast<float>(static_cast<int>(memlab::detail::splitmix64(seed + 0x9E3779B97F4A7C15ull * (rank + 1), i) % 17u) - 8);
}
/// Element i of rank r's input for `seed`: a float in [-1, 1) with 24 random bits (exact), so
/// a sum's value depends on the order of its additions (what the all-reduce tests pin down).
__host__ __device__ constexpr float seeded_unit(std::uint64_t seed, int rank, std::uint64_t i) {
  return static_cast<float>(static_cast<std::int32_t>(memlab::detail::splitmix64(seed + 0x2545F4914F6CDD1Dull * (rank + 1), i) >> 40) -
                            (1 << 23)) / static_cast<float>(1 << 23);
}
/// Fills p[0..n) with seeded_small_int (small_ints) or seeded_unit (otherwise) of (seed, rank, first + i).
void fill_seeded(float* p, std::size_t n, std::uint64_t seed, int rank, std::uint64_t first, bool small_ints,
                 cudaStream_t stream);

}  // namespace memlab::link
