// memlab::gemm_bf16 / gemm_f16 / gemm_e4m3: validation, the rung choice and the dispatch.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <new>
#include <optional>
#include <type_traits>
#include <string>

#include "kernels/gemm/tc/repack.hpp"
#include "kernels/gemm/tc/split_k.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/transpose/launch_tiled.cuh"
#include "memlab/arch.hpp"
#include "memlab/detail/per_device.hpp"
#include "memlab/detail/stream_scratch.hpp"
#include "memlab/device.hpp"
#include "memlab/error.hpp"
#include "memlab/gemm_tc.hpp"

namespace memlab {
namespace detail::gemm_tc {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 const fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    MEMLAB_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || f == nullptr)
      throw memlab::error("gemm_tc: the driver has no cuTensorMapEncodeTiled");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

}  // namespace

cudaMemPool_t scratch_pool() {
  return detail::per_device([] {
    int dev = 0;
    MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t pool = nullptr;
    MEMLAB_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
    std::uint64_t keep = std::uint64_t{64} << 20;
    MEMLAB_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    return pool;
  });
}

namespace {

/// Rows of k elements at any alignment and pitch (`ld`) into rows `ldp` apart, 16-byte aligned: a
/// thread writes one 16-byte chunk (the row's tail past k as zeros) from element loads, which a warp
/// issues over 512 contiguous bytes of its source row (L1 merges them). cudaMemcpy2DAsync took
/// such rows at 1.4 TB/s on the H100 (docs/tc-gemm.md, "Session 22").
template <class T>
__global__ void __launch_bounds__(256) copy_rows_kernel(T const* __restrict__ in, std::int64_t ld, T* __restrict__ out,
                                                        std::int64_t ldp, std::int64_t rows, std::int64_t k) {
  constexpr int per = 16 / static_cast<int>(sizeof(T));
  std::int64_t const chunks = ldp / per, total = rows * chunks;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::int64_t const r = e / chunks, c0 = (e % chunks) * per;
    T const* const src = in + r * ld + c0;
    alignas(16) T v[per];
    if (c0 + per <= k) {
#pragma unroll
      for (int i = 0; i < per; ++i) v[i] = src[i];
    } else {
#pragma unroll
      for (int i = 0; i < per; ++i) v[i] = c0 + i < k ? src[i] : T(0);
    }
    *reinterpret_cast<uint4*>(out + r * ldp + c0) = *reinterpret_cast<uint4 const*>(v);
  }
}

}  // namespace

template <class In>
void repack_k_major(In const* in, bool transposed, std::int64_t rows, std::int64_t k, std::int64_t ld, In* out,
                    std::int64_t ldp, cudaStream_t stream) {
  using bits = std::conditional_t<sizeof(In) == 1, std::uint8_t, std::uint16_t>;
  if (!transposed) {
    std::int64_t const chunks = rows * (ldp * static_cast<std::int64_t>(sizeof(In)) / 16);
    auto const grid = static_cast<unsigned>(std::min<std::int64_t>((chunks + 255) / 256, std::int64_t{current_device_sm_count()} * 16));
    copy_rows_kernel<bits><<<grid, 256, 0, stream>>>(reinterpret_cast<bits const*>(in), ld, reinterpret_cast<bits*>(out),
                                                     ldp, rows, k);
    MEMLAB_CHECK_LAUNCH();
    return;
  }
  // Stored k x rows: its transpose is rows x k, by memlab::transpose's 64 x 64 tile kernels (on
  // 32-bit words of two 16-bit elements where the sizes and the alignment allow).
  auto const r = static_cast<std::size_t>(k), c = static_cast<std::size_t>(rows);
  auto const li = static_cast<std::size_t>(ld), lo = static_cast<std::size_t>(ldp);
  if constexpr (sizeof(In) == 2)
    kernels::transpose::launch_transpose_16bit(reinterpret_cast<bits const*>(in), reinterpret_cast<bits*>(out), r, c, li, lo, stream);
  else
    kernels::transpose::launch_tile64<bits>(reinterpret_cast<bits const*>(in), reinterpret_cast<bits*>(out), r, c, li, lo, stream);
}
template void repack_k_major<__nv_bfloat16>(__nv_bfloat16 const*, bool, std::int64_t, std::int64_t, std::int64_t,
                                            __nv_bfloat16*, std::int64_t, cudaStream_t);
template void repack_k_major<__half>(__half const*, bool, std::int64_t, std::int64_t, std::int64_t, __half*, std::int64_t,
                                     cudaStream_t);
template void repack_k_major<__nv_fp8_e4m3>(__nv_fp8_e4m3 const*, bool, std::int64_t, std::int64_t, std::int64_t,
                                            __nv_fp8_e4m3*, std::int64_t, cudaStream_t);

void make_tensor_map(void* tmap, void const* base, gemm_tc_input type, std::int64_t rows, std::int64_t k, std::int64_t ld,
                     int box_rows) {
  cuuint64_t const elem = type == gemm_tc_input::e4m3 ? 1 : 2;
  cuuint64_t const dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  cuuint64_t const strides[1] = {static_cast<cuuint64_t>(ld) * elem};
  cuuint32_t const box[2] = {static_cast<cuuint32_t>(128 / elem), static_cast<cuuint32_t>(box_rows)};
  cuuint32_t const elem_strides[2] = {1, 1};
  // FP8 has no tensor-map type of its own: TMA copies bytes, and zero bytes are E4M3 zeros.
  CUtensorMapDataType const dtype = type == gemm_tc_input::f16    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                    : type == gemm_tc_input::e4m3 ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                                                 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  // L2 promotion by 128 bytes, a box row's: 256-byte promotion moved 8-11% more bytes through L2
  // and, where rows straddle 128-byte lines (k = 3000 in BF16: rows 6000 bytes apart), took
  // 3000x4000x3000 from 0.97-0.99 of cuBLAS to 0.85-0.86 (docs/tc-gemm.md, "Session 19").
  CUresult const r = encode_fn()(static_cast<CUtensorMap*>(tmap), dtype,
                                 2, const_cast<void*>(base), dims, strides, box, elem_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw memlab::error("gemm_tc: cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) + ") for a " +
                        std::to_string(rows) + " x " + std::to_string(k) + " operand, ld " + std::to_string(ld));
}

void make_store_map(void* tmap, void* base, bool f32, bool f16, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                    int box_rows, int box_bytes, bool tail) {
  MEMLAB_EXPECTS(box_bytes > 0 && box_bytes <= 128 && box_bytes % 16 == 0, "gemm_tc: a C box row is 16 to 128 bytes, a multiple of 16");
  std::int64_t const elem = f32 ? 4 : 2;
  cuuint64_t const dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  cuuint64_t const strides[1] = {static_cast<cuuint64_t>(ld * elem)};
  cuuint32_t const box[2] = {static_cast<cuuint32_t>(box_bytes / elem), static_cast<cuuint32_t>(box_rows)};
  cuuint32_t const elem_strides[2] = {1, 1};
  CUtensorMapDataType const type =
      f32 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32 : (f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  CUresult const r = encode_fn()(static_cast<CUtensorMap*>(tmap), type, 2, base, dims, strides, box, elem_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE,
                                 tail                ? CU_TENSOR_MAP_SWIZZLE_NONE
                                 : box_bytes == 128  ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : box_bytes == 64   ? CU_TENSOR_MAP_SWIZZLE_64B
                                                     : CU_TENSOR_MAP_SWIZZLE_NONE,
                                 CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw memlab::error("gemm_tc: cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) + ") for a " +
                        std::to_string(rows) + " x " + std::to_string(cols) + " output, ld " + std::to_string(ld));
}

namespace {
std::atomic<transposed_mode> transposed_choice{transposed_mode::as_stored};
}  // namespace

void set_gemm_tc_transposed_mode(transposed_mode mode) { transposed_choice.store(mode); }
transposed_mode gemm_tc_transposed_mode() { return transposed_choice.load(); }

}  // namespace detail::gemm_tc

namespace {

/// `automatic` on sm_90a takes rung 6, which beat rung 5 in the same run on 15 of the 16 measured
/// H200 rows (BF16 8192^3 1.357 against 1.672 ms; docs/tc-gemm.md, "Rung 6: measured"), except
/// where m <= 128 (a pair's second CTA would idle) and where rung 5 runs few tiles faster
/// (persistent_takes_few_tiles in split_k.hpp; BF16 and FP16, "Session 31"). Host code, no CUDA
/// calls: rung 5's plan is asked as if the device ran every cluster of its split at once, which
/// the launch then checks (launch_persistent may take a smaller split or no split).
bool persistent_first(gemm_tc_shape const& s, gemm_tc_target const& t) {
  using namespace detail::gemm_tc;
  if (s.m <= 128) return true;
  if (s.input == gemm_tc_input::e4m3) return false;  // FP8 few-tile shapes were not measured
  int const nk = static_cast<int>((s.k + 63) / 64);
  persistent_plan const plan =
      plan_persistent(s.m, s.n, nk, t.sm_count, [](int, unsigned) { return std::numeric_limits<int>::max(); },
                      s.op_b == gemm_op::n);  // B stored k x n: rung 5 reads it in place
  return persistent_takes_few_tiles(plan, nk);
}

constexpr int last_rung = 6;
char const* const rung_names[] = {"automatic",        "wmma",       "mma_sync", "tma_wgmma",
                                  "warp_specialized", "persistent", "cluster"};

std::string op_text(gemm_op a, gemm_op b) {
  return std::string(1, static_cast<char>(a)) + static_cast<char>(b);
}

template <class In, class Out>
void run(char const* fn, gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
         In const* a, std::int64_t lda, In const* b, std::int64_t ldb, float beta, Out* c, std::int64_t ldc,
         cudaStream_t stream, gemm_tc_rung rung) {
  using namespace detail::gemm_tc;
  auto fail = [&](std::string const& why) { throw memlab::error(std::string(fn) + ": " + why); };
  if (op_a != gemm_op::n && op_a != gemm_op::t) fail("op_a must be gemm_op::n or gemm_op::t");
  if (op_b != gemm_op::n && op_b != gemm_op::t) fail("op_b must be gemm_op::n or gemm_op::t");
  if (m < 0 || n < 0 || k < 0)
    fail("m, n, k must be >= 0 (got " + std::to_string(m) + ", " + std::to_string(n) + ", " + std::to_string(k) + ")");
  if (static_cast<int>(rung) < 0 || static_cast<int>(rung) > last_rung) fail("unknown rung " + std::to_string(static_cast<int>(rung)));
  std::int64_t const a_cols = op_a == gemm_op::n ? k : m;  // stored row length
  std::int64_t const b_cols = op_b == gemm_op::n ? n : k;
  if (lda < std::max<std::int64_t>(a_cols, 1)) fail("lda = " + std::to_string(lda) + " < " + std::to_string(a_cols));
  if (ldb < std::max<std::int64_t>(b_cols, 1)) fail("ldb = " + std::to_string(ldb) + " < " + std::to_string(b_cols));
  if (ldc < std::max<std::int64_t>(n, 1)) fail("ldc = " + std::to_string(ldc) + " < n = " + std::to_string(n));
  if (m == 0 || n == 0) return;
  if (c == nullptr) fail("c is null");
  bool const uses_ab = k > 0 && alpha != 0.f;
  if (uses_ab && (a == nullptr || b == nullptr)) fail("a or b is null");
  // Tile counts and TMA coordinates are 32-bit.
  if (m > (std::int64_t{1} << 31) - 256 || n > (std::int64_t{1} << 31) - 256 || k > (std::int64_t{1} << 31) - 256)
    fail("m, n, k must be below 2^31 - 256");

  problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = a;
  p.b = b;
  p.a_si = op_a == gemm_op::n ? lda : 1;
  p.a_sk = op_a == gemm_op::n ? 1 : lda;
  p.b_sj = op_b == gemm_op::t ? ldb : 1;
  p.b_sk = op_b == gemm_op::t ? 1 : ldb;
  p.c = c;
  p.ldc = ldc;
  p.alpha = alpha;
  p.beta = beta;
  p.c_f32 = std::is_same_v<Out, float>;
  p.c_pair = ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(c) % (2 * sizeof(Out)) == 0;

  gemm_tc_shape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.op_a = op_a;
  s.op_b = op_b;
  constexpr bool e4m3 = operand_traits<In>::type == gemm_tc_input::e4m3;
  s.input = operand_traits<In>::type;
  auto aligned16 = [](void const* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; };
  std::int64_t const ld_multiple = 16 / static_cast<std::int64_t>(sizeof(In));  // rows of whole 16-byte units
  // Alignment matters only where A and B are read (k = 0 or alpha = 0 scales C alone).
  s.aligned = !uses_ab || (aligned16(a) && aligned16(b) && lda % ld_multiple == 0 && ldb % ld_multiple == 0);
  gemm_tc_target const target = gemm_tc_current_target();
  gemm_tc_rung chosen = rung;
  // `automatic` with a layout or alignment only wmma takes: where the problem is large enough,
  // the operand that is not K-major and 16-byte aligned is first copied into K-major rows of whole
  // 16-byte units in stream-ordered scratch (a transpose, or a row copy; one read and one
  // write of it), and the rung the canonical layout gets runs on the copy. With no room in the
  // pool for the copy the call stays on wmma. docs/tc-gemm.md, "Other layouts".
  std::optional<detail::stream_scratch> packed_a, packed_b;
  bool const a_fast = k_major_ready(op_a == gemm_op::n, a, lda, sizeof(In));
  bool const b_fast = k_major_ready(op_b == gemm_op::t, b, ldb, sizeof(In));
  bool const b_kn = k_major_ready(op_b == gemm_op::n, b, ldb, sizeof(In));  // stored k x n, rows of 16-byte units
  bool const a_km = k_major_ready(op_a == gemm_op::t, a, lda, sizeof(In));  // stored k x m, likewise
  if (rung == gemm_tc_rung::automatic && uses_ab) {
    if (repack_plan const plan = plan_repack(s, a_fast, b_fast, target, b_kn, a_km); plan.rung != gemm_tc_rung::automatic) {
      std::int64_t const ldp = (k + ld_multiple - 1) / ld_multiple * ld_multiple;
      auto bytes = [&](std::int64_t rows) { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(ldp) * sizeof(In); };
      if (plan.a) packed_a.emplace(bytes(m), stream, scratch_pool(), std::nothrow);
      if (plan.b) packed_b.emplace(bytes(n), stream, scratch_pool(), std::nothrow);
      if ((!plan.a || packed_a->get() != nullptr) && (!plan.b || packed_b->get() != nullptr)) {
        if (plan.a) {
          repack_k_major(a, op_a == gemm_op::t, m, k, lda, static_cast<In*>(packed_a->get()), ldp, stream);
          p.a = packed_a->get();
          p.a_si = ldp;
          p.a_sk = 1;
        }
        if (plan.b) {
          repack_k_major(b, op_b == gemm_op::n, n, k, ldb, static_cast<In*>(packed_b->get()), ldp, stream);
          p.b = packed_b->get();
          p.b_sj = ldp;
          p.b_sk = 1;
        }
        s.op_a = gemm_op::n;  // a plan copies A wherever A is not canonical (plan_repack)
        if (plan.b) s.op_b = gemm_op::t;  // else B is canonical, or stored k x n and read as it is (b_kn)
        s.aligned = true;
        chosen = plan.rung;
      }
    }
  }
  if (rung == gemm_tc_rung::automatic && chosen == gemm_tc_rung::automatic) {
    chosen = gemm_tc_select(s, target);
    // The rung whose reason the call gives when none can run: the one that takes the most.
    if (chosen == gemm_tc_rung::automatic)
      fail(gemm_tc_unavailable(e4m3 ? gemm_tc_rung::mma_sync : gemm_tc_rung::wmma, s, target));
  } else if (auto why = gemm_tc_unavailable(chosen, s, target); !why.empty()) {
    fail(why);
  }
  if (!uses_ab) {  // C = beta * C: no operand is read
    launch_scale_c<typename operand_traits<In>::c16>(p, stream);
    return;
  }
  switch (chosen) {
    case gemm_tc_rung::wmma:  // no FP8 wmma kernel: gemm_tc_unavailable refused the rung above
      if constexpr (!e4m3) launch_wmma<In>(p, stream);
      break;
    case gemm_tc_rung::mma_sync: launch_mma_sync<In>(p, stream, target.sm_count); break;
    case gemm_tc_rung::tma_wgmma: launch_tma_wgmma<In>(p, stream); break;
    case gemm_tc_rung::warp_specialized: launch_warp_specialized<In>(p, stream); break;
    case gemm_tc_rung::persistent: launch_persistent<In>(p, stream, target.sm_count); break;
    case gemm_tc_rung::cluster: launch_cluster<In>(p, stream); break;
    default: fail("no rung");
  }
}

}  // namespace

std::vector<std::string> gemm_tc_rung_names() { return {rung_names + 1, rung_names + last_rung + 1}; }

std::string gemm_tc_rung_name(gemm_tc_rung rung) {
  int const i = static_cast<int>(rung);
  MEMLAB_EXPECTS(i >= 0 && i <= last_rung, "unknown rung " + std::to_string(i));
  return rung_names[i];
}

gemm_tc_rung gemm_tc_rung_from_name(std::string const& name) {
  for (int i = 0; i <= last_rung; ++i)
    if (name == rung_names[i]) return static_cast<gemm_tc_rung>(i);
  MEMLAB_EXPECTS(false, "unknown tensor-core GEMM rung '" + name + "'");
  return gemm_tc_rung::automatic;
}

gemm_tc_target gemm_tc_current_target() {
  int dev = 0, major = 0, minor = 0, sms = 0, optin = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  gemm_tc_target t;
  t.image_arch = compiled_arch(detail::gemm_tc::kernel_mma_sync());
  t.sm90a = t.image_arch >= 90 && memlab::image_has_sm90a();
  t.device_cc = major * 10 + minor;
  t.smem_per_block_optin_bytes = static_cast<std::size_t>(optin);
  t.sm_count = sms;
  return t;
}

std::string gemm_tc_unavailable(gemm_tc_rung rung, gemm_tc_shape const& s, gemm_tc_target const& t) {
  using namespace detail::gemm_tc;
  int const r = static_cast<int>(rung);
  if (r < 1 || r > last_rung) return "rung '" + (r == 0 ? std::string("automatic") : std::to_string(r)) + "' is not a rung";
  std::string const name = rung_names[r];
  bool const e4m3 = s.input == gemm_tc_input::e4m3;
  if (e4m3 && rung == gemm_tc_rung::wmma)
    return name + " has no FP8 kernel: E4M3 inputs run on mma_sync (sm_89+) and the wgmma rungs (3-6)";
  int const needed_for_type = s.input == gemm_tc_input::f16 ? 75 : e4m3 ? 89 : 80;
  char const* const type_text = s.input == gemm_tc_input::f16 ? "FP16 tensor cores"
                                : e4m3                        ? "FP8 tensor cores"
                                                              : "BF16 tensor cores";
  if (auto why = format_unavailable(needed_for_type, type_text, t.image_arch, t.device_cc, false); !why.empty())
    return why;
  if (rung == gemm_tc_rung::wmma) return {};
  // Rung 2 needs cp.async (sm_80); its FP16 kernel for Turing loads through registers and needs
  // ldmatrix and mma.sync m16n8k8 (sm_75).
  if (rung == gemm_tc_rung::mma_sync) {
    bool const f16 = s.input == gemm_tc_input::f16;
    if (auto why = format_unavailable(f16 ? 75 : arch::cp_async, f16 ? "ldmatrix and mma.sync m16n8k8" : "cp.async and ldmatrix",
                                      t.image_arch, t.device_cc, false);
        !why.empty())
      return why;
  }
  // Rungs 4-6 also read a B stored k x n as it is, and rung 6 an A stored k x m (wgmma's MN-major
  // operands, BF16 and FP16 only; rung 6 on its cooperative kernels).
  bool const reads_b_kn = (rung == gemm_tc_rung::warp_specialized || rung == gemm_tc_rung::persistent ||
                           rung == gemm_tc_rung::cluster) && !e4m3;
  bool const reads_a_km = rung == gemm_tc_rung::cluster && !e4m3;
  if ((s.op_a != gemm_op::n && !reads_a_km) || (s.op_b != gemm_op::t && !reads_b_kn))
    return name + " needs op_a = n, op_b = t (both operands K-major)" +
           (reads_a_km   ? std::string(", or either stored transposed (A k x m, B k x n)")
            : reads_b_kn ? std::string(" or op_b = n (B stored k x n)")
                         : std::string()) +
           "; got " + op_text(s.op_a, s.op_b);
  if (!s.aligned)
    return name + " needs 16-byte aligned A and B with lda and ldb multiples of " + (e4m3 ? "16" : "8");
  std::size_t smem = smem_mma_sync();
  if (rung != gemm_tc_rung::mma_sync) {
    if (!t.sm90a || t.device_cc < 90)
      return name + " needs TMA and wgmma: an sm_90a image on a compute capability 9.0 device (image " +
             std::to_string(t.image_arch) + (t.sm90a ? "a" : "") + ", device " + std::to_string(t.device_cc) + ")";
    smem = rung == gemm_tc_rung::tma_wgmma ? smem_tma_wgmma()
           : rung == gemm_tc_rung::cluster ? smem_cluster()
                                            : smem_warp_specialized();
  }
  if (smem > t.smem_per_block_optin_bytes)
    return name + " needs " + std::to_string(smem) + " bytes of shared memory per block; this device allows " +
           std::to_string(t.smem_per_block_optin_bytes);
  return {};
}

gemm_tc_rung gemm_tc_select(gemm_tc_shape const& s, gemm_tc_target const& t) {
  // On sm_90a rung 6, or rung 5 first where m <= 128 or it runs few tiles faster (persistent_first;
  // rung 6 second there where m > 128: it reads an A stored k x m, rung 5 does not); below sm_90a
  // the mma.sync pipeline; wmma takes the layouts and alignments the others cannot.
  // FP8 takes the same order, down to mma.sync (sm_89): gemm_tc_unavailable refuses it wmma.
  bool const rung5 = persistent_first(s, t);
  gemm_tc_rung const first = rung5 ? gemm_tc_rung::persistent : gemm_tc_rung::cluster;
  gemm_tc_rung const second = rung5 && s.m > 128 ? gemm_tc_rung::cluster : gemm_tc_rung::persistent;
  for (gemm_tc_rung r : {first, second, gemm_tc_rung::mma_sync, gemm_tc_rung::wmma})
    if (gemm_tc_unavailable(r, s, t).empty()) return r;
  return gemm_tc_rung::automatic;
}

void gemm_bf16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_bfloat16 const* a, std::int64_t lda, __nv_bfloat16 const* b, std::int64_t ldb, float beta,
               __nv_bfloat16* c, std::int64_t ldc, cudaStream_t stream, gemm_tc_rung rung) {
  run("gemm_bf16", op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream, rung);
}
void gemm_bf16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_bfloat16 const* a, std::int64_t lda, __nv_bfloat16 const* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc, cudaStream_t stream, gemm_tc_rung rung) {
  run("gemm_bf16", op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream, rung);
}
void gemm_f16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, __half const* a,
              std::int64_t lda, __half const* b, std::int64_t ldb, float beta, __half* c, std::int64_t ldc,
              cudaStream_t stream, gemm_tc_rung rung) {
  run("gemm_f16", op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream, rung);
}
void gemm_f16(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, __half const* a,
              std::int64_t lda, __half const* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
              cudaStream_t stream, gemm_tc_rung rung) {
  run("gemm_f16", op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream, rung);
}

void gemm_e4m3(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_fp8_e4m3 const* a, std::int64_t lda, __nv_fp8_e4m3 const* b, std::int64_t ldb, float beta,
               __nv_bfloat16* c, std::int64_t ldc, cudaStream_t stream, gemm_tc_rung rung) {
  run("gemm_e4m3", op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream, rung);
}
void gemm_e4m3(gemm_op op_a, gemm_op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
               __nv_fp8_e4m3 const* a, std::int64_t lda, __nv_fp8_e4m3 const* b, std::int64_t ldb, float beta, float* c,
               std::int64_t ldc, cudaStream_t stream, gemm_tc_rung rung) {
  run("gemm_e4m3", op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream, rung);
}

}  // namespace memlab
