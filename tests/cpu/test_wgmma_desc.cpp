// The k-loops' wgmma descriptors (a low word computed once a k-block, plus bytes / 16 a slice) against
// the direct form, smem_desc of each slice's address, at the addresses a cluster CTA sees: the CTA's
// rank from bit 24 on, its offset below 228 KB. 615383f dropped the mask and shifted rank 1 into the
// leading byte offset, which the MN-major kernels read; this test fails on that form.
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/gemm/tc/wgmma_desc.hpp"

namespace {
using memlab::detail::gemm_tc::smem_desc;
using memlab::detail::gemm_tc::smem_desc_lo;
using memlab::detail::gemm_tc::smem_desc_mn;
using memlab::detail::gemm_tc::smem_desc_of;

constexpr std::uint32_t shared_addr(std::uint32_t rank, std::uint32_t offset) { return (rank << 24) | offset; }

TEST(WgmmaDesc, OneAddASliceEqualsTheDescriptorOfTheSlicesAddress) {
  // Stage bases as the kernels place them (1 KB aligned, up to the 227 KB a CTA may take), every
  // slice step the k-loops take: 32 B (K-major, a k16 of 16-bit or k32 of FP8), 8 KB + 32 B (the
  // second 64-row box of A), 2 KB (MN-major: 16 k-rows of 128 B).
  std::uint32_t const steps[] = {0, 32, 64, 96, 8192, 8192 + 96, 2048, 3 * 2048};
  for (std::uint32_t rank : {0u, 1u, 3u, 15u})
    for (std::uint32_t base = 0; base + 40 * 1024 <= 227 * 1024; base += 7 * 1024)
      for (std::uint32_t step : steps) {
        std::uint32_t const addr = shared_addr(rank, base);
        SCOPED_TRACE(::testing::Message() << "rank " << rank << " base " << base << " step " << step);
        EXPECT_EQ(smem_desc_of(smem_desc_lo(addr) + step / 16), smem_desc(addr + step));
        EXPECT_EQ(smem_desc_of(smem_desc_lo(addr, 8192) + step / 16), smem_desc_mn(addr + step));
      }
}

TEST(WgmmaDesc, FieldsAreWhereThePtxIsaPutsThem) {
  // Start address >> 4 in bits 0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4
  // (1024 B) in 32-45, 128-byte swizzle (1) in 62-63; a rank above bit 24 changes none of them.
  std::uint64_t const d = smem_desc_mn(shared_addr(1, 0x12340));
  EXPECT_EQ(d & 0x3FFF, 0x12340u >> 4);
  EXPECT_EQ((d >> 16) & 0x3FFF, 8192u >> 4);
  EXPECT_EQ((d >> 32) & 0x3FFF, 1024u >> 4);
  EXPECT_EQ(d >> 62, 1u);
  EXPECT_EQ(smem_desc(shared_addr(1, 0x12340)), smem_desc(0x12340));
}

}  // namespace
