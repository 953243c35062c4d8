// The read flush (docs/timing.md, "The flush"): every SM streams its share of a zeroed 2 x L2
// buffer, so what L2 holds afterwards is that buffer's clean lines.
#include "bench/flush_kernel.hpp"

#include <cstdint>

#include "memlab/error.hpp"

namespace memlab::bench {

namespace {

__global__ void read_flush_kernel(uint4 const* __restrict__ in, std::size_t n, int* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    uint4 const v = in[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == 0xFFFFFFFFu) *sink = 1;  // never for a zeroed buffer; keeps the loads live
}

}  // namespace

void flush_l2_by_reading(void const* buffer, std::size_t bytes, int* sink, int sms, cudaStream_t stream) {
  read_flush_kernel<<<4 * (sms > 0 ? sms : 1), 256, 0, stream>>>(static_cast<uint4 const*>(buffer), bytes / sizeof(uint4), sink);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::bench
