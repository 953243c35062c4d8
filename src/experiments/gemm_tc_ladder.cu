// gemm.tc_ladder: the tensor-core GEMM ladder (BF16 and FP16 inputs, FP32 accumulation) against
// two peers timed in the same run: cublasGemmEx (FP32 compute, CUBLAS_DEFAULT_MATH, its default
// algorithm) and cublasLt at the fastest of its heuristic's candidates for the shape; the row's
// ratio is to the faster of the two. Canonical layout y = x W^T (A m x k row-major, B stored
// n x k): the layout every rung takes. docs/tc-gemm.md.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bench/experiment.hpp"
#include "bench/state.hpp"
#include "experiments/cublas.cuh"
#include "experiments/cublaslt.cuh"
#include "experiments/gemm_streamed_weights.hpp"
#include "experiments/gemm_support.cuh"
#include "experiments/seeded_fill.cuh"
#include "kernels/ceilings/tensor_peak.hpp"
#include "kernels/gemm/tc/cluster_plan.hpp"
#include "kernels/gemm/tc/repack.hpp"
#include "kernels/gemm/tc/split_k.hpp"
#include "kernels/gemm/tc/tc_kernels.hpp"
#include "kernels/gemm/tc/tolerance.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"
#include "memlab/gemm_tc.hpp"

namespace {
using namespace memlab;

using experiments::gemm::parse_shape;
using experiments::gemm::shape;

/// Seeded uniform [-1, 1) values rounded to T. `bf16_values`: rounded to BF16 first (7
/// mantissa bits), then stored as T (exact in FP16 but for the few below FP16's normal range).
template <class T>
__global__ void fill_16bit(T* out, std::size_t n, std::uint64_t seed, bool bf16_values) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    float v = memlab::experiments::seeded_value<float>(seed, i);
    if (bf16_values) v = __bfloat162float(__float2bfloat16_rn(v));
    if constexpr (std::is_same_v<T, __half>) out[i] = __float2half_rn(v);
    else out[i] = __float2bfloat16_rn(v);
  }
}

/// Seeded uniform [-1, 1) values rounded to FP8 E4M3 (to nearest, saturating).
__global__ void fill_e4m3(__nv_fp8_e4m3* out, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = __nv_fp8_e4m3(memlab::experiments::seeded_value<float>(seed, i));
}

/// E4M3 to BF16, exactly (3 mantissa bits and exponents 2^-9..2^8 fit BF16's 7 and 8): the
/// reference multiplies the same numbers through cublasGemmEx.
__global__ void widen_e4m3(__nv_fp8_e4m3 const* in, __nv_bfloat16* out, std::size_t n) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(static_cast<float>(in[i]));
}

template <class T>
__device__ inline float as_float(T v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else return __bfloat162float(v);
}

struct cmp_result {
  unsigned int max_ratio_bits;
  unsigned long long bad;
  unsigned long long first_bad;
};

template <class T>
__global__ void compare_kernel(T const* got, float const* ref, long long rows, long long cols, double rel, double abs_tol,
                               cmp_result* out) {
  long long const total = rows * cols;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<long long>(gridDim.x) * blockDim.x) {
    float const g = as_float(got[e]), r = ref[e];
    float ratio = static_cast<float>(std::fabs(static_cast<double>(g) - r) / (abs_tol + rel * std::fabs(static_cast<double>(r))));
    if (!isfinite(g) || !isfinite(r) || !isfinite(ratio)) ratio = INFINITY;  // NaN never passes
    atomicMax(&out->max_ratio_bits, __float_as_uint(ratio));
    if (!(ratio <= 1.f)) {
      atomicAdd(&out->bad, 1ull);
      atomicMin(&out->first_bad, static_cast<unsigned long long>(e));
    }
  }
}

/// |ours - ref| <= abs + rel |ref|: abs grows with k (FP32 accumulation in a different order, and
/// the tensor cores' own alignment of the products), rel is one unit in the last place of the
/// output type (ours is rounded once, the FP32 reference is not).
double abs_tol(long long k) { return detail::gemm_tc::abs_tolerance_16bit(k); }
double rel_tol(std::string const& out, bool f16) {
  if (out == "f32") return 0x1p-20;
  return f16 ? 0x1p-10 : 0x1p-7;
}

template <class T>
bench::verification compare(T const* got, float const* ref, long long m, long long n, double rel, double abs,
                            std::string const& ref_text = "cublasGemmEx FP32 compute") {
  device_buffer<cmp_result> res(1);
  cmp_result init{0u, 0ull, ~0ull};
  MEMLAB_CUDA_CHECK(cudaMemcpy(res.data(), &init, sizeof init, cudaMemcpyHostToDevice));
  compare_kernel<T><<<2048, 256>>>(got, ref, m, n, rel, abs, res.data());
  MEMLAB_CHECK_LAUNCH();
  cmp_result h{};
  MEMLAB_CUDA_CHECK(cudaMemcpy(&h, res.data(), sizeof h, cudaMemcpyDeviceToHost));
  bench::verification v;
  float ratio = 0.f;
  std::memcpy(&ratio, &h.max_ratio_bits, sizeof ratio);
  v.error = ratio;
  v.tolerance = 1.0;
  v.metric = "max |err| / (abs + rel |ref|)";
  v.status = h.bad == 0 ? bench::verdict::passed : bench::verdict::failed;
  v.detail = h.bad == 0 ? "vs " + ref_text + ", abs tol " + std::to_string(abs) + ", rel " + std::to_string(rel)
                        : std::to_string(h.bad) + " elements out of tolerance; first at (" +
                              std::to_string(h.first_bad / n) + ", " + std::to_string(h.first_bad % n) + ")";
  return v;
}

/// Row-major C = op(A) op(B) for any layout through column-major cublasGemmEx: C^T = op(B)^T op(A)^T.
void cublas_gemm_layout(cudaStream_t st, bool f16, bool out_f32, int m, int n, int k, gemm_op oa, gemm_op ob,
                        void const* a, int lda, void const* b, int ldb, void* c) {
  float const alpha = 1.f, beta = 0.f;
  cudaDataType_t const in = f16 ? CUDA_R_16F : CUDA_R_16BF;
  cudaDataType_t const out = out_f32 ? CUDA_R_32F : in;
  MEMLAB_CUBLAS_CHECK(cublasSetStream(memlab::experiments::cublas(), st));
  MEMLAB_CUBLAS_CHECK(cublasGemmEx(memlab::experiments::cublas(), ob == gemm_op::t ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   oa == gemm_op::t ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, in, ldb, a, in, lda,
                                   &beta, c, out, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

/// Row-major C = A B^T (A m x k, B stored n x k: the canonical layout), both with row pitch `ld`.
void cublas_gemm(cudaStream_t st, bool f16, bool out_f32, int m, int n, int k, int ld, void const* a, void const* b,
                 void* c) {
  cublas_gemm_layout(st, f16, out_f32, m, n, k, gemm_op::n, gemm_op::t, a, ld, b, ld, c);
}

/// Decode batches stream their weights (docs/timing.md, "Streamed weights"). A point with m <= 128
/// is a few tokens times a weight matrix B that, in a model, was last read a layer's worth of other
/// weights ago: it comes from DRAM. Such a launch takes microseconds, so the harness times it in
/// batches back to back, where a B smaller than the L2 would stay there from one launch to the next
/// and the row would time L2 bandwidth. These points keep copies of B (weight_copies: enough that
/// the others read between two uses of one are at least twice the L2), and each launch (ours, the
/// peers', the cublasLt trial's) takes the next copy through `launcher`. A (the activations) and C
/// stay where the previous launch left them, as in a model. The row's params.b_copies and its
/// timing.cache (bench::state::set_batch_cache) say so. Every decode point's row also takes
/// bench::between_run_noise_floor_streamed_weights: B's pages, so its DRAM channels, differ from run to run.
template <class T>
class weight_ring {
 public:
  weight_ring(bench::state& s, device_buffer<T> const& b, long long m) {
    ptrs_.push_back(b.data());
    double const bytes = static_cast<double>(b.bytes()), l2 = static_cast<double>(s.device().l2_bytes);
    int const copies = experiments::gemm::weight_copies(m, bytes, l2);
    for (int i = 1; i < copies; ++i) {
      extra_.emplace_back(b.size());
      MEMLAB_CUDA_CHECK(cudaMemcpy(extra_.back().data(), b.data(), b.bytes(), cudaMemcpyDeviceToDevice));
      ptrs_.push_back(extra_.back().data());
    }
    if (copies > 1) {
      s.result().params["b_copies"] = copies;
      s.set_batch_cache(experiments::gemm::streamed_weights_text(copies, bytes, l2));
    }
    if (m <= experiments::gemm::decode_max_m)
      s.set_noise_floor(bench::between_run_noise_floor_streamed_weights,
                        "weights streamed from DRAM: another process's B lands on other pages, so other DRAM channels and "
                        "banks (two runs of gemm.tc_decode on each card: their differences up to 1.6%)");
  }
  std::vector<void const*> pointers() const { return {ptrs_.begin(), ptrs_.end()}; }
  /// A launcher that calls `launch(b, stream)` with the next copy of B each time it is called
  /// (a batch's graph capture included: each captured launch keeps its own copy).
  template <class Launch>
  std::function<void(cudaStream_t)> launcher(Launch launch) const {
    return [this, launch, i = std::size_t{0}](cudaStream_t t) mutable { launch(ptrs_[i++ % ptrs_.size()], t); };
  }

 private:
  std::vector<device_buffer<T>> extra_;
  std::vector<T const*> ptrs_;
};

/// cublasLt's pick for one problem: the fastest of up to `lt_candidates` heuristic candidates,
/// timed once per problem (outside the timed region) and reused by every variant's row.
constexpr int lt_candidates = 8;
struct lt_pick {
  cublasLtMatmulHeuristicResult_t algo{};
  nlohmann::json info;
};

lt_pick const& cublaslt_pick(experiments::lt_gemm const& g, std::string const& type_key, bool out_f32, int m, int n,
                             int k, int ld, void const* a, std::vector<void const*> const& bs, void* c, cudaStream_t st) {
  static std::mutex mu;
  static std::map<std::string, lt_pick> cache;
  int dev = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  std::string const key = std::to_string(dev) + "|" + type_key + (out_f32 ? "|f32|" : "|same|") +
                          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "|" + std::to_string(ld) +
                          "|" + std::to_string(bs.size());
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto const cands = g.candidates(lt_candidates);
  if (cands.empty()) throw memlab::error("cublasLt: the heuristic offers no algorithm for " + key);
  std::vector<double> ms;
  std::size_t const best = g.fastest(cands, a, bs, c, st, ms);
  lt_pick p;
  p.algo = cands[best];
  p.info = experiments::describe_lt_algo(cands[best]);
  p.info["candidates"] = cands.size();
  p.info["rank_in_heuristic"] = best;
  p.info["trial_ms"] = ms;
  return cache.emplace(key, std::move(p)).first->second;
}

/// The row's peer and its paired timing: cublasGemmEx with its default algorithm (`gemmex`, given
/// the copy of B to read) and cublasLt at the fastest of its heuristic's candidates (`make_lt`),
/// checked against `ref` like our output. The two are timed in alternation with each other (once a
/// point) and the faster that passes is timed again in alternation with `ours`: at the power cap the
/// clocks move between measurements taken one after the other, and ratio_to_peer should compare like
/// with like. A cublasLt refusal (no algorithm, a status error)
/// leaves cublasGemmEx the peer, with the reason in extra.peers: the row itself does not depend on it.
template <class In, class Out>
void pair_with_cublas(bench::state& s, weight_ring<In> const& ring, std::function<void(cudaStream_t)> const& ours,
                      std::function<void(In const*, cudaStream_t)> const& gemmex,
                      std::function<std::unique_ptr<experiments::lt_gemm>()> const& make_lt, std::string const& lt_key, bool out_f32,
                      int m, int n, int k, int ld_key, In const* a, In const* b, device_buffer<Out>& peer, float const* ref, double rel,
                      double abs) {
  nlohmann::json peers;
  std::string best = "cublasGemmEx";
  std::function<void(cudaStream_t)> best_launch = ring.launcher(gemmex);
  std::unique_ptr<experiments::lt_gemm> lt_kept;  // outlives the try: the paired timing below runs it
  try {
    lt_kept = make_lt();
    experiments::lt_gemm const& lt = *lt_kept;
    cudaStream_t const st = s.stream();
    lt_pick const& pick = cublaslt_pick(lt, lt_key, out_f32, m, n, k, ld_key, a, ring.pointers(), peer.data(), st);
    peer.fill_bytes(0xFF);
    lt.run(pick.algo.algo, a, b, peer.data(), st);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
    bench::verification const lt_check = compare(peer.data(), ref, m, n, rel, abs);
    bool const lt_ok = lt_check.status == bench::verdict::passed;
    auto const algo = pick.algo.algo;
    Out* const c = peer.data();
    auto const lt_launch = ring.launcher([&lt, algo, a, c](In const* bi, cudaStream_t t) { lt.run(algo, a, bi, c, t); });
    peers["cublasLt_check"] = lt_ok ? "passed" : lt_check.detail;
    peers["cublasLt_algo"] = pick.info;
    if (lt_ok) {
      // The two timed in alternation, so that the choice compares them at the same clocks: two
      // measurements one after the other at the power cap picked cublasGemmEx where cublasLt ran
      // 2-4% faster beside it (8192^3, H100 and H200; docs/tc-gemm.md, "Session 33").
      auto const [g, l] = s.measure_paired_once("cublasGemmEx|cublasLt", ring.launcher(gemmex), lt_launch);
      peers["cublasGemmEx_ms"] = g.median;
      peers["cublasLt_ms"] = l.median;
      peers["choice"] = "paired";
      if (l.median < g.median) {
        best = "cublasLt";
        best_launch = lt_launch;
      }
    }
  } catch (memlab::error const& e) {
    peers["cublasLt_error"] = e.what();
  }
  if (!peers.contains("cublasGemmEx_ms"))
    peers["cublasGemmEx_ms"] = s.measure_once("cublasGemmEx", ring.launcher(gemmex)).median;
  s.set_extra("peers", peers);
  s.exec_paired(ours, best, best_launch);
}

/// The row's extra.kernel: what rung `rung` (the one the call runs, begin_point's `ran`) runs for the
/// problem, by its plan; a row `asked` for `automatic` names the rung first. Rungs 2 and 5 name their
/// grid; rung 6 runs one of its kernels by a rule (cluster_plan.hpp), named from what the rule looks at
/// (C's TMA store; whether A's and B's rows, `row_bytes` apart, start on lines or sectors). The FP8
/// kernels' cluster capacities are the BF16 ones' (the same shared memory and registers).
void set_kernel_extra(bench::state& s, gemm_tc_rung asked, gemm_tc_rung rung, bool f16, int m, int n, int k, void const* c,
                      int out_bytes, void const* a, void const* b, std::int64_t row_bytes, int in_bytes) {
  std::string const prefix = asked == gemm_tc_rung::automatic ? gemm_tc_rung_name(rung) + ": " : std::string();
  namespace tc = detail::gemm_tc;
  int const sms = memlab::gemm_tc_current_target().sm_count;
  auto const of_type = [&](auto name) {  // name(T{}) for the row's input type T
    return in_bytes == 1 ? name(__nv_fp8_e4m3{}) : f16 ? name(__half{}) : name(__nv_bfloat16{});
  };
  if (rung == gemm_tc_rung::persistent) {  // its grid: tiles, and where it splits K, how many ways
    s.set_extra("kernel", prefix + of_type([&](auto t) { return tc::persistent_kernel_name<decltype(t)>(m, n, k, sms); }));
    return;
  }
  if (rung == gemm_tc_rung::mma_sync) {  // its stages and blocks an SM, and where it splits K, how many ways
    s.set_extra("kernel", prefix + of_type([&](auto t) { return tc::mma_sync_kernel_name<decltype(t)>(m, n, k, sms); }));
    return;
  }
  if (rung != gemm_tc_rung::cluster) return;
  s.set_extra("kernel", prefix + tc::cluster_kernel_name(f16, m, n, k, tc::cluster_c_tma_store(c, n, out_bytes, 0.f),
                                                         tc::cluster_row_alignment(a, row_bytes, b, row_bytes, in_bytes)));
}

/// The row pitch of A and B in elements: k rounded up to 16 bytes (what TMA and cp.async need), or
/// to the point's `row_align` bytes where it has that axis (gemm.tc_row_pitch).
int row_pitch(bench::state& s, int k, int elem_bytes) {
  int const align = s.has_param("row_align") ? std::stoi(s.get_string("row_align")) : 16;
  int const per = align / elem_bytes;
  return (k + per - 1) / per * per;
}

/// The row is read against the measured peak of the instruction its rung issues (ceilings.tensor):
/// mma.sync for rungs 1-2 (wmma compiles to the same HMMA), wgmma for rungs 3-6.
void set_tensor_peak(bench::state& s, gemm_tc_rung ran, gemm_tc_input input) {
  bool const hmma = ran == gemm_tc_rung::wmma || ran == gemm_tc_rung::mma_sync;
  s.compare_with_tensor_peak(detail::tensor_peak_key(hmma ? detail::tensor_instruction::mma_sync : detail::tensor_instruction::wgmma, input));
}

/// Declares the rows' extra.pct_of_tensor_peak, and has the run measure the ceilings (ceilings.tensor
/// among them) before the experiment.
void read_against_tensor_peak(memlab::bench::experiment& e) {
  e.metrics.push_back({"extra.pct_of_tensor_peak", "%", "TFLOP/s / the run's measured peak of the rung's instruction (ceilings.tensor)"});
  e.ceiling = memlab::bench::ceiling_relation::ratio;
}

/// A and B filled with the point's seeded values (seed, seed ^ 0x5bd1e995), ready on return.
template <class In>
void fill_operands(bench::state& s, device_buffer<In>& a, std::size_t a_elems, device_buffer<In>& b, std::size_t b_elems,
                   bool bf16_values) {
  fill_16bit<In><<<4096, 256>>>(a.data(), a_elems, s.seed(), bf16_values);
  MEMLAB_CHECK_LAUNCH();
  fill_16bit<In><<<4096, 256>>>(b.data(), b_elems, s.seed() ^ 0x5bd1e995u, bf16_values);
  MEMLAB_CHECK_LAUNCH();
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

/// What both point functions below share: the point's sizes, A and B's row pitch in elements
/// (k rounded up to the point's row alignment, in params.ld), and the skip where the rung cannot
/// run the input type on this device or image.
struct point_dims {
  gemm_tc_rung ran;  ///< the rung the call runs (gemm_tc_select's for `automatic`)
  int m, n, k, ld;
  std::size_t mk, nk, mn;  // elements of A, B (pitched) and C
};
point_dims begin_point(bench::state& s, gemm_tc_rung rung, shape sh, gemm_tc_input input, int elem_bytes) {
  point_dims d{};
  d.m = static_cast<int>(sh.m);
  d.n = static_cast<int>(sh.n);
  d.k = static_cast<int>(sh.k);
  gemm_tc_shape gs;
  gs.m = d.m;
  gs.n = d.n;
  gs.k = d.k;
  gs.input = input;
  gemm_tc_target const target = gemm_tc_current_target();
  d.ran = rung == gemm_tc_rung::automatic ? gemm_tc_select(gs, target) : rung;
  if (auto why = gemm_tc_unavailable(d.ran, gs, target); !why.empty()) s.skip(why);
  set_tensor_peak(s, d.ran, input);
  d.ld = row_pitch(s, d.k, elem_bytes);
  s.result().params["ld"] = d.ld;
  d.mk = static_cast<std::size_t>(d.m) * d.ld;
  d.nk = static_cast<std::size_t>(d.n) * d.ld;
  d.mn = static_cast<std::size_t>(d.m) * d.n;
  return d;
}

template <class In>
void run_point(bench::state& s, gemm_tc_rung rung, shape sh, bool out_f32, bool bf16_values) {
  bool const f16 = std::is_same_v<In, __half>;
  // Rows of A and B padded to a multiple of 8 elements (16 bytes: what TMA and cp.async need), so
  // 4097^3 measures the edge tiles, not the wmma fallback an odd leading dimension gets.
  point_dims const d = begin_point(s, rung, sh, f16 ? gemm_tc_input::f16 : gemm_tc_input::bf16, 2);
  int const m = d.m, n = d.n, k = d.k, ld = d.ld;
  std::size_t const mk = d.mk, nk = d.nk, mn = d.mn;
  memlab::experiments::cublas_math_scope const math(CUBLAS_DEFAULT_MATH);
  device_buffer<In> a(mk), b(nk);
  device_buffer<float> ref(mn);
  fill_operands(s, a, mk, b, nk, bf16_values);
  cudaStream_t const st = s.stream();
  cublas_gemm(st, f16, true, m, n, k, ld, a.data(), b.data(), ref.data());
  double const flops = 2.0 * m * n * k;
  s.add_flops(flops);
  s.add_reads<In>(static_cast<std::size_t>(m) * k + static_cast<std::size_t>(n) * k);
  weight_ring<In> const ring(s, b, m);
  auto body = [&](auto* c_tag) {
    using Out = std::remove_pointer_t<decltype(c_tag)>;
    device_buffer<Out> c(mn), peer(mn);
    c.fill_bytes(0xFF);  // NaN poison: an unwritten output fails verification
    auto const ours = ring.launcher([&](In const* bi, cudaStream_t t) {
      if constexpr (f16) gemm_f16(gemm_op::n, gemm_op::t, m, n, k, 1.f, a.data(), ld, bi, ld, 0.f, c.data(), n, t, rung);
      else gemm_bf16(gemm_op::n, gemm_op::t, m, n, k, 1.f, a.data(), ld, bi, ld, 0.f, c.data(), n, t, rung);
    });
    ours(st);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
    s.set_verification(compare(c.data(), ref.data(), m, n, rel_tol(out_f32 ? "f32" : "same", f16), abs_tol(k)));
    set_kernel_extra(s, rung, d.ran, f16, m, n, k, c.data(), sizeof(Out), a.data(), b.data(), 2 * ld, 2);
    s.add_writes<Out>(mn);
    // The peers: cublasGemmEx with its default algorithm (what a cuBLAS user gets) and cublasLt at its best.
    cudaDataType_t const in_t = f16 ? CUDA_R_16F : CUDA_R_16BF;
    pair_with_cublas<In, Out>(
        s, ring, ours, [&](In const* bi, cudaStream_t t) { cublas_gemm(t, f16, out_f32, m, n, k, ld, a.data(), bi, peer.data()); },
        [&] { return std::make_unique<experiments::lt_gemm>(in_t, out_f32 ? CUDA_R_32F : in_t, m, n, k, ld); }, f16 ? "f16" : "bf16",
        out_f32, m, n, k, ld, a.data(), b.data(), peer, ref.data(), rel_tol(out_f32 ? "f32" : "same", f16), abs_tol(k));
  };
  if (out_f32) body(static_cast<float*>(nullptr));
  else body(static_cast<In*>(nullptr));
}

/// FP8 (E4M3) inputs through memlab::gemm_e4m3 (rung 2 or a wgmma rung, 3-6), BF16 or FP32 C. The reference is
/// cublasGemmEx on BF16 copies of the same values (exact), FP32 compute and output; the peer is
/// cublasLt's FP8 GEMM at the fastest of its heuristic's candidates with fast accumulation (the
/// arithmetic our kernels do: docs/tc-gemm.md, "FP8"). cublasLt with its default, promoted
/// accumulation is timed once beside it for the record (extra.peers). cublasGemmEx takes no FP8.
void run_point_e4m3(bench::state& s, gemm_tc_rung rung, shape sh, bool out_f32) {
  using e4m3 = __nv_fp8_e4m3;
  // Rows of whole 16-byte units (TMA; cublasLt's FP8 alike).
  point_dims const d = begin_point(s, rung, sh, gemm_tc_input::e4m3, 1);
  int const m = d.m, n = d.n, k = d.k, ld = d.ld;
  std::size_t const mk = d.mk, nk = d.nk, mn = d.mn;
  memlab::experiments::cublas_math_scope const math(CUBLAS_DEFAULT_MATH);
  device_buffer<e4m3> a(mk), b(nk);
  device_buffer<float> ref(mn);
  fill_e4m3<<<4096, 256>>>(a.data(), mk, s.seed());
  MEMLAB_CHECK_LAUNCH();
  fill_e4m3<<<4096, 256>>>(b.data(), nk, s.seed() ^ 0x5bd1e995u);
  MEMLAB_CHECK_LAUNCH();
  cudaStream_t const st = s.stream();
  {
    device_buffer<__nv_bfloat16> a16(mk), b16(nk);
    widen_e4m3<<<4096, 256>>>(a.data(), a16.data(), mk);
    MEMLAB_CHECK_LAUNCH();
    widen_e4m3<<<4096, 256>>>(b.data(), b16.data(), nk);
    MEMLAB_CHECK_LAUNCH();
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    cublas_gemm(st, false, true, m, n, k, ld, a16.data(), b16.data(), ref.data());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
  }
  s.add_flops(2.0 * m * n * k);
  s.add_reads<e4m3>(static_cast<std::size_t>(m) * k + static_cast<std::size_t>(n) * k);
  double const abs = detail::gemm_tc::abs_tolerance_e4m3(k), rel = rel_tol(out_f32 ? "f32" : "same", false);
  std::string const ref_text = "cublasGemmEx on BF16 copies (exact), FP32 compute";
  weight_ring<e4m3> const ring(s, b, m);
  auto body = [&](auto* c_tag) {
    using Out = std::remove_pointer_t<decltype(c_tag)>;
    device_buffer<Out> c(mn), peer(mn);
    c.fill_bytes(0xFF);  // NaN poison: an unwritten output fails verification
    auto const ours = ring.launcher([&](e4m3 const* bi, cudaStream_t t) {
      gemm_e4m3(gemm_op::n, gemm_op::t, m, n, k, 1.f, a.data(), ld, bi, ld, 0.f, c.data(), n, t, rung);
    });
    ours(st);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
    s.set_verification(compare(c.data(), ref.data(), m, n, rel, abs, ref_text));
    set_kernel_extra(s, rung, d.ran, false, m, n, k, c.data(), sizeof(Out), a.data(), b.data(), ld, 1);
    s.add_writes<Out>(mn);
    cudaDataType_t const out_t = out_f32 ? CUDA_R_32F : CUDA_R_16BF;
    nlohmann::json peers = nlohmann::json::object();
    std::unique_ptr<experiments::lt_gemm> fast;  // outlives the try: the paired timing below runs it
    cublasLtMatmulAlgo_t fast_algo{};
    for (bool const fast_accum : {true, false}) {
      std::string const name = fast_accum ? "cublasLt_fast_accum" : "cublasLt_default_accum";
      try {
        auto lt = std::make_unique<experiments::lt_gemm>(CUDA_R_8F_E4M3, out_t, m, n, k, ld, fast_accum);
        lt_pick const& pick = cublaslt_pick(*lt, fast_accum ? "e4m3_fast" : "e4m3", out_f32, m, n, k, ld, a.data(),
                                            ring.pointers(), peer.data(), st);
        peer.fill_bytes(0xFF);
        lt->run(pick.algo.algo, a.data(), b.data(), peer.data(), st);
        MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
        bench::verification const check = compare(peer.data(), ref.data(), m, n, rel, abs, ref_text);
        auto const& l = *lt;
        auto const algo = pick.algo.algo;
        peers[name + "_ms"] =
            s.measure_once(name, ring.launcher([&](e4m3 const* bi, cudaStream_t t) {
               l.run(algo, a.data(), bi, peer.data(), t);
             })).median;
        peers[name + "_check"] = check.status == bench::verdict::passed ? "passed" : check.detail;
        peers[name + "_err_over_tol"] = check.error;
        peers[name + "_algo"] = pick.info;
        if (fast_accum && check.status == bench::verdict::passed) {
          fast = std::move(lt);
          fast_algo = algo;
        }
      } catch (memlab::error const& e) {
        peers[name + "_error"] = e.what();
      }
    }
    s.set_extra("peers", peers);
    if (fast) {
      experiments::lt_gemm const& l = *fast;
      s.exec_paired(ours, "cublasLt", ring.launcher([&](e4m3 const* bi, cudaStream_t t) {
        l.run(fast_algo, a.data(), bi, peer.data(), t);
      }));
    } else {
      s.exec(ours);  // no verified FP8 peer on this device: the row has no ratio (extra.peers says why)
    }
  };
  if (out_f32) body(static_cast<float*>(nullptr));
  else body(static_cast<__nv_bfloat16*>(nullptr));
}

/// The point's shape (m, n, k into the row's params), for both experiments below.
shape point_shape(bench::state& s) {
  shape const sh = parse_shape(s.get_string("shape"));
  s.result().params["m"] = sh.m;
  s.result().params["n"] = sh.n;
  s.result().params["k"] = sh.k;
  return sh;
}

/// run_point on the point's dtype: bf16, f16, f16_7bit (FP16 holding BF16's values) or e4m3.
void run_dtype(bench::state& s, gemm_tc_rung rung, shape sh, bool out_f32) {
  std::string const dtype = s.get_string("dtype");
  if (dtype == "bf16") run_point<__nv_bfloat16>(s, rung, sh, out_f32, false);
  else if (dtype == "e4m3") run_point_e4m3(s, rung, sh, out_f32);
  else run_point<__half>(s, rung, sh, out_f32, dtype == "f16_7bit");
}

memlab::bench::registrar const reg{[] {
  memlab::bench::experiment e;
  e.id = "gemm.tc_ladder";
  e.paired_in_blocks = true;  // its large rows run at the power cap (docs/timing.md, "Paired in blocks")
  e.description = "Tensor-core GEMM ladder (BF16/FP16 in, FP32 accumulate): wmma .. persistent TMA + wgmma vs cuBLAS";
  e.seed_ref = "001 §1-3, 000 §9.2.3";
  e.axes = {memlab::bench::variant_axis(gemm_tc_rung_names()),
            memlab::bench::string_axis("dtype", {"bf16", "f16"}, {"bf16"}),
            memlab::bench::string_axis("out", {"same", "f32"}, {"same"}),
            memlab::bench::string_axis("shape",
                                       {"4096", "8192", "4097", "3000x5000x2000", "8192x8192x1024", "4096x11008x4096",
                                        "16384x4096x4096", "128x4096x4096", "128x8192x28672"},
                                       {"1024", "1000x1500x700"})};
  e.body = [](memlab::bench::state& s) {
    gemm_tc_rung const rung = gemm_tc_rung_from_name(s.variant());
    std::string const shape_text = s.get_string("shape");
    shape const sh = point_shape(s);
    bool const out_f32 = s.get_string("out") == "f32";
    // FP32 output costs the same MMA work; two shapes show what the wider stores cost.
    if (out_f32 && !s.quick() && shape_text != "4096" && shape_text != "8192x8192x1024")
      s.skip("FP32 output is measured at 4096 and 8192x8192x1024 only (keeps the default run short)");
    // wmma and mma.sync at 8192^3 cost ~10 ms a launch and add nothing the 4096^3 row does not show.
    if ((rung == gemm_tc_rung::wmma) && 2.0 * sh.m * sh.n * sh.k > 1.05 * 2.0 * 4096.0 * 4096.0 * 4096.0)
      s.skip("too slow at this size: the wmma baseline runs up to 4096^3");
    double const predicted[] = {0, 0.25, 0.6, 0.7, 0.95, 1.05, 1.08};
    s.set_predicted({{"ratio_to_peer", predicted[static_cast<int>(rung)]}});
    run_dtype(s, rung, sh, out_f32);
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "", "the ladder's rung: wmma, mma.sync pipeline, TMA + wgmma, warp-specialized, persistent, 2-CTA cluster with B multicast and TMA store");
  e.describe_axis("dtype", "", "input type (BF16 or FP16); accumulation is FP32");
  e.describe_axis("out", "", "output type: the input type (same) or FP32");
  e.describe_axis("shape", "", "n (a cube n x n x n) or m x n x k; A is m x k row-major, B is stored n x k (y = x W^T); "
                               "m = 128: a decode batch of 128 tokens, 128x8192x28672 a 70B model's down projection");
  e.metrics = {metrics::time(), metrics::tflops(), metrics::vs_peer("the faster of cublasGemmEx (default algo) and cublasLt (best of 8 heuristic algos)")};
  read_against_tensor_peak(e);
  e.headline = best_row("Does the best tensor-core rung pass cuBLAS on BF16 8192³?",
                        {{"shape", {"8192"}}, {"dtype", {"bf16"}}, {"out", {"same"}}}, "median_ms", "ratio_to_peer");
  e.prose = {"A tensor-core GEMM built one idea at a time, each rung verified against cublasGemmEx (FP32 compute) and "
             "timed beside it in the same run: WMMA fragments, then mma.sync fed by ldmatrix from a swizzled cp.async "
             "pipeline, then TMA copies into 128-byte-swizzled shared memory read directly by wgmma, then a producer "
             "warpgroup with mbarriers feeding two consumer warpgroups, then one persistent block per SM walking tiles in "
             "an L2-friendly grouped order while the next tile's loads overlap the epilogue, then pairs of blocks in a "
             "cluster sharing B through TMA multicast and storing C through shared memory with TMA.",
             "The jump from mma.sync to wgmma (the register file stops being the bottleneck), the gain of warp "
             "specialization, and whether the persistent rung reaches cuBLAS at the square and the LLM shapes. FP16 "
             "should match BF16. The decode batches (m = 128) read their weights from DRAM as a model would: the 448 MiB B "
             "of 128x8192x28672 by its size, the 32 MiB of 128x4096x4096 because every launch, ours and cuBLAS's, reads "
             "the next of params.b_copies copies of it (timing.cache).",
             ""};
  {
    plot_spec p = bar_plot("gemm_tc_ladder.png", "Tensor-core GEMM ladder: speed as a fraction of cuBLAS", "variant",
                           "ratio_to_peer", {"shape"});
    p.panels = "dtype";
    p.where = {{"out", {"same"}}};
    p.refs = {{"value", "cuBLAS", 1.0}};
    p.model = "predicted.ratio_to_peer";
    e.plots.push_back(p);
    plot_spec q = bar_plot("gemm_tc_tflops.png", "Tensor-core GEMM ladder: TFLOP/s", "variant", "tflops", {"shape"});
    q.panels = "dtype";
    q.where = {{"out", {"same"}}};
    e.plots.push_back(q);
  }
  return e;
}()};

// FP16 runs slower than BF16 at the power cap (docs/tc-gemm.md): same instructions, same bytes.
// The suspect is the data: FP16 keeps 10 mantissa bits where BF16 keeps 7, so the multipliers
// toggle more bits. FP16 inputs holding BF16's values isolate it: if they run at BF16's speed,
// the difference is power, not the kernel.
memlab::bench::registrar const reg_bits{[] {
  memlab::bench::experiment e;
  e.id = "gemm.tc_fp16_bits";
  e.paired_in_blocks = true;  // its large rows run at the power cap (docs/timing.md, "Paired in blocks")
  e.description = "Tensor-core GEMM: BF16, FP16, and FP16 holding BF16's values (7 mantissa bits): does FP16 lose to power?";
  e.seed_ref = "001 §1-3";
  e.default_suite = false;
  e.axes = {memlab::bench::variant_axis({"cluster", "persistent"}, {"cluster"}),
            memlab::bench::string_axis("dtype", {"bf16", "f16", "f16_7bit"}),
            memlab::bench::string_axis("shape", {"4096", "8192", "4096x11008x4096"}, {"1024"})};
  e.body = [](memlab::bench::state& s) {
    run_dtype(s, gemm_tc_rung_from_name(s.variant()), point_shape(s), false);
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "", "the ladder's rung (6: 2-CTA cluster; 5: persistent)");
  e.describe_axis("dtype", "",
                  "inputs: BF16, FP16, or FP16 holding values rounded to BF16 first (the low 3 mantissa bits zero); "
                  "output the input type, FP32 accumulation");
  e.describe_axis("shape", "", "n (a cube) or m x n x k, as gemm.tc_ladder");
  e.metrics = {metrics::time(), metrics::tflops(), metrics::vs_peer("the faster of cublasGemmEx and cublasLt (best of 8), same inputs")};
  read_against_tensor_peak(e);
  e.headline = best_row("Does FP16 holding BF16's values run at BF16's speed?",
                        {{"shape", {"8192"}}, {"variant", {"cluster"}}}, "median_ms", "ratio_to_peer");
  e.prose = {"The same kernels on three inputs of the same shape: BF16, FP16, and FP16 whose values were rounded to "
             "BF16 first. The instructions and the bytes are identical between the two FP16 rows; only the bits the "
             "multipliers see differ. Each row carries the board's power and SM clock (NVML) and the throttle reasons.",
             "If FP16 with 7-bit values runs at BF16's speed and full FP16 slower, FP16's gap is power at the board's "
             "cap, paid by cuBLAS alike (its time is beside each row).",
             ""};
  {
    plot_spec p = bar_plot("gemm_tc_fp16_bits.png", "BF16, FP16 and FP16 with BF16's values: TFLOP/s", "dtype", "tflops",
                           {"shape"});
    p.panels = "variant";
    e.plots.push_back(p);
  }
  return e;
}()};

// The optional FP8 rung: mma.sync (rung 2, m16n8k32) and the wgmma rungs (3-6, k32) with E4M3
// operands, against cublasLt's FP8 GEMM at the issue's shapes.
memlab::bench::registrar const reg_fp8{[] {
  memlab::bench::experiment e;
  e.id = "gemm.tc_fp8";
  e.paired_in_blocks = true;  // its large rows run at the power cap (docs/timing.md, "Paired in blocks")
  e.description = "Tensor-core GEMM with FP8 (E4M3) inputs, FP32 accumulation: mma.sync and the wgmma rungs vs cublasLt FP8";
  e.seed_ref = "001 §1-3";
  e.axes = {memlab::bench::variant_axis({"mma_sync", "tma_wgmma", "warp_specialized", "persistent", "cluster"},
                                        {"mma_sync", "persistent", "cluster"}),
            memlab::bench::string_axis("out", {"bf16", "f32"}, {"bf16"}),
            memlab::bench::string_axis("shape",
                                       {"4096", "8192", "4097", "3000x5000x2000", "8192x8192x1024", "4096x11008x4096",
                                        "16384x4096x4096", "128x4096x4096", "128x8192x28672"},
                                       {"1024", "1000x1500x700"})};
  e.body = [](memlab::bench::state& s) {
    std::string const shape_text = s.get_string("shape");
    shape const sh = point_shape(s);
    bool const out_f32 = s.get_string("out") == "f32";
    if (out_f32 && !s.quick() && shape_text != "4096" && shape_text != "8192x8192x1024")
      s.skip("FP32 output is measured at 4096 and 8192x8192x1024 only (keeps the default run short)");
    gemm_tc_rung const rung = gemm_tc_rung_from_name(s.variant());
    // FP8 doubles the tensor rate against the same bytes a k-block: the rungs that idle the
    // tensor cores for loads (3) or the epilogue (4-5) lose more than in BF16. On Hopper FP8
    // mma.sync unpacks to FP16 HMMA: at most rung 2's BF16 rate against a peer twice as fast.
    double const predicted[] = {0, 0, 0.25, 0.5, 0.75, 0.9, 1.0};
    s.set_predicted({{"ratio_to_peer", predicted[static_cast<int>(rung)]}});
    run_point_e4m3(s, rung, sh, out_f32);
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "",
                  "the ladder's FP8 rungs: mma.sync m16n8k32 (sm_89+), TMA + wgmma, warp-specialized, persistent, 2-CTA "
                  "cluster with B multicast and TMA store");
  e.describe_axis("out", "", "output type: BF16 or FP32");
  e.describe_axis("shape", "", "n (a cube n x n x n) or m x n x k; A is m x k row-major, B is stored n x k (y = x W^T); "
                               "m = 128: a decode batch of 128 tokens, 128x8192x28672 a 70B model's down projection");
  e.metrics = {metrics::time(), metrics::tflops(),
               metrics::vs_peer("cublasLt's FP8 GEMM with fast accumulation, the fastest of its heuristic's 8 candidates")};
  read_against_tensor_peak(e);
  e.headline = best_row("Does the best FP8 rung reach cublasLt's FP8 GEMM at 8192³?", {{"shape", {"8192"}}, {"out", {"bf16"}}},
                        "median_ms", "ratio_to_peer");
  e.prose = {"The ladder's rungs with FP8 (E4M3) operands: rung 2's mma.sync m16n8k32 from the same 64-byte shared rows "
             "(native on Ada, sm_89; on Hopper the instruction unpacks to FP16), and the wgmma rungs: the same TMA loads "
             "into 128-byte-swizzled shared memory (a k-block is 128 FP8 values a row instead of 64), wgmma k32 instead "
             "of k16, the same warp specialization, persistence, clusters, multicast and TMA store. Verified against cublasGemmEx on BF16 copies of the same values, which are exact, at a "
             "tolerance that allows for Hopper's FP8 accumulation (docs/tc-gemm.md, \"FP8\"); timed in alternation "
             "with cublasLt's FP8 GEMM in the same mode (fast accumulation). cublasLt's default mode, which promotes "
             "partial sums to separate FP32 accumulators, is timed beside it (extra.peers). The decode batch (m = 128) "
             "streams its weights from DRAM, as in gemm.tc_ladder (params.b_copies, timing.cache).",
             "FP8 halves the bytes and doubles the tensor-core rate: the epilogue and the tile quantization weigh twice "
             "as much as in BF16, so the rule's choice of kernel matters more.",
             ""};
  {
    plot_spec p = bar_plot("gemm_tc_fp8.png", "FP8 (E4M3) GEMM ladder: speed as a fraction of cublasLt FP8", "variant",
                           "ratio_to_peer", {"shape"});
    p.where = {{"out", {"bf16"}}};
    p.refs = {{"value", "cublasLt", 1.0}};
    p.model = "predicted.ratio_to_peer";
    e.plots.push_back(p);
    plot_spec q = bar_plot("gemm_tc_fp8_tflops.png", "FP8 (E4M3) GEMM ladder: TFLOP/s", "variant", "tflops", {"shape"});
    q.where = {{"out", {"bf16"}}};
    e.plots.push_back(q);
  }
  return e;
}()};

// gemm.tc_layouts: what `automatic` does with the layouts and alignments only the wmma rung reads
// (repack.hpp): it copies the operand into K-major rows first where that pays, and runs the
// canonical layout's rung on the copy. Each point runs the library call and the wmma rung (what
// such a layout ran before the copy existed), both against cuBLAS given the same layout.

/// `layout`: nt (the canonical one: A m x k, B stored n x k, rows padded to 16 bytes), nn (B stored
/// k x n, as a plain row-major product), tn (A stored k x m too), tt (A stored k x m), nt_odd (the
/// canonical layout with rows of A and B k + 1 elements apart: not 16-byte multiples).
template <class In>
void run_layout_point(bench::state& s, std::string const& variant, std::string const& layout, shape sh) {
  bool const f16 = std::is_same_v<In, __half>;
  int const m = static_cast<int>(sh.m), n = static_cast<int>(sh.n), k = static_cast<int>(sh.k);
  gemm_op const oa = layout[0] == 't' ? gemm_op::t : gemm_op::n, ob = layout[1] == 't' ? gemm_op::t : gemm_op::n;
  bool const odd = layout == "nt_odd";
  int const a_rows = oa == gemm_op::n ? m : k, a_cols = oa == gemm_op::n ? k : m;
  int const b_rows = ob == gemm_op::n ? k : n, b_cols = ob == gemm_op::n ? n : k;
  auto const pitch = [&](int cols) { return odd ? cols + 1 : (cols + 7) / 8 * 8; };
  int const lda = pitch(a_cols), ldb = pitch(b_cols);
  s.result().params["lda"] = lda;
  s.result().params["ldb"] = ldb;
  gemm_tc_rung const rung = variant == "wmma" ? gemm_tc_rung::wmma : gemm_tc_rung::automatic;
  // `copied`: automatic with an operand stored transposed (B k x n, A k x m) copied into K-major rows
  // for the canonical layout's rung, where automatic reads it as stored (rung 6's cooperative
  // kernels; rung 5 for a B where m <= 128).
  namespace tc = detail::gemm_tc;
  tc::transposed_scope const mode(variant == "copied" ? tc::transposed_mode::copy : tc::transposed_mode::as_stored);
  gemm_tc_target const target = gemm_tc_current_target();
  gemm_tc_shape gs;
  gs.m = m;
  gs.n = n;
  gs.k = k;
  gs.op_a = oa;
  gs.op_b = ob;
  gs.input = f16 ? gemm_tc_input::f16 : gemm_tc_input::bf16;
  gs.aligned = !odd;
  if (auto why = gemm_tc_unavailable(rung == gemm_tc_rung::wmma ? rung : gemm_tc_rung::wmma, gs, target); !why.empty())
    s.skip(why);
  if (rung == gemm_tc_rung::wmma && 2.0 * m * n * k > 1.05 * 2.0 * 4096.0 * 4096.0 * 4096.0)
    s.skip("too slow at this size: the wmma baseline runs up to 4096^3");
  if (variant == "copied" && (odd || layout == "nt"))
    s.skip("the same as automatic: only an operand stored transposed in whole 16-byte rows (nn, tn, tt) has the choice");
  memlab::experiments::cublas_math_scope const math(CUBLAS_DEFAULT_MATH);
  std::size_t const a_elems = static_cast<std::size_t>(a_rows) * lda, b_elems = static_cast<std::size_t>(b_rows) * ldb;
  std::size_t const mn = static_cast<std::size_t>(m) * n;
  device_buffer<In> a(a_elems), b(b_elems);
  // What automatic does with these operands (gemm_tc.cu): the copy's plan, and the rung it runs.
  auto const plan = detail::gemm_tc::plan_repack(gs, detail::gemm_tc::k_major_ready(oa == gemm_op::n, a.data(), lda, sizeof(In)),
                                                 detail::gemm_tc::k_major_ready(ob == gemm_op::t, b.data(), ldb, sizeof(In)), target,
                                                 detail::gemm_tc::k_major_ready(ob == gemm_op::n, b.data(), ldb, sizeof(In)),
                                                 detail::gemm_tc::k_major_ready(oa == gemm_op::t, a.data(), lda, sizeof(In)));
  gemm_tc_rung const runs = rung == gemm_tc_rung::wmma ? rung
                            : plan.rung != gemm_tc_rung::automatic ? plan.rung
                                                                    : gemm_tc_select(gs, target);
  std::string what = gemm_tc_rung_name(runs);
  if (plan.rung != gemm_tc_rung::automatic && rung == gemm_tc_rung::automatic)
    what = std::string("copies ") + (plan.a && plan.b ? "A and B" : plan.a ? "A" : "B") + ", then " + what;
  bool const b_as_stored = ob == gemm_op::n && !plan.b, a_as_stored = oa == gemm_op::t && !plan.a;
  if (rung == gemm_tc_rung::automatic && (b_as_stored || a_as_stored) && runs != gemm_tc_rung::wmma) {
    if (runs == gemm_tc_rung::cluster)  // the cooperative kernel that reads it
      what += " (" + detail::gemm_tc::cluster_kernel_name(f16, m, n, k, true, detail::gemm_tc::row_alignment::line, b_as_stored,
                                                          a_as_stored) + ")";
    else
      what += ", B read as stored (k x n)";
  }
  s.set_extra("kernel", what);
  set_tensor_peak(s, runs, f16 ? gemm_tc_input::f16 : gemm_tc_input::bf16);
  device_buffer<float> ref(mn);
  fill_operands(s, a, a_elems, b, b_elems, false);
  cudaStream_t const st = s.stream();
  cublas_gemm_layout(st, f16, true, m, n, k, oa, ob, a.data(), lda, b.data(), ldb, ref.data());
  s.add_flops(2.0 * m * n * k);
  s.add_reads<In>(static_cast<std::size_t>(m) * k + static_cast<std::size_t>(n) * k);
  s.add_writes<In>(mn);
  weight_ring<In> const ring(s, b, m);
  device_buffer<In> c(mn), peer(mn);
  c.fill_bytes(0xFF);  // NaN poison: an unwritten output fails verification
  auto const ours = ring.launcher([&](In const* bi, cudaStream_t t) {
    if constexpr (f16) gemm_f16(oa, ob, m, n, k, 1.f, a.data(), lda, bi, ldb, 0.f, c.data(), n, t, rung);
    else gemm_bf16(oa, ob, m, n, k, 1.f, a.data(), lda, bi, ldb, 0.f, c.data(), n, t, rung);
  });
  ours(st);
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
  s.set_verification(compare(c.data(), ref.data(), m, n, rel_tol("same", f16), abs_tol(k)));
  // The copy alone, once (outside the timed row): what the library call adds to the product.
  if (rung == gemm_tc_rung::automatic && plan.rung != gemm_tc_rung::automatic) {
    std::int64_t const ldp = (k + 7) / 8 * 8;  // rows of whole 16-byte units, as gemm_tc.cu pitches the copy
    device_buffer<In> pa(plan.a ? static_cast<std::size_t>(m) * ldp : 0), pb(plan.b ? static_cast<std::size_t>(n) * ldp : 0);
    s.set_extra("copy_ms", s.measure_once("copy", ring.launcher([&](In const* bi, cudaStream_t t) {
                              if (plan.a) detail::gemm_tc::repack_k_major(a.data(), oa == gemm_op::t, m, k, lda, pa.data(), ldp, t);
                              if (plan.b) detail::gemm_tc::repack_k_major(bi, ob == gemm_op::n, n, k, ldb, pb.data(), ldp, t);
                            })).median);
  }
  cudaDataType_t const in_t = f16 ? CUDA_R_16F : CUDA_R_16BF;
  pair_with_cublas<In, In>(
      s, ring, ours,
      [&](In const* bi, cudaStream_t t) { cublas_gemm_layout(t, f16, false, m, n, k, oa, ob, a.data(), lda, bi, ldb, peer.data()); },
      [&] { return std::make_unique<experiments::lt_gemm>(in_t, in_t, m, n, k, lda, ldb, oa == gemm_op::t, ob == gemm_op::t); },
      std::string(f16 ? "f16|" : "bf16|") + layout + "|" + std::to_string(lda), false, m, n, k, ldb, a.data(), b.data(), peer, ref.data(),
      rel_tol("same", f16), abs_tol(k));
}

memlab::bench::registrar const reg_layouts{[] {
  memlab::bench::experiment e;
  e.id = "gemm.tc_layouts";
  e.paired_in_blocks = true;  // its large rows run at the power cap (docs/timing.md, "Paired in blocks")
  e.description = "Tensor-core GEMM in every layout: automatic (transposed operands read in place, others copied K-major first), the copy, and wmma vs cuBLAS in the same layout";
  e.seed_ref = "001 §1-3";
  e.default_suite = false;
  e.axes = {memlab::bench::variant_axis({"automatic", "copied", "wmma"}, {"automatic"}),
            memlab::bench::string_axis("layout", {"nt", "nn", "tn", "tt", "nt_odd"}, {"nt", "nn"}),
            memlab::bench::string_axis("dtype", {"bf16", "f16"}, {"bf16"}),
            memlab::bench::string_axis("shape",
                                       {"128", "256", "1024", "4096", "8192", "4096x11008x4096", "128x4096x4096", "16x4096x4096",
                                        "512x4096x4096", "1024x4096x4096", "2048x4096x4096", "3000x5000x2000", "8192x8192x1024",
                                        "16384x4096x4096", "2048x8192x8192"},
                                       {"512", "1000x1500x700"})};
  e.body = [](memlab::bench::state& s) {
    shape const sh = point_shape(s);
    std::string const layout = s.get_string("layout");
    if (s.get_string("dtype") == "bf16") run_layout_point<__nv_bfloat16>(s, s.variant(), layout, sh);
    else run_layout_point<__half>(s, s.variant(), layout, sh);
  };
  using namespace memlab::bench;
  e.describe_axis("variant", "",
                  "automatic: the library's choice (on sm_90a, BF16 and FP16, rung 6's cooperative kernels read a B stored "
                  "k x n and an A stored k x m as they are; where m <= 128 rung 5 reads B so and A is copied; any other "
                  "layout gets a K-major copy of the operand first where it pays); copied: an operand stored transposed "
                  "(nn, tn, tt) copied into K-major rows for the canonical layout's rung instead; wmma: the rung that "
                  "reads every layout");
  e.describe_axis("layout", "",
                  "op(A) op(B), row-major: nt = A m x k, B stored n x k (canonical); nn = B stored k x n; tn, tt = A stored k x m; "
                  "nt_odd = canonical with rows k + 1 elements apart (not 16-byte multiples)");
  e.describe_axis("dtype", "", "input type (BF16 or FP16), C in the same type; accumulation is FP32");
  e.describe_axis("shape", "", "n (a cube) or m x n x k; m = 16 and 128: decode batches (B from DRAM, as in gemm.tc_ladder)");
  e.metrics = {metrics::time(), metrics::tflops(),
               metrics::vs_peer("the faster of cublasGemmEx (default algo) and cublasLt (best of 8), given the same layout")};
  read_against_tensor_peak(e);
  e.headline = best_row("Does a row-major B (k x n) run near cuBLAS at 4096³?", {{"shape", {"4096"}}, {"layout", {"nn"}}, {"dtype", {"bf16"}}},
                        "median_ms", "ratio_to_peer");
  e.prose = {"The fast rungs read one layout: both operands K-major (A m x k, B stored n x k) in rows of whole 16-byte "
             "units. A user's B is often stored k x n (a plain row-major product), A may arrive transposed, and "
             "leading dimensions may be odd. The wmma rung reads all of them, at a few percent of the tensor cores. "
             "On sm_90a rung 6 reads a B stored k x n and an A stored k x m as they are, BF16 and FP16: TMA boxes of 64 "
             "k-rows x 64 columns and wgmma's MN-major operands (on its cooperative kernels, each CTA of a pair "
             "multicasting its half of B as whole boxes); rung 5 reads such a B too (m <= 128). `automatic` takes that, "
             "and the `copied` rows show the alternative, a K-major copy for the canonical layout's rung (which may be "
             "a pingpong kernel). Any other such operand `automatic` copies into "
             "K-major scratch first (a transpose through shared memory, or a row copy) where the product is larger than "
             "128³, then runs the canonical layout's rung. The row's extra.kernel says what it did and extra.copy_ms what "
             "the copy alone took.",
             "The copy moves each element of the operand twice (a read and a write): at 4096³ that is 64 MB against "
             "137 GFLOP, so a copied call should run within about 10% of the canonical layout's row, far from wmma's; "
             "read as stored, nn runs at the cooperative kernel's canonical speed with no copy: level with nt where the "
             "canonical rule takes the cooperative kernel too.",
             ""};
  {
    plot_spec p = bar_plot("gemm_tc_layouts.png", "Tensor-core GEMM by layout: speed as a fraction of cuBLAS (same layout)",
                           "layout", "ratio_to_peer", {"shape"});
    p.panels = "variant";
    p.where = {{"dtype", {"bf16"}}};
    p.refs = {{"value", "cuBLAS", 1.0}};
    e.plots.push_back(p);
    // B stored k x n, read as stored (automatic) or copied, beside the canonical layout, shape by shape.
    plot_spec q = bar_plot("gemm_tc_layouts_nn.png", "B stored k x n: read as stored or copied, against nt; a fraction of cuBLAS",
                           "shape", "ratio_to_peer", {"layout", "variant"});
    q.panels = "dtype";
    q.where = {{"layout", {"nt", "nn"}}, {"variant", {"automatic", "copied"}}};
    q.refs = {{"value", "cuBLAS", 1.0}};
    e.plots.push_back(q);
  }
  return e;
}()};

// Rung 6 runs one of its kernels by a wave count (cluster_plan.hpp). Two experiments run each of
// them forced beside the rule's choice, every row paired with cuBLAS: gemm.tc_cluster_kernels at
// the shapes the issue's targets name, gemm.tc_cluster_survey over a grid of others.
struct cluster_experiment_text {
  char const* id;
  char const* description;
  std::vector<std::string> quick_variants, shapes;
  char const* shape_text;
  char const* question;
  char const* headline_shape;
  std::string intro;
  char const* plot_file;
  char const* plot_title;
  bool out_axis = false;  ///< also an `out` axis (C's type: same or f32); the headline and plot take out = same
};

memlab::bench::experiment cluster_experiment(cluster_experiment_text const& t) {
  using namespace memlab::bench;
  experiment e;
  e.id = t.id;
  e.paired_in_blocks = true;  // its large rows run at the power cap (docs/timing.md, "Paired in blocks")
  e.description = t.description;
  e.seed_ref = "001 §1-3";
  e.default_suite = false;
  using memlab::detail::gemm_tc::cluster_family_names;
  e.axes = {variant_axis({std::begin(cluster_family_names), std::end(cluster_family_names)}, t.quick_variants),
            string_axis("dtype", {"bf16", "f16", "e4m3"}, {"bf16"}), string_axis("shape", t.shapes, {"1024"})};
  if (t.out_axis) {
    e.axes.insert(e.axes.begin() + 2, string_axis("out", {"same", "f32"}, {"same"}));
    e.describe_axis("out", "", "output type: the input type (same; BF16 for E4M3) or FP32");
  }
  e.body = [](state& s) {
    memlab::detail::gemm_tc::cluster_family_scope const forced(memlab::detail::gemm_tc::cluster_family_from_name(s.variant()));
    run_dtype(s, gemm_tc_rung::cluster, point_shape(s), s.has_param("out") && s.get_string("out") == "f32");
  };
  e.describe_axis("variant", "",
                  "rung 6's kernel: the rule's choice (auto), the cooperative 128x256 (or 128x128) kernel, the cooperative "
                  "256x152 kernel (128x152 a warpgroup, pairs along N sharing A), the pingpong kernel at 128x192 or "
                  "128x160 a warpgroup, or the same swapped (pingpong192s, pingpong160s: C^T = B^T A^T, so 192x128 or "
                  "160x128 tiles of C; where C does not take the TMA store, the unswapped kernel), pingpong at 128x176 or "
                  "128x144, or the cooperative kernel at one tile width forced (coop128x256, coop128x128)");
  e.describe_axis("dtype", "", "input type (BF16 or FP16, output the same; or FP8 E4M3, output BF16), FP32 accumulation");
  e.describe_axis("shape", "", t.shape_text);
  e.metrics = {metrics::time(), metrics::tflops(),
               metrics::vs_peer("the faster of cublasGemmEx and cublasLt (best of 8), same inputs; for E4M3, cublasLt's FP8 "
                                "GEMM with fast accumulation (best of 8)")};
  read_against_tensor_peak(e);
  row_filter same_c = {{"shape", {t.headline_shape}}, {"dtype", {"bf16"}}};
  if (t.out_axis) same_c.push_back({"out", {"same"}});
  e.headline = best_row(t.question, same_c, "median_ms", "ratio_to_peer");
  e.prose = {t.intro + " Within a shape, compare the ratios to cuBLAS: the board's clocks move between rows at the power "
                       "cap, and the paired ratio carries that out.",
             "The rule should pick the fastest kernel, or one within noise of it, at every shape.", ""};
  plot_spec p = bar_plot(t.plot_file, t.plot_title, "shape", "ratio_to_peer", {"variant"});
  p.panels = "dtype";
  p.refs = {{"value", "cuBLAS", 1.0}};
  if (t.out_axis) p.where = {{"out", {"same"}}};
  e.plots.push_back(p);
  return e;
}

char const* const cluster_intro =
    "Rung 6 of the tensor-core ladder has cooperative kernels (both consumer warpgroups share a tile, 128x256 or "
    "256x152, and store it together) and pingpong kernels (each warpgroup owns whole tiles; one stores C while the "
    "other multiplies). A count of k-block times per cluster picks one per shape; here each runs forced, every row "
    "paired with cuBLAS, and the auto row names the kernel the rule took (extra.kernel).";

memlab::bench::registrar const reg_cluster_kernels{[] {
  return cluster_experiment({"gemm.tc_cluster_kernels",
                             "Tensor-core GEMM rung 6: its cooperative and pingpong kernels forced, beside the rule's choice",
                             {"auto", "cooperative256", "pingpong160"},
                             {"4096", "8192", "4097", "3072", "3000x5000x2000", "8192x8192x1024", "4096x11008x4096",
                              "16384x4096x4096"},
                             "n (a cube) or m x n x k, as gemm.tc_ladder",
                             "Does the rule pick rung 6's fastest kernel at 3000x5000x2000?",
                             "3000x5000x2000",
                             cluster_intro,
                             "gemm_tc_cluster_kernels.png",
                             "Rung 6's kernels: speed as a fraction of cuBLAS",
                             // the kernels' epilogues differ most in FP32 C (the swapped ones write
                             // it transposed with scalar shared-memory stores)
                             true});
}()};

// Rung 6's pingpong kernels measured 10-40% slower at k = 2000 than at k = 2048 (session 16), the
// cooperative ones level. Two suspects: the last k-block only a quarter full, and rows of A and B
// 4000 bytes apart (2000 FP8 or BF16 elements), so that three rows in four start inside a 128-byte
// line and each TMA box row touches two lines. Padding the rows to 128 bytes separates them.
memlab::bench::registrar const reg_row_pitch{[] {
  using namespace memlab::bench;
  experiment e = cluster_experiment(
      {"gemm.tc_row_pitch",
       "Tensor-core GEMM rung 6: k = 2000 against 2048, rows of A and B padded to 16 or to 128 bytes",
       {"auto", "pingpong192"},
       {"3000x5000x2000", "6000x3000x2000", "3072x5120x2000", "3072x5120x2048",
        // session 18: six shapes held out from a straddled-row correction (192-wide pingpong counted
        // 8% slow instead of not weighed) that they then refuted at k = 1000 and 3000
        "3000x3000x3000", "5000x3000x2000", "10000x3000x2000", "8000x5000x1000", "3000x6000x3000", "5000x6000x2000",
        // session 19: held out from the rule that weighs pingpong with rows on 32-byte sectors
        // (k = 1200, 2000 and 4000 in BF16), and two where it keeps the cooperative kernels
        "4000x6000x4000", "6000x4000x1200", "8000x3000x2000", "3000x8000x2000", "2000x8000x2000", "7000x5000x2000"},
       "m x n x k, A m x k row-major, B stored n x k",
       "Which of rung 6's kernels is fastest at 3072x5120x2000, and at which row pitch?",
       "3072x5120x2000",
       std::string(cluster_intro) +
           " Here at k = 2000 with the rows of A and B 16-byte aligned (4000 bytes apart in BF16, 2000 in FP8: three rows in "
           "four start inside a 128-byte line) and 128-byte aligned, and at k = 2048 as a control; cuBLAS gets the same pitch. "
           "Six further shapes (k = 1000-3000, 16-byte rows) test whether any pingpong kernel should run with straddled rows.",
       "gemm_tc_row_pitch.png",
       "Rung 6 at k = 2000: 16- and 128-byte row pitch (time)"});
  e.axes.insert(e.axes.begin() + 2, string_axis("row_align", {"16", "128"}));
  e.describe_axis("row_align", "bytes", "the row pitch (lda = ldb) of A and B: k rounded up to 16 bytes (TMA's least) or to 128 bytes (a whole line)");
  e.prose.look_for = "If the padded rows run at k = 2048's speed, the cost is the TMA box rows that straddle two lines, not the "
               "partial last k-block; the rule's choice (auto) should match the fastest kernel at either pitch.";
  // Times side by side per pitch (the helper's plot is ratios by shape).
  plot_spec p = bar_plot(e.plots.front().file, e.plots.front().title, "variant", "median_ms", {"row_align"});
  p.panels = "shape";
  p.where = {{"dtype", {"bf16"}}};
  e.plots = {p};
  return e;
}()};

// The grid of the survey: squares 1536-6144, wide, tall, short and long k; how far the rule's
// choice lands from the fastest forced kernel of each shape is the check a new rule constant has
// to pass (docs/tc-gemm.md, "Session 15").
memlab::bench::registrar const reg_cluster_survey{[] {
  return cluster_experiment(
      {"gemm.tc_cluster_survey",
       "Tensor-core GEMM rung 6: each of its kernels forced over a grid of shapes, beside the rule's choice",
       {"auto", "cooperative"},
       {"1536", "2048", "2560", "3072", "3584", "5120", "6144", "2048x8192x2048", "8192x2048x2048", "6144x6144x1024",
        "1024x8192x8192", "2048x14336x4096", "4096x4096x14336", "5120x5120x2560",
        // held out: measured after the rule's constants were set from the 14 above
        "2816", "4608", "3840", "1536x6144x1536", "6000x3000x2000", "2048x5120x8192", "10240x2560x2048",
        "3000x4000x3000",
        // where pingpong's own waves (8 or more) and the cooperative kernel's (fewer) disagree
        "3072x8192x4096", "4096x5120x4096", "6144x4096x2048", "12288x2048x4096", "1536x16384x2048",
        // tall C, where BN divides m more nearly than n: the swapped pingpong kernels' count wins
        "3072x1024x2048", "5120x1024x2048", "5120x1536x2048", "14336x2048x2048", "12288x3072x4096",
        // few tiles (session 20): one or two waves, where the cooperative kernel's 128 x 256 and
        // 128 x 128 tiles take different wave counts (cluster_coop_tile)
        "1792", "2304", "1024x4096x4096", "2048x1536x4096", "2048x3072x4096"},
       "n (a cube) or m x n x k: squares, wide and tall C, short and long k",
       "Which of rung 6's kernels is fastest at 3072^3?",
       "3072",
       std::string(cluster_intro) + " The shapes are ones the issue's targets do not name.",
       "gemm_tc_cluster_survey.png",
       "Rung 6's kernels over shapes: speed as a fraction of cuBLAS"});
}()};

// Few tiles with m > 128 (docs/tc-gemm.md, "Session 31"): rung 6 runs them by its wave count on
// 2-CTA clusters; rung 5, where its 128 x 128 tiles fill at most half the SMs, runs a 64 x 64,
// 128 x 64, 64 x 96 or 64 x 128 tile a CTA or splits K inside a cluster (split_k.hpp, plan_persistent). Each beside the
// library's choice, every row paired with cuBLAS.
memlab::bench::registrar const reg_few_tiles{[] {
  using namespace memlab::bench;
  experiment e = cluster_experiment(
      {"gemm.tc_few_tiles",
       "Tensor-core GEMM at few tiles (m > 128, and six m = 128 decode batches with long k): rung 5's few-tile grids (64x64, 128x64, 64x96 or 64x128 tiles a CTA, split-K) against rung 6's kernels",
       {"automatic", "persistent", "cluster"},
       {"256", "384", "512", "768", "1024", "1280", "256x1024x4096", "256x2048x4096", "256x4096x4096", "256x4096x1024",
        "512x1024x4096", "512x2048x4096", "512x2048x2048", "768x1024x4096", "1024x1024x4096", "1024x1024x8192",
        "384x2048x4096", "256x3072x8192",
        // k swept where rung 5's grids differ: 64 x 64 tiles, the 128 x 64 split, 128 x 64 and 64 x 128 tiles
        "256x2048x1024", "256x2048x2048", "512x1024x1024", "512x1024x2048", "256x1024x1024", "256x1024x2048",
        "1024x1024x1536", "1024x1024x2048", "1024x1024x3072", "256x4096x2048", "256x4096x3072",
        // tiles enough that rung 5 does not split: the rule should not move here
        "1536", "1024x4096x4096", "512x4096x4096",
        // m = 128 decode batches with long k: 64 x 96 tiles a CTA (five) and 64 x 128 (the control)
        "128x5120x8192", "128x6144x8192", "128x4608x8192", "128x5120x16384", "128x6144x28672", "128x8192x8192"},
       "n (a cube) or m x n x k, A m x k row-major, B stored n x k: shapes whose 128 x 128 tiles fill at most half an H100's "
       "SMs (m > 128, so rung 6 may run), three with more tiles, and six m = 128 decode batches with long k",
       "Which rung runs 1024^3 fastest?",
       "1024",
       "Where a problem has few tiles, rung 6 (2-CTA clusters, one operand multicast) runs them one per CTA with the whole k, and "
       "most SMs idle; where its 128 x 64 pairs fit one wave it runs those (pairs along N sharing A). Rung 5 instead runs a "
       "64 x 64, 128 x 64, 64 x 96 or 64 x 128 tile a CTA, or splits K over the CTAs of a cluster (2-8 a tile, 128 x 128, 128 x 64 or 64 x 64 "
       "tiles, partial sums added through distributed shared memory). Each row is the library's choice (automatic), rung 5 or "
       "rung 6 named, or one of rung 6's cooperative tiles forced; extra.kernel names the grid a row ran.",
       "gemm_tc_few_tiles.png",
       "Few tiles: speed as a fraction of cuBLAS"});
  e.axes.front() = variant_axis({"automatic", "persistent", "cluster", "coop128x128", "coop128x256", "coop128x64"},
                                {"automatic", "persistent", "cluster"});
  e.describe_axis("variant", "",
                  "automatic: the library's choice (extra.kernel names the rung); persistent: rung 5 (its 64x64, 128x64, "
                  "64x96 or 64x128 tiles a CTA or its split-K where its 128x128 tiles fill at most half the SMs); cluster: rung 6 by its rule "
                  "(128x64 pairs where they fit one wave); "
                  "coop128x128, coop128x256: rung 6's cooperative kernel at one tile forced; coop128x64: the same on 128x64 tiles, "
                  "pairs along N sharing A");
  e.body = [](state& s) {
    using memlab::detail::gemm_tc::cluster_family;
    std::string const v = s.variant();
    bool const forced = v.rfind("coop", 0) == 0;
    memlab::detail::gemm_tc::cluster_family_scope const family(
        forced ? memlab::detail::gemm_tc::cluster_family_from_name(v) : cluster_family::automatic);
    run_dtype(s, forced ? gemm_tc_rung::cluster : gemm_tc_rung_from_name(v), point_shape(s), false);
  };
  e.prose.look_for = "The automatic row should be the fastest of its shape or within the noise of it.";
  return e;
}()};

// Decode batches (the issue's "m = 128 decode batches" target, docs/tc-gemm.md, "Session 39"): m = 128
// tokens times each projection of four open models' layers, the weights (B, n x k) streamed from DRAM
// as in gemm.tc_ladder. The library's choice (rung 5's few-tile grids on sm_90a) beside rung 2, what an
// A100, RTX or L4 runs, every row paired with cuBLAS (cublasLt's FP8 GEMM for E4M3).
memlab::bench::registrar const reg_decode{[] {
  using namespace memlab::bench;
  experiment e = cluster_experiment(
      {"gemm.tc_decode",
       "Tensor-core GEMM on decode batches: 128 tokens times each weight matrix of a Llama-2 7B/13B or Llama-3 8B/70B "
       "layer, the library's choice beside rung 2",
       {"automatic"},
       {// Llama-3 8B: q/k/v fused, o, gate (or up), down
        "128x6144x4096", "128x4096x4096", "128x14336x4096", "128x4096x14336",
        // Llama-2 7B: q/k/v fused, up, down
        "128x12288x4096", "128x11008x4096", "128x4096x11008",
        // Llama-2 13B: q/k/v fused, o, up, down
        "128x15360x5120", "128x5120x5120", "128x13824x5120", "128x5120x13824",
        // Llama-3 70B: q/k/v fused, o, up, down
        "128x10240x8192", "128x8192x8192", "128x28672x8192", "128x8192x28672"},
       "m x n x k, A m x k row-major (128 tokens), B stored n x k (the layer's weights, out x in, streamed from DRAM: "
       "params.b_copies, timing.cache)",
       "How close to cuBLAS is the library on Llama-3 70B's down projection for 128 tokens?",
       "128x8192x28672",
       "A decode step multiplies a few tokens' activations by every weight matrix of the model, once: the weights come "
       "from DRAM and the 128 x n outputs make few tiles, so the question is how many SMs read B at once and how "
       "evenly. On sm_90a the library's choice (automatic) runs rung 5: its few-tile grids (64 x 64, 128 x 64, 64 x 96 "
       "or 64 x 128 tiles a CTA, or K split over a cluster's CTAs) where its 128 x 128 tiles fill at most half the "
       "SMs, else persistent 128 x 96, 128 x 112 or 128 x 128 tiles, the width of fewest waves times width "
       "(extra.kernel names it); rung 2 (mma_sync) splits K over its 128 x 128 tiles.",
       "gemm_tc_decode.png",
       "Decode batches (m = 128): speed as a fraction of cuBLAS"});
  e.axes.front() = variant_axis({"automatic", "mma_sync"}, {"automatic"});
  e.describe_axis("variant", "",
                  "automatic: the library's choice (extra.kernel names the rung and grid); mma_sync: rung 2, the Ampere/Ada "
                  "default, K split by its rule");
  e.body = [](state& s) { run_dtype(s, gemm_tc_rung_from_name(s.variant()), point_shape(s), false); };
  e.prose.look_for = "Every automatic row at or above 0.95 of cuBLAS is the issue's target for m = 128 decode batches.";
  return e;
}()};

// Rung 6's cooperative kernels with stream-K (cluster_plan.hpp, cluster_stream_k_dp): the rule's
// choice beside it forced off and on, the cooperative family forced at every shape so that the
// split is what differs, every row paired with cuBLAS (docs/tc-gemm.md, "Session 27").
memlab::bench::registrar const reg_stream_k{[] {
  using namespace memlab::bench;
  experiment e;
  e.id = "gemm.tc_stream_k";
  e.paired_in_blocks = true;  // its large rows run at the power cap (docs/timing.md, "Paired in blocks")
  e.description = "Tensor-core GEMM rung 6: the cooperative kernel's last waves split into equal runs of k-blocks (stream-K), "
                  "by its rule, off and on";
  e.seed_ref = "001 §1-3";
  e.default_suite = false;
  e.axes = {variant_axis({"rule", "off", "on"}, {"rule", "off", "on"}), string_axis("dtype", {"bf16", "f16", "e4m3"}, {"bf16"}),
            string_axis("shape",
                        {"4096", "4096x4096x14336", "1024x8192x8192", "4097", "3000x4000x3000", "6144", "2048x8192x2048",
                         "8192x2048x2048", "8192", "16384x4096x4096"},
                        {"4096", "4097", "8192", "4096x4096x14336"})};
  e.body = [](state& s) {
    using memlab::detail::gemm_tc::cluster_stream_k_mode;
    std::string const v = s.variant();
    memlab::detail::gemm_tc::cluster_family_scope const coop(memlab::detail::gemm_tc::cluster_family::cooperative);
    memlab::detail::gemm_tc::cluster_stream_k_scope const mode(v == "on"    ? cluster_stream_k_mode::on
                                                               : v == "off" ? cluster_stream_k_mode::off
                                                                            : cluster_stream_k_mode::automatic);
    run_dtype(s, gemm_tc_rung::cluster, point_shape(s), false);
  };
  e.describe_axis("variant", "",
                  "rule: stream-K where the partial last wave leaves clusters idle for at least 24 k-blocks each "
                  "(cluster_stream_k_dp); off: every tile whole; on: the partial wave's tiles split "
                  "into one equal run of k-blocks a cluster wherever the waves are not whole. The cooperative kernel "
                  "(128x256, or 128x128 below two waves) is forced at every shape; extra.kernel says how many pairs were split");
  e.describe_axis("dtype", "", "input type (BF16 or FP16, output the same; or FP8 E4M3, output BF16), FP32 accumulation. "
                              "FP8 keeps its tiles whole in every variant: its split has not run on a GPU");
  e.describe_axis("shape", "",
                  "n (a cube) or m x n x k, as gemm.tc_ladder: shapes whose 128x256 pairs leave the last wave part full on "
                  "132 SMs");
  e.metrics = {metrics::time(), metrics::tflops(),
               metrics::vs_peer("the faster of cublasGemmEx and cublasLt (best of 8), same inputs; for E4M3, cublasLt's FP8 "
                                "GEMM with fast accumulation (best of 8)")};
  read_against_tensor_peak(e);
  e.headline = best_row("Does stream-K speed rung 6's cooperative kernel at 4096^3?", {{"shape", {"4096"}}, {"dtype", {"bf16"}}},
                        "median_ms", "ratio_to_peer");
  e.prose = {"Rung 6's cooperative kernel walks whole 128 x 256 tiles, a pair of them a cluster; where their count is not a "
             "multiple of the clusters the device holds, the last wave leaves clusters idle (4096^3 on 132 SMs: 3 waves and "
             "58 of 66 pairs). Stream-K splits the partial wave's tiles into one equal run of k-blocks a cluster, a run "
             "that crosses into a tile computing that tile's first k-blocks before its own tile's last ones, so that the "
             "clusters stay near the same k; a tile in pieces is finished by the run holding its last k-block, which adds "
             "the others' FP32 partials from global memory. Within a shape compare the ratios to cuBLAS: the clocks move between "
             "rows at the power cap, and the paired ratio carries that out.",
             "On should beat off where the idle share of the last wave outweighs a partial tile's round trip through L2; "
             "the rule's row should match the faster of the two.",
             ""};
  // 4097^3 in a plot of its own: cuBLAS is slow on its unaligned rows (rung 6 runs ~6x), and on the
  // same axis the other shapes' few-percent differences would not show.
  plot_spec p = bar_plot("gemm_tc_stream_k.png", "Rung 6's cooperative kernel with stream-K: speed as a fraction of cuBLAS",
                         "shape", "ratio_to_peer", {"variant"});
  p.panels = "dtype";
  p.refs = {{"value", "cuBLAS", 1.0}};
  p.where = {{"shape",
              {"4096", "4096x4096x14336", "1024x8192x8192", "3000x4000x3000", "6144", "2048x8192x2048", "8192x2048x2048", "8192",
               "16384x4096x4096"}}};
  e.plots.push_back(p);
  plot_spec q = bar_plot("gemm_tc_stream_k_4097.png", "Stream-K at 4097^3, where cuBLAS's unaligned rows are slow",
                         "shape", "ratio_to_peer", {"variant"});
  q.panels = "dtype";
  q.where = {{"shape", {"4097"}}};
  e.plots.push_back(q);
  return e;
}()};

/// What gemm.tc_split_k and gemm.tc_stages share: rung 2 with one of its choices forced by the row's
/// variant ("rule": none; "sN": N, through `Scope` for the row's lifetime), the dtype axis, the peer
/// (cuBLAS, or cublasLt's FP8 GEMM), the tensor peak, and a bar plot of each shape's ratio to cuBLAS
/// by variant, a panel a dtype.
template <class Scope>
memlab::bench::experiment rung2_forced(char const* id, char const* description, memlab::bench::axis variants,
                                       memlab::bench::axis shapes, char const* plot_file, char const* plot_title) {
  using namespace memlab::bench;
  experiment e;
  e.id = id;
  e.paired_in_blocks = true;  // its large rows run at the power cap (docs/timing.md, "Paired in blocks")
  e.description = description;
  e.seed_ref = "001 §1-3";
  e.default_suite = false;
  e.axes = {std::move(variants), string_axis("dtype", {"bf16", "f16", "e4m3"}, {"bf16"}), std::move(shapes)};
  e.body = [](state& s) {
    std::string const v = s.variant();
    Scope const forced(v == "rule" ? 0 : std::stoi(v.substr(1)));
    run_dtype(s, gemm_tc_rung::mma_sync, point_shape(s), false);
  };
  e.describe_axis("dtype", "", "input type (BF16 or FP16, output the same; FP8 E4M3 on mma.sync m16n8k32, output BF16)");
  e.metrics = {metrics::time(), metrics::tflops(),
               metrics::vs_peer("the faster of cublasGemmEx and cublasLt (best of 8), same inputs; for E4M3, cublasLt's FP8 "
                                "GEMM with fast accumulation (best of 8)")};
  read_against_tensor_peak(e);
  plot_spec p = bar_plot(plot_file, plot_title, "shape", "ratio_to_peer", {"variant"});
  p.panels = "dtype";
  p.refs = {{"value", "cuBLAS", 1.0}};
  e.plots.push_back(p);
  return e;
}

// Rung 2 (mma.sync, the default on Ampere and Ada) splits K where its 128 x 128 tiles fill at most
// half the device (split_k.hpp): each split writes FP32 partials, a second kernel adds them in
// order. Here the rule's count beside each count forced, at few-tile shapes, every row paired with
// cuBLAS (docs/tc-gemm.md, "Session 21").
memlab::bench::registrar const reg_split_k{[] {
  using namespace memlab::bench;
  experiment e = rung2_forced<memlab::detail::gemm_tc::mma_sync_splits_scope>(
      "gemm.tc_split_k",
      "Tensor-core GEMM rung 2 (mma.sync, the Ampere/Ada default) at few-tile shapes: K split by its rule, and 1-16 ways forced",
      variant_axis({"rule", "s1", "s2", "s4", "s8", "s16"}, {"rule", "s1"}),
      string_axis("shape",
                  {"128x4096x4096", "128x8192x28672", "16x4096x4096", "64x14336x4096", "256x4096x4096", "1024x1024x4096",
                   "512x2048x8192", "2048x2048x1024", "4096",
                   // held out from the partials' cap (split_k.hpp, fitted on the nine above)
                   "32x4096x4096", "128x2048x8192", "128x14336x4096"},
                  {"128x1024x2048"}),
      "gemm_tc_split_k.png", "Rung 2 with K split: speed as a fraction of cuBLAS");
  e.describe_axis("variant", "",
                  "rule: rung 2's own count (split_k.hpp: one pass unless the tiles fill at most half of SMs x blocks "
                  "an SM holds; then one wave's worth of splits, 8 k slices each at least, 16 at most, halved while the "
                  "partials exceed 2.5 bytes per 1000 of the tiles' flops); sN: K split N ways forced (s1: one pass, the "
                  "rung before the split); extra.kernel names the count a row ran");
  e.describe_axis("shape", "",
                  "m x n x k (n: a cube), A m x k row-major, B stored n x k: decode batches (m = 16-256) with their weights "
                  "from DRAM, and few-tile shapes with long k; 2048x2048x1024 and 4096 have tiles enough not to split; "
                  "the last three were held out from the partials' cap");
  e.headline = best_row("How much of cuBLAS does rung 2 reach on a decode batch (128x4096x4096)?",
                        {{"shape", {"128x4096x4096"}}, {"dtype", {"bf16"}}}, "median_ms", "ratio_to_peer");
  e.prose = {"Rung 2, mma.sync fed by a cp.async pipeline, is what an A100, an RTX 30/40 or an L4 runs. Its 128 x 128 tiles "
             "leave most SMs idle on a decode batch (m = 128, n = 4096: 32 tiles), so where the tiles fill at most half the "
             "device it splits K: each split's block writes FP32 partial sums, and a second kernel adds them in split order "
             "and writes C. Each row runs the rule's count or a forced one, paired with cuBLAS; within a shape, compare the "
             "ratios.",
             "The rule's row should match the fastest forced count, and s1 (one pass) should lose where the tiles are few.",
             ""};
  return e;
}()};

// Rung 2's stages: the rule's pick (split_k.hpp's mma_sync_kernel_pick: the deepest kernel an SM
// holds two of) beside 3, 4 and 5 stages forced, so that a card the rule was not measured on (an
// RTX 30/40 or an L4: 100 KB of shared memory an SM) shows whether the pick is its fastest
// (docs/tc-gemm.md, "Session 26").
memlab::bench::registrar const reg_stages{[] {
  using namespace memlab::bench;
  experiment e = rung2_forced<memlab::detail::gemm_tc::mma_sync_stages_scope>(
      "gemm.tc_stages",
      "Tensor-core GEMM rung 2 (mma.sync, the Ampere/Ada default): the rule's pipeline depth against 3, 4 and 5 stages forced",
      variant_axis({"rule", "s3", "s4", "s5"}, {"rule", "s3", "s4", "s5"}),
      string_axis("shape",
                  {"4096", "8192", "3000x5000x2000", "8192x8192x1024", "4096x11008x4096", "16384x4096x4096", "128x4096x4096",
                   "128x8192x28672"},
                  {"4096", "8192x8192x1024", "128x4096x4096"}),
      "gemm_tc_stages.png", "Rung 2 by pipeline depth: speed as a fraction of cuBLAS");
  e.describe_axis("variant", "",
                  "rule: rung 2's own pick (the deepest of 5 (4 for FP8), 4 and 3 stages that an SM holds as many blocks of "
                  "as the shallowest, up to two; the split grid of a decode batch goes down to 4 only); sN: N stages forced "
                  "(5: the early-refill loop for BF16 and FP16; FP8 has no 5-stage kernel and keeps the rule's); "
                  "extra.kernel names the stages and blocks an SM a row ran");
  e.describe_axis("shape", "",
                  "m x n x k (n: a cube), A m x k row-major, B stored n x k: the ladder's shapes; the last two are decode "
                  "batches, which split K");
  e.headline = best_row("Which pipeline depth runs rung 2 fastest at 8192x8192x1024 on this GPU?",
                        {{"shape", {"8192x8192x1024"}}, {"dtype", {"bf16"}}}, "median_ms", "ratio_to_peer");
  e.prose = {"Rung 2 keeps each block's k slices in a ring of 16 KB stages. Deeper rings hide more of the loads' latency, "
             "but a second block on the SM is what covers each block's barrier, and two blocks of 5 stages (80 KB each) fit "
             "an A100's or an H100's shared memory, not the 100 KB of an RTX 30/40 or an L4. The rule takes the deepest "
             "kernel an SM holds two of; each row here is that pick or a depth forced, paired with cuBLAS.",
             "Within a shape the rule's row should be the fastest or within the noise of it; extra.kernel says how many blocks "
             "an SM held.",
             ""};
  return e;
}()};

// Rung 2's tile width: the rule's pick (split_k.hpp's mma_sync_takes_wide: 128 x 256 tiles, one block
// of eight warps an SM, where k >= 2048 and the device holds it) beside 128 and 256 forced
// (docs/tc-gemm.md, "Session 29", and "Session 35": pairs in blocks, at the power cap).
memlab::bench::registrar const reg_wide{[] {
  using namespace memlab::bench;
  experiment e = rung2_forced<memlab::detail::gemm_tc::mma_sync_tile_n_scope>(
      "gemm.tc_wide",
      "Tensor-core GEMM rung 2 (mma.sync, the Ampere/Ada default): the rule's tile width against 128 x 128 and 128 x 256 forced",
      variant_axis({"rule", "n128", "n256"}, {"rule", "n128", "n256"}),
      string_axis("shape",
                  {"4096", "8192", "3000x5000x2000", "8192x8192x1024", "4096x11008x4096", "16384x4096x4096", "2048", "6144",
                   "4096x4096x2048", "2048x8192x8192"},
                  {"4096", "3000x5000x2000", "8192x8192x1024"}),
      "gemm_tc_wide.png", "Rung 2 by tile width: speed as a fraction of cuBLAS");
  e.describe_axis("variant", "",
                  "rule: rung 2's own pick (128 x 256 tiles, eight warps in one block an SM, 5 stages of 24 KB, where k >= "
                  "2048 and an SM holds as many warps of it as of the 128 x 128 kernel; else two blocks of 128 x 128); n128, "
                  "n256: that width forced (16-bit inputs; the split grid of a decode batch and FP8 keep 128); "
                  "extra.kernel names the tile a row ran");
  e.describe_axis("shape", "", "m x n x k (n: a cube), A m x k row-major, B stored n x k: the ladder's shapes and four more");
  e.headline = best_row("Which tile width runs rung 2 fastest at 4096^3 on this GPU?", {{"shape", {"4096"}}, {"dtype", {"bf16"}}},
                        "median_ms", "ratio_to_peer");
  e.prose = {"Rung 2 runs 128 x 128 tiles in two blocks of four warps an SM, so that one block's warps issue while the "
             "other's wait at their slice barrier. One block of eight warps on a 128 x 256 tile keeps the same warps an SM "
             "and reads a quarter fewer bytes a flop from L2, but no second block covers its tile's fill and drain. Each row "
             "is the rule's pick or a width forced, paired with cuBLAS.",
             "Within a shape the rule's row should be the fastest or within the noise of it; extra.kernel says which tile "
             "it ran.",
             ""};
  return e;
}()};
}  // namespace
