#pragma once
// wgmma shared-memory matrix descriptors (PTX ISA, "Matrix Descriptor Format"), as plain arithmetic
// on host and device alike, so that a CPU test can hold the k-loops' one-add form to the direct one
// (tests/cpu/test_wgmma_desc.cpp).
#include <cuda_runtime_api.h>

#include <cstdint>

namespace memlab::detail::gemm_tc {

/// wgmma shared-memory descriptor of a tile written by TMA with 128-byte swizzle, rows of 128 B,
/// 8-row atoms 1024 B apart (stride byte offset), swizzle mode 1 = 128 B; `lbo` is the leading byte
/// offset. K-major (A, and B stored n x k): rows along M or N of 64 16-bit or 128 FP8 elements of K;
/// the leading byte offset is unused for swizzled K-major layouts (16 B, encoded 1). Only the
/// address's low 18 bits are the CTA's offset: in a cluster a shared::cta address carries the CTA's
/// rank from bit 24.
__host__ __device__ constexpr std::uint64_t smem_desc(std::uint32_t addr, std::uint32_t lbo = 16) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4);
  d |= static_cast<std::uint64_t>(lbo >> 4) << 16;
  d |= static_cast<std::uint64_t>(1024 >> 4) << 32;
  d |= static_cast<std::uint64_t>(1) << 62;
  return d;
}

/// The same for an MN-major 16-bit tile (B stored k x n, A stored k x m) in blocks of 64 k-rows x 64
/// columns, one TMA box each, 8 KB apart (tma_load_mn): rows of 128 B along N (or M), 8-row groups
/// along K 1024 B apart, the next 64 columns 8 KB on (the leading byte offset of the canonical
/// MN-major layout ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))).
__host__ __device__ constexpr std::uint64_t smem_desc_mn(std::uint32_t addr) { return smem_desc(addr, 8192); }

/// The same descriptor in two parts, for the k-loops: its low word (the offset >> 4 in bits 0-13,
/// the leading byte offset >> 4 in bits 16-29), and the descriptor of a low word (stride byte offset
/// and swizzle mode, constant). The mask matters: unmasked, a cluster CTA's rank (bit 24 on) lands in
/// the leading byte offset, which the MN-major layouts read (615383f computed the second CTA of each
/// pair wrong there). A CTA's offsets are below 2^18 (228 KB), so a slice `bytes` further on (a
/// multiple of 16) is the low word plus bytes / 16, with no carry out of the address field: one add
/// a descriptor, where smem_desc of each slice's address masks and shifts it again (ncu, session 34:
/// most of the pingpong kernel's 135 instructions a k-block).
__host__ __device__ constexpr std::uint32_t smem_desc_lo(std::uint32_t addr, std::uint32_t lbo = 16) {
  return ((addr & 0x3FFFF) >> 4) | ((lbo >> 4) << 16);
}
__host__ __device__ constexpr std::uint64_t smem_desc_of(std::uint32_t lo) {
  return (static_cast<std::uint64_t>(1) << 62) | (static_cast<std::uint64_t>(1024 >> 4) << 32) | lo;
}

}  // namespace memlab::detail::gemm_tc
