// The staged pipeline behind memlab::staged_transform (include/memlab/staged_transform.hpp).
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "memlab/staged_transform.hpp"

namespace memlab {

host_memory_kind classify_host_pointer(void const* p) {
  MEMLAB_EXPECTS(p != nullptr, "null host pointer");
  cudaPointerAttributes a{};
  MEMLAB_CUDA_CHECK(cudaPointerGetAttributes(&a, p));
  switch (a.type) {
    case cudaMemoryTypeHost: return host_memory_kind::pinned;
    case cudaMemoryTypeUnregistered: return host_memory_kind::pageable;
    // The CPU can read and write managed memory, so it is staged like pageable memory.
    case cudaMemoryTypeManaged: return host_memory_kind::pageable;
    default: break;
  }
  MEMLAB_EXPECTS(false, "pointer is device memory, not host memory");
  return host_memory_kind::pageable;  // unreachable
}

namespace detail {

staged_pipeline_core::staged_pipeline_core(std::size_t in_elem_bytes, std::size_t out_elem_bytes,
                                           staged_options const& opt)
    : in_bytes_(in_elem_bytes), out_bytes_(out_elem_bytes) {
  MEMLAB_EXPECTS(in_elem_bytes > 0 && out_elem_bytes > 0, "element sizes must be positive");
  MEMLAB_EXPECTS(opt.streams >= 1 && opt.streams <= 64, "streams must be in 1..64");
  MEMLAB_EXPECTS(opt.chunk_bytes >= in_elem_bytes, "chunk_bytes must hold at least one input element");
  chunk_elems_ = opt.chunk_bytes / in_elem_bytes;
  // Events only order host and device here, so timing is off (cheaper to record).
  for (int i = 0; i < opt.streams; ++i) {
    streams_.emplace_back(cudaStreamNonBlocking);
    d_in_.emplace_back(chunk_elems_ * in_bytes_);
    d_out_.emplace_back(chunk_elems_ * out_bytes_);
    copied_in_.emplace_back(cudaEventDisableTiming);
    computed_.emplace_back(cudaEventDisableTiming);
    copied_out_.emplace_back(cudaEventDisableTiming);
  }
  for (int i = 0; i < 2 * opt.streams; ++i) done_.emplace_back(cudaEventDisableTiming);
}

staged_pipeline_core::~staged_pipeline_core() { wait_all(); }

void staged_pipeline_core::wait_all() noexcept {
  for (auto& s : streams_)
    if (s.get()) MEMLAB_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(s.get()));
  for (auto* s : {&up_, &down_})
    if (s->get()) MEMLAB_CUDA_CHECK_NOTHROW(cudaStreamSynchronize(s->get()));
}

void staged_pipeline_core::ensure_staging() {
  if (!stage_in_.empty()) return;
  std::size_t const slots = done_.size();
  for (std::size_t i = 0; i < slots; ++i) {
    stage_in_.emplace_back(chunk_elems_ * in_bytes_);
    stage_out_.emplace_back(chunk_elems_ * out_bytes_);
  }
}

void staged_pipeline_core::run(void const* host_in, void* host_out, std::size_t count, chunk_launch_fn fn,
                               void* ctx) {
  if (count == 0) return;
  MEMLAB_EXPECTS(host_in != nullptr && host_out != nullptr, "null host buffer");
  MEMLAB_EXPECTS(fn != nullptr, "null chunk launcher");
  {
    auto const* in_b = static_cast<char const*>(host_in);
    auto const* out_b = static_cast<char const*>(host_out);
    bool const identical = in_b == out_b && in_bytes_ == out_bytes_;
    bool const disjoint = in_b + count * in_bytes_ <= out_b || out_b + count * out_bytes_ <= in_b;
    MEMLAB_EXPECTS(identical || disjoint, "host_in and host_out partially overlap");
  }
  bool const stage_in = classify_host_pointer(host_in) == host_memory_kind::pageable;
  bool const stage_out = classify_host_pointer(host_out) == host_memory_kind::pageable;
  if (stage_in || stage_out) ensure_staging();

  std::size_t const nstreams = streams_.size();
  std::size_t const slots = done_.size();
  std::size_t const chunks = chunks_for(count);
  auto const* in = static_cast<char const*>(host_in);
  auto* out = static_cast<char*>(host_out);
  auto chunk_len = [&](std::size_t c) { return std::min(chunk_elems_, count - c * chunk_elems_); };

  // Pageable output: a second host thread copies finished chunks out of staging while this
  // thread stages inputs and enqueues, so the two host copies run in parallel. `retired`
  // counts chunks whose slot is free again (output copied out); `enqueued` counts chunks
  // whose work, and so the slot's event, has been issued.
  std::mutex m;
  std::condition_variable cv;
  std::size_t enqueued = 0, retired = 0;
  bool stop = false;
  std::exception_ptr worker_error;
  std::thread worker;
  if (stage_out) {
    worker = std::thread([&] {
      for (std::size_t c = 0; c < chunks; ++c) {
        {
          std::unique_lock<std::mutex> lk(m);
          cv.wait(lk, [&] { return enqueued > c || stop; });
          if (enqueued <= c) return;  // stopped before this chunk was issued
        }
        try {
          std::size_t const slot = c % slots;
          done_[slot].synchronize();
          std::memcpy(out + c * chunk_elems_ * out_bytes_, stage_out_[slot].data(), chunk_len(c) * out_bytes_);
        } catch (...) {
          std::lock_guard<std::mutex> lk(m);
          worker_error = std::current_exception();
          stop = true;
          cv.notify_all();
          return;
        }
        {
          std::lock_guard<std::mutex> lk(m);
          retired = c + 1;
        }
        cv.notify_all();
      }
    });
  }
  auto finish_worker = [&] {
    if (!worker.joinable()) return;
    {
      std::lock_guard<std::mutex> lk(m);
      stop = true;  // only matters when this thread gives up early; the worker drains what was issued
    }
    cv.notify_all();
    worker.join();
  };

  try {
    for (std::size_t c = 0; c < chunks; ++c) {
      std::size_t const slot = c % slots;
      std::size_t const ring = c % nstreams;  // the device buffers and kernel stream of chunk c
      cudaStream_t const st = streams_[ring].get();
      std::size_t const len = chunk_len(c);
      // The slot (and its staging) is free once the chunk that used it two rounds ago is done.
      if (c >= slots) {
        if (stage_out) {
          std::unique_lock<std::mutex> lk(m);
          cv.wait(lk, [&] { return retired > c - slots || worker_error; });
          if (worker_error) break;
        } else if (stage_in) {
          done_[slot].synchronize();
        }
      }

      void const* src = in + c * chunk_elems_ * in_bytes_;
      if (stage_in) {
        std::memcpy(stage_in_[slot].data(), src, len * in_bytes_);
        src = stage_in_[slot].data();
      }
      char* const d_in = d_in_[ring].data();
      char* const d_out = d_out_[ring].data();
      // Every H2D copy on one stream and every D2H copy on another, each in chunk order: a
      // direction's copy engine always has the next chunk queued behind the current one, and
      // the two directions share the link as a duplex copy does. Kernels rotate over `streams`
      // streams. Events order a chunk's three steps and the reuse of its device buffers
      // (chunk c + streams reuses chunk c's: its H2D waits for chunk c's kernel, its kernel
      // for chunk c's D2H).
      if (c >= nstreams) MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(up_.get(), computed_[ring].get(), 0));
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d_in, src, len * in_bytes_, cudaMemcpyHostToDevice, up_.get()));
      MEMLAB_CUDA_CHECK(cudaEventRecord(copied_in_[ring].get(), up_.get()));
      MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(st, copied_in_[ring].get(), 0));
      if (c >= nstreams) MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(st, copied_out_[ring].get(), 0));
      fn(ctx, d_in, d_out, len, st);
      MEMLAB_CHECK_LAUNCH();
      MEMLAB_CUDA_CHECK(cudaEventRecord(computed_[ring].get(), st));
      MEMLAB_CUDA_CHECK(cudaStreamWaitEvent(down_.get(), computed_[ring].get(), 0));
      void* dst = stage_out ? static_cast<void*>(stage_out_[slot].data())
                            : static_cast<void*>(out + c * chunk_elems_ * out_bytes_);
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(dst, d_out, len * out_bytes_, cudaMemcpyDeviceToHost, down_.get()));
      MEMLAB_CUDA_CHECK(cudaEventRecord(copied_out_[ring].get(), down_.get()));
      MEMLAB_CUDA_CHECK(cudaEventRecord(done_[slot].get(), down_.get()));
      if (stage_out) {
        {
          std::lock_guard<std::mutex> lk(m);
          enqueued = c + 1;
        }
        cv.notify_all();
      }
    }
    if (stage_out) {
      // Wait for the worker to copy out every chunk (or to fail).
      std::unique_lock<std::mutex> lk(m);
      cv.wait(lk, [&] { return retired == chunks || worker_error; });
    }
    finish_worker();
    if (worker_error) std::rethrow_exception(worker_error);
    down_.synchronize();  // the last D2H follows every chunk's kernel and copies
    for (auto& s : streams_) s.synchronize();
    up_.synchronize();
  } catch (...) {
    // Enqueued copies still read and write the staging and the caller's buffers: stop the
    // worker after what was issued, and wait for the device, before unwinding.
    finish_worker();
    wait_all();
    throw;
  }
}

}  // namespace detail
}  // namespace memlab
