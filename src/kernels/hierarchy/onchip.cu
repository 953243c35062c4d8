// On-chip latencies: a shared-memory chase, constant-cache loads that broadcast or
// serialize, and dependent register operations. One warp; cycles from clock64.
#include <cmath>
#include <cstring>

#include "kernels/hierarchy/hierarchy.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace memlab::hierarchy {

namespace {

constexpr int chain_slots = 4096;      // 16 KiB of shared memory
constexpr int const_chain_slots = 256;  // 1 KiB: inside the constant cache of every GPU since Kepler
constexpr std::uint32_t imad_a = 2654435761u;  // odd: x -> a x + b never collapses to a constant  // 16 KiB: fits shared memory and the 64 KiB constant bank
__constant__ std::uint32_t c_chain[const_chain_slots];

/// Lane l of the divergent constant chase starts here: 32 distinct slots.
__host__ __device__ constexpr std::uint32_t lane_start(int lane) { return static_cast<std::uint32_t>(lane) * 7u; }

template <onchip_op Op>
__global__ void onchip_kernel(std::uint32_t const* next, std::uint64_t ops, std::uint32_t seed_word,
                              std::uint64_t* cycles, std::uint32_t* checksum) {
  // cycles[0]: clock64 cycles, cycles[1]: %globaltimer ns of the same timed pass.
  __shared__ std::uint32_t s_chain[chain_slots];
  int const lane = threadIdx.x;
  // The shared chain holds shared-window addresses, so each load's value is the next
  // load's address: no index arithmetic between dependent loads.
  auto const base = static_cast<std::uint32_t>(__cvta_generic_to_shared(s_chain));
  if constexpr (Op == onchip_op::shared_load || Op == onchip_op::shared_load_indexed) {
    for (int i = lane; i < chain_slots; i += 32) s_chain[i] = Op == onchip_op::shared_load ? base + 4 * next[i] : next[i];
    __syncwarp();
  }
  std::uint32_t j = Op == onchip_op::constant_divergent ? lane_start(lane) : Op == onchip_op::shared_load ? base : 0u;
  std::uint32_t x = seed_word;
  float f = __uint_as_float((seed_word & 0x007fffffu) | 0x3f800000u);  // in [1, 2)
  float const fa = 0.999f, fb = 0.001f;
  std::uint64_t c0 = 0, n0 = 0;
  for (int pass = 0; pass < 2; ++pass) {  // pass 0 warms up, pass 1 is timed
    if (pass == 1) {
      c0 = clock64();
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(n0));
    }
#pragma unroll 16
    for (std::uint64_t i = 0; i < ops; ++i) {
      if constexpr (Op == onchip_op::shared_load) {
        // Every lane follows the same chain (a broadcast): a lane-0-only load made the loop a
        // divergent branch around each LDS (BSSY/BRA in the SASS), 35 cycles a load on an H100.
        asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(j));
      } else if constexpr (Op == onchip_op::shared_load_indexed) {
        // The classic P-chase's j = s[j]: the index becomes an address (a shift and an add)
        // before each load.
        j = static_cast<std::uint32_t volatile*>(s_chain)[j];
      } else if constexpr (Op == onchip_op::constant_uniform || Op == onchip_op::constant_divergent) {
        j = c_chain[j];
      } else if constexpr (Op == onchip_op::register_imad) {
        asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(imad_a), "r"(seed_word));
      } else {
        asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(f) : "f"(fa), "f"(fb));
      }
    }
  }
  std::uint64_t const c1 = clock64();
  std::uint64_t n1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(n1));
  std::uint32_t value = Op == onchip_op::register_imad   ? x
                       : Op == onchip_op::register_ffma ? __float_as_uint(f)
                       : Op == onchip_op::shared_load   ? (j - base) / 4
                                                        : j;
  // Lane 0 reports its chain; the divergent case sums every lane's end.
  if constexpr (Op == onchip_op::constant_divergent) {
    for (int o = 16; o > 0; o >>= 1) value += __shfl_xor_sync(0xffffffffu, value, o);
  }
  if (lane == 0) {
    cycles[0] = c1 - c0;
    cycles[1] = n1 - n0;
    *checksum = value;
  }
}

}  // namespace

char const* to_string(onchip_op op) noexcept {
  switch (op) {
    case onchip_op::shared_load: return "shared_load";
    case onchip_op::shared_load_indexed: return "shared_load_indexed";
    case onchip_op::constant_uniform: return "constant_uniform";
    case onchip_op::constant_divergent: return "constant_divergent";
    case onchip_op::register_imad: return "register_imad";
    case onchip_op::register_ffma: return "register_ffma";
  }
  return "?";
}

onchip_op parse_onchip_op(std::string const& name) {
  for (auto op : {onchip_op::shared_load, onchip_op::shared_load_indexed, onchip_op::constant_uniform, onchip_op::constant_divergent,
                  onchip_op::register_imad, onchip_op::register_ffma})
    if (name == to_string(op)) return op;
  throw error("unknown on-chip operation '" + name + "'");
}

std::uint32_t onchip_reference(onchip_op op, std::uint64_t ops, std::uint64_t seed) {
  auto const next = random_cycle(chain_slots, seed);
  auto const const_next = random_cycle(const_chain_slots, seed);
  auto const seed_word = static_cast<std::uint32_t>(seed);
  switch (op) {
    case onchip_op::shared_load:
    case onchip_op::shared_load_indexed: return follow(next, 0, 2 * ops);
    case onchip_op::constant_uniform: return follow(const_next, 0, 2 * ops);
    case onchip_op::constant_divergent: {
      std::uint32_t sum = 0;
      for (int lane = 0; lane < 32; ++lane) sum += follow(const_next, lane_start(lane), 2 * ops);
      return sum;
    }
    case onchip_op::register_imad: {
      std::uint32_t x = seed_word;
      for (std::uint64_t i = 0; i < 2 * ops; ++i) x = x * imad_a + seed_word;
      return x;
    }
    case onchip_op::register_ffma: {
      std::uint32_t bits = (seed_word & 0x007fffffu) | 0x3f800000u;
      float f;
      std::memcpy(&f, &bits, 4);
      for (std::uint64_t i = 0; i < 2 * ops; ++i) f = std::fmaf(f, 0.999f, 0.001f);
      std::memcpy(&bits, &f, 4);
      return bits;
    }
  }
  return 0;
}

onchip_result onchip_latency(onchip_op op, std::uint64_t ops, std::uint64_t seed, cudaStream_t stream) {
  MEMLAB_EXPECTS(ops >= 1, "ops must be >= 1");
  auto const next = random_cycle(chain_slots, seed);
  auto const const_next = random_cycle(const_chain_slots, seed);
  device_buffer<std::uint32_t> d_next(chain_slots), d_sum(1);
  device_buffer<std::uint64_t> d_cycles(2);
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d_next.data(), next.data(), chain_slots * 4, cudaMemcpyHostToDevice, stream));
  MEMLAB_CUDA_CHECK(
      cudaMemcpyToSymbolAsync(c_chain, const_next.data(), const_chain_slots * 4, 0, cudaMemcpyHostToDevice, stream));
  auto const seed_word = static_cast<std::uint32_t>(seed);
  switch (op) {
#define MEMLAB_ONCHIP_CASE(OP) \
  case onchip_op::OP: onchip_kernel<onchip_op::OP><<<1, 32, 0, stream>>>(d_next.data(), ops, seed_word, d_cycles.data(), d_sum.data()); break;
    MEMLAB_ONCHIP_CASE(shared_load)
    MEMLAB_ONCHIP_CASE(shared_load_indexed)
    MEMLAB_ONCHIP_CASE(constant_uniform)
    MEMLAB_ONCHIP_CASE(constant_divergent)
    MEMLAB_ONCHIP_CASE(register_imad)
    MEMLAB_ONCHIP_CASE(register_ffma)
#undef MEMLAB_ONCHIP_CASE
  }
  MEMLAB_CHECK_LAUNCH();
  std::uint64_t cycles[2] = {0, 0};
  onchip_result r;
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(cycles, d_cycles.data(), sizeof cycles, cudaMemcpyDeviceToHost, stream));
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(&r.checksum, d_sum.data(), 4, cudaMemcpyDeviceToHost, stream));
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  r.cycles_per_op = static_cast<double>(cycles[0]) / static_cast<double>(ops);
  r.ns_per_op = static_cast<double>(cycles[1]) / static_cast<double>(ops);
  return r;
}

}  // namespace memlab::hierarchy
