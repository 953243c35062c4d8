// Bandwidth vs footprint: every SM streams 16-byte loads over a footprint sized to live in
// one level (L1, L2, device memory), repeated so the level's rate dominates the launch.
#include "kernels/hierarchy/block_sum.cuh"
#include "kernels/hierarchy/hierarchy.hpp"
#include "memlab/error.hpp"

namespace memlab::hierarchy {

namespace {

constexpr int threads = 256;

template <bool Write, bool L2Only>
__global__ void __launch_bounds__(threads) footprint_kernel(uint4 const* in, uint4* out, std::size_t vecs, bool shared,
                                                            int reps, std::uint32_t* block_sums) {
  // shared: the whole footprint per block; partitioned: this block's contiguous slice.
  std::size_t begin = 0, end = vecs;
  if (!shared) {
    std::size_t const per = (vecs + gridDim.x - 1) / gridDim.x;
    begin = per * blockIdx.x;
    end = begin + per < vecs ? begin + per : vecs;
  }
  std::uint32_t sum = 0;
  for (int r = 0; r < reps; ++r) {
    for (std::size_t i = begin + threadIdx.x; i < end; i += threads) {
      uint4 const v = L2Only ? __ldcg(in + i) : in[i];
      sum += v.x + v.y + v.z + v.w;
      if constexpr (Write) out[i] = make_uint4(v.x + 1, v.y + 1, v.z + 1, v.w + 1);
    }
  }
  detail::store_block_sum<threads>(sum, block_sums);
}

/// One 16-byte load, through L2 only (ld.global.cg) or the read-only path without an L1 line
/// and with a 256-byte L2 fetch. .L2::256B needs sm_80; an sm_75 image drops that hint only
/// (a hint: the words loaded are the same), keeping L1::no_allocate (sm_70).
template <bool Nc>
__device__ __forceinline__ uint4 load16(uint4 const* p) {
  uint4 v;
  if constexpr (Nc)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
#else
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
#endif
  else
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
  return v;
}

/// Resident blocks of 256 threads an SM is asked to hold: with a minimum given, ptxas issues the
/// U loads back to back (with __launch_bounds__(threads) alone it interleaved the adds and kept
/// 4 in flight), and the register budget (64 K / 256 / blocks) still holds their 4 U registers.
/// At most 4: 1024 threads, what an sm_75 SM holds (ptxas ignores, with a warning, a minimum
/// past the SM's limit); the occupancy the registers allow is what runs (grid_stride_blocks_per_sm).
constexpr int grid_stride_min_blocks(int U) { return U <= 8 ? 4 : 3; }

template <int U, bool Nc>
__global__ void __launch_bounds__(threads, grid_stride_min_blocks(U)) grid_stride_kernel(uint4 const* in, std::size_t vecs, int reps,
                                                              std::uint32_t* block_sums) {
  std::size_t const chunk = std::size_t{U} * threads;  // 16-byte pieces a block reads a round
  std::size_t const round = chunk * gridDim.x;
  std::size_t const whole = vecs / round * round;      // pieces in whole rounds
  std::size_t const grid_threads = std::size_t{threads} * gridDim.x;
  std::uint32_t sum = 0;
#pragma unroll 1
  for (int r = 0; r < reps; ++r) {
#pragma unroll 1
    for (std::size_t i = blockIdx.x * chunk + threadIdx.x; i < whole; i += round) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) v[u] = load16<Nc>(in + i + u * threads);
      // Every load is issued before any is used (the loads are volatile asm, so they stay in
      // order; this keeps the adds from being hoisted between them).
#pragma unroll
      for (int u = 0; u < U; ++u) asm volatile("" : "+r"(v[u].x), "+r"(v[u].y), "+r"(v[u].z), "+r"(v[u].w));
#pragma unroll
      for (int u = 0; u < U; ++u) sum += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    // The part round past the last whole round: every thread of the grid, at most U pieces each.
#pragma unroll 1
    for (std::size_t i = whole + blockIdx.x * std::size_t{threads} + threadIdx.x; i < vecs; i += grid_threads) {
      uint4 const v = load16<Nc>(in + i);
      sum += (v.x + v.y) + (v.z + v.w);
    }
  }
  detail::store_block_sum<threads>(sum, block_sums);
}

using grid_stride_fn = void (*)(uint4 const*, std::size_t, int, std::uint32_t*);

grid_stride_fn grid_stride_kernel_for(int loads, bool nc) {
  switch (loads) {
    case 1: return nc ? grid_stride_kernel<1, true> : grid_stride_kernel<1, false>;
    case 4: return nc ? grid_stride_kernel<4, true> : grid_stride_kernel<4, false>;
    case 8: return nc ? grid_stride_kernel<8, true> : grid_stride_kernel<8, false>;
    case 16: return nc ? grid_stride_kernel<16, true> : grid_stride_kernel<16, false>;
    default: return nullptr;
  }
}

}  // namespace

void footprint_stream(std::uint32_t const* in, std::uint32_t* out, std::size_t bytes, footprint_mode mode, bool write,
                      load_path path, int reps, int blocks, std::uint32_t* block_sums, cudaStream_t stream) {
  MEMLAB_EXPECTS(path != load_path::nc, "the footprint stream loads through ld.global or ld.global.cg");
  MEMLAB_EXPECTS(bytes > 0 && bytes % 16 == 0, "bytes must be a positive multiple of 16");
  MEMLAB_EXPECTS(reps >= 1 && blocks >= 1, "reps and blocks must be >= 1");
  MEMLAB_EXPECTS(!write || out != nullptr, "write needs an output buffer");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0,
                 "buffers must be 16-byte aligned");
  auto const* vin = reinterpret_cast<uint4 const*>(in);
  auto* vout = reinterpret_cast<uint4*>(out);
  bool const shared = mode == footprint_mode::shared;
  bool const cg = path == load_path::cg;
  auto const kernel = write ? (cg ? footprint_kernel<true, true> : footprint_kernel<true, false>)
                            : (cg ? footprint_kernel<false, true> : footprint_kernel<false, false>);
  kernel<<<blocks, threads, 0, stream>>>(vin, vout, bytes / 16, shared, reps, block_sums);
  MEMLAB_CHECK_LAUNCH();
}

int footprint_blocks_per_sm() {
  int n = 0;
  MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, footprint_kernel<false, false>, threads, 0));
  return n;
}

void grid_stride_stream(std::uint32_t const* in, std::size_t bytes, int loads, bool nc_hint, int reps, int blocks,
                        std::uint32_t* block_sums, cudaStream_t stream) {
  auto const kernel = grid_stride_kernel_for(loads, nc_hint);
  MEMLAB_EXPECTS(kernel != nullptr, "loads must be 1, 4, 8 or 16");
  MEMLAB_EXPECTS(bytes > 0 && bytes % 16 == 0, "bytes must be a positive multiple of 16");
  MEMLAB_EXPECTS(reps >= 1 && blocks >= 1, "reps and blocks must be >= 1");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(in) % 16 == 0, "the buffer must be 16-byte aligned");
  kernel<<<blocks, threads, 0, stream>>>(reinterpret_cast<uint4 const*>(in), bytes / 16, reps, block_sums);
  MEMLAB_CHECK_LAUNCH();
}

int grid_stride_blocks_per_sm(int loads, bool nc_hint) {
  auto const kernel = grid_stride_kernel_for(loads, nc_hint);
  MEMLAB_EXPECTS(kernel != nullptr, "loads must be 1, 4, 8 or 16");
  int n = 0;
  MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0));
  return n;
}

}  // namespace memlab::hierarchy
