#pragma once
// Step 0, the ceiling: a plain copy of the same bytes, 16 bytes per load and store, a
// GPU-filling grid striding over the array. A transpose moves exactly these bytes, so
// this is the most it can hope for.
#include "kernels/transpose/transpose_common.cuh"

namespace memlab::kernels::transpose {

template <class T>
struct vec16;
template <>
struct vec16<float> {
  using type = float4;
};
template <>
struct vec16<double> {
  using type = double2;
};

/// in and out 16-byte aligned (cudaMalloc pointers); the tail past the last full vector
/// is copied element by element.
template <class T>
__global__ void __launch_bounds__(256) copy_vec16(T const* __restrict__ in, T* __restrict__ out, std::size_t n) {
  using V = typename vec16<T>::type;
  constexpr std::size_t per_vec = sizeof(V) / sizeof(T);
  std::size_t const threads = std::size_t(gridDim.x) * blockDim.x;
  std::size_t const tid = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t const nv = n / per_vec;
  V const* vin = reinterpret_cast<V const*>(in);
  V* vout = reinterpret_cast<V*>(out);
  std::size_t v = tid;
  for (; v + threads < nv; v += 2 * threads) {  // two loads in flight per thread
    V const a = vin[v];
    V const b = vin[v + threads];
    vout[v] = a;
    vout[v + threads] = b;
  }
  if (v < nv) vout[v] = vin[v];
  std::size_t const tail = nv * per_vec;
  if (tid < n - tail) out[tail + tid] = in[tail + tid];
}

}  // namespace memlab::kernels::transpose
