// memlab::reduce_sum (include/memlab/reduce.hpp): the single-pass step of the ladder.
#include <cstdint>

#include "kernels/reduce/single_pass_config.hpp"
#include "memlab/error.hpp"
#include "memlab/reduce.hpp"

namespace memlab {

std::size_t reduce_sum_workspace_bytes() noexcept { return kernels::reduce::single_pass_workspace_bytes; }

namespace {

template <class T>
void check_args(T const* in, std::size_t n, T* out) {
  MEMLAB_EXPECTS(out != nullptr, "out is null");
  MEMLAB_EXPECTS(n == 0 || in != nullptr, "in is null with n > 0");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(in) % alignof(T) == 0, "in is not aligned to its element type");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(out) % alignof(T) == 0, "out is not aligned to its element type");
}

template <class T>
void sum_with(T const* in, std::size_t n, T* out, void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  check_args(in, n, out);
  MEMLAB_EXPECTS(workspace != nullptr, "workspace is null");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(workspace) % 256 == 0, "workspace is not 256-byte aligned");
  MEMLAB_EXPECTS(workspace_bytes >= reduce_sum_workspace_bytes(),
                 "workspace smaller than reduce_sum_workspace_bytes()");
  if (n == 0) {
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), stream));  // all-zero bits: 0, 0.0f, 0.0
    return;
  }
  kernels::reduce::launch_single_pass(in, n, out, workspace, stream);
}

template <class T>
void sum_alloc(T const* in, std::size_t n, T* out, cudaStream_t stream) {
  check_args(in, n, out);
  if (n == 0) {
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), stream));
    return;
  }
  void* ws = nullptr;
  std::size_t const bytes = reduce_sum_workspace_bytes();
  MEMLAB_CUDA_CHECK(cudaMallocAsync(&ws, bytes, stream));  // pool allocations are 256-byte aligned
  cudaError_t status = cudaMemsetAsync(ws, 0, bytes, stream);
  if (status == cudaSuccess) {
    try {
      kernels::reduce::launch_single_pass(in, n, out, ws, stream);
    } catch (...) {
      MEMLAB_CUDA_CHECK_NOTHROW(cudaFreeAsync(ws, stream));
      throw;
    }
  }
  MEMLAB_CUDA_CHECK_NOTHROW(cudaFreeAsync(ws, stream));
  MEMLAB_CUDA_CHECK(status);
}

}  // namespace

void reduce_sum(float const* in, std::size_t n, float* out, void* ws, std::size_t bytes, cudaStream_t s) { sum_with(in, n, out, ws, bytes, s); }
void reduce_sum(double const* in, std::size_t n, double* out, void* ws, std::size_t bytes, cudaStream_t s) { sum_with(in, n, out, ws, bytes, s); }
void reduce_sum(int const* in, std::size_t n, int* out, void* ws, std::size_t bytes, cudaStream_t s) { sum_with(in, n, out, ws, bytes, s); }
void reduce_sum(float const* in, std::size_t n, float* out, cudaStream_t s) { sum_alloc(in, n, out, s); }
void reduce_sum(double const* in, std::size_t n, double* out, cudaStream_t s) { sum_alloc(in, n, out, s); }
void reduce_sum(int const* in, std::size_t n, int* out, cudaStream_t s) { sum_alloc(in, n, out, s); }

}  // namespace memlab
