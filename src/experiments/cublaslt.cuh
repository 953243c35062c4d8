#pragma once
// cublasLt as a GEMM peer at its best algorithm for the shape: the heuristic proposes up to
// `candidates` algorithms (with a workspace), each is timed twice outside the harness's timed
// region, and the fastest is kept and described (algo id, tile, stages, split-K, swizzle,
// cluster shape as cublasLtMatmulAlgoConfigGetAttribute reports them). The choice is cached
// per problem, so every variant of a point times the same algorithm.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "experiments/cublas.cuh"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace memlab::experiments {

/// One cublasLt handle per process.
inline cublasLtHandle_t cublaslt() {
  struct holder {
    cublasLtHandle_t h = nullptr;
    holder() { MEMLAB_CUBLAS_CHECK(cublasLtCreate(&h)); }
    ~holder() {
      if (h) (void)cublasLtDestroy(h);
    }
  };
  static holder const instance;
  return instance.h;
}

/// Row-major C (m x n, ldc = n) = A (m x k, row stride ld) * B^T (B stored n x k, row stride
/// ld), FP32 compute, alpha = 1, beta = 0, as column-major C^T = B^T' A' (op T on B, N on A:
/// the "TN" layout FP8 requires). `fast_accum` (FP8 only): CUBLASLT_MATMUL_DESC_FAST_ACCUM, the
/// tensor cores' own FP8 accumulation throughout; without it cublasLt periodically promotes
/// partial sums into separate FP32 accumulators (more exact, slower).
class lt_gemm {
 public:
  static constexpr std::size_t workspace_bytes = std::size_t{32} << 20;

  lt_gemm(cudaDataType_t in, cudaDataType_t out, int m, int n, int k, int ld, bool fast_accum = false)
      : lt_gemm(in, out, m, n, k, ld, ld, false, true, fast_accum) {}

  /// Any layout: row-major C = op(A) op(B) with A stored m x k (`a_t` false) or k x m (true),
  /// leading dimension lda, and B stored n x k (`b_t` true: the canonical B^T) or k x n (false).
  lt_gemm(cudaDataType_t in, cudaDataType_t out, int m, int n, int k, int lda, int ldb, bool a_t, bool b_t,
          bool fast_accum = false)
      : ws_(workspace_bytes) {
    MEMLAB_CUBLAS_CHECK(cublasLtMatmulDescCreate(&op_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Column-major C^T = op(B)^T op(A)^T: cuBLAS's first operand is our B, its second our A.
    cublasOperation_t const ta = b_t ? CUBLAS_OP_T : CUBLAS_OP_N, tb = a_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    MEMLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    MEMLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (fast_accum) {
      std::int8_t const on = 1;
      MEMLAB_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &on, sizeof on));
    }
    // B stored n x k row-major is k x n column-major; stored k x n, it is n x k. Likewise A.
    MEMLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_, in, b_t ? k : n, b_t ? n : k, ldb));
    MEMLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_, in, a_t ? m : k, a_t ? k : m, lda));
    MEMLAB_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_, out, n, m, n));
    MEMLAB_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    std::size_t const ws = workspace_bytes;
    MEMLAB_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
  }
  ~lt_gemm() {
    if (pref_) (void)cublasLtMatmulPreferenceDestroy(pref_);
    if (c_) (void)cublasLtMatrixLayoutDestroy(c_);
    if (b_) (void)cublasLtMatrixLayoutDestroy(b_);
    if (a_) (void)cublasLtMatrixLayoutDestroy(a_);
    if (op_) (void)cublasLtMatmulDescDestroy(op_);
  }
  lt_gemm(lt_gemm const&) = delete;
  lt_gemm& operator=(lt_gemm const&) = delete;

  /// The heuristic's candidates (at most `count`), best first by its own estimate.
  std::vector<cublasLtMatmulHeuristicResult_t> candidates(int count) const {
    std::vector<cublasLtMatmulHeuristicResult_t> r(static_cast<std::size_t>(count));
    int got = 0;
    MEMLAB_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(cublaslt(), op_, a_, b_, c_, c_, pref_, count, r.data(), &got));
    r.resize(static_cast<std::size_t>(got));
    std::vector<cublasLtMatmulHeuristicResult_t> ok;
    for (auto const& h : r)
      if (h.state == CUBLAS_STATUS_SUCCESS && h.workspaceSize <= workspace_bytes) ok.push_back(h);
    return ok;
  }

  /// Issues C = A B^T with `algo` on `st` (a: m x k, b: n x k).
  void run(cublasLtMatmulAlgo_t const& algo, void const* a, void const* b, void* c, cudaStream_t st) const {
    float const alpha = 1.f, beta = 0.f;
    MEMLAB_CUBLAS_CHECK(cublasLtMatmul(cublaslt(), op_, &alpha, b, a_, a, b_, &beta, c, c_, c, c_, &algo, ws_.data(),
                                       workspace_bytes, st));
  }

  /// Times each candidate twice (after one warm-up launch) with events on `st` and returns the
  /// fastest one's index; `ms` receives each candidate's best time. With several copies of B
  /// (`bs`, the decode points' rotation: docs/timing.md, "Streamed weights") a timing is 4 launches
  /// per copy back to back, each on the next copy, divided by their count: a microsecond launch
  /// timed alone is mostly the launch itself, and a B that stayed in L2 is not what the row times.
  std::size_t fastest(std::vector<cublasLtMatmulHeuristicResult_t> const& cands, void const* a,
                      std::vector<void const*> const& bs, void* c, cudaStream_t st, std::vector<double>& ms) const {
    MEMLAB_EXPECTS(!bs.empty(), "cublasLt trial: no B");
    cudaEvent_t e0, e1;
    MEMLAB_CUDA_CHECK(cudaEventCreate(&e0));
    MEMLAB_CUDA_CHECK(cudaEventCreate(&e1));
    std::size_t const launches = bs.size() > 1 ? 4 * bs.size() : 1;
    std::size_t best = 0;
    ms.assign(cands.size(), 0.0);
    for (std::size_t i = 0; i < cands.size(); ++i) {
      run(cands[i].algo, a, bs[0], c, st);
      double t_best = 1e30;
      for (int rep = 0; rep < 2; ++rep) {
        MEMLAB_CUDA_CHECK(cudaEventRecord(e0, st));
        for (std::size_t l = 0; l < launches; ++l) run(cands[i].algo, a, bs[(l + 1) % bs.size()], c, st);
        MEMLAB_CUDA_CHECK(cudaEventRecord(e1, st));
        MEMLAB_CUDA_CHECK(cudaEventSynchronize(e1));
        float t = 0.f;
        MEMLAB_CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
        t_best = std::min(t_best, static_cast<double>(t) / static_cast<double>(launches));
      }
      ms[i] = t_best;
      if (t_best < ms[best]) best = i;
    }
    MEMLAB_CUDA_CHECK_NOTHROW(cudaEventDestroy(e0));
    MEMLAB_CUDA_CHECK_NOTHROW(cudaEventDestroy(e1));
    return best;
  }

 private:
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  mutable device_buffer<unsigned char> ws_;  // cublasLtMatmul takes a non-const workspace
};

/// What cublasLtMatmulAlgoConfigGetAttribute says about `algo` (enum values as numbers: see
/// cublasLt.h's cublasLtMatmulTile_t, cublasLtMatmulStages_t, cublasLtClusterShape_t).
inline nlohmann::json describe_lt_algo(cublasLtMatmulHeuristicResult_t const& h) {
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr) -> std::int64_t {
    // The size must match the attribute's own (int32, uint32 or uint16): ask it first.
    std::size_t need = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&h.algo, attr, nullptr, 0, &need) != CUBLAS_STATUS_SUCCESS) return -1;
    if (need != 2 && need != 4 && need != 8) return -1;
    unsigned char buf[8] = {};
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&h.algo, attr, buf, need, &written) != CUBLAS_STATUS_SUCCESS) return -1;
    if (need == 2) {
      std::uint16_t v;
      std::memcpy(&v, buf, 2);
      return v;
    }
    if (need == 4) {
      std::int32_t v;  // ID and SPLITK_NUM are int32; the enums fit either way
      std::memcpy(&v, buf, 4);
      return v;
    }
    std::int64_t v;
    std::memcpy(&v, buf, 8);
    return v;
  };
  return {{"algo_id", get(CUBLASLT_ALGO_CONFIG_ID)},
          {"tile_id", get(CUBLASLT_ALGO_CONFIG_TILE_ID)},
          {"stages_id", get(CUBLASLT_ALGO_CONFIG_STAGES_ID)},
          {"splitk", get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM)},
          {"reduction", get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME)},
          {"cta_swizzling", get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING)},
          {"cluster_shape_id", get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID)},
          {"custom_option", get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION)},
          {"workspace_bytes", static_cast<std::int64_t>(h.workspaceSize)},
          {"waves", h.wavesCount}};
}

}  // namespace memlab::experiments
