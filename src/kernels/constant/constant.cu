#include "kernels/constant/constant.hpp"
#include "memlab/error.hpp"

namespace memlab::constant {
namespace {

__constant__ float c_filter[conv_max_taps];
__constant__ float c_table[table_words];

// Each filter source is a policy with the same interface, so the convolution loop is one
// piece of code and only where the taps come from changes.
struct from_constant {
  __device__ void stage(float const*, int) const {}
  __device__ float tap(int k) const { return c_filter[k]; }
};
struct from_global {
  float const* __restrict__ f;
  __device__ void stage(float const*, int) const {}
  __device__ float tap(int k) const { return __ldg(f + k); }
};
struct from_shared {
  float* s;
  __device__ void stage(float const* f, int taps) const {
    for (int k = threadIdx.x; k < taps; k += blockDim.x) s[k] = f[k];
    __syncthreads();
  }
  __device__ float tap(int k) const { return s[k]; }
};

template <int K, class Source>
__device__ __forceinline__ void conv_body(Source src, float const* __restrict__ in, float* __restrict__ out,
                                          float const* filter, std::int64_t n) {
  src.stage(filter, K);
  std::int64_t const i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr int r = K / 2;
  float acc = 0.f;
  if (i >= r && i + r < n) {  // interior: no bounds checks
#pragma unroll
    for (int k = 0; k < K; ++k) acc = fmaf(src.tap(k), in[i + k - r], acc);
  } else {
#pragma unroll
    for (int k = 0; k < K; ++k) {
      std::int64_t const j = i + k - r;
      acc = fmaf(src.tap(k), (j >= 0 && j < n) ? in[j] : 0.f, acc);
    }
  }
  out[i] = acc;
}

template <int K>
__global__ void __launch_bounds__(conv_block) conv_constant(float const* __restrict__ in, float* __restrict__ out,
                                                          std::int64_t n) {
  conv_body<K>(from_constant{}, in, out, nullptr, n);
}
template <int K>
__global__ void __launch_bounds__(conv_block) conv_global(float const* __restrict__ in, float* __restrict__ out,
                                                        float const* __restrict__ filter, std::int64_t n) {
  conv_body<K>(from_global{filter}, in, out, filter, n);
}
template <int K>
__global__ void __launch_bounds__(conv_block) conv_shared(float const* __restrict__ in, float* __restrict__ out,
                                                        float const* __restrict__ filter, std::int64_t n) {
  __shared__ float s[K];
  conv_body<K>(from_shared{s}, in, out, filter, n);
}

template <int K>
void conv_launch(filter_source src, float const* in, float* out, float const* filter, std::int64_t n,
                 cudaStream_t stream) {
  auto const grid = static_cast<unsigned>((n + conv_block - 1) / conv_block);
  switch (src) {
    case filter_source::constant: conv_constant<K><<<grid, conv_block, 0, stream>>>(in, out, n); break;
    case filter_source::global_ldg: conv_global<K><<<grid, conv_block, 0, stream>>>(in, out, filter, n); break;
    case filter_source::shared: conv_shared<K><<<grid, conv_block, 0, stream>>>(in, out, filter, n); break;
  }
  MEMLAB_CHECK_LAUNCH();
}

// `row_mask` is table_rows - 1, passed at run time on purpose: with a compile-time 7 the
// compiler proves that the unrolled body reads the same 8 addresses every iteration and
// hoists the loads out of the loop (the first version did, and timed only the adds).
template <bool Constant>
__global__ void __launch_bounds__(table_block) table_kernel(float const* __restrict__ table, float* __restrict__ out,
                                                          int distinct, int iters, int row_mask) {
  int const lane = static_cast<int>(threadIdx.x % 32);
  int const column = lane % distinct;
  float acc = 0.f;
  for (int it = 0; it < iters; it += table_unroll) {
#pragma unroll
    for (int u = 0; u < table_unroll; ++u) {
      int const idx = column + 32 * ((it + u) & row_mask);  // == table_index(lane, distinct, it + u)
      // The index depends on the lane at run time, so the compiler cannot make it uniform:
      // the constant variant issues a per-lane LDC, replayed once per distinct address.
      if constexpr (Constant) acc += c_table[idx];
      else acc += __ldg(table + idx);
    }
  }
  out[static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x] = acc;
}

}  // namespace

bool conv_supports(int taps) {
  for (int k : conv_taps)
    if (k == taps) return true;
  return false;
}

void set_conv_filter(float const* host_filter, int taps) {
  MEMLAB_EXPECTS(taps >= 1 && taps <= conv_max_taps, "taps out of range");
  MEMLAB_CUDA_CHECK(cudaMemcpyToSymbol(c_filter, host_filter, taps * sizeof(float)));
}

void conv1d(filter_source src, float const* in, float* out, float const* filter, std::int64_t n, int taps,
            cudaStream_t stream) {
  MEMLAB_EXPECTS(n >= 0, "n must be non-negative");
  MEMLAB_EXPECTS(conv_supports(taps), "taps must be one of 3, 9, 33, 65");
  MEMLAB_EXPECTS((n + conv_block - 1) / conv_block <= 0x7fffffff, "n too large for a 1D grid");
  if (n == 0) return;
  switch (taps) {
    case 3: conv_launch<3>(src, in, out, filter, n, stream); break;
    case 9: conv_launch<9>(src, in, out, filter, n, stream); break;
    case 33: conv_launch<33>(src, in, out, filter, n, stream); break;
    default: conv_launch<65>(src, in, out, filter, n, stream); break;
  }
}

void set_table(float const* host_table) {
  MEMLAB_CUDA_CHECK(cudaMemcpyToSymbol(c_table, host_table, table_words * sizeof(float)));
}

void table_reads(table_source src, float const* table, float* out, int distinct, int iters, int grid,
                 cudaStream_t stream) {
  MEMLAB_EXPECTS(distinct >= 1 && distinct <= 32, "distinct must be in 1..32");
  MEMLAB_EXPECTS(iters >= table_unroll && iters % table_unroll == 0, "iters must be a positive multiple of 8");
  MEMLAB_EXPECTS(grid >= 1, "grid must be positive");
  if (src == table_source::constant) table_kernel<true><<<grid, table_block, 0, stream>>>(table, out, distinct, iters, table_rows - 1);
  else table_kernel<false><<<grid, table_block, 0, stream>>>(table, out, distinct, iters, table_rows - 1);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::constant
