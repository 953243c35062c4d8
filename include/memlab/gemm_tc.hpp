#pragma once
// memlab::gemm_bf16 / memlab::gemm_f16: tensor-core GEMM, 16-bit inputs, FP32 accumulation.
//
//   C = alpha * op(A) * op(B) + beta * C        (all matrices row-major, in device memory)
//
//   memlab::gemm_bf16(memlab::gemm_op::n, memlab::gemm_op::t, m, n, k, 1.f, a, k, w, k, 0.f, c, n, stream);
//
// op(A) is m x k: op n, A is stored m x k (lda >= k); op t, A is stored k x m (lda >= m).
// op(B) is k x n: op n, B is stored k x n (ldb >= n); op t, B is stored n x k (ldb >= k).
// C is m x n (ldc >= n), BF16 (FP16 for gemm_f16) or FP32. Any m, n, k >= 0; k = 0 gives
// C = beta * C; beta = 0 never reads C (NaN in C does not propagate).
//
// The rungs (docs/tc-gemm.md): 1 wmma, 2 mma_sync, 3 tma_wgmma, 4 warp_specialized,
// 5 persistent, 6 cluster. Rungs 2-6 need the canonical layout op(A) = n, op(B) = t (both operands
// K-major: the layout of y = x W^T with W stored out x in) and 16-byte aligned A and B with
// lda, ldb multiples of 8; rungs 3-6 also need an sm_90a image. Rung 6 stores C with TMA
// when beta = 0, C is 16-byte aligned and ldc * sizeof(C) is a multiple of 16; otherwise it
// stores from registers like rung 5 (any C). `automatic` takes the
// fastest rung the compiled image, the device, the layout and the alignment allow (the
// wmma rung takes every layout and alignment), so it never refuses a valid problem that the
// image can run. Another layout or alignment (B stored k x n, A stored k x m, odd leading
// dimensions, misaligned pointers) would run on wmma, at a few percent of the tensor cores:
// where m x n x k >= 128^3 and a faster rung exists for the canonical layout, `automatic` first
// copies that operand into K-major rows of whole 16-byte units (a transpose or a row copy:
// one read and one write of it) in scratch taken from a per-device memlab pool in stream order,
// and runs that rung on the copy (with no room in the pool for the copy it stays on wmma).
// A rung named explicitly that cannot take the problem throws. BF16 needs
// an sm_80+ image (Turing has no BF16 tensor cores); FP16 runs from sm_75, where rung 2 runs a
// kernel of its own (no cp.async on Turing: loads staged through registers, mma.sync m16n8k8).
// Rung 2 (the default below sm_90a) splits K where its 128 x 128 tiles fill at most half the
// device (decode batches such as m = 128): it then takes one wave's FP32 partial tiles (at most
// SMs x 2 x 64 KB) from a per-device memlab pool in stream order, kept there for the next call,
// and launches a second kernel that adds them in a fixed order (the result is deterministic).
// Invalid arguments throw memlab::error with one line before any work is issued, C untouched.
//
// memlab::gemm_e4m3: FP8 (E4M3) inputs, FP32 accumulation, BF16 or FP32 C, on the wgmma rungs
// (3-6, sm_90a; `automatic` takes rung 6, or rung 5 where m <= 128, as for BF16) and on rung 2,
// mma.sync m16n8k32 (sm_89+: Ada's RTX 40 and L4, and Hopper; `automatic` below sm_90a). Both read
// FP8 K-major only, as cublasLt's FP8 GEMM does: op_a = n, op_b = t, A and B 16-byte aligned with
// lda and ldb multiples of 16. `automatic` copies any other layout into that one first, at any
// size (wmma has no FP8 to fall back to); a rung named explicitly throws. Hopper's FP8 tensor cores add each
// k32 product into the FP32 accumulators with fewer bits than an FP32 add keeps (cublasLt's
// CUBLASLT_MATMUL_DESC_FAST_ACCUM mode): docs/tc-gemm.md, "FP8", gives the error bound the
// tests hold it to.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memlab {

enum class gemm_op : char { n = 'n', t = 't' };

enum class gemm_tc_rung : int {
  automatic = 0,
  wmma = 1,              ///< WMMA fragments from shared memory, any layout (sm_75 FP16, sm_80 BF16)
  mma_sync = 2,          ///< mma.sync + ldmatrix + cp.async multistage, swizzled shared memory (sm_80; FP16 from sm_75)
  tma_wgmma = 3,         ///< TMA into 128-byte-swizzled shared memory + wgmma (sm_90a)
  warp_specialized = 4,  ///< producer warpgroup (TMA, mbarriers) + two consumer warpgroups, setmaxnreg
  persistent = 5,        ///< rung 4 persistent over grouped tiles: the next tile's loads overlap the epilogue
  cluster = 6,           ///< rung 5 in 2-CTA clusters along M: B multicast by TMA, TMA store epilogue
};

void gemm_bf16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_bfloat16 const* a, std::int64_t lda, __nv_bfloat16 const* b, std::int64_t ldb, float beta,
               __nv_bfloat16* c, std::int64_t ldc, cudaStream_t stream = nullptr,
               gemm_tc_rung rung = gemm_tc_rung::automatic);
void gemm_bf16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_bfloat16 const* a, std::int64_t lda, __nv_bfloat16 const* b, std::int64_t ldb, float beta,
               float* c, std::int64_t ldc, cudaStream_t stream = nullptr, gemm_tc_rung rung = gemm_tc_rung::automatic);
void gemm_f16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              __half const* a, std::int64_t lda, __half const* b, std::int64_t ldb, float beta, __half* c,
              std::int64_t ldc, cudaStream_t stream = nullptr, gemm_tc_rung rung = gemm_tc_rung::automatic);
void gemm_f16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              __half const* a, std::int64_t lda, __half const* b, std::int64_t ldb, float beta, float* c,
              std::int64_t ldc, cudaStream_t stream = nullptr, gemm_tc_rung rung = gemm_tc_rung::automatic);

/// FP8 E4M3 inputs (see above): C is BF16 or FP32; rung automatic, mma_sync or 3-6.
void gemm_e4m3(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_fp8_e4m3 const* a, std::int64_t lda, __nv_fp8_e4m3 const* b, std::int64_t ldb, float beta,
               __nv_bfloat16* c, std::int64_t ldc, cudaStream_t stream = nullptr,
               gemm_tc_rung rung = gemm_tc_rung::automatic);
void gemm_e4m3(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_fp8_e4m3 const* a, std::int64_t lda, __nv_fp8_e4m3 const* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc, cudaStream_t stream = nullptr, gemm_tc_rung rung = gemm_tc_rung::automatic);

/// "wmma", "mma_sync", "tma_wgmma", "warp_specialized", "persistent", "cluster" (rungs 1..6, in order).
std::vector<std::string> gemm_tc_rung_names();
std::string gemm_tc_rung_name(gemm_tc_rung rung);
/// Throws memlab::error for an unknown name; "automatic" is accepted.
gemm_tc_rung gemm_tc_rung_from_name(std::string const& name);

/// What the rung choice depends on. No CUDA calls are needed to fill it by hand (tests).
struct gemm_tc_target {
  int image_arch = 0;         ///< compiled_arch of the rung kernels on the device (75, 80, 90)
  bool sm90a = false;         ///< the image holds the sm_90a features (wgmma, setmaxnreg)
  int device_cc = 0;          ///< compute capability x 10
  std::size_t smem_per_block_optin_bytes = 0;
  int sm_count = 0;
};

/// The current device and this binary's rung kernels (cached per device).
gemm_tc_target gemm_tc_current_target();

/// The element type of A and B.
enum class gemm_tc_input { bf16, f16, e4m3 };

/// The problem's properties the rung choice looks at.
struct gemm_tc_shape {
  std::int64_t m = 0, n = 0, k = 0;
  gemm_op op_a = gemm_op::n, op_b = gemm_op::t;
  gemm_tc_input input = gemm_tc_input::bf16;
  bool aligned = true;   ///< A and B 16-byte aligned, lda and ldb rows multiples of 16 bytes
};

/// Empty when `rung` can run `shape` on `target`; otherwise one line saying why not. No CUDA calls.
std::string gemm_tc_unavailable(gemm_tc_rung rung, gemm_tc_shape const& shape, gemm_tc_target const& target);

/// The rung `automatic` runs: the fastest one that can run `shape` on `target`; rung
/// `automatic` itself when none can (the call then throws with the wmma rung's reason).
gemm_tc_rung gemm_tc_select(gemm_tc_shape const& shape, gemm_tc_target const& target);

}  // namespace memlab
