// Streaming device memory toward the SMs by four paths, at a chosen number of bytes in
// flight per SM: plain 16-byte loads into registers, cp.async (sm_80) into a shared-memory
// ring, cp.async.bulk (sm_90) and TMA tensor loads (sm_90) into the same ring. One block per
// SM; every word read is checked against its index (word g holds g * stream_pattern), so a
// tile read from the wrong place, or twice, or not at all, shows.
//
// The ring: `stages` slots of one tile each, one mbarrier per slot. The producer fills slot
// k % stages with tile k; everyone waits for the slot's phase, reads and checks it, syncs,
// and the slot is refilled with tile k + stages. Between stages - 1 and stages tiles are in
// flight. Below sm_90 (sm_80 for cp.async) the async bodies trap; callers check the
// kernel's image first (copy_kernel, memlab/arch.hpp).
#include <cuda.h>  // CUtensorMap and its enums only: the encoder is found at run time
#include <cudaTypedefs.h>

#include <string>

#include "kernels/async/ptx.cuh"
#include "kernels/hierarchy/hierarchy.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace memlab::hierarchy {

namespace {

namespace ax = memlab::async::detail;

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

/// Word index of the first word of tile t, and of word j of it (1-D: contiguous; tma: a box
/// of box_w words by tile_words / box_w rows in a tensor of rows of row_words words).
__device__ __forceinline__ std::uint64_t word_of(stream_args const& a, std::uint64_t t, std::uint32_t j) {
  std::uint32_t const tile_words = a.tile_bytes / 4;
  if (a.box_w_words == 0) return t * tile_words + j;
  std::uint32_t const per_row = row_words / a.box_w_words;
  std::uint32_t const box_rows = tile_words / a.box_w_words;
  std::uint64_t const tr = t / per_row, tc = t % per_row;
  return (tr * box_rows + j / a.box_w_words) * row_words + tc * a.box_w_words + j % a.box_w_words;
}

/// Adds the four words and counts those that do not hold their index's pattern. The four
/// words of a 16-byte piece are consecutive in memory (box widths are multiples of 16 bytes).
__device__ __forceinline__ void check4(uint4 const& w, std::uint64_t g0, std::uint32_t& sum, std::uint32_t& bad) {
  std::uint32_t const e = static_cast<std::uint32_t>(g0) * K;
  sum += w.x + w.y + w.z + w.w;
  bad += (w.x != e) + (w.y != e + K) + (w.z != e + 2 * K) + (w.w != e + 3 * K);
}

__device__ __forceinline__ void block_report(std::uint32_t sum, std::uint32_t bad, std::uint32_t* out) {
  for (int o = 16; o > 0; o >>= 1) {
    sum += __shfl_xor_sync(0xffffffffu, sum, o);
    bad += __shfl_xor_sync(0xffffffffu, bad, o);
  }
  __shared__ std::uint32_t warp_sum[threads / 32], warp_bad[threads / 32];
  if (threadIdx.x % 32 == 0) {
    warp_sum[threadIdx.x / 32] = sum;
    warp_bad[threadIdx.x / 32] = bad;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t s = 0, b = 0;
    for (int w = 0; w < threads / 32; ++w) {
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

/// One 2-D TMA load of the box at (x words, y rows) into `dst`, completion as transaction
/// bytes on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, CUtensorMap const* map, std::uint32_t x, std::uint32_t y,
                                            std::uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          ax::smem_address(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(ax::smem_address(bar))
      : "memory");
#else
  __trap();
#endif
}

template <copy_method M>
__global__ void __launch_bounds__(threads) ring_stream_kernel(stream_args a, __grid_constant__ CUtensorMap const map) {
  extern __shared__ unsigned char smem_raw[];
  __shared__ std::uint64_t full[stream_max_stages];
  // TMA writes to 128-byte aligned shared memory; the launch asked for 128 spare bytes.
  std::uint32_t const skew = (128u - (ax::smem_address(smem_raw) & 127u)) & 127u;
  unsigned char* const ring = smem_raw + skew;
  std::uint32_t const S = a.stages;
  if (threadIdx.x == 0) {
    for (std::uint32_t s = 0; s < S; ++s) ax::mbarrier_init(&full[s], M == copy_method::cp_async ? threads : 1);
    ax::fence_barrier_init();
  }
  __syncthreads();
  std::uint64_t const mine = a.tiles > blockIdx.x ? (a.tiles - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
  std::uint32_t const pieces = a.tile_bytes / 16;

  auto issue = [&](std::uint64_t k) {  // tile k of this block into slot k % S
    std::uint64_t const t = blockIdx.x + k * gridDim.x;
    unsigned char* const slot = ring + (k % S) * a.tile_bytes;
    std::uint64_t* const bar = &full[k % S];
    if constexpr (M == copy_method::cp_async) {
      auto const* src = reinterpret_cast<uint4 const*>(a.data) + t * pieces;
      for (std::uint32_t v = threadIdx.x; v < pieces; v += threads) ax::cp_async_16(slot + 16 * v, src + v);
      ax::cp_async_arrive_noinc(bar);  // every thread: the phase ends when all copies have landed
    } else if (threadIdx.x == 0) {
      ax::mbarrier_arrive_expect_tx(bar, a.tile_bytes);
      if constexpr (M == copy_method::bulk) {
        ax::bulk_copy_global_to_shared(slot, a.data + t * (a.tile_bytes / 4), a.tile_bytes, bar);
      } else {
        std::uint32_t const per_row = row_words / a.box_w_words;
        std::uint32_t const box_rows = a.tile_bytes / 4 / a.box_w_words;
        tma_load_2d(slot, &map, static_cast<std::uint32_t>(t % per_row) * a.box_w_words,
                    static_cast<std::uint32_t>(t / per_row) * box_rows, bar);
      }
    }
  };

  for (std::uint64_t k = 0; k < S && k < mine; ++k) issue(k);
  std::uint32_t sum = 0, bad = 0;
  for (std::uint64_t k = 0; k < mine; ++k) {
    wait_parity(&full[k % S], static_cast<std::uint32_t>((k / S) & 1));
    std::uint64_t const t = blockIdx.x + k * gridDim.x;
    auto const* slot = reinterpret_cast<uint4 const*>(ring + (k % S) * a.tile_bytes);
    for (std::uint32_t v = threadIdx.x; v < pieces; v += threads) check4(slot[v], word_of(a, t, 4 * v), sum, bad);
    __syncthreads();  // the slot is read by everyone before it is refilled
    if (k + S < mine) issue(k + S);
  }
  block_report(sum, bad, a.out);
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
  cuuint64_t const dims[2] = {stream_row_bytes / 4, bytes / stream_row_bytes};
  cuuint64_t const strides[1] = {stream_row_bytes};
  cuuint32_t const box[2] = {static_cast<cuuint32_t>(box_w_bytes / 4), static_cast<cuuint32_t>(box_rows)};
  cuuint32_t const elem_strides[2] = {1, 1};
  CUresult const r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, const_cast<std::uint32_t*>(data), dims, strides,
                            box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw error("cuTensorMapEncodeTiled refused the box " + std::to_string(box_w_bytes) + " B x " +
                std::to_string(box_rows) + " rows (CUresult " + std::to_string(static_cast<int>(r)) + ")");
  return map;
}

template <copy_method M>
void launch_ring(stream_args const& a, CUtensorMap const& map, int blocks, std::size_t smem, cudaStream_t stream) {
  // Once per kernel, to the device's opt-in limit: the first (checked) run sets it, so a
  // launch captured into a graph later makes no attribute call.
  static bool const allowed = [] {
    int dev = 0, optin = 0;
    MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
    MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    int const static_bytes = stream_max_stages * 8 + 2 * threads / 32 * 4;
    MEMLAB_CUDA_CHECK(
        cudaFuncSetAttribute(ring_stream_kernel<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, optin - static_bytes));
    return true;
  }();
  (void)allowed;
  ring_stream_kernel<M><<<blocks, threads, smem, stream>>>(a, map);
  MEMLAB_CHECK_LAUNCH();
}

int device_sms() {
  int dev = 0, sms = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
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
    case copy_method::cp_async: return reinterpret_cast<void const*>(ring_stream_kernel<copy_method::cp_async>);
    case copy_method::bulk: return reinterpret_cast<void const*>(ring_stream_kernel<copy_method::bulk>);
    case copy_method::tma: return reinterpret_cast<void const*>(ring_stream_kernel<copy_method::tma>);
  }
  return nullptr;
}

std::size_t stream_smem_bytes(stream_plan const& plan) {
  if (plan.method == copy_method::ld_global_v4) return 0;
  return plan.tile_bytes * static_cast<std::size_t>(plan.stages) + 128;
}

int stream_blocks(stream_plan const& plan) { return plan.blocks > 0 ? plan.blocks : device_sms(); }

void check_stream_plan(stream_plan const& plan, std::size_t bytes) {
  MEMLAB_EXPECTS(plan.tile_bytes >= 16 && plan.tile_bytes % 16 == 0, "the tile must be a positive multiple of 16 bytes");
  MEMLAB_EXPECTS(bytes > 0 && bytes % plan.tile_bytes == 0, "the buffer must be a whole number of tiles");
  MEMLAB_EXPECTS(bytes / 4 <= (std::size_t{1} << 32), "the buffer is indexed in 32-bit words: at most 16 GiB");
  if (plan.method == copy_method::ld_global_v4) {
    MEMLAB_EXPECTS(ld_kernel(plan.tile_bytes) != nullptr && plan.tile_bytes % 4096 == 0,
                   "ld.global.v4 tiles are 4, 8, 16, 32, 64 or 128 KiB (1..32 loads of 16 bytes a thread)");
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
  int dev = 0, optin = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  // The static part: the barriers and the block's report.
  std::size_t const static_bytes = stream_max_stages * 8 + 2 * threads / 32 * 4;
  if (stream_smem_bytes(plan) + static_bytes > static_cast<std::size_t>(optin))
    throw error("a ring of " + std::to_string(plan.stages) + " x " + std::to_string(plan.tile_bytes) +
                " bytes exceeds the " + std::to_string(optin) + " bytes of shared memory a block may have");
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

void stream_read(std::uint32_t const* data, std::size_t bytes, stream_plan const& plan, std::uint32_t* block_out,
                 cudaStream_t stream) {
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
    k<<<blocks, threads, 0, stream>>>(a);
    MEMLAB_CHECK_LAUNCH();
    return;
  }
  CUtensorMap map{};
  if (plan.method == copy_method::tma) map = encode_tensor_map(data, bytes, plan.tile_w_bytes, plan.tile_bytes / plan.tile_w_bytes);
  std::size_t const smem = stream_smem_bytes(plan);
  switch (plan.method) {
    case copy_method::cp_async: launch_ring<copy_method::cp_async>(a, map, blocks, smem, stream); break;
    case copy_method::bulk: launch_ring<copy_method::bulk>(a, map, blocks, smem, stream); break;
    case copy_method::tma: launch_ring<copy_method::tma>(a, map, blocks, smem, stream); break;
    case copy_method::ld_global_v4: break;
  }
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

}  // namespace memlab::hierarchy
