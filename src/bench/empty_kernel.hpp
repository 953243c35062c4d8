#pragma once
#include <cuda_runtime_api.h>

namespace memlab::bench {

/// One block of one warp that does nothing: what a launch costs by itself.
void launch_empty_kernel(cudaStream_t stream);

}  // namespace memlab::bench
