#include <cstdint>

#include "memlab/coalescing.hpp"
#include "memlab/error.hpp"

namespace memlab {

namespace {

constexpr int block_threads = 256;

// The Guide's offsetCopy, with a bound so any n works.
__global__ void offset_copy_kernel(float* __restrict__ out, float const* __restrict__ in, std::size_t n, int offset) {
  std::size_t const i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i + offset] = in[i + offset];
}

// The Guide's strideCopy.
__global__ void stride_copy_kernel(float* __restrict__ out, float const* __restrict__ in, std::size_t n, int stride) {
  std::size_t const i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i * stride] = in[i * stride];
}

// Each thread loads `Unroll` vectors (one per block-width step, so every step is a
// coalesced warp access) before storing any: several loads in flight per thread.
template <class V, int Unroll>
__global__ void vector_copy_kernel(V* __restrict__ out, V const* __restrict__ in, std::size_t count) {
  std::size_t const base = static_cast<std::size_t>(blockIdx.x) * blockDim.x * Unroll + threadIdx.x;
  V v[Unroll];
#pragma unroll
  for (int k = 0; k < Unroll; ++k) {
    std::size_t const i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < count) v[k] = in[i];
  }
#pragma unroll
  for (int k = 0; k < Unroll; ++k) {
    std::size_t const i = base + static_cast<std::size_t>(k) * blockDim.x;
    if (i < count) out[i] = v[k];
  }
}

unsigned blocks_for(std::size_t items, std::size_t per_block) {
  std::size_t const b = (items + per_block - 1) / per_block;
  MEMLAB_EXPECTS(b <= 0x7fffffffu, "problem too large for a one-dimensional grid");
  return static_cast<unsigned>(b);
}

template <class V, int Unroll>
void launch_vector(void* out, void const* in, std::size_t count, cudaStream_t stream) {
  if (count == 0) return;
  vector_copy_kernel<V, Unroll><<<blocks_for(count, std::size_t{block_threads} * Unroll), block_threads, 0, stream>>>(
      static_cast<V*>(out), static_cast<V const*>(in), count);
  MEMLAB_CHECK_LAUNCH();
}

template <class V>
void dispatch_unroll(void* out, void const* in, std::size_t count, int unroll, cudaStream_t stream) {
  switch (unroll) {
    case 1: return launch_vector<V, 1>(out, in, count, stream);
    case 2: return launch_vector<V, 2>(out, in, count, stream);
    case 4: return launch_vector<V, 4>(out, in, count, stream);
    default: return launch_vector<V, 8>(out, in, count, stream);
  }
}

}  // namespace

void offset_copy(float* out, float const* in, std::size_t n, int offset, cudaStream_t stream) {
  MEMLAB_EXPECTS(n == 0 || (out != nullptr && in != nullptr), "null pointer");
  MEMLAB_EXPECTS(offset >= 0, "offset must be >= 0");
  if (n == 0) return;
  offset_copy_kernel<<<blocks_for(n, block_threads), block_threads, 0, stream>>>(out, in, n, offset);
  MEMLAB_CHECK_LAUNCH();
}

void stride_copy(float* out, float const* in, std::size_t n, int stride, cudaStream_t stream) {
  MEMLAB_EXPECTS(n == 0 || (out != nullptr && in != nullptr), "null pointer");
  MEMLAB_EXPECTS(stride >= 1, "stride must be >= 1");
  if (n == 0) return;
  stride_copy_kernel<<<blocks_for(n, block_threads), block_threads, 0, stream>>>(out, in, n, stride);
  MEMLAB_CHECK_LAUNCH();
}

void vector_copy(void* out, void const* in, std::size_t bytes, int access_bytes, int unroll, cudaStream_t stream) {
  MEMLAB_EXPECTS(access_bytes == 4 || access_bytes == 8 || access_bytes == 16, "access_bytes must be 4, 8 or 16");
  MEMLAB_EXPECTS(unroll == 1 || unroll == 2 || unroll == 4 || unroll == 8, "unroll must be 1, 2, 4 or 8");
  MEMLAB_EXPECTS(bytes % 4 == 0, "bytes must be a multiple of 4");
  MEMLAB_EXPECTS(bytes == 0 || (out != nullptr && in != nullptr), "null pointer");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(out) % access_bytes == 0 &&
                     reinterpret_cast<std::uintptr_t>(in) % access_bytes == 0,
                 "pointers must be aligned to access_bytes");
  std::size_t const whole = bytes / access_bytes;
  switch (access_bytes) {
    case 4: dispatch_unroll<float>(out, in, whole, unroll, stream); break;
    case 8: dispatch_unroll<float2>(out, in, whole, unroll, stream); break;
    default: dispatch_unroll<float4>(out, in, whole, unroll, stream); break;
  }
  std::size_t const done = whole * access_bytes;
  if (done < bytes)
    launch_vector<float, 1>(static_cast<char*>(out) + done, static_cast<char const*>(in) + done, (bytes - done) / 4,
                            stream);
}

}  // namespace memlab
