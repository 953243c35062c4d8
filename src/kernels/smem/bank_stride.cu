#include "kernels/smem/bank_stride.hpp"

#include <cstring>

#include "memlab/error.hpp"

namespace memlab::smem {
namespace {

// ld.volatile keeps every load: the addresses repeat across the outer loop and nothing
// writes shared memory there, so plain loads could legally be hoisted out of it.
template <int E>
__device__ __forceinline__ unsigned load_sum(unsigned addr) {
  unsigned a, b, c, d;
  if constexpr (E == 1) {
    asm volatile("ld.volatile.shared.u8 %0, [%1];" : "=r"(a) : "r"(addr));
    return a;
  } else if constexpr (E == 2) {
    asm volatile("ld.volatile.shared.u16 %0, [%1];" : "=r"(a) : "r"(addr));
    return a;
  } else if constexpr (E == 4) {
    asm volatile("ld.volatile.shared.u32 %0, [%1];" : "=r"(a) : "r"(addr));
    return a;
  } else if constexpr (E == 8) {
    asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr));
    return a + b;
  } else {
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr));
    return a + b + c + d;
  }
}

template <int E>
__global__ void __launch_bounds__(bank_block) bank_stride_kernel(unsigned const* __restrict__ fill,
                                                                   unsigned* __restrict__ out, int stride, int group,
                                                                   int iters) {
  extern __shared__ __align__(16) unsigned smem_words[];
  for (int i = threadIdx.x; i < bank_smem_bytes / 4; i += blockDim.x) smem_words[i] = fill[i];
  __syncthreads();
  int const lane = static_cast<int>(threadIdx.x % 32);
  unsigned const base = static_cast<unsigned>(__cvta_generic_to_shared(smem_words)) +
                        static_cast<unsigned>(bank_element_index(lane, stride, group) * E);
  unsigned sum = 0;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < bank_unroll; ++j) sum += load_sum<E>(base + j * 128);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <int E>
void launch(unsigned const* fill, unsigned* out, int stride, int group, int iters, int grid, cudaStream_t stream) {
  bank_stride_kernel<E><<<grid, bank_block, bank_smem_bytes, stream>>>(fill, out, stride, group, iters);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace

int bank_grid(int sm_count) {
  int per_sm = 0;
  MEMLAB_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bank_stride_kernel<4>, bank_block, bank_smem_bytes));
  MEMLAB_EXPECTS(per_sm > 0, "the bank-stride kernel does not fit on an SM");
  return per_sm * sm_count;
}

void bank_stride_loads(unsigned const* fill, unsigned* out, int elem_bytes, int stride, int group, int iters, int grid,
                       cudaStream_t stream) {
  MEMLAB_EXPECTS(stride >= 0 && group >= 1 && group <= 32 && iters >= 1 && grid >= 1, "bad access pattern");
  MEMLAB_EXPECTS(bank_footprint(elem_bytes, stride, group) <= bank_smem_bytes, "stride too large for the tile");
  switch (elem_bytes) {
    case 1: launch<1>(fill, out, stride, group, iters, grid, stream); break;
    case 2: launch<2>(fill, out, stride, group, iters, grid, stream); break;
    case 4: launch<4>(fill, out, stride, group, iters, grid, stream); break;
    case 8: launch<8>(fill, out, stride, group, iters, grid, stream); break;
    case 16: launch<16>(fill, out, stride, group, iters, grid, stream); break;
    default: MEMLAB_EXPECTS(false, "elem_bytes must be 1, 2, 4, 8 or 16");
  }
}

unsigned bank_stride_reference(unsigned char const* fill, int lane, int elem_bytes, int stride, int group, int iters) {
  std::size_t const base = static_cast<std::size_t>(bank_element_index(lane, stride, group)) * elem_bytes;
  unsigned per_iter = 0;
  for (int j = 0; j < bank_unroll; ++j) {
    unsigned char const* p = fill + base + j * 128;
    if (elem_bytes == 1) {
      per_iter += p[0];
    } else if (elem_bytes == 2) {
      unsigned short h;
      std::memcpy(&h, p, 2);
      per_iter += h;
    } else {
      for (int w = 0; w < elem_bytes / 4; ++w) {
        unsigned v;
        std::memcpy(&v, p + 4 * w, 4);
        per_iter += v;
      }
    }
  }
  return per_iter * static_cast<unsigned>(iters);  // unsigned arithmetic wraps like the kernel's
}

}  // namespace memlab::smem
