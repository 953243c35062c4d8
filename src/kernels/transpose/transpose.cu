// memlab::transpose (include/memlab/transpose.hpp): the ladder's tile64 step (64x64 tile in
// two 32-column halves through a [32][65] buffer, 32x8 threads, 16 elements per thread), the
// fastest step at 8192^2 on the H200 (docs/transpose.md).
#include <cstdint>
#include <limits>

#include "kernels/transpose/launch_tiled.cuh"
#include "memlab/error.hpp"
#include "memlab/transpose.hpp"

namespace memlab {

namespace {

template <class T>
void transpose_impl(T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
                    cudaStream_t stream) {
  MEMLAB_EXPECTS(ld_in >= cols, "ld_in is smaller than cols");
  MEMLAB_EXPECTS(ld_out >= rows, "ld_out is smaller than rows");
  if (rows == 0 || cols == 0) return;
  MEMLAB_EXPECTS(in != nullptr, "in is null");
  MEMLAB_EXPECTS(out != nullptr, "out is null");
  MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(in) % alignof(T) == 0 &&
                     reinterpret_cast<std::uintptr_t>(out) % alignof(T) == 0,
                 "in or out is not aligned to its element type");
  std::size_t const max_elems = std::numeric_limits<std::size_t>::max() / sizeof(T);
  MEMLAB_EXPECTS((rows - 1) <= (max_elems - cols) / ld_in && (cols - 1) <= (max_elems - rows) / ld_out,
                 "matrix size overflows the address space");
  // The element spans each matrix touches; they must not overlap (no in-place transpose).
  auto const in_begin = reinterpret_cast<std::uintptr_t>(in);
  auto const in_end = in_begin + ((rows - 1) * ld_in + cols) * sizeof(T);
  auto const out_begin = reinterpret_cast<std::uintptr_t>(out);
  auto const out_end = out_begin + ((cols - 1) * ld_out + rows) * sizeof(T);
  MEMLAB_EXPECTS(in_end <= out_begin || out_end <= in_begin, "in and out overlap (in-place transpose is not supported)");
  using namespace kernels::transpose;
  if constexpr (sizeof(T) == 2) launch_transpose_16bit(in, out, rows, cols, ld_in, ld_out, stream);
  else launch_tile64<T>(in, out, rows, cols, ld_in, ld_out, stream);
}

}  // namespace

void transpose(float const* in, float* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
               cudaStream_t stream) {
  transpose_impl(in, out, rows, cols, ld_in, ld_out, stream);
}
void transpose(double const* in, double* out, std::size_t rows, std::size_t cols, std::size_t ld_in,
               std::size_t ld_out, cudaStream_t stream) {
  transpose_impl(in, out, rows, cols, ld_in, ld_out, stream);
}

void transpose(__nv_bfloat16 const* in, __nv_bfloat16* out, std::size_t rows, std::size_t cols, std::size_t ld_in,
               std::size_t ld_out, cudaStream_t stream) {
  transpose_impl(reinterpret_cast<std::uint16_t const*>(in), reinterpret_cast<std::uint16_t*>(out), rows, cols, ld_in, ld_out,
                 stream);
}
void transpose(__half const* in, __half* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
               cudaStream_t stream) {
  transpose_impl(reinterpret_cast<std::uint16_t const*>(in), reinterpret_cast<std::uint16_t*>(out), rows, cols, ld_in, ld_out,
                 stream);
}

}  // namespace memlab
