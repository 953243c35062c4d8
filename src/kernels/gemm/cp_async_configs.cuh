#pragma once
// The tile configurations of the cp.async variants (09_cp_async_multistage.cu), shared
// with the variant table (gemm.cu) so the default choice can check their shared memory
// against the device's limit without launching anything.
#include "kernels/gemm/warp_tile.cuh"

namespace memlab::detail::gemm {

//                                      BM   BN  BK  WM  WN  S  blocks/SM
using cfg_128x128 = warp_tile_config<128, 128, 8, 64, 32, 4, 2>;          // 256 thr, 8x8 per lane, 33 KB
using cfg_128x128_w64 = warp_tile_config<128, 128, 8, 64, 64, 4, 2>;      // 128 thr, 8x16 per lane, 33 KB
using cfg_128x256 = warp_tile_config<128, 256, 8, 64, 64, 3, 1>;          // 256 thr, 8x16 per lane, 37 KB
using cfg_64x64 = warp_tile_config<64, 64, 8, 32, 32, 4, 4>;              // 128 thr, 4x8 per lane, 17 KB
using cfg_128x256_k16 = warp_tile_config<128, 256, 16, 64, 64, 3, 1>;     // 256 thr, 8x16, BK 16, 74 KB
using cfg_128x256_k16_s4 = warp_tile_config<128, 256, 16, 64, 64, 4, 1>;  // 4 stages, 99 KB
using cfg_256x128 = warp_tile_config<256, 128, 8, 64, 64, 3, 1>;          // 256 thr, 8x16 per lane, 37 KB
// The dispatcher's small and skinny tiles (general path only: split K, batches).
using cfg_64x128 = warp_tile_config<64, 128, 8, 32, 64, 4, 2>;  // 128 thr, 4x16 per lane, 25 KB
using cfg_32x64 = warp_tile_config<32, 64, 8, 32, 32, 4, 6>;    // 64 thr, 4x8 per lane, 13 KB
// Outputs at most 16 wide against a large m (4096x16x4096): every column of the tile is
// useful, where tile_32x64 loads A for 64 columns and keeps 16. BK = 16 so that B's slice
// is one 16-byte copy a thread; A's 16 k values of a warp hit banks 4k + m (2-way).
using cfg_64x16 = warp_tile_config<64, 16, 16, 32, 16, 4, 8>;   // 64 thr, 4x4 per lane, 21 KB
// The remainder strips (a few rows or columns, full k): small 32x32 tiles for many blocks
// and BK = 32 so each block keeps 3 x 8 KB of copies in flight. The first version used the
// 64x64x8 kernel: 65 blocks each walking k in steps of 8 took ~0.35 ms per strip, latency-bound.
using cfg_edge = warp_tile_config<32, 32, 32, 32, 16, 4, 4>;  // 35 KB

}  // namespace memlab::detail::gemm
