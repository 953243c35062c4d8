#pragma once
// Internal interface of the GEMM kernels: one launcher per library variant, plus the
// teaching kernels the experiments reproduce (seed 001, seed 004, Best Practices Guide
// 9.2.3). The public entry point is memlab::gemm (include/memlab/gemm.hpp).
#include <cuda_runtime_api.h>

#include <string>
#include <vector>

namespace memlab::detail::gemm {

/// Row-major C = alpha * A(m x k) * B(k x n) + beta * C, leading dimensions in elements.
/// Launchers assume arguments already validated; m, n > 0 (k may be 0).
struct problem {
  int m = 0, n = 0, k = 0;
  float alpha = 1.f;
  float const* a = nullptr;
  long long lda = 0;
  float const* b = nullptr;
  long long ldb = 0;
  float beta = 0.f;
  float* c = nullptr;
  long long ldc = 0;
};

/// True when every row of A, B and C starts on a 16-byte boundary (16-byte vector loads).
bool vector_aligned(problem const& p);

using launch_fn = void (*)(problem const&, cudaStream_t);
using attributes_fn = cudaFuncAttributes (*)(bool aligned);
using kernel_fn = void const* (*)();

struct variant_entry {
  char const* name;
  launch_fn launch;
  attributes_fn attributes;  ///< the kernel this variant runs (aligned or scalar path)
  bool needs_vector_alignment;  ///< throws on rows not 16-byte aligned
  char const* summary;
  /// The architecture the variant's instruction needs in the compiled image (0: any), and
  /// one of its kernels to ask memlab::compiled_arch (every kernel of a file shares its image).
  int needs_arch = 0;
  kernel_fn kernel = nullptr;
  /// Dynamic shared memory per block of its main kernel; static shared memory stays under
  /// the 48 KB every CUDA device gives without opting in.
  int dynamic_smem_bytes = 0;
};
/// Every library variant, in the order of the ladder.
std::vector<variant_entry> const& variants();
variant_entry const* find_variant(std::string const& name);

// ---- the ladder (src/kernels/gemm/NN_*.cu) --------------------------------------------
void launch_naive(problem const&, cudaStream_t);
void launch_coalesced(problem const&, cudaStream_t);
void launch_smem_tiled(problem const&, cudaStream_t);
void launch_blocktile_1d(problem const&, cudaStream_t);
void launch_blocktile_2d(problem const&, cudaStream_t);
void launch_vectorized(problem const&, cudaStream_t);
void launch_smem_padded(problem const&, cudaStream_t);
void launch_warp_tiled(problem const&, cudaStream_t);
void launch_cp_async_128x128(problem const&, cudaStream_t);
void launch_cp_async_128x128_w64x64(problem const&, cudaStream_t);
void launch_cp_async_128x256(problem const&, cudaStream_t);
void launch_cp_async_64x64(problem const&, cudaStream_t);
void launch_cp_async_128x256_k16(problem const&, cudaStream_t);
void launch_cp_async_256x128(problem const&, cudaStream_t);
void launch_cp_async_128x256_k16_s4(problem const&, cudaStream_t);
void launch_cp_async_128x256_db(problem const&, cudaStream_t);
void launch_cp_async_128x256_k16_db(problem const&, cudaStream_t);
void launch_cp_async_128x128_w64x64_db(problem const&, cudaStream_t);
void const* kernel_cp_async_128x128();
void const* kernel_cp_async_128x128_w64x64();
void const* kernel_cp_async_128x256();
void const* kernel_cp_async_64x64();
void const* kernel_cp_async_128x256_k16();
void const* kernel_cp_async_128x256_k16_s4();
void const* kernel_cp_async_256x128();
void const* kernel_cp_async_128x256_db();
void const* kernel_cp_async_128x256_k16_db();
void const* kernel_cp_async_128x128_w64x64_db();
cudaFuncAttributes attributes_naive(bool);
cudaFuncAttributes attributes_coalesced(bool);
cudaFuncAttributes attributes_smem_tiled(bool);
cudaFuncAttributes attributes_blocktile_1d(bool);
cudaFuncAttributes attributes_blocktile_2d(bool);
cudaFuncAttributes attributes_vectorized(bool);
cudaFuncAttributes attributes_smem_padded(bool);
cudaFuncAttributes attributes_warp_tiled(bool);
cudaFuncAttributes attributes_cp_async_128x128(bool);
cudaFuncAttributes attributes_cp_async_128x128_w64x64(bool);
cudaFuncAttributes attributes_cp_async_128x256(bool);
cudaFuncAttributes attributes_cp_async_64x64(bool);
cudaFuncAttributes attributes_cp_async_128x256_k16(bool);
cudaFuncAttributes attributes_cp_async_256x128(bool);
cudaFuncAttributes attributes_cp_async_128x256_k16_s4(bool);
cudaFuncAttributes attributes_cp_async_128x256_db(bool);
cudaFuncAttributes attributes_cp_async_128x256_k16_db(bool);
cudaFuncAttributes attributes_cp_async_128x128_w64x64_db(bool);

// ---- the dispatcher's kernels (general.cu): split K, batches, skinny shapes ----------------
/// The cp.async warp-tiled configurations the dispatcher chooses among.
enum class tile_kind { t128x256, t128x128, t64x128, t64x64, t32x64, t64x16 };
struct tile_info {
  tile_kind kind;
  char const* name;  ///< plan kernel name, "tile_128x256"
  int bm, bn, bk, threads;
  int blocks_per_sm;  ///< residency the kernel is built for (__launch_bounds__ min blocks)
  int smem_bytes;     ///< dynamic shared memory per block
  double efficiency;  ///< model: fraction of the FFMA peak with the SM full (docs/gemm-notes.md)
  int stages;         ///< cp.async pipeline depth (stages - 1 tile copies in flight)
};
std::vector<tile_info> const& tile_table();
tile_info const* find_tile(std::string const& name);

/// Split-K chunk (a multiple of `granule`) and the number of non-empty splits it gives.
inline int split_chunk(int k, int splits, int granule) {
  if (splits <= 1 || k <= 0) return k;
  int c = (k + splits - 1) / splits;
  return (c + granule - 1) / granule * granule;
}
inline int effective_splits(int k, int chunk) { return (k <= 0 || chunk <= 0) ? 1 : (k + chunk - 1) / chunk; }
inline constexpr int gemv_k_granule = 128;

/// Row-major A (m x k) B (k x n), batch i at offsets i * stride_*; splits > 1 writes the
/// partials of split s to ws + (i * splits + s) * m * ws_ld (ld ws_ld) for splitk_reduce.
struct tiled_args {
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  int batch = 1, splits = 1, kchunk = 0;
  float* ws = nullptr;
  long long ws_ld = 0;
};
void launch_tiled(tile_kind t, problem const& p, tiled_args const& args, cudaStream_t s);
/// True when the tile kernel may take its 16-byte B loads / C stores for this launch.
bool tiled_vector_ok(problem const& p, tiled_args const& args);

/// The skinny (GEMV-like) kernels: O(i, j) = alpha sum_kk S(i, kk) X(j, kk) + beta O(i, j)
/// for i < s_count <= 16 and j < x_count, every operand through explicit strides, so one
/// kernel serves every transpose: stream (X(j, kk) contiguous in j) or dot (contiguous in kk).
struct skinny_args {
  int s_count = 0, x_count = 0, k = 0, batch = 1;
  float alpha = 1.f, beta = 0.f;
  float const* s = nullptr;
  long long s_vec = 0, s_k = 0, s_batch = 0;
  float const* x = nullptr;
  long long x_pos = 0, x_k = 0, x_batch = 0;
  float* o = nullptr;
  long long o_s = 0, o_x = 0, o_batch = 0;
  int splits = 1, kchunk = 0;  ///< kchunk a multiple of gemv_k_granule when splits > 1
  float* ws = nullptr;         ///< partials [batch][split][s_count][x_count]
};
/// True when X's 16-byte loads are possible for this launch (the _v4 forms need it).
bool skinny_vector_ok(skinny_args const& a);
void launch_skinny(skinny_args const& a, bool vec, cudaStream_t s);

/// How many groups of threads share one output of the split-K reduction: 1 (a thread sums
/// every split of its output) up to 8 (8 groups each sum a contiguous eighth of the splits,
/// then the groups' sums are added in group order). More groups when the output is too small
/// to give the GPU ~64K threads: a 16 x 16 output of 1024 splits would otherwise be 256
/// threads each walking 1024 dependent-latency loads. A pure function of the output size and
/// the split count, so the same shape always sums in the same order (same bits every run).
inline int splitk_reduce_groups(long long outputs, int splits) {
  int g = 1;
  while (g < 8 && g < splits && outputs * g < 65536) g *= 2;
  return g;
}

/// C(i, j) = alpha sum_s ws[(b * splits + s) * slice + i * ws_ld + j] + beta C(i, j), the
/// splits summed in a fixed order (splitk_reduce_groups groups of contiguous splits, each in
/// index order, then the groups in order: deterministic), C(i, j) at c + b * stride_c + i *
/// c_row + j * c_col.
void launch_splitk_reduce(float const* ws, long long slice, long long ws_ld, int splits, int rows, int cols, int batch,
                          float alpha, float beta, float* c, long long c_row, long long c_col, long long stride_c,
                          cudaStream_t s);

/// dst(r, c) = src(c, r): src rows x cols... out_rows x out_cols of dst (ld_dst) from src
/// (ld_src), batch i at src + i * stride_src, dst + i * stride_dst.
void launch_pack_transpose(float const* src, long long ld_src, long long stride_src, int out_rows, int out_cols,
                           float* dst, long long ld_dst, long long stride_dst, int batch, cudaStream_t s);

// ---- seed 001 §1-2: TILE x TILE outputs per thread straight from global memory ----------
/// C(n x n) = A * B for square row-major n x n; tile in {1, 2, 4, 8, 16, 32, 64}.
void launch_seed_thread_tile(int tile, int n, float const* a, float const* b, float* c, cudaStream_t s);
cudaFuncAttributes seed_thread_tile_attributes(int tile);
std::vector<int> const& seed_thread_tiles();

// ---- seed 001 §3 / seed 004: shared-memory tiling, tile width w, any m, n, k ------------
/// Row-major C(m x n) = A(m x k) * B(k x n), dense (ld = row length); w in 1..32.
void launch_seed_smem_tile(int w, int m, int n, int k, float const* a, float const* b, float* c, cudaStream_t s);

// ---- Best Practices Guide 9.2.3.2: A (m x 32) * B (32 x n) ------------------------------
inline constexpr int guide_tile = 32;
enum class guide_ab_kernel { simple, coalesced, shared_ab };
void launch_guide_ab(guide_ab_kernel which, int m, int n, float const* a, float const* b, float* c, cudaStream_t s);

// ---- Best Practices Guide 9.2.3.3: C (m x m) = A (m x 32) * A^T -------------------------
enum class guide_aat_kernel { simple, coalesced, padded };
void launch_guide_aat(guide_aat_kernel which, int m, float const* a, float* c, cudaStream_t s);

}  // namespace memlab::detail::gemm
