#pragma once
// What the hierarchy's TMA kernels share on the host (stream.cu, intake.cu): the 2-D tensor map
// over a buffer of 32-bit words, and a kernel's shared-memory limits.
#include <cuda.h>  // CUtensorMap and its enums only: the encoder is found at run time

#include <cstddef>
#include <cstdint>

namespace memlab::hierarchy::detail {

/// The 2-D tensor over `bytes` of `data` as rows of `row_bytes`, boxes of box_w_bytes x box_rows,
/// no swizzle, L2 promotion `promotion`. The encoder is found through the runtime
/// (cudaGetDriverEntryPointByVersion), so nothing links libcuda. Throws memlab::error where the
/// driver has none or refuses the box.
CUtensorMap encode_words_map(std::uint32_t const* data, std::size_t bytes, std::size_t row_bytes, std::size_t box_w_bytes,
                             std::size_t box_rows, CUtensorMapL2promotion promotion);

/// The kernel's static shared memory (barriers, the block's report), from its image.
std::size_t static_smem(void const* kernel);
/// The device's opt-in shared memory a block (the current device).
int optin_smem();

}  // namespace memlab::hierarchy::detail
