// L2 -> SM through TMA (hierarchy.hpp, "L2 -> SM through TMA"): blocks of a producer warp and a
// consumer warp stream boxes of an L2-resident tensor through a ring of shared-memory slots,
// guarded by a `full` mbarrier (the box's bytes landed) and an `empty` one (the consumer is done).
// With multicast the blocks run in 2-CTA clusters: each CTA loads half of every box into the same
// slot of both (cp.async.bulk.tensor ... .multicast::cluster), so each box is read from L2 once
// for two SMs, and a slot is refilled only when both consumers have released it (each arrives on
// the `empty` barrier of both CTAs). Up to four consumer warps take the slots in turn (one warp
// held an H100 SM to 57-97 GB/s, four reach about 200: session 36); each reads one word of every
// row of a box, word r % 32 of row r, so that its 32 lanes hit 32 banks (3% of the bytes: the
// intake, not shared memory's reads, is what is timed), and adds them.
#include <cuda.h>

#include <algorithm>
#include <string>

#include "kernels/async/ptx.cuh"
#include "kernels/hierarchy/hierarchy.hpp"
#include "kernels/hierarchy/tma_map.hpp"
#include "memlab/arch.hpp"
#include "memlab/device.hpp"
#include "memlab/error.hpp"

namespace memlab::hierarchy {

namespace {

namespace ax = memlab::async::detail;

constexpr int box_bytes_wide = 128;  // a box row: 32 words
constexpr std::uint32_t row_words = static_cast<std::uint32_t>(intake_row_bytes / 4);
constexpr std::uint32_t boxes_across = static_cast<std::uint32_t>(intake_row_bytes / box_bytes_wide);
constexpr int max_consumers = 4;
constexpr int intake_threads = 32 * (1 + max_consumers);  // the producer warp, up to 4 consumer warps

struct intake_args {
  std::uint32_t steps, box_rows, stages, share, row_blocks;
  std::uint32_t consumers;  ///< consumer warps (1, 2 or 4, dividing stages): warp c takes slots c, c + consumers, ...
  std::uint32_t* out;
};

template <bool Multicast>
__global__ void __launch_bounds__(intake_threads, 1) intake_ring_kernel(intake_args a, __grid_constant__ CUtensorMap const map) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[intake_max_stages], empty[intake_max_stages];
  // The same offset in both CTAs of a pair (same kernel, same static layout): multicast lands there.
  unsigned char* const ring = smem_raw + ((128u - (ax::smem_address(smem_raw) & 127u)) & 127u);
  std::uint32_t const box_bytes = a.box_rows * box_bytes_wide, S = a.stages;
  std::uint32_t const rank = Multicast ? ax::cluster_ctarank() : 0u;
  std::uint32_t const y0 = (blockIdx.x / a.share) % a.row_blocks * a.box_rows;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s < S; ++s) {
      ax::mbarrier_init(&full[s], 1);
      ax::mbarrier_init(&empty[s], Multicast ? 2 : 1);  // the slot's consumer warp in each CTA that writes the slot
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  if constexpr (Multicast)
    ax::cluster_sync_all();  // no multicast or remote arrival reaches a barrier before it is initialised
  else
    __syncthreads();
  std::uint32_t const warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp == 0) {
    if (lane == 0) {
      std::uint32_t slot = 0, parity = 0;
      for (std::uint32_t i = 0; i < a.steps; ++i) {
        ax::mbarrier_wait_parity(&empty[slot], parity ^ 1u);
        ax::mbarrier_arrive_expect_tx(&full[slot], box_bytes);
        unsigned char* const dst = ring + slot * box_bytes;
        std::uint32_t const x = i % boxes_across * (box_bytes_wide / 4);
        if constexpr (Multicast) {
          std::uint32_t const half = a.box_rows / 2;
          ax::tma_load_2d_multicast(dst + rank * half * box_bytes_wide, &map, x, y0 + rank * half, &full[slot], 3);
        } else {
          ax::tma_load_2d(dst, &map, x, y0, &full[slot]);
        }
        if (++slot == S) {
          slot = 0;
          parity ^= 1u;
        }
      }
    }
  } else if (warp <= a.consumers) {
    // Consumer c = warp - 1 takes steps c, c + consumers, ...: always the same slots (consumers
    // divides S), so it waits on each slot's phases in order and a parity names one phase.
    std::uint32_t const c = warp - 1, C = a.consumers;
    __shared__ std::uint32_t consumer_sum[max_consumers];
    std::uint32_t sum = 0, slot = c, parity = 0;
    for (std::uint32_t i = c; i < a.steps; i += C) {
      ax::mbarrier_wait_parity(&full[slot], parity);
      auto const* words = reinterpret_cast<std::uint32_t const*>(ring + slot * box_bytes);
      // Row r's word r % 32 (this lane's): one word a row, each lane in its own bank.
      for (std::uint32_t r = lane; r < a.box_rows; r += 32) sum += words[r * (box_bytes_wide / 4) + lane];
      __syncwarp();
      if constexpr (Multicast) {
        if (lane < 2) ax::mbarrier_arrive_cluster(&empty[slot], lane);
      } else {
        if (lane == 0) ax::mbarrier_arrive(&empty[slot]);
      }
      if ((slot += C) >= S) {
        slot -= S;
        parity ^= 1u;
      }
    }
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) consumer_sum[c] = sum;
    asm volatile("bar.sync 1, %0;" ::"r"(32 * C) : "memory");  // the consumer warps only
    if (threadIdx.x == 32) {
      std::uint32_t total = 0;
      for (std::uint32_t k = 0; k < C; ++k) total += consumer_sum[k];
      a.out[blockIdx.x] = total;
    }
  }
  if constexpr (Multicast) ax::cluster_sync_all();  // no CTA leaves while its peer may still write into it or arrive on it
#else
  __trap();  // cp.async.bulk.tensor and clusters need sm_90: the host refuses first
#endif
}

}  // namespace

int intake_consumers(int stages) { return stages % 4 == 0 ? 4 : stages % 2 == 0 ? 2 : 1; }

namespace {

std::size_t ring_bytes(intake_plan const& p) {
  return static_cast<std::size_t>(p.box_rows) * box_bytes_wide * static_cast<std::size_t>(p.stages) + 128;
}

/// Raises the kernel's dynamic shared memory limit to the opt-in limit, once a kernel.
void allow_smem(void const* k, bool multicast) {
  static bool done[2] = {};
  if (done[multicast]) return;
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         detail::optin_smem() - static_cast<int>(detail::static_smem(k))));
  done[multicast] = true;
}

}  // namespace

void const* intake_kernel(bool multicast) {
  return multicast ? reinterpret_cast<void const*>(intake_ring_kernel<true>)
                   : reinterpret_cast<void const*>(intake_ring_kernel<false>);
}

int intake_blocks(intake_plan const& p) { return p.ctas > 0 ? p.ctas : current_device_sm_count(); }

void check_intake_plan(intake_plan const& p) {
  MEMLAB_EXPECTS(p.ctas >= 0, "intake: ctas must be 0 (one a SM) or more");
  MEMLAB_EXPECTS(p.share >= 1, "intake: share must be at least 1");
  MEMLAB_EXPECTS(p.box_rows >= 16 && p.box_rows <= 256 && p.box_rows % 16 == 0,
                 "intake: box_rows must be a multiple of 16 in [16, 256]");
  MEMLAB_EXPECTS(p.stages >= 1 && p.stages <= intake_max_stages, "intake: stages must be in [1, 32]");
  MEMLAB_EXPECTS(p.steps >= 1, "intake: steps must be at least 1");
  if (p.multicast) {
    MEMLAB_EXPECTS(p.share % 2 == 0, "intake: multicast pairs read the same rows, so share must be even");
    MEMLAB_EXPECTS(intake_blocks(p) % 2 == 0, "intake: multicast runs 2-CTA clusters: the block count must be even");
  }
  std::size_t const need = ring_bytes(p) + detail::static_smem(intake_kernel(p.multicast));
  if (need > static_cast<std::size_t>(detail::optin_smem()))
    throw error("intake: a ring of " + std::to_string(p.stages) + " boxes of " + std::to_string(p.box_rows * box_bytes_wide) +
                " bytes needs " + std::to_string(need) + " bytes of shared memory, more than a block may have (" +
                std::to_string(detail::optin_smem()) + ")");
}

std::size_t intake_footprint_bytes(intake_plan const& p, int blocks) {
  std::size_t const row_blocks = (static_cast<std::size_t>(blocks) + p.share - 1) / p.share;
  return row_blocks * static_cast<std::size_t>(p.box_rows) * intake_row_bytes;
}

std::vector<std::uint32_t> intake_expected_sums(intake_plan const& p, int blocks) {
  std::uint64_t const row_blocks = (static_cast<std::uint64_t>(blocks) + p.share - 1) / p.share;
  std::uint64_t const rows = static_cast<std::uint64_t>(p.box_rows);
  std::vector<std::uint32_t> out(static_cast<std::size_t>(blocks));
  for (int b = 0; b < blocks; ++b) {
    std::uint64_t const y0 = static_cast<std::uint64_t>(b) / p.share % row_blocks * rows;
    // The word the consumer reads of row y0 + r in box j (of boxes_across): (y0 + r) row_words + 32 j + r % 32.
    std::uint64_t lanes = 0;
    for (std::uint64_t r = 0; r < rows; ++r) lanes += r % 32;
    std::uint64_t total = 0;
    for (std::uint32_t j = 0; j < boxes_across; ++j) {
      std::uint64_t const times = p.steps / boxes_across + (j < p.steps % boxes_across ? 1 : 0);
      std::uint64_t const box = rows * (y0 * row_words + 32ull * j) + row_words * (rows * (rows - 1) / 2) + lanes;
      total += times * box;
    }
    out[static_cast<std::size_t>(b)] = static_cast<std::uint32_t>(total) * stream_pattern;  // mod 2^32, as the device adds
  }
  return out;
}

std::function<void(cudaStream_t)> prepare_intake_read(std::uint32_t const* data, intake_plan const& p,
                                                      std::uint32_t* block_out) {
  check_intake_plan(p);
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(data) % 128 == 0, "intake: the buffer must be 128-byte aligned");
  void const* const k = intake_kernel(p.multicast);
  require_arch(k, arch::bulk_copy, "cp.async.bulk.tensor");
  int const blocks = intake_blocks(p);
  std::size_t const bytes = intake_footprint_bytes(p, blocks);
  std::uint32_t const box_rows = static_cast<std::uint32_t>(p.multicast ? p.box_rows / 2 : p.box_rows);
  CUtensorMap const map = detail::encode_words_map(data, bytes, intake_row_bytes, box_bytes_wide, box_rows,
                                                   CU_TENSOR_MAP_L2_PROMOTION_L2_128B);
  intake_args a{};
  a.steps = p.steps;
  a.box_rows = static_cast<std::uint32_t>(p.box_rows);
  a.stages = static_cast<std::uint32_t>(p.stages);
  a.share = static_cast<std::uint32_t>(p.share);
  a.row_blocks = static_cast<std::uint32_t>((blocks + p.share - 1) / p.share);
  a.consumers = static_cast<std::uint32_t>(intake_consumers(p.stages));
  a.out = block_out;
  allow_smem(k, p.multicast);
  std::size_t const smem = ring_bytes(p);
  bool const multicast = p.multicast;
  auto* const kernel = multicast ? intake_ring_kernel<true> : intake_ring_kernel<false>;
  // Everything above is done once; the launch below is all a timed sample holds.
  return [a, map, blocks, smem, multicast, kernel](cudaStream_t stream) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(blocks));
    cfg.blockDim = dim3(intake_threads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    if (multicast) {  // 2-CTA clusters
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = 2;
      attr[0].val.clusterDim.y = 1;
      attr[0].val.clusterDim.z = 1;
      cfg.attrs = attr;
      cfg.numAttrs = 1;
    }
    MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, a, map));
    MEMLAB_CHECK_LAUNCH();
  };
}

void intake_read(std::uint32_t const* data, intake_plan const& p, std::uint32_t* block_out, cudaStream_t stream) {
  prepare_intake_read(data, p, block_out)(stream);
}

}  // namespace memlab::hierarchy
