#include <algorithm>
#include <array>
#include <atomic>

#include "kernels/reduce/07_single_pass.cuh"
#include "kernels/reduce/single_pass_config.hpp"
#include "memlab/error.hpp"

namespace memlab::kernels::reduce {

namespace {
/// Resident blocks of block_threads for the whole device, cached per device ordinal.
int full_grid() {
  static std::array<std::atomic<int>, 64> cache{};
  int dev = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev >= 0 && dev < 64) {
    if (int const g = cache[dev].load(std::memory_order_relaxed); g > 0) return g;
  }
  int sms = 0, threads_per_sm = 0;
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  int const g = std::max(1, std::min(single_pass_max_blocks, sms * std::max(1, threads_per_sm / block_threads)));
  if (dev >= 0 && dev < 64) cache[dev].store(g, std::memory_order_relaxed);
  return g;
}
}  // namespace

int single_pass_grid(std::size_t n, std::size_t elem_bytes) {
  std::size_t const per_block = std::size_t(block_threads) * (16 / elem_bytes) * vector_unroll;
  std::size_t const needed = std::max<std::size_t>(1, ceil_div(n, per_block));
  return static_cast<int>(std::min<std::size_t>(needed, static_cast<std::size_t>(full_grid())));
}

template <class T>
void launch_single_pass(T const* in, std::size_t n, T* out, void* workspace, cudaStream_t stream) {
  using A = accum_t<T>;
  static_assert(sizeof(A) <= 8, "partials are at most 8 bytes");
  int const grid = single_pass_grid(n, sizeof(T));
  char* ws = static_cast<char*>(workspace);
  single_pass<T, block_threads, vector_unroll><<<grid, block_threads, 0, stream>>>(
      in, n, out, reinterpret_cast<A*>(ws + single_pass_partials_offset), reinterpret_cast<unsigned*>(ws));
  MEMLAB_CHECK_LAUNCH();
}

template void launch_single_pass<float>(float const*, std::size_t, float*, void*, cudaStream_t);
template void launch_single_pass<double>(double const*, std::size_t, double*, void*, cudaStream_t);
template void launch_single_pass<int>(int const*, std::size_t, int*, void*, cudaStream_t);

}  // namespace memlab::kernels::reduce
