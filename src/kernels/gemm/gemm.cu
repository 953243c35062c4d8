// memlab::gemm: validation, the variant table and the default choice per shape.
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>

#include "kernels/gemm/cp_async_configs.cuh"
#include "memlab/arch.hpp"
#include "memlab/device.hpp"
#include "memlab/gemm.hpp"

namespace memlab {
namespace detail::gemm {

bool vector_aligned(problem const& p) {
  auto aligned = [](void const* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  return p.lda % 4 == 0 && p.ldb % 4 == 0 && p.ldc % 4 == 0 && aligned(p.a) && aligned(p.b) && aligned(p.c);
}

std::vector<variant_entry> const& variants() {
  static std::vector<variant_entry> const table{
      {"naive", launch_naive, attributes_naive, false, "one output per thread, lanes down a column (uncoalesced)"},
      {"coalesced", launch_coalesced, attributes_coalesced, false, "one output per thread, lanes along a row"},
      {"smem_tiled", launch_smem_tiled, attributes_smem_tiled, false, "32x32 shared-memory tiles"},
      {"blocktile_1d", launch_blocktile_1d, attributes_blocktile_1d, false, "64x64x8 tile, 8 outputs per thread"},
      {"blocktile_2d", launch_blocktile_2d, attributes_blocktile_2d, false, "128x128x8 tile, 8x8 outputs per thread"},
      {"vectorized", launch_vectorized, attributes_vectorized, true, "16-byte loads, A transposed in shared memory"},
      {"smem_padded", launch_smem_padded, attributes_smem_padded, true, "bank-conflict-free shared layouts"},
      {"warp_tiled", launch_warp_tiled, attributes_warp_tiled, false, "warp tiling, register-staged double buffer"},
      {"cp_async_128x128", launch_cp_async_128x128, attributes_cp_async_128x128, false,
       "cp.async 4-stage pipeline, 128x128x8 tile, 256 threads, 8x8 per thread",
       arch::cp_async, kernel_cp_async_128x128, cfg_128x128::smem_bytes},
      {"cp_async_128x128_w64x64", launch_cp_async_128x128_w64x64, attributes_cp_async_128x128_w64x64, false,
       "cp.async 4-stage pipeline, 128x128x8 tile, 128 threads, 8x16 per thread",
       arch::cp_async, kernel_cp_async_128x128_w64x64, cfg_128x128_w64::smem_bytes},
      {"cp_async_128x256", launch_cp_async_128x256, attributes_cp_async_128x256, false,
       "cp.async 3-stage pipeline, 128x256x8 tile, 256 threads, 8x16 per thread",
       arch::cp_async, kernel_cp_async_128x256, cfg_128x256::smem_bytes},
      {"cp_async_128x256_k16", launch_cp_async_128x256_k16, attributes_cp_async_128x256_k16, false,
       "cp.async 3-stage pipeline, 128x256x16 tile, 256 threads, 8x16 per thread",
       arch::cp_async, kernel_cp_async_128x256_k16, cfg_128x256_k16::smem_bytes},
      {"cp_async_128x256_k16_s4", launch_cp_async_128x256_k16_s4, attributes_cp_async_128x256_k16_s4, false,
       "cp.async 4-stage pipeline, 128x256x16 tile, 256 threads, 8x16 per thread",
       arch::cp_async, kernel_cp_async_128x256_k16_s4, cfg_128x256_k16_s4::smem_bytes},
      {"cp_async_256x128", launch_cp_async_256x128, attributes_cp_async_256x128, false,
       "cp.async 3-stage pipeline, 256x128x8 tile, 256 threads, 8x16 per thread",
       arch::cp_async, kernel_cp_async_256x128, cfg_256x128::smem_bytes},
      {"cp_async_128x128_w64x64_db", launch_cp_async_128x128_w64x64_db, attributes_cp_async_128x128_w64x64_db, false,
       "cp_async_128x128_w64x64 with register-double-buffered fragments, barrier inside the last k step",
       arch::cp_async, kernel_cp_async_128x128_w64x64_db, cfg_128x128_w64::smem_bytes},
      {"cp_async_128x256_db", launch_cp_async_128x256_db, attributes_cp_async_128x256_db, false,
       "cp_async_128x256 with register-double-buffered fragments, barrier inside the last k step",
       arch::cp_async, kernel_cp_async_128x256_db, cfg_128x256::smem_bytes},
      {"cp_async_128x256_k16_db", launch_cp_async_128x256_k16_db, attributes_cp_async_128x256_k16_db, false,
       "cp_async_128x256_k16 with register-double-buffered fragments, barrier inside the last k step",
       arch::cp_async, kernel_cp_async_128x256_k16_db, cfg_128x256_k16::smem_bytes},
      {"cp_async_64x64", launch_cp_async_64x64, attributes_cp_async_64x64, false,
       "cp.async 4-stage pipeline, 64x64x8 tile, 128 threads, 4x8 per thread (small shapes)",
       arch::cp_async, kernel_cp_async_64x64, cfg_64x64::smem_bytes},
  };
  return table;
}

variant_entry const* find_variant(std::string const& name) {
  for (auto const& v : variants())
    if (name == v.name) return &v;
  return nullptr;
}

}  // namespace detail::gemm

std::vector<std::string> gemm_variants() {
  std::vector<std::string> names;
  for (auto const& v : detail::gemm::variants()) names.emplace_back(v.name);
  return names;
}

bool gemm_variant_needs_alignment(std::string const& variant) {
  auto const* v = detail::gemm::find_variant(variant);
  MEMLAB_EXPECTS(v != nullptr, "unknown gemm variant '" + variant + "'");
  return v->needs_vector_alignment;
}

std::string gemm_variant_unavailable(std::string const& variant, gemm_target const& t) {
  auto const* v = detail::gemm::find_variant(variant);
  MEMLAB_EXPECTS(v != nullptr, "unknown gemm variant '" + variant + "'");
  if (v->needs_arch > 0) {
    std::string why = format_unavailable(v->needs_arch, "cp.async", t.image_arch, t.device_cc, t.jit);
    if (!why.empty()) return why;
  }
  if (static_cast<std::size_t>(v->dynamic_smem_bytes) > t.smem_per_block_optin_bytes)
    return std::to_string(v->dynamic_smem_bytes) + " bytes of shared memory per block; this device allows " +
           std::to_string(t.smem_per_block_optin_bytes);
  return {};
}

std::string gemm_select_variant(std::int64_t m, std::int64_t n, std::int64_t k, gemm_target const& t) {
  // Fewer 128x128 tiles than SMs leaves most of the chip idle: 64x64 tiles give 4x the
  // blocks. Otherwise the 128x256 / 8x16-per-thread pipeline with double-buffered
  // fragments; when k is not a multiple of 8 no tile takes the unpredicated interior
  // path, and there BK = 16 halves the per-slice bounds work (docs/gemm-notes.md, step 4).
  // Each list falls back to smaller tiles where shared memory is short, and to the
  // register-staged warp_tiled kernel where the binary's code has no cp.async (below sm_80).
  std::int64_t const tiles = ((m + 127) / 128) * ((n + 127) / 128);
  std::vector<char const*> candidates;
  if (tiles < t.sm_count)
    candidates = {"cp_async_64x64"};
  else if (k % 8 != 0)
    candidates = {"cp_async_128x256_k16_db", "cp_async_128x256_db", "cp_async_128x128_w64x64_db", "cp_async_64x64"};
  else
    candidates = {"cp_async_128x256_db", "cp_async_128x128_w64x64_db", "cp_async_64x64"};
  candidates.push_back("warp_tiled");
  for (char const* name : candidates)
    if (gemm_variant_unavailable(name, t).empty()) return name;
  return "smem_tiled";  // 8 KB of static shared memory: runs on every CUDA device
}

gemm_target gemm_current_target() {
  // Single attribute reads, not query_device (every property): this runs on each default call.
  int dev = 0, major = 0, minor = 0, sms = 0, optin = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  // Every GEMM file is compiled with the same architectures: one kernel tells the image.
  kernel_image const img = image_of(detail::gemm::kernel_cp_async_64x64());
  gemm_target t;
  t.sm_count = sms;
  t.smem_per_block_optin_bytes = static_cast<std::size_t>(optin);
  t.image_arch = img.ptx_arch;
  t.device_cc = major * 10 + minor;
  t.jit = img.jit();
  return t;
}

std::string gemm_default_variant(std::int64_t m, std::int64_t n, std::int64_t k) {
  return gemm_select_variant(m, n, k, gemm_current_target());
}

void gemm(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float const* a, std::int64_t lda,
          float const* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream,
          std::string const& variant) {
  using namespace detail::gemm;
  MEMLAB_EXPECTS(m >= 0 && n >= 0 && k >= 0, "m, n and k must be >= 0");
  MEMLAB_EXPECTS(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX, "m, n and k must fit in 32 bits");
  MEMLAB_EXPECTS(lda >= (k > 1 ? k : 1), "lda must be >= max(1, k) (A is m x k, row-major)");
  MEMLAB_EXPECTS(ldb >= (n > 1 ? n : 1), "ldb must be >= max(1, n) (B is k x n, row-major)");
  MEMLAB_EXPECTS(ldc >= (n > 1 ? n : 1), "ldc must be >= max(1, n) (C is m x n, row-major)");
  variant_entry const* v = nullptr;
  if (!variant.empty()) {
    v = find_variant(variant);
    MEMLAB_EXPECTS(v != nullptr, "unknown gemm variant '" + variant + "'");
  }
  if (m == 0 || n == 0) return;
  MEMLAB_EXPECTS(c != nullptr, "C is null");
  MEMLAB_EXPECTS(k == 0 || (a != nullptr && b != nullptr), "A or B is null");
  // 32x32 tiles are the smallest any variant uses; the 1D grid must hold them all.
  MEMLAB_EXPECTS(((m + 31) / 32) * ((n + 31) / 32) <= INT_MAX, "m x n too large for one launch");
  if (v == nullptr) {  // the dispatcher (gemm_select): tile, split of K, or the skinny kernels
    gemm_params q;
    q.m = m, q.n = n, q.k = k, q.alpha = alpha, q.beta = beta;
    q.a = a, q.lda = lda, q.b = b, q.ldb = ldb, q.c = c, q.ldc = ldc, q.stream = stream;
    return gemm_ex(q);
  }
  // A variant the binary's code or the device cannot run is refused before any launch:
  // below sm_80 the cp_async_* kernels hold synchronous copies (common.cuh), not cp.async.
  if (v->needs_arch > 0) require_arch(v->kernel(), v->needs_arch, "cp.async");
  if (v->dynamic_smem_bytes > 48 * 1024) {
    int dev = 0, optin = 0;
    MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
    MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    MEMLAB_EXPECTS(v->dynamic_smem_bytes <= optin,
                   std::string("variant '") + v->name + "' needs " + std::to_string(v->dynamic_smem_bytes) +
                       " bytes of shared memory per block; this device allows " + std::to_string(optin));
  }
  problem p;
  p.m = static_cast<int>(m);
  p.n = static_cast<int>(n);
  p.k = static_cast<int>(k);
  p.alpha = alpha;
  p.beta = beta;
  p.a = a;
  p.b = b;
  p.c = c;
  p.lda = lda;
  p.ldb = ldb;
  p.ldc = ldc;
  if (v->needs_vector_alignment && k > 0) {
    auto aligned = [](void const* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
    MEMLAB_EXPECTS(lda % 4 == 0 && ldb % 4 == 0 && aligned(a) && aligned(b),
                   std::string("variant '") + v->name +
                       "' needs 16-byte aligned rows of A and B (lda, ldb multiples of 4, 16-byte aligned pointers)");
  }
  v->launch(p, stream);
}

}  // namespace memlab
