#pragma once
// staged_transform: the Best Practices Guide's "staged concurrent copy and execute"
// (§9.1.2) made callable. A large host buffer is streamed through a user's device
// kernel in chunks: for each chunk, host-to-device copy, the kernel, device-to-host
// copy, so that the copy engines and the SMs work on different chunks at the same time.
// Every H2D copy goes on one stream and every D2H copy on another, in chunk order, and the
// kernels rotate over `streams` streams (each with its own pair of device chunk buffers),
// ordered by events: each copy engine always has its next chunk queued, as in a duplex copy.
// (Measured on an H200, docs/transfer.md: 0.934 of the duplex copy of the same bytes, against
// 0.884-0.915 when each stream carried its chunks' copies and kernel round robin.)
//
//   memlab::staged_pipeline<float, float> pipe({/*chunk_bytes=*/8 << 20, /*streams=*/4});
//   pipe.run(host_in, host_out, n, [](float const* d_in, float* d_out, std::size_t count, cudaStream_t st) {
//     my_kernel<<<(count + 255) / 256, 256, 0, st>>>(d_in, d_out, count);
//   });
//
// or, once, without keeping the resources: memlab::staged_transform(host_in, host_out, n, launch, opts).
//
// Host memory may be pinned (cudaHostAlloc, cudaMallocHost, cudaHostRegister) or
// pageable (malloc, std::vector). Pinned ranges are copied by DMA directly. Pageable ones
// go through double-buffered pinned staging (two slots per stream): the calling thread
// copies chunk i+streams into one slot while the copy engine still reads the other, and,
// for pageable output, a helper thread copies each finished chunk out of its slot once
// that chunk's event has completed (so the two host copies run in parallel).
// Overlap with computation needs pinned memory and non-default streams, which is why
// pageable input cannot simply be handed to cudaMemcpyAsync.
//
// Contract for `launch(d_in, d_out, count, stream)`: it transforms `count` elements
// of the chunk at `d_in` into `d_out` by enqueueing work on `stream` only (no device-wide
// synchronisation), and output element i may depend only on input elements of its own
// chunk (element-wise maps are the intended use). Chunks are any length: the last one
// is shorter when the total is not a multiple of the chunk. `run` returns once every
// output element is in host memory; it throws memlab::error on bad arguments or a
// failed CUDA call (after waiting for work already enqueued).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace memlab {

struct staged_options {
  std::size_t chunk_bytes = std::size_t{8} << 20;  ///< input bytes per chunk (whole elements, at least one)
  int streams = 4;                                 ///< chunks in flight: kernel streams and device buffer pairs (1..64)
};

/// Where a host pointer lives, as cudaPointerGetAttributes reports it.
enum class host_memory_kind { pinned, pageable };
/// Classifies `p`: pinned (cudaHostAlloc'd or registered) or pageable (malloc, managed).
/// Throws memlab::error for device memory or a null pointer.
host_memory_kind classify_host_pointer(void const* p);

namespace detail {
/// Type-erased chunk launcher: ctx is the user's callable.
using chunk_launch_fn = void (*)(void* ctx, void const* d_in, void* d_out, std::size_t count, cudaStream_t stream);

/// The untyped pipeline behind staged_pipeline<In, Out>.
class staged_pipeline_core {
 public:
  staged_pipeline_core(std::size_t in_elem_bytes, std::size_t out_elem_bytes, staged_options const& opt);
  staged_pipeline_core(staged_pipeline_core const&) = delete;
  staged_pipeline_core& operator=(staged_pipeline_core const&) = delete;
  staged_pipeline_core(staged_pipeline_core&&) noexcept = default;
  staged_pipeline_core& operator=(staged_pipeline_core&&) noexcept = default;
  ~staged_pipeline_core();

  void run(void const* host_in, void* host_out, std::size_t count, chunk_launch_fn fn, void* ctx);
  std::size_t chunk_elements() const noexcept { return chunk_elems_; }
  int streams() const noexcept { return static_cast<int>(streams_.size()); }
  std::size_t chunks_for(std::size_t count) const noexcept { return (count + chunk_elems_ - 1) / chunk_elems_; }

 private:
  void ensure_staging();
  void wait_all() noexcept;

  std::size_t in_bytes_ = 0, out_bytes_ = 0, chunk_elems_ = 0;
  std::vector<memlab::stream> streams_;                  ///< the kernels' streams, one per ring slot
  memlab::stream up_, down_;                             ///< every H2D copy; every D2H copy (non-blocking)
  std::vector<device_buffer<char>> d_in_, d_out_;        ///< one chunk each, per stream
  std::vector<memlab::event> copied_in_, computed_, copied_out_;  ///< per ring slot: its chunk's last H2D, kernel, D2H
  std::vector<pinned_buffer<char>> stage_in_, stage_out_;  ///< one chunk each, two slots per stream (lazy)
  std::vector<memlab::event> done_;                      ///< per slot: the chunk's D2H has completed
};
}  // namespace detail

/// Reusable resources for staged transforms of In -> Out: streams, one device chunk
/// buffer pair per stream, and (allocated on first pageable use) pinned staging.
/// Create it outside any timed region; `run` allocates nothing.
template <class In, class Out = In>
class staged_pipeline {
  static_assert(std::is_trivially_copyable_v<In> && std::is_trivially_copyable_v<Out>,
                "staged_pipeline moves elements by memcpy: In and Out must be trivially copyable");

 public:
  explicit staged_pipeline(staged_options const& opt = {}) : core_(sizeof(In), sizeof(Out), opt) {}

  /// Streams `count` elements of `host_in` through `launch` into `host_out` (see the
  /// contract at the top of this header). `host_in` and `host_out` must not partially
  /// overlap; the same buffer for both (In and Out of equal size) is allowed.
  template <class Launch>
  void run(In const* host_in, Out* host_out, std::size_t count, Launch&& launch) {
    using L = std::remove_reference_t<Launch>;
    auto trampoline = [](void* ctx, void const* d_in, void* d_out, std::size_t n, cudaStream_t st) {
      (*static_cast<L*>(ctx))(static_cast<In const*>(d_in), static_cast<Out*>(d_out), n, st);
    };
    core_.run(host_in, host_out, count, trampoline, const_cast<void*>(static_cast<void const*>(&launch)));
  }

  std::size_t chunk_elements() const noexcept { return core_.chunk_elements(); }
  int streams() const noexcept { return core_.streams(); }
  std::size_t chunks_for(std::size_t count) const noexcept { return core_.chunks_for(count); }

 private:
  detail::staged_pipeline_core core_;
};

/// One-shot staged transform: builds a staged_pipeline, runs it, releases it.
template <class In, class Out, class Launch>
void staged_transform(In const* host_in, Out* host_out, std::size_t count, Launch&& launch,
                      staged_options const& opt = {}) {
  staged_pipeline<In, Out> pipe(opt);
  pipe.run(host_in, host_out, count, std::forward<Launch>(launch));
}

}  // namespace memlab
