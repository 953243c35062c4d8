#pragma once
// Owning, non-copyable RAII wrappers: device and pinned buffers, streams, events.
// Allocate these outside timed regions.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "memlab/error.hpp"

namespace memlab {

/// cudaMalloc'd array of `size()` elements of T.
template <class T>
class device_buffer {
 public:
  device_buffer() = default;
  explicit device_buffer(std::size_t count) : size_(count) {
    if (count > 0) MEMLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }
  device_buffer(device_buffer const&) = delete;
  device_buffer& operator=(device_buffer const&) = delete;
  device_buffer(device_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~device_buffer() { reset(); }

  T* data() noexcept { return data_; }
  T const* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  /// Sets every byte to `value` (0xFF poisons floats with NaN), in `stream`'s order; without
  /// a stream it returns once the memset is done, so work on any stream, non-blocking ones
  /// included, sees it.
  void fill_bytes(int value, cudaStream_t stream = nullptr) {
    if (size_ == 0) return;
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(data_, value, bytes(), stream));
    if (stream == nullptr) MEMLAB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  /// Copies `host` to the start of the buffer and returns once it is on the device. (A
  /// pageable cudaMemcpy may return while its DMA is still in flight on the legacy stream,
  /// which a non-blocking stream does not wait for: a kernel launched there next could read
  /// the old contents. That race was the 'NaN from cp_async_128x256_db' of issue #12.)
  void upload(std::vector<T> const& host) {
    MEMLAB_EXPECTS(host.size() <= size_, "host vector larger than the device buffer");
    if (host.empty()) return;
    MEMLAB_CUDA_CHECK(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(nullptr));
  }
  /// The whole buffer, copied on the legacy stream: synchronize a non-blocking stream that
  /// wrote it first.
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_ > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }
  void reset() noexcept {
    if (data_) MEMLAB_CUDA_CHECK_NOTHROW(cudaFree(data_));
    data_ = nullptr;
    size_ = 0;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Page-locked host array (cudaHostAlloc with `flags`: cudaHostAllocDefault,
/// cudaHostAllocMapped, cudaHostAllocWriteCombined, ...).
template <class T>
class pinned_buffer {
 public:
  pinned_buffer() = default;
  explicit pinned_buffer(std::size_t count, unsigned flags = cudaHostAllocDefault) : size_(count) {
    if (count > 0) MEMLAB_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&data_), count * sizeof(T), flags));
  }
  pinned_buffer(pinned_buffer const&) = delete;
  pinned_buffer& operator=(pinned_buffer const&) = delete;
  pinned_buffer(pinned_buffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  pinned_buffer& operator=(pinned_buffer&& other) noexcept {
    if (this != &other) {
      reset();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~pinned_buffer() { reset(); }

  T* data() noexcept { return data_; }
  T const* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  T const& operator[](std::size_t i) const noexcept { return data_[i]; }
  void reset() noexcept {
    if (data_) MEMLAB_CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
    data_ = nullptr;
    size_ = 0;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

/// A non-default stream (cudaStreamNonBlocking unless told otherwise).
class stream {
 public:
  explicit stream(unsigned flags = cudaStreamNonBlocking) { MEMLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&handle_, flags)); }
  stream(stream const&) = delete;
  stream& operator=(stream const&) = delete;
  stream(stream&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  stream& operator=(stream&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~stream() { reset(); }
  cudaStream_t get() const noexcept { return handle_; }
  operator cudaStream_t() const noexcept { return handle_; }
  void synchronize() const { MEMLAB_CUDA_CHECK(cudaStreamSynchronize(handle_)); }

 private:
  void reset() noexcept {
    if (handle_) MEMLAB_CUDA_CHECK_NOTHROW(cudaStreamDestroy(handle_));
    handle_ = nullptr;
  }
  cudaStream_t handle_ = nullptr;
};

/// A CUDA event (timing enabled unless flags say otherwise).
class event {
 public:
  explicit event(unsigned flags = cudaEventDefault) { MEMLAB_CUDA_CHECK(cudaEventCreateWithFlags(&handle_, flags)); }
  event(event const&) = delete;
  event& operator=(event const&) = delete;
  event(event&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  event& operator=(event&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  ~event() { reset(); }
  cudaEvent_t get() const noexcept { return handle_; }
  operator cudaEvent_t() const noexcept { return handle_; }
  void record(cudaStream_t s) { MEMLAB_CUDA_CHECK(cudaEventRecord(handle_, s)); }
  void synchronize() const { MEMLAB_CUDA_CHECK(cudaEventSynchronize(handle_)); }
  /// Milliseconds from `start` to this event (both recorded and complete).
  float elapsed_since(event const& start) const {
    float ms = 0.f;
    MEMLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.handle_, handle_));
    return ms;
  }

 private:
  void reset() noexcept {
    if (handle_) MEMLAB_CUDA_CHECK_NOTHROW(cudaEventDestroy(handle_));
    handle_ = nullptr;
  }
  cudaEvent_t handle_ = nullptr;
};

}  // namespace memlab
