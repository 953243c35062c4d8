#pragma once
// Constant memory (seed 004): a small read-only bank with its own cache next to each SM.
// The constant cache delivers one 32-bit word per request to all lanes at once (broadcast),
// and when a warp's lanes ask for k different addresses the request is replayed k times.
// When the index is known at compile time, ptxas folds the word into the instruction itself
// (an FFMA with a c[bank][offset] operand): no load instruction at all.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace memlab::constant {

enum class filter_source { constant, global_ldg, shared };
/// Filter lengths the convolution is instantiated for (odd, centred).
inline constexpr int conv_taps[] = {3, 9, 33, 65};
inline constexpr int conv_max_taps = 65;
inline constexpr int conv_block = 256;

bool conv_supports(int taps);
/// Copies the filter into the __constant__ bank the convolution reads (outside timed regions).
void set_conv_filter(float const* host_filter, int taps);
/// out[i] = sum_k filter[k] * in[i + k - taps/2], zero outside [0, n). `filter` (device) is
/// read by the global_ldg and shared variants; the constant variant reads what
/// set_conv_filter uploaded.
void conv1d(filter_source src, float const* in, float* out, float const* filter, std::int64_t n, int taps,
            cudaStream_t stream);

/// Words in the table the serialization microbenchmark reads: 1 KB, so that it stays in the
/// SM's small first-level constant cache (a first try cycling over 8 KB ran 6x slower even
/// with one address per warp: misses, not serialization).
inline constexpr int table_rows = 8;  ///< rows of 32 words; a power of two
inline constexpr int table_words = 32 * table_rows;
void set_table(float const* host_table);  ///< table_words floats into __constant__
enum class table_source { constant, global_ldg };
/// Lane l of every warp reads table[(l % distinct) + 32 * (it % 8)] for it = 0..iters-1 and
/// writes the sum to out[thread]: `distinct` different addresses per warp request.
void table_reads(table_source src, float const* table, float* out, int distinct, int iters, int grid,
                 cudaStream_t stream);
inline constexpr int table_block = 256;
inline constexpr int table_unroll = 8;
__host__ __device__ constexpr int table_index(int lane, int distinct, int it) {
  return lane % distinct + 32 * (it % table_rows);
}

}  // namespace memlab::constant
