#pragma once
// Scratch a library call takes and frees in stream order, so the call stays asynchronous and
// capturable in a CUDA graph: memlab::gemm_ex's split-K partials and packed transposes (the
// device's default pool), gemm_tc's rung-2 split partials and repacked operands (its own pool,
// gemm_tc::scratch_pool).
#include <cuda_runtime.h>

#include <cstddef>
#include <new>

#include "memlab/error.hpp"

namespace memlab::detail {

/// `bytes` of device memory (none when 0) from `pool`, or from the stream's device's current
/// pool when `pool` is null; freed on the same stream when the object goes.
class stream_scratch {
 public:
  stream_scratch(std::size_t bytes, cudaStream_t stream, cudaMemPool_t pool = nullptr) : stream_(stream) {
    if (bytes == 0) return;
    if (pool != nullptr) MEMLAB_CUDA_CHECK(cudaMallocFromPoolAsync(&ptr_, bytes, pool, stream));
    else MEMLAB_CUDA_CHECK(cudaMallocAsync(&ptr_, bytes, stream));
  }
  /// As above, but where the pool has no room (cudaErrorMemoryAllocation) the scratch stays
  /// empty (get() is null) for the caller to take another path; other errors still throw.
  stream_scratch(std::size_t bytes, cudaStream_t stream, cudaMemPool_t pool, std::nothrow_t) : stream_(stream) {
    if (bytes == 0) return;
    cudaError_t const e = cudaMallocFromPoolAsync(&ptr_, bytes, pool, stream);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky; clear it for the calls that follow
      ptr_ = nullptr;
      return;
    }
    MEMLAB_CUDA_CHECK(e);
  }
  ~stream_scratch() {
    if (ptr_ != nullptr) MEMLAB_CUDA_CHECK_NOTHROW(cudaFreeAsync(ptr_, stream_));
  }
  stream_scratch(stream_scratch const&) = delete;
  stream_scratch& operator=(stream_scratch const&) = delete;
  void* get() const noexcept { return ptr_; }

 private:
  void* ptr_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

}  // namespace memlab::detail
