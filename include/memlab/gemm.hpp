#pragma once
// memlab::gemm: row-major single-precision C = alpha * A * B + beta * C on the GPU.
//
//   memlab::gemm(m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, stream);          // fastest for the shape
//   memlab::gemm(m, n, k, 1.f, a, lda, b, ldb, 0.f, c, ldc, stream, "smem_tiled");  // a named variant
//
// A is m x k (row stride lda >= k), B is k x n (ldb >= n), C is m x n (ldc >= n), all in
// device memory. Any m, n, k >= 0: k = 0 gives C = beta * C; beta = 0 never reads C (NaN
// in C does not propagate). Every variant computes in FP32 FFMA (no tensor cores, no TF32).
// Invalid arguments throw memlab::error before any work is issued, leaving C untouched; so
// does a named cp_async_* variant when the binary's GPU code predates sm_80 (no cp.async).
//
// The BLAS interface beside it (gemm_ex, gemm_strided_batched): transposes of A and B,
// row- or column-major storage, strided batches, a stream, an optional caller workspace.
// With no plan named, a dispatcher (gemm_select, a pure function of the shape and the
// device's limits) picks the kernel, its tile and a split of K; split K reduces its partial
// products in a fixed order in a second kernel, so the same inputs give the same bits on
// every run (no floating-point atomics anywhere). docs/gemm-notes.md, "Every shape".
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace memlab {

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float const* a, std::int64_t lda,
          float const* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream = nullptr,
          std::string const& variant = "");

/// The names `gemm` accepts, in the order of the optimization ladder (docs/gemm.md).
std::vector<std::string> gemm_variants();

/// What the default choice depends on: the device's limits and the GPU code in this binary.
struct gemm_target {
  int sm_count = 0;                            ///< multiprocessors
  std::size_t smem_per_block_optin_bytes = 0;  ///< sharedMemPerBlockOptin
  int device_cc = 0;                           ///< compute capability x 10
  int image_arch = 0;                          ///< compiled_arch of the GEMM kernels (memlab/arch.hpp)
  bool jit = false;                            ///< that code is PTX JIT-compiled for the device
};

/// The current device and this binary's GEMM kernels.
gemm_target gemm_current_target();

/// Empty when `variant` runs on `target`; otherwise why not (cp.async missing from the
/// image, or more shared memory than a block may have). No CUDA calls.
std::string gemm_variant_unavailable(std::string const& variant, gemm_target const& target);

/// The best single ladder variant for this shape on `target` (always one that target can
/// run): what the dispatcher runs where the binary has no cp.async tiles (below sm_80).
/// With cp.async, `gemm` with no variant named runs gemm_select's plan instead.
/// No CUDA calls, so the choice for any GPU is testable without one.
std::string gemm_select_variant(std::int64_t m, std::int64_t n, std::int64_t k, gemm_target const& target);

/// gemm_select_variant on gemm_current_target().
std::string gemm_default_variant(std::int64_t m, std::int64_t n, std::int64_t k);

/// True when `variant` requires every row of A and B to start on a 16-byte boundary.
bool gemm_variant_needs_alignment(std::string const& variant);

// ---- the BLAS interface and the dispatcher ------------------------------------------------

enum class gemm_op { n, t };                     ///< op(X) = X or X^T
enum class gemm_order { row_major, col_major };  ///< storage of A, B and C alike

/// C_i = alpha op(A_i) op(B_i) + beta C_i for i < batch, with X_i = X + i * stride_x.
/// op(A) is m x k, op(B) is k x n, C is m x n; lda/ldb/ldc are the strides between rows
/// (row_major) or columns (col_major) of the matrices as stored. beta = 0 never reads C.
struct gemm_params {
  gemm_order order = gemm_order::row_major;
  gemm_op op_a = gemm_op::n, op_b = gemm_op::n;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.f, beta = 0.f;
  float const* a = nullptr;
  std::int64_t lda = 0, stride_a = 0;
  float const* b = nullptr;
  std::int64_t ldb = 0, stride_b = 0;
  float* c = nullptr;
  std::int64_t ldc = 0, stride_c = 0;
  std::int64_t batch = 1;
  cudaStream_t stream = nullptr;
  /// "" : the dispatcher's choice. Otherwise a plan name (gemm_plan::name(), e.g.
  /// "tile_128x128/s4", "gemv_dot/s8", "gemv_stream_v4") or a ladder variant (gemm_variants()).
  std::string plan;
  /// Scratch for split-K partials and packed transposes; null: allocated on `stream`
  /// (cudaMallocAsync) when the plan needs any. Must hold gemm_workspace_bytes().
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  /// With no plan named: use the autotune cache's measured plan for this GPU and shape when
  /// it has one (gemm_autotune_path()). Also on when the environment sets
  /// MEMLAB_GEMM_AUTOTUNE=1. Off by default: the dispatcher's model decides.
  bool autotune = false;
};

/// Runs `p`. Invalid input (negative sizes, ld below the stored row or column, null
/// pointers with a non-zero size, batch <= 0, overlapping batches of C, a plan this device
/// or binary cannot run, misaligned data for a plan that forces 16-byte vectors) throws
/// memlab::error with a one-line message before any work is issued, leaving C untouched.
void gemm_ex(gemm_params const& p);

/// BLAS-style strided batched GEMM (cublasSgemmStridedBatched's arguments, plus the order).
void gemm_strided_batched(gemm_order order, gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n,
                          std::int64_t k, float alpha, float const* a, std::int64_t lda, std::int64_t stride_a,
                          float const* b, std::int64_t ldb, std::int64_t stride_b, float beta, float* c,
                          std::int64_t ldc, std::int64_t stride_c, std::int64_t batch, cudaStream_t stream = nullptr);

/// What the dispatcher sees: the problem in row-major form (a column-major C = A B is the
/// row-major C^T = B^T A^T, so order is folded in before this), and whether every pointer,
/// leading dimension and batch stride keeps rows 16-byte aligned.
struct gemm_shape {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  bool aligned = true;
};

/// One way to run a shape: a kernel, its split of K, and the model's time for it.
struct gemm_plan {
  /// tile_128x256 | tile_128x128 | tile_64x128 | tile_64x64 | tile_32x64 | tile_64x16: the
  /// cp.async warp-tiled kernels (sm_80+; tile_64x16 for outputs about 16 wide); gemv_stream | gemv_dot: m or n <= 16, memory-bound
  /// (gemv_*_v4: 16-byte vectors forced); or a ladder variant name (one kernel per batch).
  std::string kernel;
  int splits = 1;              ///< K split this many ways, partials reduced in a fixed order
  double predicted_us = 0.0;   ///< the dispatcher's cost model (docs/gemm-notes.md)
  std::string name() const;    ///< "tile_128x128/s4", or the kernel alone when splits == 1
};

/// Parses a plan name ("tile_64x64/s8", "gemv_dot", "cp_async_64x64"); throws on an unknown one.
gemm_plan gemm_parse_plan(std::string const& name);

/// Every plan the dispatcher considers for `shape` on `target` that the target can run,
/// fastest first by the model; the first is gemm_select's. Pure: no CUDA calls.
std::vector<gemm_plan> gemm_candidates(gemm_shape const& shape, gemm_target const& target);

/// The model's time for any plan on `shape` (microseconds; what gemm_candidates ranks by;
/// a ladder variant is modelled as one 128 x 128 tile kernel). Pure: no CUDA calls.
double gemm_plan_model_us(gemm_plan const& plan, gemm_shape const& shape, gemm_target const& target);

/// The dispatcher: the model's fastest plan for `shape` on `target` (always runnable there).
gemm_plan gemm_select(gemm_shape const& shape, gemm_target const& target);

/// Empty when `plan` can run `shape` on `target`; otherwise why not. Pure.
std::string gemm_plan_unavailable(gemm_plan const& plan, gemm_shape const& shape, gemm_target const& target);

/// Scratch bytes `plan` needs for `shape` (split-K partials, packed transposes). Pure.
std::size_t gemm_workspace_bytes(gemm_shape const& shape, gemm_plan const& plan);

/// The row-major shape gemm_ex hands the dispatcher for these parameters (pointers read
/// for alignment only, never dereferenced).
gemm_shape gemm_shape_of(gemm_params const& p);

// ---- autotune: measured plans cached on disk (opt-in) ---------------------------------------

/// The cache file: $MEMLAB_GEMM_AUTOTUNE_FILE, else $XDG_CACHE_HOME/memlab/gemm-autotune.json,
/// else $HOME/.cache/memlab/gemm-autotune.json; "" when none of them is set.
std::string gemm_autotune_path();

/// The cache key of a shape on a GPU (cudaDeviceProp::name):
/// "NVIDIA H200|4096x8x4096b1|NN|a16" (row-major shape, transposes, 16-byte aligned or "u").
std::string gemm_autotune_key(std::string const& gpu_name, gemm_shape const& shape);

struct gemm_autotune_entry {
  std::string plan;  ///< a gemm_plan name
  double us = 0.0;   ///< its measured median (informative)
};

/// The cache: {"format": "memlab-gemm-autotune", "version": 1, "plans": {key: {"plan", "us"}}}.
struct gemm_autotune_cache {
  std::map<std::string, gemm_autotune_entry> plans;
  /// A missing file is an empty cache. An unreadable or corrupt one (not JSON, another format
  /// or version, an entry without a known plan) is an empty cache and `*warning` one line
  /// naming the file and the fault; never a throw.
  static gemm_autotune_cache load(std::string const& path, std::string* warning);
  /// Writes the whole cache (the directory created; a temporary file renamed over the old
  /// one). Throws memlab::error when the file cannot be written.
  void save(std::string const& path) const;
};

}  // namespace memlab
