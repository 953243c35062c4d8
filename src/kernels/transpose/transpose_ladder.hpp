#pragma once
// Host entry points of the transpose ladder (seed 004 and after), for the experiment and
// the tests. in is rows x cols, row-major with leading dimension ld_in; out is cols x rows
// with leading dimension ld_out: out[c * ld_out + r] = in[r * ld_in + c].
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace memlab::kernels::transpose {

enum class step {
  copy = 0,       ///< the ceiling: a plain 16-byte-vector copy of rows*cols elements (not a transpose)
  naive,          ///< global to global, strided writes
  smem_tile,      ///< 32x32 tile, 32-way conflicts on the column reads
  padded_tile,    ///< [32][33]
  swizzled_tile,  ///< XOR swizzle, no padding
  multi_element,  ///< [32][33], 32x8 threads, 4 elements each
  multi_element_8,  ///< [32][33], 32x4 threads, 8 elements each
  vector_tile,      ///< 16-byte loads and stores, [64][65] tile (floats), 16 elements per thread
  grouped_tile,     ///< multi_element with tiles rasterized in bands of `group` tile rows
  pipelined,        ///< persistent blocks, next tile's loads in flight while this one is stored (8 per thread)
  tile64,           ///< 64x64 tile as two 32-column halves, 32x8 threads, 16 elements each
};

std::vector<step> all_steps();
char const* name(step s) noexcept;
step step_from_name(std::string const& name);  ///< throws memlab::error when unknown
/// Predicted shared-memory bank-conflict degree of the tile's column reads (32-bit words).
int predicted_conflict_ways(step s) noexcept;

/// Tile rows per raster band of grouped_tile unless told otherwise.
inline constexpr unsigned default_raster_group = 32;

/// Runs step s (copy: requires packed, 16-byte-aligned buffers, ld_in == cols, ld_out == rows).
/// `group`: grouped_tile's band height in tile rows (ignored by the other steps).
template <class T>
void run(step s, T const* in, T* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
         cudaStream_t stream, unsigned group = default_raster_group);

}  // namespace memlab::kernels::transpose
