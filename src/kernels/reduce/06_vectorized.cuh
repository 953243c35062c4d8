#pragma once
// Step 6: several elements per thread with 16-byte loads. A grid sized to fill the GPU
// once (not one block per 512 elements) strides over the input; each thread keeps
// Unroll independent 16-byte loads in flight per iteration, which is what hides DRAM
// latency (bytes in flight per SM, Little's law). Each block leaves one partial; a
// second, one-block launch sums the partials.
#include "kernels/reduce/reduce_common.cuh"

namespace memlab::kernels::reduce {

/// Loads per thread per iteration (4 x 16 B = 16 floats, as many as CUB's tuning).
inline constexpr int vector_unroll = 4;

/// This thread's share of in[0, n) over a grid of `threads` threads, thread index `tid`.
/// The first elements up to a 16-byte boundary and the tail are read one by one; the
/// aligned middle as 16-byte vectors.
template <class T, int Unroll>
__device__ __forceinline__ accum_t<T> thread_sum(T const* __restrict__ in, std::size_t n, std::size_t tid,
                                                 std::size_t threads) {
  using A = accum_t<T>;
  using V = typename vec16<T>::type;
  constexpr std::size_t per_vec = sizeof(V) / sizeof(T);
  A acc = A(0);
  std::size_t head = ((16 - (reinterpret_cast<std::uintptr_t>(in) & 15)) & 15) / sizeof(T);
  if (head > n) head = n;
  if (tid < head) acc += A(in[tid]);
  T const* body = in + head;
  std::size_t const m = n - head;
  std::size_t const nv = m / per_vec;
  V const* vin = reinterpret_cast<V const*>(body);
  std::size_t v = tid;
  for (; v + (Unroll - 1) * threads < nv; v += Unroll * threads) {
    V r[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u) r[u] = __ldg(vin + v + u * threads);
#pragma unroll
    for (int u = 0; u < Unroll; ++u) acc += lane_sum<A>(r[u]);
  }
  for (; v < nv; v += threads) acc += lane_sum<A>(__ldg(vin + v));
  std::size_t const tail = nv * per_vec;
  if (tid < m - tail) acc += A(body[tail + tid]);
  return acc;
}

/// Pass 1: one partial per block.
/// Min blocks per SM: a full SM (2048 threads), 32 registers per thread. Left free, the
/// float version took 40 and fit 6 blocks per SM, so a grid sized for 8 ran in two waves.
template <class T, int Block, int Unroll>
__global__ void __launch_bounds__(Block, 2048 / Block) vectorized_partials(T const* __restrict__ in, std::size_t n,
                                                             accum_t<T>* __restrict__ partials) {
  auto acc = thread_sum<T, Unroll>(in, n, std::size_t(blockIdx.x) * Block + threadIdx.x, std::size_t(gridDim.x) * Block);
  acc = block_sum<Block>(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

/// Pass 2: one block sums `count` partials into *out.
template <class T, int Block>
__global__ void __launch_bounds__(Block) sum_partials(accum_t<T> const* __restrict__ partials, unsigned count,
                                                      T* __restrict__ out) {
  using A = accum_t<T>;
  A acc = A(0);
  for (unsigned i = threadIdx.x; i < count; i += Block) acc += partials[i];
  acc = block_sum<Block>(acc);
  if (threadIdx.x == 0) *out = T(acc);
}

}  // namespace memlab::kernels::reduce
