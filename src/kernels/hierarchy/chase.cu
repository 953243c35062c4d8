// Dependent-load chases through a random cycle (latency vs footprint) and the on-chip
// latencies. Each load's address depends on the previous load's value, so exactly one load
// is in flight: the time per load is the latency of the level the footprint lives in.
#include <random>
#include <stdexcept>

#include "kernels/hierarchy/hierarchy.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace memlab::hierarchy {

char const* to_string(load_path p) noexcept {
  switch (p) {
    case load_path::ca: return "ld.global";
    case load_path::cg: return "ld.global.cg";
    case load_path::nc: return "ld.global.nc";
  }
  return "?";
}

load_path parse_load_path(std::string const& name) {
  for (auto p : {load_path::ca, load_path::cg, load_path::nc})
    if (name == to_string(p)) return p;
  throw error("unknown load path '" + name + "' (ld.global, ld.global.cg, ld.global.nc)");
}

std::vector<std::uint32_t> random_cycle(std::size_t slots, std::uint64_t seed) {
  MEMLAB_EXPECTS(slots >= 1 && slots <= (std::size_t{1} << 32), "slots must be in [1, 2^32]");
  std::vector<std::uint32_t> order(slots);
  for (std::size_t i = 0; i < slots; ++i) order[i] = static_cast<std::uint32_t>(i);
  // Sattolo: a uniformly random permutation with a single cycle.
  std::mt19937_64 rng(seed);
  for (std::size_t i = slots - 1; i > 0; --i) {
    std::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(order[i], order[pick(rng)]);
  }
  std::vector<std::uint32_t> next(slots);
  for (std::size_t i = 0; i < slots; ++i) next[order[i]] = order[(i + 1) % slots];
  return next;
}

std::vector<std::uint32_t> sequential_cycle(std::size_t slots) {
  MEMLAB_EXPECTS(slots >= 1 && slots <= (std::size_t{1} << 32), "slots must be in [1, 2^32]");
  std::vector<std::uint32_t> next(slots);
  for (std::size_t i = 0; i < slots; ++i) next[i] = static_cast<std::uint32_t>((i + 1) % slots);
  return next;
}

std::uint32_t follow(std::vector<std::uint32_t> const& next, std::uint32_t start, std::uint64_t loads) {
  std::uint32_t s = start;
  for (std::uint64_t i = 0; i < loads; ++i) s = next[s];
  return s;
}

namespace {

__global__ void scatter_chain(std::uint32_t* chain, std::uint32_t const* next, std::size_t slots,
                              std::size_t stride_words) {
  for (std::size_t s = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; s < slots;
       s += std::size_t{gridDim.x} * blockDim.x)
    chain[s * stride_words] = static_cast<std::uint32_t>(next[s] * stride_words);
}

__device__ __forceinline__ std::uint64_t global_ns() {
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <load_path P>
__device__ __forceinline__ std::uint32_t load_word(std::uint32_t const* p) {
  std::uint32_t v;
  if constexpr (P == load_path::ca) {
    asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p));
  } else if constexpr (P == load_path::cg) {
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
  } else {
    asm volatile("ld.global.nc.u32 %0, [%1];" : "=r"(v) : "l"(p));
  }
  return v;
}

/// out: [cycles, ns, last word index]. `Carveout` only makes a second kernel of the same code:
/// the one whose shared-memory carve-out set_chase_carveout sets, so the other rows keep
/// the driver's default for theirs.
template <load_path P, bool Carveout = false>
__global__ void chase_kernel(std::uint32_t const* chain, std::uint32_t start_word, std::uint64_t warmup,
                             std::uint64_t loads, std::uint64_t* out) {
  std::uint32_t j = start_word;
  for (std::uint64_t i = 0; i < warmup; ++i) j = load_word<P>(chain + j);
  std::uint64_t const c0 = clock64();
  std::uint64_t const n0 = global_ns();
  for (std::uint64_t i = 0; i < loads; ++i) j = load_word<P>(chain + j);
  // The clocks are read after the last load's value is consumed by the address math.
  std::uint64_t const c1 = clock64();
  std::uint64_t const n1 = global_ns();
  out[0] = c1 - c0;
  out[1] = n1 - n0;
  out[2] = j;
}

/// Word of slot j: j * stride + (j % 16) * stagger.
__host__ __device__ __forceinline__ std::uint64_t slot_word(std::uint64_t j, std::uint64_t stride_words,
                                                            std::uint64_t stagger_words) {
  return j * stride_words + (j & 15u) * stagger_words;
}

__global__ void scatter_slot_chain(std::uint32_t* chain, std::uint32_t const* next, std::size_t slots,
                                   std::size_t stride_words, std::size_t stagger_words) {
  for (std::size_t s = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; s < slots;
       s += std::size_t{gridDim.x} * blockDim.x)
    chain[slot_word(s, stride_words, stagger_words)] = next[s];
}

/// out: [cycles, ns, last slot]
__global__ void slot_chase_kernel(std::uint32_t const* chain, std::uint64_t stride_words, std::uint64_t stagger_words,
                                  std::uint32_t start, std::uint64_t warmup, std::uint64_t loads, std::uint64_t* out) {
  std::uint32_t j = start;
  for (std::uint64_t i = 0; i < warmup; ++i) j = load_word<load_path::cg>(chain + slot_word(j, stride_words, stagger_words));
  std::uint64_t const c0 = clock64();
  std::uint64_t const n0 = global_ns();
  for (std::uint64_t i = 0; i < loads; ++i) j = load_word<load_path::cg>(chain + slot_word(j, stride_words, stagger_words));
  std::uint64_t const c1 = clock64();
  std::uint64_t const n1 = global_ns();
  out[0] = c1 - c0;
  out[1] = n1 - n0;
  out[2] = j;
}

/// Uploads `next` and runs `launch(d_next, blocks)` (the scatter kernel of one layout) on
/// `stream`, waiting for it: the device copy of `next` dies on return.
template <class Launch>
void scatter(std::vector<std::uint32_t> const& next, cudaStream_t stream, Launch&& launch) {
  device_buffer<std::uint32_t> d_next(next.size());
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d_next.data(), next.data(), next.size() * sizeof(std::uint32_t),
                                    cudaMemcpyHostToDevice, stream));
  launch(d_next.data(), static_cast<int>(std::min<std::size_t>((next.size() + 255) / 256, 4096)));
  MEMLAB_CHECK_LAUNCH();
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
}

/// A chase kernel's [cycles, ns, last index]; the index divided by `words_per_slot` is the slot.
chase_result read_result(device_buffer<std::uint64_t> const& out, std::uint64_t loads, std::size_t words_per_slot,
                         cudaStream_t stream) {
  std::uint64_t h[3];
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(h, out.data(), sizeof h, cudaMemcpyDeviceToHost, stream));
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  chase_result r;
  r.cycles_per_load = static_cast<double>(h[0]) / static_cast<double>(loads);
  r.ns_per_load = static_cast<double>(h[1]) / static_cast<double>(loads);
  r.last_slot = static_cast<std::uint32_t>(h[2] / words_per_slot);
  return r;
}

}  // namespace

void write_slot_chain(std::uint32_t* chain, std::vector<std::uint32_t> const& next, std::size_t stride_words,
                      std::size_t stagger_words, cudaStream_t stream) {
  MEMLAB_EXPECTS(stride_words >= 1, "stride_words must be >= 1");
  MEMLAB_EXPECTS(stagger_words == 0 || stride_words >= 16 * stagger_words,
                 "a staggered slot must stay inside its stride: stride_words >= 16 x stagger_words");
  MEMLAB_EXPECTS(!next.empty(), "the chain needs at least one slot");
  scatter(next, stream, [&](std::uint32_t const* d_next, int blocks) {
    scatter_slot_chain<<<blocks, 256, 0, stream>>>(chain, d_next, next.size(), stride_words, stagger_words);
  });
}

chase_result slot_chase(std::uint32_t const* chain, std::size_t stride_words, std::size_t stagger_words,
                        std::uint32_t start, std::uint64_t warmup, std::uint64_t loads, cudaStream_t stream) {
  MEMLAB_EXPECTS(loads >= 1, "loads must be >= 1");
  MEMLAB_EXPECTS(stride_words >= 1, "stride_words must be >= 1");
  device_buffer<std::uint64_t> out(3);
  slot_chase_kernel<<<1, 1, 0, stream>>>(chain, stride_words, stagger_words, start, warmup, loads, out.data());
  MEMLAB_CHECK_LAUNCH();
  return read_result(out, loads, 1, stream);
}

void write_chain(std::uint32_t* chain, std::vector<std::uint32_t> const& next, std::size_t stride_words,
                 cudaStream_t stream) {
  MEMLAB_EXPECTS(stride_words >= 1, "stride_words must be >= 1");
  MEMLAB_EXPECTS(next.size() * stride_words <= (std::size_t{1} << 32), "the chain must fit 2^32 words");
  scatter(next, stream, [&](std::uint32_t const* d_next, int blocks) {
    scatter_chain<<<blocks, 256, 0, stream>>>(chain, d_next, next.size(), stride_words);
  });
}

chase_result pointer_chase(std::uint32_t const* chain, std::size_t stride_words, load_path path, std::uint32_t start,
                           std::uint64_t warmup, std::uint64_t loads, cudaStream_t stream) {
  MEMLAB_EXPECTS(loads >= 1, "loads must be >= 1");
  device_buffer<std::uint64_t> out(3);
  std::uint32_t const start_word = static_cast<std::uint32_t>(start * stride_words);
  switch (path) {
    case load_path::ca: chase_kernel<load_path::ca><<<1, 1, 0, stream>>>(chain, start_word, warmup, loads, out.data()); break;
    case load_path::cg: chase_kernel<load_path::cg><<<1, 1, 0, stream>>>(chain, start_word, warmup, loads, out.data()); break;
    case load_path::nc: chase_kernel<load_path::nc><<<1, 1, 0, stream>>>(chain, start_word, warmup, loads, out.data()); break;
  }
  MEMLAB_CHECK_LAUNCH();
  return read_result(out, loads, stride_words, stream);
}

carveout_readback set_chase_carveout(int dynamic_smem_bytes, int carveout_percent) {
  MEMLAB_EXPECTS(dynamic_smem_bytes >= 0, "dynamic_smem_bytes must be >= 0");
  MEMLAB_EXPECTS(carveout_percent >= 0 && carveout_percent <= 100, "carveout_percent must be in [0, 100]");
  auto const kernel = chase_kernel<load_path::ca, true>;
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_smem_bytes));
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, carveout_percent));
  cudaFuncAttributes a{};
  MEMLAB_CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  return {a.preferredShmemCarveout, a.maxDynamicSharedSizeBytes};
}

chase_result pointer_chase_carveout(std::uint32_t const* chain, std::size_t stride_words, std::uint32_t start,
                                    std::uint64_t warmup, std::uint64_t loads, int dynamic_smem_bytes,
                                    cudaStream_t stream) {
  MEMLAB_EXPECTS(loads >= 1, "loads must be >= 1");
  MEMLAB_EXPECTS(dynamic_smem_bytes >= 0, "dynamic_smem_bytes must be >= 0");
  device_buffer<std::uint64_t> out(3);
  std::uint32_t const start_word = static_cast<std::uint32_t>(start * stride_words);
  chase_kernel<load_path::ca, true><<<1, 1, static_cast<std::size_t>(dynamic_smem_bytes), stream>>>(
      chain, start_word, warmup, loads, out.data());
  MEMLAB_CHECK_LAUNCH();
  return read_result(out, loads, stride_words, stream);
}

}  // namespace memlab::hierarchy
