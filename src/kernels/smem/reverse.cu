#include "kernels/smem/reverse.hpp"
#include "memlab/error.hpp"

namespace memlab::smem {
namespace {

// Block b owns the tile of input elements [b*T, b*T+len) (T elements per tile) and writes it,
// mirrored, to the output positions [n - b*T - len, n - b*T): output slot k of the tile gets
// tile element len-1-k, which another thread loaded.
struct tile {
  std::int64_t first;  // first input element of the block
  int len;             // elements in this block's tile (short in the last block)
};
__device__ inline tile block_tile(std::int64_t n, int tile_elems) {
  std::int64_t const first = static_cast<std::int64_t>(blockIdx.x) * tile_elems;
  std::int64_t const rest = n - first;
  return {first, static_cast<int>(rest < tile_elems ? rest : tile_elems)};
}
__device__ inline std::int64_t mirrored_out(std::int64_t n, tile t, int slot) { return n - t.first - t.len + slot; }

// Thread t moves tile elements t, t + B, t + 2B, ...: each of its loads and stores is part
// of a coalesced warp access, and the mirrored shared reads walk down consecutive words
// (conflict-free).
__device__ __forceinline__ void reverse_tile(int const* __restrict__ in, int* __restrict__ out, std::int64_t n,
                                             int* s, int threads) {
  tile const t = block_tile(n, threads * reverse_items);
  int const i = static_cast<int>(threadIdx.x);
#pragma unroll
  for (int j = 0; j < reverse_items; ++j) {
    int const k = i + j * threads;
    if (k < t.len) s[k] = in[t.first + k];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < reverse_items; ++j) {
    int const k = i + j * threads;
    if (k < t.len) out[mirrored_out(n, t, k)] = s[t.len - 1 - k];
  }
}

__global__ void __launch_bounds__(reverse_static_block) reverse_static_kernel(int const* __restrict__ in,
                                                                              int* __restrict__ out, std::int64_t n) {
  __shared__ int s[reverse_static_block * reverse_items];
  reverse_tile(in, out, n, s, reverse_static_block);
}

__global__ void reverse_dynamic_kernel(int const* __restrict__ in, int* __restrict__ out, std::int64_t n) {
  extern __shared__ int dyn[];
  reverse_tile(in, out, n, dyn, static_cast<int>(blockDim.x));
}

__global__ void reverse_carved_kernel(char const* __restrict__ in_c, int const* __restrict__ in_i,
                                      float const* __restrict__ in_f, char* __restrict__ out_c,
                                      int* __restrict__ out_i, float* __restrict__ out_f, std::int64_t n) {
  // The base of dynamic shared memory is aligned for any type; offsets inside it are ours.
  extern __shared__ __align__(16) unsigned char raw[];
  carved_layout const L = carve_char_int_float(blockDim.x);
  char* sc = reinterpret_cast<char*>(raw + L.char_offset);
  int* si = reinterpret_cast<int*>(raw + L.int_offset);
  float* sf = reinterpret_cast<float*>(raw + L.float_offset);
  tile const t = block_tile(n, static_cast<int>(blockDim.x));
  int const i = static_cast<int>(threadIdx.x);
  if (i < t.len) {
    sc[i] = in_c[t.first + i];
    si[i] = in_i[t.first + i];
    sf[i] = in_f[t.first + i];
  }
  __syncthreads();
  if (i < t.len) {
    std::int64_t const o = mirrored_out(n, t, i);
    int const r = t.len - 1 - i;
    out_c[o] = sc[r];
    out_i[o] = si[r];
    out_f[o] = sf[r];
  }
}

unsigned blocks_for(std::int64_t n, int block) { return static_cast<unsigned>((n + block - 1) / block); }

void check_args(std::int64_t n, int block) {
  MEMLAB_EXPECTS(n >= 0, "n must be non-negative");
  MEMLAB_EXPECTS(block >= 1 && block <= 1024, "block must be in 1..1024");
  MEMLAB_EXPECTS((n + block - 1) / block <= 0x7fffffff, "n too large for a 1D grid");
}

}  // namespace

void reverse_static(int const* in, int* out, std::int64_t n, cudaStream_t stream) {
  check_args(n, reverse_static_block);
  if (n == 0) return;
  reverse_static_kernel<<<blocks_for(n, reverse_static_block * reverse_items), reverse_static_block, 0, stream>>>(
      in, out, n);
  MEMLAB_CHECK_LAUNCH();
}

void reverse_dynamic(int const* in, int* out, std::int64_t n, int block, cudaStream_t stream) {
  check_args(n, block);
  if (n == 0) return;
  reverse_dynamic_kernel<<<blocks_for(n, block * reverse_items), block, block * reverse_items * sizeof(int),
                           stream>>>(in, out, n);
  MEMLAB_CHECK_LAUNCH();
}

void reverse_carved(char const* in_c, int const* in_i, float const* in_f, char* out_c, int* out_i, float* out_f,
                    std::int64_t n, int block, cudaStream_t stream) {
  check_args(n, block);
  if (n == 0) return;
  std::size_t const bytes = carve_char_int_float(static_cast<std::size_t>(block)).bytes;
  reverse_carved_kernel<<<blocks_for(n, block), block, bytes, stream>>>(in_c, in_i, in_f, out_c, out_i, out_f, n);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::smem
