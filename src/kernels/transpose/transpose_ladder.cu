#include "kernels/transpose/transpose_ladder.hpp"

#include <cstdint>

#include "kernels/transpose/00_copy.cuh"
#include "kernels/transpose/01_naive.cuh"
#include "kernels/transpose/launch_tiled.cuh"
#include "memlab/device.hpp"
#include "memlab/error.hpp"

namespace memlab::kernels::transpose {

std::vector<step> all_steps() {
  return {step::copy, step::naive, step::smem_tile, step::padded_tile, step::swizzled_tile, step::multi_element,
          step::multi_element_8, step::vector_tile, step::grouped_tile, step::pipelined, step::tile64};
}

char const* name(step s) noexcept {
  switch (s) {
    case step::copy: return "copy";
    case step::naive: return "naive";
    case step::smem_tile: return "smem_tile";
    case step::padded_tile: return "padded_tile";
    case step::swizzled_tile: return "swizzled_tile";
    case step::multi_element: return "multi_element";
    case step::multi_element_8: return "multi_element_8";
    case step::vector_tile: return "vector_tile";
    case step::grouped_tile: return "grouped_tile";
    case step::pipelined: return "pipelined";
    case step::tile64: return "tile64";
  }
  return "unknown";
}

step step_from_name(std::string const& n) {
  for (step s : all_steps())
    if (n == name(s)) return s;
  MEMLAB_EXPECTS(false, "unknown transpose step '" + n + "'");
  return step::copy;
}

int predicted_conflict_ways(step s) noexcept {
  switch (s) {
    case step::smem_tile: return 32;
    case step::padded_tile:
    case step::swizzled_tile:
    case step::multi_element:
    case step::multi_element_8:
    case step::vector_tile:
    case step::grouped_tile:
    case step::pipelined:
    case step::tile64: return 1;
    default: return 0;  // no shared memory
  }
}

template <class T>
void run(step s, T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
         cudaStream_t stream, unsigned group) {
  MEMLAB_EXPECTS(in != nullptr && out != nullptr, "null matrix");
  MEMLAB_EXPECTS(ld_in >= cols && ld_out >= rows, "leading dimension smaller than the row");
  if (rows == 0 || cols == 0) return;
  switch (s) {
    case step::copy: {
      MEMLAB_EXPECTS(ld_in == cols && ld_out == rows, "copy needs packed matrices");
      MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0,
                     "copy needs 16-byte-aligned buffers");
      int const sms = current_device_sm_count();
      std::size_t const n = rows * cols;
      std::size_t const need = (n / (16 / sizeof(T)) + 255) / 256 + 1;
      int const grid = static_cast<int>(std::min<std::size_t>(need, std::size_t(sms) * 8));
      copy_vec16<T><<<grid, 256, 0, stream>>>(in, out, n);
      MEMLAB_CHECK_LAUNCH();
      return;
    }
    case step::naive: {
      constexpr int rows_per_block = 8;
      std::size_t const groups = (rows + rows_per_block - 1) / rows_per_block;
      std::size_t const col_tiles = (cols + 31) / 32;
      MEMLAB_EXPECTS(col_tiles <= static_cast<std::size_t>(INT_MAX) && groups <= UINT_MAX, "matrix too large");
      dim3 const grid(static_cast<unsigned>(col_tiles), static_cast<unsigned>(std::min<std::size_t>(groups, 65535)));
      naive<T, rows_per_block><<<grid, dim3(32, rows_per_block), 0, stream>>>(in, out, rows, cols, ld_in, ld_out,
                                                                            static_cast<unsigned>(groups));
      MEMLAB_CHECK_LAUNCH();
      return;
    }
    case step::smem_tile: return launch_tiled<T, plain_layout<32>, 32, 32>(in, out, rows, cols, ld_in, ld_out, stream);
    case step::padded_tile: return launch_tiled<T, padded_layout<32>, 32, 32>(in, out, rows, cols, ld_in, ld_out, stream);
    case step::swizzled_tile:
      return launch_tiled<T, swizzled_layout<32>, 32, 32>(in, out, rows, cols, ld_in, ld_out, stream);
    case step::multi_element:
      return launch_tiled<T, padded_layout<32>, 32, 8>(in, out, rows, cols, ld_in, ld_out, stream);
    case step::multi_element_8:
      return launch_tiled<T, padded_layout<32>, 32, 4>(in, out, rows, cols, ld_in, ld_out, stream);
    case step::vector_tile: return launch_vector_tiled<T>(in, out, rows, cols, ld_in, ld_out, stream);
    case step::grouped_tile:
      return launch_grouped<T, padded_layout<32>, 32, 8>(in, out, rows, cols, ld_in, ld_out, group, stream);
    case step::pipelined: return launch_pipelined<T, 32, 4>(in, out, rows, cols, ld_in, ld_out, stream);
    case step::tile64: return launch_tile64<T>(in, out, rows, cols, ld_in, ld_out, stream);
  }
}

template void run<float>(step, float const*, float*, std::size_t, std::size_t, std::size_t, std::size_t, cudaStream_t,
                         unsigned);
template void run<double>(step, double const*, double*, std::size_t, std::size_t, std::size_t, std::size_t,
                          cudaStream_t, unsigned);

}  // namespace memlab::kernels::transpose
