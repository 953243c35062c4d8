#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/transfer/host_timing.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/error.hpp"

namespace memlab::transfer {
namespace {

constexpr int block_threads = 256;

__host__ __device__ constexpr bool aligned16(std::uintptr_t p) { return (p & 15u) == 0; }

// One block per piece: pieces are small (KiB), so a block's threads stride through one
// piece and consecutive threads touch consecutive 16-byte words (coalesced on both sides).
template <class Word>
__global__ void gather_kernel(char const* __restrict__ scattered, std::size_t stride, char* __restrict__ packed,
                              std::size_t piece_words) {
  std::size_t const k = blockIdx.x;
  auto const* src = reinterpret_cast<Word const*>(scattered + k * stride);
  auto* dst = reinterpret_cast<Word*>(packed) + k * piece_words;
  for (std::size_t w = threadIdx.x; w < piece_words; w += blockDim.x) dst[w] = src[w];
}

template <class Word>
__global__ void scatter_kernel(char const* __restrict__ packed, char* __restrict__ scattered, std::size_t stride,
                               std::size_t piece_words) {
  std::size_t const k = blockIdx.x;
  auto const* src = reinterpret_cast<Word const*>(packed) + k * piece_words;
  auto* dst = reinterpret_cast<Word*>(scattered + k * stride);
  for (std::size_t w = threadIdx.x; w < piece_words; w += blockDim.x) dst[w] = src[w];
}

void check_pieces(void const* a, void const* b, std::size_t stride, std::size_t piece_bytes, std::size_t pieces) {
  MEMLAB_EXPECTS(a != nullptr && b != nullptr, "null buffer");
  MEMLAB_EXPECTS(piece_bytes > 0, "piece_bytes must be positive");
  MEMLAB_EXPECTS(stride >= piece_bytes, "stride must be at least piece_bytes (pieces may not overlap)");
  MEMLAB_EXPECTS(pieces <= 0x7fffffffu, "too many pieces for one grid");
}

bool wide_ok(void const* a, void const* b, std::size_t stride, std::size_t piece_bytes) {
  return aligned16(reinterpret_cast<std::uintptr_t>(a)) && aligned16(reinterpret_cast<std::uintptr_t>(b)) &&
         stride % 16 == 0 && piece_bytes % 16 == 0;
}

__global__ void fma_chain_kernel(float const* __restrict__ in, float* __restrict__ out, std::size_t n, int iters) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float const x0 = in[i];
  float x = x0;
  // A dependent chain: one FMA per step, so the cost is iters x n FMAs, linear in iters.
  for (int k = 0; k < iters; ++k) x = fmaf(x, chain_a, chain_b);
  out[i] = x0 + x;
}

// One float4 per thread where the pointers allow it: wide, coalesced requests keep enough
// bytes in flight to cover the PCIe round trip when one side is mapped host memory.
__global__ void affine_vec4_kernel(float4 const* __restrict__ in, float4* __restrict__ out, std::size_t n4, float a,
                                   float b) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 v = in[i];
  v.x = a * v.x + b;
  v.y = a * v.y + b;
  v.z = a * v.z + b;
  v.w = a * v.w + b;
  out[i] = v;
}

__global__ void affine_kernel(float const* __restrict__ in, float* __restrict__ out, std::size_t n, float a, float b) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = a * in[i] + b;
}

__global__ void affine_accumulate_vec4_kernel(float4 const* __restrict__ in, float4* __restrict__ out, std::size_t n4,
                                              float a) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n4) return;
  float4 const v = in[i];
  float4 o = out[i];
  o.x += a * v.x;
  o.y += a * v.y;
  o.z += a * v.z;
  o.w += a * v.w;
  out[i] = o;
}

__global__ void affine_accumulate_kernel(float const* __restrict__ in, float* __restrict__ out, std::size_t n,
                                         float a) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] += a * in[i];
}

unsigned blocks_for(std::size_t n) {
  std::size_t const b = (n + block_threads - 1) / block_threads;
  MEMLAB_EXPECTS(b <= 0x7fffffffu, "too many elements for one grid");
  return static_cast<unsigned>(std::max<std::size_t>(b, 1));
}


}  // namespace

void gather_pieces(void const* scattered, std::size_t stride, void* packed, std::size_t piece_bytes,
                   std::size_t pieces, cudaStream_t stream) {
  check_pieces(scattered, packed, stride, piece_bytes, pieces);
  if (pieces == 0) return;
  auto const* s = static_cast<char const*>(scattered);
  auto* p = static_cast<char*>(packed);
  if (wide_ok(scattered, packed, stride, piece_bytes))
    gather_kernel<uint4><<<static_cast<unsigned>(pieces), block_threads, 0, stream>>>(s, stride, p, piece_bytes / 16);
  else
    gather_kernel<unsigned char><<<static_cast<unsigned>(pieces), block_threads, 0, stream>>>(s, stride, p, piece_bytes);
  MEMLAB_CHECK_LAUNCH();
}

void scatter_pieces(void const* packed, void* scattered, std::size_t stride, std::size_t piece_bytes,
                    std::size_t pieces, cudaStream_t stream) {
  check_pieces(packed, scattered, stride, piece_bytes, pieces);
  if (pieces == 0) return;
  auto const* p = static_cast<char const*>(packed);
  auto* s = static_cast<char*>(scattered);
  if (wide_ok(packed, scattered, stride, piece_bytes))
    scatter_kernel<uint4><<<static_cast<unsigned>(pieces), block_threads, 0, stream>>>(p, s, stride, piece_bytes / 16);
  else
    scatter_kernel<unsigned char><<<static_cast<unsigned>(pieces), block_threads, 0, stream>>>(p, s, stride, piece_bytes);
  MEMLAB_CHECK_LAUNCH();
}

void fma_chain(float const* in, float* out, std::size_t n, int iters, cudaStream_t stream) {
  MEMLAB_EXPECTS(iters >= 0, "iters must be non-negative");
  if (n == 0) return;
  MEMLAB_EXPECTS(in != nullptr && out != nullptr, "null buffer");
  fma_chain_kernel<<<blocks_for(n), block_threads, 0, stream>>>(in, out, n, iters);
  MEMLAB_CHECK_LAUNCH();
}

double fma_chain_reference(float x, int iters) {
  double const a = chain_a, b = chain_b;
  double const ak = std::pow(a, iters);
  return static_cast<double>(x) + ak * x + b * (1.0 - ak) / (1.0 - a);
}

double fma_chain_tolerance(int iters) {
  double const eps = std::ldexp(1.0, -24);
  // Per-step rounding <= eps * |x| (|x| <= 1), damped by a per step: at most eps/(1-a) in
  // total, and no more than iters * eps; the final add contributes 2 eps more. Factor 4 of slack.
  double const steps = std::min<double>(iters, 1.0 / (1.0 - chain_a));
  return 4.0 * eps * (steps + 2.0);
}

void affine(float const* in, float* out, std::size_t n, float a, float b, cudaStream_t stream) {
  if (n == 0) return;
  MEMLAB_EXPECTS(in != nullptr && out != nullptr, "null buffer");
  if (n % 4 == 0 && aligned16(reinterpret_cast<std::uintptr_t>(in)) && aligned16(reinterpret_cast<std::uintptr_t>(out)))
    affine_vec4_kernel<<<blocks_for(n / 4), block_threads, 0, stream>>>(reinterpret_cast<float4 const*>(in),
                                                                      reinterpret_cast<float4*>(out), n / 4, a, b);
  else
    affine_kernel<<<blocks_for(n), block_threads, 0, stream>>>(in, out, n, a, b);
  MEMLAB_CHECK_LAUNCH();
}

void affine_accumulate(float const* in, float* out, std::size_t n, float a, cudaStream_t stream) {
  if (n == 0) return;
  MEMLAB_EXPECTS(in != nullptr && out != nullptr, "null buffer");
  if (n % 4 == 0 && aligned16(reinterpret_cast<std::uintptr_t>(in)) && aligned16(reinterpret_cast<std::uintptr_t>(out)))
    affine_accumulate_vec4_kernel<<<blocks_for(n / 4), block_threads, 0, stream>>>(
        reinterpret_cast<float4 const*>(in), reinterpret_cast<float4*>(out), n / 4, a);
  else
    affine_accumulate_kernel<<<blocks_for(n), block_threads, 0, stream>>>(in, out, n, a);
  MEMLAB_CHECK_LAUNCH();
}

namespace {
__global__ void fill_pattern_kernel(std::uint64_t* p, std::size_t words, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    p[i] = pattern_word(i, seed);
}

__global__ void count_mismatch_kernel(std::uint64_t const* p, std::size_t words, std::uint64_t seed,
                                      unsigned long long* count) {
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    local += p[i] != pattern_word(i, seed) ? 1u : 0u;
  if (local != 0) atomicAdd(count, local);
}

unsigned pattern_blocks(std::size_t words) {
  return static_cast<unsigned>(std::min<std::size_t>((words + block_threads - 1) / block_threads, 4096));
}
}  // namespace

void fill_pattern_host(void* p, std::size_t bytes, std::uint64_t seed) {
  MEMLAB_EXPECTS(bytes % 8 == 0, "pattern length must be a multiple of 8 bytes");
  if (bytes == 0) return;
  MEMLAB_EXPECTS(p != nullptr, "null buffer");
  auto* b = static_cast<unsigned char*>(p);
  memlab::detail::host_parallel_for(bytes / 8, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      std::uint64_t const v = pattern_word(i, seed);
      std::memcpy(b + 8 * i, &v, 8);
    }
  });
}

void fill_pattern_device(void* p, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  MEMLAB_EXPECTS(bytes % 8 == 0, "pattern length must be a multiple of 8 bytes");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(p) % 8 == 0, "pattern buffer must be 8-byte aligned");
  if (bytes == 0) return;
  fill_pattern_kernel<<<pattern_blocks(bytes / 8), block_threads, 0, stream>>>(static_cast<std::uint64_t*>(p),
                                                                              bytes / 8, seed);
  MEMLAB_CHECK_LAUNCH();
}

std::size_t count_pattern_mismatches(void const* p, std::size_t bytes, std::uint64_t seed, cudaStream_t stream) {
  MEMLAB_EXPECTS(bytes % 8 == 0, "pattern length must be a multiple of 8 bytes");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(p) % 8 == 0, "pattern buffer must be 8-byte aligned");
  if (bytes == 0) return 0;
  unsigned long long* count = nullptr;
  MEMLAB_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&count), sizeof(unsigned long long), stream));
  unsigned long long host = 0;
  cudaError_t st = cudaMemsetAsync(count, 0, sizeof(unsigned long long), stream);
  if (st == cudaSuccess) {
    count_mismatch_kernel<<<pattern_blocks(bytes / 8), block_threads, 0, stream>>>(
        static_cast<std::uint64_t const*>(p), bytes / 8, seed, count);
    st = cudaGetLastError();
  }
  if (st == cudaSuccess) st = cudaMemcpyAsync(&host, count, sizeof host, cudaMemcpyDeviceToHost, stream);
  cudaError_t const freed = cudaFreeAsync(count, stream);
  if (st == cudaSuccess) st = freed;
  if (st == cudaSuccess) st = cudaStreamSynchronize(stream);
  MEMLAB_CUDA_CHECK(st);
  return static_cast<std::size_t>(host);
}

void fill_random_floats(float* p, std::size_t n, std::uint64_t seed) {
  if (n == 0) return;
  MEMLAB_EXPECTS(p != nullptr, "null buffer");
  std::uint64_t const s = seed ^ 0x2545F4914F6CDD1Dull;
  // 24 random bits per float: exactly representable values in [-1, 1). Word k feeds floats 2k, 2k+1.
  memlab::detail::host_parallel_for((n + 1) / 2, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t k = lo; k < hi; ++k) {
      std::uint64_t const v = pattern_word(k, s);
      p[2 * k] = static_cast<float>(static_cast<std::int32_t>(v & 0xFFFFFFu) - 0x800000) * (1.0f / 8388608.0f);
      if (2 * k + 1 < n)
        p[2 * k + 1] =
            static_cast<float>(static_cast<std::int32_t>((v >> 32) & 0xFFFFFFu) - 0x800000) * (1.0f / 8388608.0f);
    }
  });
}

}  // namespace memlab::transfer
