#pragma once
// L2 persistence (Best Practices Guide 9.2.2, seed 000): the Guide's sliding-window
// benchmark kernel, and RAII holders for the persisting-L2 set-aside, a stream's access
// policy window and a one-node CUDA graph carrying the window on its kernel node.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "memlab/detail/splitmix64.hpp"

namespace memlab::l2 {

/// streaming[i] = 2 * streaming[i] + persistent[i % n_persistent] for i < n_streaming
/// (unsigned, wrapping). One thread per streaming element, as in the Guide: the small
/// persistent region is read n_streaming / n_persistent times per launch, the streaming
/// region once. n_streaming < 2^32, n_persistent >= 1.
void sliding_window(std::uint32_t* streaming, std::size_t n_streaming, std::uint32_t const* persistent,
                    std::size_t n_persistent, cudaStream_t stream = nullptr);

/// A window over [base, base + bytes): a fraction hit_ratio of its accesses persisting,
/// the rest streaming (the Guide's hitProp / missProp).
cudaAccessPolicyWindow make_window(void const* base, std::size_t bytes, float hit_ratio);

/// cudaDevAttrMaxAccessPolicyWindowSize of the current device.
std::size_t max_window_bytes();

/// Demotes every persisting line in L2 to normal (cudaCtxResetPersistingL2Cache).
void reset_persisting_lines();

/// Sets the context's persisting-L2 set-aside (cudaLimitPersistingL2CacheSize) for its
/// lifetime; on destruction demotes persisting lines and restores the previous limit.
class persisting_l2_limit {
 public:
  explicit persisting_l2_limit(std::size_t bytes);
  ~persisting_l2_limit();
  persisting_l2_limit(persisting_l2_limit const&) = delete;
  persisting_l2_limit& operator=(persisting_l2_limit const&) = delete;
  std::size_t bytes() const noexcept { return actual_; }       ///< the limit in effect
  std::size_t previous() const noexcept { return previous_; }  ///< restored on destruction

 private:
  std::size_t previous_ = 0;
  std::size_t actual_ = 0;
};

/// Sets `stream`'s access policy window for its lifetime; restores the previous one after.
class stream_access_policy {
 public:
  stream_access_policy(cudaStream_t stream, cudaAccessPolicyWindow const& window);
  ~stream_access_policy();
  stream_access_policy(stream_access_policy const&) = delete;
  stream_access_policy& operator=(stream_access_policy const&) = delete;

 private:
  cudaStream_t stream_;
  cudaStreamAttrValue previous_{};
};

/// A CUDA graph of one sliding_window kernel node, with `window` (if any) set as the
/// node's cudaLaunchAttributeAccessPolicyWindow, instantiated once.
class sliding_window_graph {
 public:
  sliding_window_graph(std::uint32_t* streaming, std::size_t n_streaming, std::uint32_t const* persistent,
                       std::size_t n_persistent, std::optional<cudaAccessPolicyWindow> window);
  ~sliding_window_graph();
  sliding_window_graph(sliding_window_graph const&) = delete;
  sliding_window_graph& operator=(sliding_window_graph const&) = delete;
  void launch(cudaStream_t stream);
  /// The window read back from the kernel node (num_bytes 0 when none).
  cudaAccessPolicyWindow node_window() const;

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphNode_t node_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

/// Seeded 32-bit values for the experiments and tests (splitmix64, low 32 bits).
__host__ __device__ constexpr std::uint32_t hash_value(std::uint64_t seed, std::uint64_t index) {
  return static_cast<std::uint32_t>(memlab::detail::splitmix64(seed, index));
}

/// data[i] = hash_value(seed, i) on the device.
void fill_hashed(std::uint32_t* data, std::size_t n, std::uint64_t seed, cudaStream_t stream = nullptr);

}  // namespace memlab::l2
