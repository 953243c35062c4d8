// Bandwidth vs footprint: every SM streams 16-byte loads over a footprint sized to live in
// one level (L1, L2, device memory), repeated so the level's rate dominates the launch.
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
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  __shared__ std::uint32_t warp_sums[threads / 32];
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t total = 0;
    for (int w = 0; w < threads / 32; ++w) total += warp_sums[w];
    block_sums[blockIdx.x] = total;
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

}  // namespace memlab::hierarchy
