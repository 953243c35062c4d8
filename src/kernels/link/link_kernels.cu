#include "kernels/link/link_kernels.hpp"

#include <algorithm>

#include "memlab/device.hpp"
#include "memlab/error.hpp"

namespace memlab::link {
namespace {

constexpr int copy_threads = 512;
constexpr int copy_unroll = 4;  // 16-byte vectors in flight per thread: hides the link's latency

__global__ void sm_copy_vec_kernel(uint4* __restrict__ dst, uint4 const* __restrict__ src, std::size_t vecs) {
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four loads issued before the first store, each a full 16 bytes: the copy is bound by
  // outstanding requests over NVLink/PCIe, not by instructions.
  for (; i + (copy_unroll - 1) * stride < vecs; i += copy_unroll * stride) {
    uint4 v[copy_unroll];
#pragma unroll
    for (int u = 0; u < copy_unroll; ++u) v[u] = __ldcg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < copy_unroll; ++u) __stcg(dst + i + u * stride, v[u]);
  }
  for (; i < vecs; i += stride) __stcg(dst + i, __ldcg(src + i));
}

__global__ void sm_copy_bytes_kernel(unsigned char* __restrict__ dst, unsigned char const* __restrict__ src,
                                     std::size_t bytes) {
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < bytes; i += stride)
    dst[i] = src[i];
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ std::uint32_t load_flag(std::uint32_t const* p) {
  std::uint32_t v;
  asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_flag(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ void wait_for(std::uint32_t const* p, std::uint32_t want) {
  unsigned long long const t0 = global_ns();
  while (static_cast<std::int32_t>(load_flag(p) - want) < 0)
    if (global_ns() - t0 > 10ull * 1000 * 1000 * 1000) __trap();
}

__global__ void pingpong_kernel(std::uint32_t* mine, std::uint32_t* theirs, int rounds, std::uint32_t base,
                                bool initiator) {
  for (int i = 0; i < rounds; ++i) {
    std::uint32_t const ping = base + 2u * i + 1u, pong = ping + 1u;
    if (initiator) {
      store_flag(theirs, ping);
      wait_for(mine, pong);
    } else {
      wait_for(mine, ping);
      store_flag(theirs, pong);
    }
  }
}

__global__ void gate_kernel(std::uint32_t const* flag, std::uint32_t ticket, unsigned timeout_ms) {
  unsigned long long const t0 = global_ns();
  while (static_cast<std::int32_t>(load_flag(flag) - ticket) < 0)
    if (global_ns() - t0 > static_cast<unsigned long long>(timeout_ms) * 1000000ull) return;
}

__global__ void chase_kernel(std::uint32_t const* next, std::size_t steps, std::uint32_t* last) {
  std::uint32_t j = 0;
  for (std::size_t s = 0; s < steps; ++s) j = __ldcg(next + j);  // each load waits for the previous
  *last = j;
}

__global__ void fill_seeded_kernel(float* p, std::size_t n, std::uint64_t seed, int rank, std::uint64_t first,
                                   bool small_ints) {
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    p[i] = small_ints ? seeded_small_int(seed, rank, first + i) : seeded_unit(seed, rank, first + i);
}

}  // namespace

int sm_copy_default_blocks() { return 4 * current_device_sm_count(); }

void sm_copy(void* dst, void const* src, std::size_t bytes, int blocks, cudaStream_t stream) {
  MEMLAB_EXPECTS(blocks >= 0, "sm_copy: blocks must not be negative");
  if (bytes == 0) return;
  MEMLAB_EXPECTS(dst && src, "sm_copy: null pointer");
  int const grid = blocks > 0 ? blocks : sm_copy_default_blocks();
  bool const aligned = reinterpret_cast<std::uintptr_t>(dst) % 16 == 0 && reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  std::size_t const vecs = aligned ? bytes / 16 : 0;
  if (vecs) {
    auto const need = static_cast<int>(std::min<std::size_t>((vecs + copy_threads - 1) / copy_threads, grid));
    sm_copy_vec_kernel<<<need, copy_threads, 0, stream>>>(static_cast<uint4*>(dst), static_cast<uint4 const*>(src), vecs);
    MEMLAB_CHECK_LAUNCH();
  }
  std::size_t const rest = bytes - vecs * 16;
  if (rest) {
    auto const need = static_cast<int>(std::min<std::size_t>((rest + copy_threads - 1) / copy_threads, grid));
    sm_copy_bytes_kernel<<<need, copy_threads, 0, stream>>>(static_cast<unsigned char*>(dst) + vecs * 16,
                                                            static_cast<unsigned char const*>(src) + vecs * 16, rest);
    MEMLAB_CHECK_LAUNCH();
  }
}

void pingpong(std::uint32_t* mine, std::uint32_t* theirs, int rounds, std::uint32_t base, bool initiator,
              cudaStream_t stream) {
  MEMLAB_EXPECTS(mine && theirs && rounds > 0, "pingpong: null flag or no rounds");
  pingpong_kernel<<<1, 1, 0, stream>>>(mine, theirs, rounds, base, initiator);
  MEMLAB_CHECK_LAUNCH();
}

void gate(std::uint32_t const* flag, std::uint32_t ticket, unsigned timeout_ms, cudaStream_t stream) {
  MEMLAB_EXPECTS(flag, "gate: null flag");
  gate_kernel<<<1, 1, 0, stream>>>(flag, ticket, timeout_ms);
  MEMLAB_CHECK_LAUNCH();
}

void chase(std::uint32_t const* next, std::size_t steps, std::uint32_t* last, cudaStream_t stream) {
  MEMLAB_EXPECTS(next && last, "chase: null pointer");
  chase_kernel<<<1, 1, 0, stream>>>(next, steps, last);
  MEMLAB_CHECK_LAUNCH();
}

void fill_seeded(float* p, std::size_t n, std::uint64_t seed, int rank, std::uint64_t first, bool small_ints,
                 cudaStream_t stream) {
  if (n == 0) return;
  int const grid = static_cast<int>(std::min<std::size_t>((n + 255) / 256, 4096));
  fill_seeded_kernel<<<grid, 256, 0, stream>>>(p, n, seed, rank, first, small_ints);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::link
