// memlab::image_has_sm90a: the one question compiled_arch cannot answer (90 or 90a).
#include <cuda_runtime.h>

#include "memlab/arch.hpp"
#include "memlab/detail/per_device.hpp"
#include "memlab/error.hpp"

namespace memlab {

namespace {
__global__ void sm90a_probe_kernel(int* out) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  *out = 1;
#else
  *out = 0;
#endif
}
}  // namespace

bool image_has_sm90a() {
  return detail::per_device([] {
    if (compiled_arch(reinterpret_cast<void const*>(sm90a_probe_kernel)) < 90) return false;
    int* d = nullptr;
    int h = 0;
    MEMLAB_CUDA_CHECK(cudaMalloc(&d, sizeof(int)));
    sm90a_probe_kernel<<<1, 1>>>(d);
    cudaError_t const launched = cudaGetLastError();
    cudaError_t const copied = cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    MEMLAB_CUDA_CHECK_NOTHROW(cudaFree(d));
    MEMLAB_CUDA_CHECK(launched);
    MEMLAB_CUDA_CHECK(copied);
    return h == 1;
  });
}

}  // namespace memlab
