#include "kernels/reduce/reduce_ladder.hpp"

#include <algorithm>
#include <climits>
#include <mutex>

#include "kernels/reduce/01_interleaved_divergent.cuh"
#include "kernels/reduce/02_interleaved.cuh"
#include "kernels/reduce/03_sequential.cuh"
#include "kernels/reduce/04_first_add.cuh"
#include "kernels/reduce/05_warp_shuffle.cuh"
#include "kernels/reduce/06_vectorized.cuh"
#include "kernels/reduce/07_single_pass.cuh"
#include "kernels/reduce/single_pass_config.hpp"
#include "memlab/error.hpp"

namespace memlab::kernels::reduce {

std::vector<step> all_steps() {
  return {step::interleaved_divergent, step::interleaved, step::sequential, step::first_add,
          step::warp_shuffle,          step::vectorized,  step::single_pass};
}

char const* name(step s) noexcept {
  switch (s) {
    case step::interleaved_divergent: return "interleaved_divergent";
    case step::interleaved: return "interleaved";
    case step::sequential: return "sequential";
    case step::first_add: return "first_add";
    case step::warp_shuffle: return "warp_shuffle";
    case step::vectorized: return "vectorized";
    case step::single_pass: return "single_pass";
  }
  return "unknown";
}

step step_from_name(std::string const& n) {
  for (step s : all_steps())
    if (n == name(s)) return s;
  MEMLAB_EXPECTS(false, "unknown reduction step '" + n + "'");
  return step::single_pass;
}

namespace {

constexpr int B = block_threads;

/// Elements one block of a tree step covers.
std::size_t span(step s) { return (s == step::first_add || s == step::warp_shuffle) ? 2 * B : B; }

bool tree_step(step s) { return s != step::vectorized && s != step::single_pass; }

std::size_t align256(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

template <class T>
using tree_kernel = void (*)(T const*, std::size_t, T*);

template <class T>
tree_kernel<T> tree_kernel_for(step s) {
  switch (s) {
    case step::interleaved_divergent: return interleaved_divergent<T, B>;
    case step::interleaved: return interleaved<T, B>;
    case step::sequential: return sequential<T, B>;
    case step::first_add: return first_add<T, B>;
    case step::warp_shuffle: return warp_shuffle<T, B>;
    default: return nullptr;
  }
}

}  // namespace

int persistent_grid(std::size_t n, std::size_t elem_bytes) { return single_pass_grid(n, elem_bytes); }

int launches(step s, std::size_t n) {
  if (!tree_step(s)) return s == step::vectorized ? 2 : 1;
  int count = 0;
  do {
    n = ceil_div(n, span(s));
    ++count;
  } while (n > 1);
  return count;
}

template <class T>
std::size_t workspace_bytes(step s, std::size_t n) {
  using A = accum_t<T>;
  if (!tree_step(s)) return single_pass_workspace_bytes;
  std::size_t const p1 = ceil_div(std::max<std::size_t>(n, 1), span(s));
  std::size_t const p2 = ceil_div(p1, span(s));
  (void)sizeof(A);
  return align256(p1 * sizeof(T)) + align256(p2 * sizeof(T));
}

template <class T>
void sum(step s, T const* in, std::size_t n, T* out, void* workspace, std::size_t ws_bytes, cudaStream_t stream) {
  using A = accum_t<T>;
  MEMLAB_EXPECTS(out != nullptr, "out is null");
  MEMLAB_EXPECTS(n == 0 || in != nullptr, "in is null");
  MEMLAB_EXPECTS(ws_bytes >= workspace_bytes<T>(s, n), "workspace too small");
  MEMLAB_EXPECTS(workspace != nullptr && reinterpret_cast<std::uintptr_t>(workspace) % 256 == 0,
                 "workspace must be non-null and 256-byte aligned");
  if (n == 0) {
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(T), stream));  // all-zero bits: 0, 0.0f, 0.0
    return;
  }
  char* ws = static_cast<char*>(workspace);
  if (s == step::single_pass) {
    launch_single_pass(in, n, out, workspace, stream);
    return;
  }
  if (s == step::vectorized) {
    int const grid = single_pass_grid(n, sizeof(T));
    A* partials = reinterpret_cast<A*>(ws + single_pass_partials_offset);
    vectorized_partials<T, B, vector_unroll><<<grid, B, 0, stream>>>(in, n, partials);
    MEMLAB_CHECK_LAUNCH();
    sum_partials<T, B><<<1, B, 0, stream>>>(partials, static_cast<unsigned>(grid), out);
    MEMLAB_CHECK_LAUNCH();
    return;
  }
  // Tree steps: one pass per factor of span(s), ping-ponging between two buffers.
  std::size_t const p1 = ceil_div(n, span(s));
  T* bufs[2] = {reinterpret_cast<T*>(ws), reinterpret_cast<T*>(ws + align256(p1 * sizeof(T)))};
  auto kernel = tree_kernel_for<T>(s);
  T const* src = in;
  std::size_t count = n;
  for (int which = 0;; which ^= 1) {
    std::size_t const blocks = ceil_div(count, span(s));
    MEMLAB_EXPECTS(blocks <= static_cast<std::size_t>(INT_MAX), "length too large for a tree step");
    T* dst = blocks == 1 ? out : bufs[which];
    kernel<<<static_cast<unsigned>(blocks), B, 0, stream>>>(src, count, dst);
    MEMLAB_CHECK_LAUNCH();
    if (blocks == 1) break;
    src = dst;
    count = blocks;
  }
}

#define MEMLAB_REDUCE_LADDER(T)                                      \
  template std::size_t workspace_bytes<T>(step, std::size_t);        \
  template void sum<T>(step, T const*, std::size_t, T*, void*, std::size_t, cudaStream_t);
MEMLAB_REDUCE_LADDER(float)
MEMLAB_REDUCE_LADDER(double)
MEMLAB_REDUCE_LADDER(int)
#undef MEMLAB_REDUCE_LADDER

}  // namespace memlab::kernels::reduce
