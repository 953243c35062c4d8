// Streaming device memory toward the SMs by four paths, at a chosen number of bytes in
// flight per SM: plain 16-byte loads into registers, cp.async (sm_80) into a shared-memory
// ring, cp.async.bulk (sm_90) and TMA tensor loads (sm_90) into the same ring. One block per
// SM by default (ctas_per_sm more where the ring fits); every word read is checked against
// its index (word g holds g * stream_pattern), so a tile read from the wrong place, or twice,
// or not at all, shows.
//
// The cp.async ring: `stages` slots of one tile each, one mbarrier per slot. Every thread
// copies its pieces of tile k into slot k % stages; everyone waits for the slot's phase, reads
// and checks it, syncs, and the slot is refilled with tile k + stages.
//
// The bulk / TMA ring is warp-specialised: a ninth warp, one elected lane, is the producer. It
// keeps every free slot in flight (arm the slot's `full` barrier with the tile's bytes, then
// issue the copy) and waits only for a slot's `empty` barrier, which the 256 consumer threads
// arrive on, each once it has read its part of the slot. The consumers never
// wait for each other, and the producer never waits for a consumer that is not done with the
// slot it needs: between stages - 1 and stages tiles are in flight at all times.
//
// Below sm_90 (sm_80 for cp.async) the async bodies trap; callers check the kernel's image
// first (copy_kernel, memlab/arch.hpp).
#include <cuda.h>  // CUtensorMap and its enums only: the encoder is found at run time
#include <cudaTypedefs.h>

#include <algorithm>
#include <string>

#include "kernels/async/ptx.cuh"
#include "kernels/hierarchy/hierarchy.hpp"
#include "kernels/hierarchy/stream_walk.hpp"
#include "kernels/hierarchy/tma_map.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"
#include "memlab/device.hpp"
#include "memlab/error.hpp"

namespace memlab::hierarchy {

namespace {

namespace ax = memlab::async::detail;
using detail::optin_smem;
using detail::static_smem;

constexpr int threads = stream_threads;
constexpr std::uint32_t K = stream_pattern;
constexpr std::uint32_t row_words = static_cast<std::uint32_t>(stream_row_bytes / 4);

struct stream_args {
  std::uint32_t const* data;
  std::uint64_t tiles;        ///< tiles in the buffer
  std::uint32_t tile_bytes;
  std::uint32_t box_w_words;  ///< tma: the box's width in words (0: 1-D tiles)
  std::uint32_t stages;
  std::uint32_t* out;         ///< [2 * block]: sum, mismatches
};

using detail::piece_walk;
static_assert(detail::walk_row_words == row_words && detail::walk_threads == threads, "stream_walk.hpp's layout");

__device__ __forceinline__ piece_walk walk_of(stream_args const& a, std::uint64_t t, std::uint32_t tid) {
  return detail::walk_of(a.tile_bytes / 4, a.box_w_words, t, tid);
}

/// Adds the four words and counts those that do not hold their index's pattern. The four
/// words of a 16-byte piece are consecutive in memory (box widths are multiples of 16 bytes).
__device__ __forceinline__ void check4(uint4 const& w, std::uint64_t g0, std::uint32_t& sum, std::uint32_t& bad) {
  std::uint32_t const e = static_cast<std::uint32_t>(g0) * K;
  sum += w.x + w.y + w.z + w.w;
  bad += (w.x != e) + (w.y != e + K) + (w.z != e + 2 * K) + (w.w != e + 3 * K);
}

/// The block's sum and mismatch count into out[2 * block]; every one of the Warps warps calls it.
template <int Warps = threads / 32>
__device__ __forceinline__ void block_report(std::uint32_t sum, std::uint32_t bad, std::uint32_t* out) {
  for (int o = 16; o > 0; o >>= 1) {
    sum += __shfl_xor_sync(0xffffffffu, sum, o);
    bad += __shfl_xor_sync(0xffffffffu, bad, o);
  }
  __shared__ std::uint32_t warp_sum[Warps], warp_bad[Warps];
  if (threadIdx.x % 32 == 0) {
    warp_sum[threadIdx.x / 32] = sum;
    warp_bad[threadIdx.x / 32] = bad;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t s = 0, b = 0;
    for (int w = 0; w < Warps; ++w) {
      s += warp_sum[w];
      b += warp_bad[w];
    }
    out[2 * blockIdx.x] = s;
    out[2 * blockIdx.x + 1] = b;
  }
}

/// Plain loads: U independent 16-byte loads per thread (U x 4 KiB a block) before any is used.
template <int U>
__global__ void __launch_bounds__(threads, 1) ld_stream_kernel(stream_args a) {
  std::uint32_t sum = 0, bad = 0;
#pragma unroll 1
  for (std::uint64_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    uint4 v[U];
    std::uint64_t const first = t * (U * threads) + threadIdx.x;  // in 16-byte pieces
#pragma unroll
    for (int u = 0; u < U; ++u) {
      auto const* p = reinterpret_cast<uint4 const*>(a.data) + first + u * threads;
      asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "l"(p));
    }
    // Nothing is used before every load is issued: without this the compiler checks each
    // piece as it arrives, and only a few loads are ever in flight.
#pragma unroll
    for (int u = 0; u < U; ++u) asm volatile("" : "+r"(v[u].x), "+r"(v[u].y), "+r"(v[u].z), "+r"(v[u].w));
#pragma unroll
    for (int u = 0; u < U; ++u) check4(v[u], 4 * (first + u * threads), sum, bad);
  }
  block_report(sum, bad, a.out);
}

/// Waits for the phase of `parity` of an mbarrier: try_wait (sm_90, lets the warp sleep) or
/// test_wait (sm_80).
__device__ __forceinline__ void wait_parity(std::uint64_t* bar, std::uint32_t parity) {
  std::uint32_t done = 0;
  do {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(ax::smem_address(bar)), "r"(parity)
        : "memory");
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(ax::smem_address(bar)), "r"(parity)
        : "memory");
#else
    __trap();
#endif
  } while (!done);
}

/// Reads and checks tile t in `slot`: consumer thread `tid` takes pieces tid, tid + 256, ...
__device__ __forceinline__ void consume_slot(stream_args const& a, unsigned char const* slot, std::uint64_t t,
                                             std::uint32_t tid, std::uint32_t& sum, std::uint32_t& bad) {
  std::uint32_t const pieces = a.tile_bytes / 16;
  piece_walk const w = walk_of(a, t, tid);
  auto const* p = reinterpret_cast<uint4 const*>(slot);
  std::uint32_t g = w.first;
  for (std::uint32_t v = tid; v < pieces; v += threads, g += w.step) check4(p[v], g, sum, bad);
}

/// Slot and phase parity of the k-th tile, stepped instead of divided (k / S, k % S with a
/// run-time S are 64-bit divisions): slot k % S, parity (k / S) & 1.
struct ring_pos {
  std::uint32_t slot = 0, parity = 0;
  __device__ __forceinline__ void next(std::uint32_t stages) {
    if (++slot == stages) {
      slot = 0;
      parity ^= 1;
    }
  }
};

/// TMA writes to 128-byte aligned shared memory; the launch asks for 128 spare bytes.
__device__ __forceinline__ unsigned char* aligned_ring(unsigned char* raw) {
  return raw + ((128u - (ax::smem_address(raw) & 127u)) & 127u);
}

/// Tiles of this block: blockIdx.x, blockIdx.x + gridDim.x, ...
__device__ __forceinline__ std::uint64_t tiles_of_block(stream_args const& a) {
  return a.tiles > blockIdx.x ? (a.tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
}

/// cp.async: every thread copies 16-byte pieces of the tile and arrives on the slot's barrier
/// when its copies land (cp.async.mbarrier.arrive.noinc); all threads sync before a slot is refilled.
__global__ void __launch_bounds__(threads) cp_async_ring_kernel(stream_args a) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[stream_max_stages];
  unsigned char* const ring = aligned_ring(smem_raw);
  std::uint32_t const S = a.stages;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s < S; ++s) ax::mbarrier_init(&full[s], threads);
    ax::fence_barrier_init();
  }
  __syncthreads();
  std::uint64_t const mine = tiles_of_block(a);
  std::uint32_t const pieces = a.tile_bytes / 16;
  auto issue = [&](std::uint64_t k, std::uint32_t s) {  // tile k of this block into slot s = k % S
    std::uint64_t const t = blockIdx.x + k * gridDim.x;
    unsigned char* const slot = ring + s * a.tile_bytes;
    auto const* src = reinterpret_cast<uint4 const*>(a.data) + t * pieces;
    for (std::uint32_t v = threadIdx.x; v < pieces; v += threads) ax::cp_async_16(slot + 16 * v, src + v);
    ax::cp_async_arrive_noinc(&full[s]);  // every thread: the phase ends when all copies have landed
  };
  for (std::uint64_t k = 0; k < S && k < mine; ++k) issue(k, static_cast<std::uint32_t>(k));
  std::uint32_t sum = 0, bad = 0;
  ring_pos at;
  for (std::uint64_t k = 0; k < mine; ++k, at.next(S)) {
    wait_parity(&full[at.slot], at.parity);
    consume_slot(a, ring + at.slot * a.tile_bytes, blockIdx.x + k * gridDim.x, threadIdx.x, sum, bad);
    __syncthreads();  // the slot is read by everyone before it is refilled
    if (k + S < mine) issue(k + S, at.slot);
  }
  block_report(sum, bad, a.out);
}

constexpr int consumer_warps = threads / 32;  ///< warps 0-7 consume; warp 8 produces
constexpr int ring_threads = threads + 32;  ///< 8 consumer warps and the producer warp

/// cp.async.bulk (M = bulk) or a 2-D TMA box (M = tma): warp-specialised, full and empty
/// barriers per slot (see the top of the file).
template <copy_method M>
__global__ void __launch_bounds__(ring_threads) bulk_ring_kernel(stream_args a, __grid_constant__ CUtensorMap const map) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[stream_max_stages], empty[stream_max_stages];
  unsigned char* const ring = aligned_ring(smem_raw);
  std::uint32_t const S = a.stages;
  std::uint32_t const warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s < S; ++s) {
      ax::mbarrier_init(&full[s], 1);                // the producer's arrive.expect_tx
      ax::mbarrier_init(&empty[s], threads);         // one arrival per consumer thread
    }
    ax::fence_barrier_init();
  }
  __syncthreads();
  std::uint64_t const mine = tiles_of_block(a);
  std::uint32_t sum = 0, bad = 0;
  if (warp == consumer_warps) {
    if (lane == 0) {
      ring_pos at;
      std::uint64_t t = blockIdx.x;
      for (std::uint64_t k = 0; k < mine; ++k, at.next(S), t += gridDim.x) {
        // The slot's previous tile (k - S) must have been read: its empty barrier's phase of
        // the last lap, i.e. parity (k / S - 1) & 1 = the current lap's parity flipped.
        if (k >= S) wait_parity(&empty[at.slot], at.parity ^ 1u);
        unsigned char* const slot = ring + at.slot * a.tile_bytes;
        ax::mbarrier_arrive_expect_tx(&full[at.slot], a.tile_bytes);
        if constexpr (M == copy_method::bulk) {
          ax::bulk_copy_global_to_shared(slot, a.data + t * (a.tile_bytes / 4), a.tile_bytes, &full[at.slot]);
        } else {
          detail::box_origin const o = detail::box_of(a.tile_bytes / 4, a.box_w_words, t);
          ax::tma_load_2d(slot, &map, o.x, o.y, &full[at.slot]);
        }
      }
    }
    __syncwarp();
  } else {
    ring_pos at;
    std::uint64_t t = blockIdx.x;
    for (std::uint64_t k = 0; k < mine; ++k, at.next(S), t += gridDim.x) {
      wait_parity(&full[at.slot], at.parity);
      consume_slot(a, ring + at.slot * a.tile_bytes, t, threadIdx.x, sum, bad);
      // Every consumer thread releases its own reads: an arrive orders only the arriving
      // thread's accesses, so one lane arriving for its warp after __syncwarp leans on
      // cumulativity that compute-sanitizer's racecheck does not model (it reported the
      // bulk copy's refill racing the reads).
      ax::mbarrier_arrive(&empty[at.slot]);
    }
  }
  block_report<ring_threads / 32>(sum, bad, a.out);
}

__global__ void fill_pattern_kernel(std::uint32_t* data, std::size_t words) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < words; i += std::size_t{gridDim.x} * blockDim.x)
    data[i] = static_cast<std::uint32_t>(i) * K;
}

void const* ld_kernel(std::size_t tile_bytes) {
  switch (tile_bytes / 4096) {
    case 1: return reinterpret_cast<void const*>(ld_stream_kernel<1>);
    case 2: return reinterpret_cast<void const*>(ld_stream_kernel<2>);
    case 4: return reinterpret_cast<void const*>(ld_stream_kernel<4>);
    case 8: return reinterpret_cast<void const*>(ld_stream_kernel<8>);
    case 16: return reinterpret_cast<void const*>(ld_stream_kernel<16>);
    case 32: return reinterpret_cast<void const*>(ld_stream_kernel<32>);
    default: return nullptr;
  }
}

/// The 2-D tensor over the buffer: rows of stream_row_bytes, boxes of box_w x box_rows.
CUtensorMap encode_tensor_map(std::uint32_t const* data, std::size_t bytes, std::size_t box_w_bytes,
                              std::size_t box_rows) {
  return detail::encode_words_map(data, bytes, stream_row_bytes, box_w_bytes, box_rows, CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

int block_threads(copy_method m) {
  return m == copy_method::bulk || m == copy_method::tma ? ring_threads : threads;
}

/// Raises a ring kernel's dynamic shared memory limit to the device's opt-in limit, once per
/// kernel: the first (checked) run sets it, so a launch captured into a graph later makes no
/// attribute call.
void allow_ring_smem(copy_method m) {
  static bool done[4] = {};
  auto const i = static_cast<int>(m);
  if (m == copy_method::ld_global_v4 || done[i]) return;
  void const* const k = copy_kernel(m);
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         optin_smem() - static_cast<int>(static_smem(k))));
  done[i] = true;
}

}  // namespace

char const* to_string(copy_method m) noexcept {
  switch (m) {
    case copy_method::ld_global_v4: return "ld.global.v4";
    case copy_method::cp_async: return "cp.async";
    case copy_method::bulk: return "cp.async.bulk";
    case copy_method::tma: return "tma";
  }
  return "?";
}

copy_method parse_copy_method(std::string const& name) {
  for (auto m : {copy_method::ld_global_v4, copy_method::cp_async, copy_method::bulk, copy_method::tma})
    if (name == to_string(m)) return m;
  throw error("unknown copy method '" + name + "' (ld.global.v4, cp.async, cp.async.bulk, tma)");
}

int copy_method_arch(copy_method m) noexcept {
  switch (m) {
    case copy_method::ld_global_v4: return 0;
    case copy_method::cp_async: return arch::cp_async;
    case copy_method::bulk:
    case copy_method::tma: return arch::bulk_copy;
  }
  return 0;
}

void const* copy_kernel(copy_method m) {
  switch (m) {
    case copy_method::ld_global_v4: return reinterpret_cast<void const*>(ld_stream_kernel<1>);
    case copy_method::cp_async: return reinterpret_cast<void const*>(cp_async_ring_kernel);
    case copy_method::bulk: return reinterpret_cast<void const*>(bulk_ring_kernel<copy_method::bulk>);
    case copy_method::tma: return reinterpret_cast<void const*>(bulk_ring_kernel<copy_method::tma>);
  }
  return nullptr;
}

std::size_t stream_smem_bytes(stream_plan const& plan) {
  if (plan.method == copy_method::ld_global_v4) return 0;
  return plan.tile_bytes * static_cast<std::size_t>(plan.stages) + 128;
}

int stream_blocks(stream_plan const& plan) {
  return plan.blocks > 0 ? plan.blocks : current_device_sm_count() * std::max(plan.ctas_per_sm, 1);
}

namespace {
/// ctas_per_sm blocks of the plan's kernel with its ring must be resident on an SM at once.
void check_ctas_fit(stream_plan const& plan) {
  MEMLAB_EXPECTS(plan.ctas_per_sm >= 1 && plan.ctas_per_sm <= 32, "ctas_per_sm must be in [1, 32]");
  if (plan.ctas_per_sm == 1) return;
  allow_ring_smem(plan.method);
  // ld.global.v4 runs ld_kernel(tile_bytes) (1..32 loads a thread, its own registers), not copy_kernel's <1>.
  void const* const k = plan.method == copy_method::ld_global_v4 ? ld_kernel(plan.tile_bytes) : copy_kernel(plan.method);
  int fit = 0;
  MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, k, block_threads(plan.method), stream_smem_bytes(plan)));
  if (fit < plan.ctas_per_sm)
    throw error(std::to_string(plan.ctas_per_sm) + " blocks a SM asked, " + std::to_string(fit) +
                " fit (registers, threads, or a ring of " + std::to_string(plan.stages) + " x " +
                std::to_string(plan.tile_bytes) + " bytes each)");
}
}  // namespace

void check_stream_plan(stream_plan const& plan, std::size_t bytes) {
  MEMLAB_EXPECTS(plan.tile_bytes >= 16 && plan.tile_bytes % 16 == 0, "the tile must be a positive multiple of 16 bytes");
  MEMLAB_EXPECTS(bytes > 0 && bytes % plan.tile_bytes == 0, "the buffer must be a whole number of tiles");
  MEMLAB_EXPECTS(bytes / 4 <= (std::size_t{1} << 32), "the buffer is indexed in 32-bit words: at most 16 GiB");
  if (plan.method == copy_method::ld_global_v4) {
    MEMLAB_EXPECTS(ld_kernel(plan.tile_bytes) != nullptr && plan.tile_bytes % 4096 == 0,
                   "ld.global.v4 tiles are 4, 8, 16, 32, 64 or 128 KiB (1..32 loads of 16 bytes a thread)");
    check_ctas_fit(plan);
    return;
  }
  MEMLAB_EXPECTS(plan.stages >= 1 && plan.stages <= stream_max_stages, "stages must be in [1, 16]");
  MEMLAB_EXPECTS(plan.tile_bytes < (std::size_t{1} << 20), "a bulk copy moves less than 1 MiB");
  if (plan.method == copy_method::tma) {
    std::size_t const w = plan.tile_w_bytes;
    MEMLAB_EXPECTS(w >= 16 && w % 16 == 0 && stream_row_bytes % w == 0 && w / 4 <= 256,
                   "the box width must be a multiple of 16 bytes dividing 4096, at most 256 words");
    MEMLAB_EXPECTS(plan.tile_bytes % w == 0 && plan.tile_bytes / w <= 256, "the box must have 1..256 rows");
    MEMLAB_EXPECTS(plan.tile_bytes % 128 == 0, "a TMA box lands on 128-byte aligned shared memory: a multiple of 128 bytes");
    MEMLAB_EXPECTS(bytes % stream_row_bytes == 0 && (bytes / stream_row_bytes) % (plan.tile_bytes / w) == 0,
                   "the tensor must be a whole number of box rows of 4096-byte rows");
  }
  // The static part (the barriers and the block's report) comes from the kernel's image.
  std::size_t const optin = static_cast<std::size_t>(optin_smem());
  if (stream_smem_bytes(plan) + static_smem(copy_kernel(plan.method)) > optin)
    throw error("a ring of " + std::to_string(plan.stages) + " x " + std::to_string(plan.tile_bytes) +
                " bytes exceeds the " + std::to_string(optin) + " bytes of shared memory a block may have");
  check_ctas_fit(plan);
}

void fill_stream_pattern(std::uint32_t* data, std::size_t words, cudaStream_t stream) {
  int const blocks = static_cast<int>(std::min<std::size_t>((words + 255) / 256, 8192));
  fill_pattern_kernel<<<blocks, 256, 0, stream>>>(data, words);
  MEMLAB_CHECK_LAUNCH();
}

std::uint32_t stream_pattern_sum(std::size_t bytes) {
  // sum of g * K for g < n, mod 2^32: K * n(n-1)/2 with the halving done in 64 bits first.
  std::uint64_t const n = bytes / 4;
  std::uint32_t const tri = static_cast<std::uint32_t>(n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2));
  return tri * K;
}

std::function<void(cudaStream_t)> prepare_stream_read(std::uint32_t const* data, std::size_t bytes,
                                                      stream_plan const& plan, std::uint32_t* block_out) {
  check_stream_plan(plan, bytes);
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(data) % 128 == 0, "the buffer must be 128-byte aligned");
  if (int const need = copy_method_arch(plan.method); need > 0)
    require_arch(copy_kernel(plan.method), need, to_string(plan.method));
  stream_args a{};
  a.data = data;
  a.tiles = bytes / plan.tile_bytes;
  a.tile_bytes = static_cast<std::uint32_t>(plan.tile_bytes);
  a.box_w_words = plan.method == copy_method::tma ? static_cast<std::uint32_t>(plan.tile_w_bytes / 4) : 0;
  a.stages = static_cast<std::uint32_t>(plan.stages);
  a.out = block_out;
  int const blocks = stream_blocks(plan);
  if (plan.method == copy_method::ld_global_v4) {
    auto const k = reinterpret_cast<void (*)(stream_args)>(const_cast<void*>(ld_kernel(plan.tile_bytes)));
    return [k, a, blocks](cudaStream_t stream) {
      k<<<blocks, threads, 0, stream>>>(a);
      MEMLAB_CHECK_LAUNCH();
    };
  }
  CUtensorMap map{};
  if (plan.method == copy_method::tma) map = encode_tensor_map(data, bytes, plan.tile_w_bytes, plan.tile_bytes / plan.tile_w_bytes);
  std::size_t const smem = stream_smem_bytes(plan);
  allow_ring_smem(plan.method);
  copy_method const method = plan.method;
  // Everything above is done once; the launch below is all a timed sample holds.
  return [a, map, blocks, smem, method](cudaStream_t stream) {
    switch (method) {
      case copy_method::cp_async: cp_async_ring_kernel<<<blocks, threads, smem, stream>>>(a); break;
      case copy_method::bulk: bulk_ring_kernel<copy_method::bulk><<<blocks, ring_threads, smem, stream>>>(a, map); break;
      case copy_method::tma: bulk_ring_kernel<copy_method::tma><<<blocks, ring_threads, smem, stream>>>(a, map); break;
      case copy_method::ld_global_v4: break;
    }
    MEMLAB_CHECK_LAUNCH();
  };
}

void stream_read(std::uint32_t const* data, std::size_t bytes, stream_plan const& plan, std::uint32_t* block_out,
                 cudaStream_t stream) {
  prepare_stream_read(data, bytes, plan, block_out)(stream);
}

stream_sums collect_stream_sums(std::uint32_t const* block_out, int blocks) {
  std::vector<std::uint32_t> h(2 * static_cast<std::size_t>(blocks));
  MEMLAB_CUDA_CHECK(cudaMemcpy(h.data(), block_out, h.size() * 4, cudaMemcpyDeviceToHost));
  stream_sums s;
  for (int b = 0; b < blocks; ++b) {
    s.sum += h[2 * b];
    s.mismatches += h[2 * b + 1];
  }
  return s;
}

namespace detail {

CUtensorMap encode_words_map(std::uint32_t const* data, std::size_t bytes, std::size_t row_bytes, std::size_t box_w_bytes,
                             std::size_t box_rows, CUtensorMapL2promotion promotion) {
  // Through the runtime, so nothing links libcuda: the test binaries still load without a driver.
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    MEMLAB_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || fn == nullptr)
      throw error("the driver has no cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  CUtensorMap map{};
  cuuint64_t const dims[2] = {row_bytes / 4, bytes / row_bytes};
  cuuint64_t const strides[1] = {row_bytes};
  cuuint32_t const box[2] = {static_cast<cuuint32_t>(box_w_bytes / 4), static_cast<cuuint32_t>(box_rows)};
  cuuint32_t const elem_strides[2] = {1, 1};
  CUresult const r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, const_cast<std::uint32_t*>(data), dims, strides,
                            box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, promotion,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw error("cuTensorMapEncodeTiled refused the box " + std::to_string(box_w_bytes) + " B x " +
                std::to_string(box_rows) + " rows (CUresult " + std::to_string(static_cast<int>(r)) + ")");
  return map;
}

std::size_t static_smem(void const* kernel) {
  cudaFuncAttributes fa{};
  MEMLAB_CUDA_CHECK(cudaFuncGetAttributes(&fa, kernel));
  return fa.sharedSizeBytes;
}

int optin_smem() {
  int dev = 0, optin = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return optin;
}

}  // namespace detail

}  // namespace memlab::hierarchy
