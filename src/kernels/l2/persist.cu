// L2 persistence: the sliding-window kernel and the RAII holders of persist.hpp.
#include <algorithm>

#include "kernels/l2/persist.hpp"
#include "memlab/error.hpp"

namespace memlab::l2 {
namespace {

__global__ void sliding_window_kernel(std::uint32_t* __restrict__ streaming, std::uint32_t n_streaming,
                                      std::uint32_t const* __restrict__ persistent, std::uint32_t n_persistent) {
  std::uint32_t const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n_streaming) streaming[i] = 2u * streaming[i] + persistent[i % n_persistent];
}

constexpr unsigned block_threads = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + block_threads - 1) / block_threads); }

void check_args(std::uint32_t const* streaming, std::size_t n_streaming, std::uint32_t const* persistent,
                std::size_t n_persistent) {
  MEMLAB_EXPECTS(n_streaming < (std::size_t{1} << 32), "n_streaming must be < 2^32");
  MEMLAB_EXPECTS(n_persistent >= 1 && n_persistent < (std::size_t{1} << 32), "n_persistent must be in [1, 2^32)");
  MEMLAB_EXPECTS(streaming != nullptr && persistent != nullptr, "null pointer");
  MEMLAB_EXPECTS(persistent + n_persistent <= streaming || streaming + n_streaming <= persistent,
                 "streaming and persistent regions must not overlap");
}

__global__ void fill_hashed_kernel(std::uint32_t* data, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = hash_value(seed, i);
}

}  // namespace

void sliding_window(std::uint32_t* streaming, std::size_t n_streaming, std::uint32_t const* persistent,
                    std::size_t n_persistent, cudaStream_t stream) {
  check_args(streaming, n_streaming, persistent, n_persistent);
  if (n_streaming == 0) return;
  sliding_window_kernel<<<blocks_for(n_streaming), block_threads, 0, stream>>>(
      streaming, static_cast<std::uint32_t>(n_streaming), persistent, static_cast<std::uint32_t>(n_persistent));
  MEMLAB_CHECK_LAUNCH();
}

cudaAccessPolicyWindow make_window(void const* base, std::size_t bytes, float hit_ratio) {
  MEMLAB_EXPECTS(hit_ratio >= 0.0f && hit_ratio <= 1.0f, "hit_ratio must be in [0, 1]");
  MEMLAB_EXPECTS(base != nullptr || bytes == 0, "null base with a non-empty window");
  cudaAccessPolicyWindow w{};
  w.base_ptr = const_cast<void*>(base);
  w.num_bytes = bytes;
  w.hitRatio = hit_ratio;
  w.hitProp = cudaAccessPropertyPersisting;
  w.missProp = cudaAccessPropertyStreaming;
  return w;
}

std::size_t max_window_bytes() {
  int dev = 0, bytes = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxAccessPolicyWindowSize, dev));
  return static_cast<std::size_t>(bytes);
}

void reset_persisting_lines() { MEMLAB_CUDA_CHECK(cudaCtxResetPersistingL2Cache()); }

persisting_l2_limit::persisting_l2_limit(std::size_t bytes) {
  MEMLAB_CUDA_CHECK(cudaDeviceGetLimit(&previous_, cudaLimitPersistingL2CacheSize));
  MEMLAB_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes));
  // The driver rounds the set-aside to its granularity (and caps it at the maximum).
  cudaError_t const e = cudaDeviceGetLimit(&actual_, cudaLimitPersistingL2CacheSize);
  if (e != cudaSuccess) {
    MEMLAB_CUDA_CHECK_NOTHROW(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_));
    MEMLAB_CUDA_CHECK(e);
  }
}

persisting_l2_limit::~persisting_l2_limit() {
  MEMLAB_CUDA_CHECK_NOTHROW(cudaCtxResetPersistingL2Cache());
  MEMLAB_CUDA_CHECK_NOTHROW(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, previous_));
}

stream_access_policy::stream_access_policy(cudaStream_t stream, cudaAccessPolicyWindow const& window)
    : stream_(stream) {
  MEMLAB_CUDA_CHECK(cudaStreamGetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &previous_));
  cudaStreamAttrValue v{};
  v.accessPolicyWindow = window;
  MEMLAB_CUDA_CHECK(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &v));
}

stream_access_policy::~stream_access_policy() {
  MEMLAB_CUDA_CHECK_NOTHROW(cudaStreamSetAttribute(stream_, cudaStreamAttributeAccessPolicyWindow, &previous_));
}

sliding_window_graph::sliding_window_graph(std::uint32_t* streaming, std::size_t n_streaming,
                                           std::uint32_t const* persistent, std::size_t n_persistent,
                                           std::optional<cudaAccessPolicyWindow> window) {
  check_args(streaming, n_streaming, persistent, n_persistent);
  MEMLAB_EXPECTS(n_streaming > 0, "n_streaming must be > 0");
  auto n_s = static_cast<std::uint32_t>(n_streaming);
  auto n_p = static_cast<std::uint32_t>(n_persistent);
  void* args[] = {&streaming, &n_s, const_cast<std::uint32_t**>(&persistent), &n_p};
  cudaKernelNodeParams p{};
  p.func = reinterpret_cast<void*>(sliding_window_kernel);
  p.gridDim = dim3(blocks_for(n_streaming));
  p.blockDim = dim3(block_threads);
  p.sharedMemBytes = 0;
  p.kernelParams = args;
  try {
    MEMLAB_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
    MEMLAB_CUDA_CHECK(cudaGraphAddKernelNode(&node_, graph_, nullptr, 0, &p));
    if (window) {
      cudaKernelNodeAttrValue v{};
      v.accessPolicyWindow = *window;
      MEMLAB_CUDA_CHECK(cudaGraphKernelNodeSetAttribute(node_, cudaKernelNodeAttributeAccessPolicyWindow, &v));
    }
    MEMLAB_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  } catch (...) {
    if (exec_) MEMLAB_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
    if (graph_) MEMLAB_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
    throw;
  }
}

sliding_window_graph::~sliding_window_graph() {
  if (exec_) MEMLAB_CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
  if (graph_) MEMLAB_CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
}

void sliding_window_graph::launch(cudaStream_t stream) { MEMLAB_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

cudaAccessPolicyWindow sliding_window_graph::node_window() const {
  cudaKernelNodeAttrValue v{};
  MEMLAB_CUDA_CHECK(cudaGraphKernelNodeGetAttribute(node_, cudaKernelNodeAttributeAccessPolicyWindow, &v));
  return v.accessPolicyWindow;
}

void fill_hashed(std::uint32_t* data, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
  if (n == 0) return;
  MEMLAB_EXPECTS(data != nullptr, "null pointer");
  unsigned const blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65536));
  fill_hashed_kernel<<<blocks, 256, 0, stream>>>(data, n, seed);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::l2
