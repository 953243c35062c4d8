#pragma once
// memlab::transpose: out = in^T for a row-major matrix on the device.
//
// in is rows x cols with leading dimension ld_in (element (r, c) at in[r * ld_in + c]);
// out is cols x rows with leading dimension ld_out (out[c * ld_out + r] = in[r * ld_in + c]).
// Padding between rows (ld > the row length) is neither read nor written. The kernel moves
// the matrix through padded shared-memory tiles so that reads and writes are both
// coalesced; any sizes and leading dimensions work (no multiple-of-32 requirement).
// Asynchronous on `stream`; no workspace.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace memlab {

/// Throws memlab::error when in or out is null (with rows, cols > 0), ld_in < cols,
/// ld_out < rows, the matrices overlap (no in-place transpose), or the sizes overflow.
/// rows == 0 or cols == 0 does nothing.
void transpose(float const* in, float* out, std::size_t rows, std::size_t cols, std::size_t ld_in,
               std::size_t ld_out, cudaStream_t stream = nullptr);
void transpose(double const* in, double* out, std::size_t rows, std::size_t cols, std::size_t ld_in,
               std::size_t ld_out, cudaStream_t stream = nullptr);

/// 16-bit elements (the bits are moved, not converted): e.g. weights stored k x n, transposed once
/// into the n x k layout memlab::gemm_bf16 / gemm_f16 read without a copy (include/memlab/gemm_tc.hpp).
void transpose(__nv_bfloat16 const* in, __nv_bfloat16* out, std::size_t rows, std::size_t cols, std::size_t ld_in,
               std::size_t ld_out, cudaStream_t stream = nullptr);
void transpose(__half const* in, __half* out, std::size_t rows, std::size_t cols, std::size_t ld_in, std::size_t ld_out,
               cudaStream_t stream = nullptr);

/// Packed matrices: ld_in = cols, ld_out = rows.
inline void transpose(float const* in, float* out, std::size_t rows, std::size_t cols, cudaStream_t stream = nullptr) {
  transpose(in, out, rows, cols, cols, rows, stream);
}
inline void transpose(double const* in, double* out, std::size_t rows, std::size_t cols,
                      cudaStream_t stream = nullptr) {
  transpose(in, out, rows, cols, cols, rows, stream);
}

}  // namespace memlab
