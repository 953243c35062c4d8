#pragma once
// gemm_tc's repack (gemm_tc.cu): under `automatic`, an operand in a layout or alignment only the
// wmma rung takes is copied into K-major rows of whole 16-byte units, and the rung the canonical
// layout gets runs on the copy. repack_pays is host code only (tests/cpu/test_gemm_tc_select.cpp).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kernels/gemm/tc/forced_scope.hpp"
#include "memlab/gemm_tc.hpp"

namespace memlab::detail::gemm_tc {

/// Below this m x n x k (128^3) the call stays on wmma: there the copy's launch costs about as
/// much as the product. Above it the copy pays at every shape measured, decode batches included:
/// wmma runs at 0.02-0.1 of cuBLAS (its k loop, not its bytes, sets its time), so at 16x4096x4096
/// with B stored k x n (520 us on wmma) copying B's 32 MB and running rung 5 takes a tenth of that
/// (docs/tc-gemm.md, "Other layouts").
constexpr double repack_min_mnk = 2097152.0;  // 2^21

/// Whether repacking A (`a`) and/or B (`b`) pays for an m x n x k product.
inline bool repack_pays(std::int64_t m, std::int64_t n, std::int64_t k, bool a, bool b) {
  double const mnk = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return (a || b) && mnk >= repack_min_mnk;
}

/// Whether an operand is what the fast rungs read as it is: K-major (`k_major`), its base 16-byte
/// aligned and its rows (`ld` elements of `elem_bytes`) whole 16-byte units apart.
inline bool k_major_ready(bool k_major, void const* p, std::int64_t ld, std::size_t elem_bytes) {
  return k_major && reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * static_cast<std::int64_t>(elem_bytes)) % 16 == 0;
}

/// What `automatic` does with an operand stored transposed in rows of whole 16-byte units (a B
/// stored k x n, an A stored k x m; BF16, FP16, where a wgmma rung runs): `as_stored` (the default)
/// reads it as it is, on rung 6's cooperative kernels (a B also on rung 5, where m <= 128); `copy`
/// copies it into K-major rows for the rung the canonical layout gets (gemm.tc_layouts' `copied`
/// rows, tests). As stored measured faster than the copy at every shape on the H100 but one (B:
/// 1-2.1x at m <= 2048 and 2-13% at m >= 3000; A, in tt: 2.1x at 256^3, 1.1x at 4096^3), or level; the
/// copy ran up to 3% faster at 8192x8192x1024, where the canonical layout's rule takes a pingpong
/// kernel that the copy feeds (docs/tc-gemm.md, "Session 30").
/// Process-wide, not for concurrent use.
enum class transposed_mode { as_stored, copy };
void set_gemm_tc_transposed_mode(transposed_mode mode);
transposed_mode gemm_tc_transposed_mode();
/// A mode held for a scope (`transposed_scope const copied(transposed_mode::copy);`).
using transposed_scope = forced_scope<transposed_mode, set_gemm_tc_transposed_mode, transposed_mode::as_stored>;

/// What `automatic` does with a problem whose A or B is not K-major and 16-byte aligned (`a_fast`,
/// `b_fast` false): which operands it copies first, and the rung it runs on the copies; no copy
/// (rung `automatic`: gemm_tc_select's choice stands) where the copy does not pay or the canonical
/// layout would get no rung faster than wmma. E4M3, which has no wmma kernel, copies at any size.
/// An operand stored transposed in rows of whole 16-byte units (`b_kn`: B k x n, `a_km`: A k x m)
/// is not copied where a wgmma rung reads it as it is (BF16 and FP16 on sm_90a; transposed_mode
/// as_stored): gemm_tc_select then picks that rung (rung 6; rung 5 for a B where m <= 128). Where
/// no rung reads A as stored (m <= 128) or A needs a copy anyway (misaligned), A alone is copied and
/// the rung reading B as stored runs on the copy.
struct repack_plan {
  bool a = false, b = false;
  gemm_tc_rung rung = gemm_tc_rung::automatic;
};
inline repack_plan plan_repack(gemm_tc_shape const& s, bool a_fast, bool b_fast, gemm_tc_target const& t, bool b_kn = false,
                               bool a_km = false) {
  repack_plan r;
  if (a_fast && b_fast) return r;
  bool const e4m3 = s.input == gemm_tc_input::e4m3;
  if ((b_fast || b_kn) && gemm_tc_transposed_mode() == transposed_mode::as_stored) {
    gemm_tc_shape as_stored = s;
    as_stored.op_b = b_fast ? gemm_op::t : gemm_op::n;
    as_stored.aligned = true;
    auto const wgmma_rung = [&](gemm_op op_a) {
      as_stored.op_a = op_a;
      gemm_tc_rung const reads = gemm_tc_select(as_stored, t);
      return reads == gemm_tc_rung::persistent || reads == gemm_tc_rung::cluster ? reads : gemm_tc_rung::automatic;
    };
    // A as it is (canonical, or stored k x m): nothing to copy, gemm_tc_select picks the same rung.
    if ((a_fast || a_km) && wgmma_rung(a_fast ? gemm_op::n : gemm_op::t) != gemm_tc_rung::automatic) return r;
    // A copied alone where that pays, B read as stored.
    if (!a_fast && !b_fast) {
      if (gemm_tc_rung const reads = wgmma_rung(gemm_op::n); reads != gemm_tc_rung::automatic) {
        if (!repack_pays(s.m, s.n, s.k, true, false)) return r;
        r.a = true;
        r.rung = reads;
        return r;
      }
    }
  }
  if (!e4m3 && !repack_pays(s.m, s.n, s.k, !a_fast, !b_fast)) return r;
  gemm_tc_shape canonical = s;
  canonical.op_a = gemm_op::n;
  canonical.op_b = gemm_op::t;
  canonical.aligned = true;
  gemm_tc_rung const fast = gemm_tc_select(canonical, t);
  if (fast == gemm_tc_rung::automatic || fast == gemm_tc_rung::wmma) return r;
  r.a = !a_fast;
  r.b = !b_fast;
  r.rung = fast;
  return r;
}

/// Writes `rows` x `k` K-major rows, `ldp` elements apart (a multiple of 16 bytes; `out` 16-byte
/// aligned; the row's tail past k zero where a copy chunk covers it), to `out` from `in`: in stored
/// rows x k with leading dimension `ld` (any alignment: a row copy), or, with `transposed`, stored
/// k x rows (a transpose through shared memory). Asynchronous on `stream`.
template <class In>
void repack_k_major(In const* in, bool transposed, std::int64_t rows, std::int64_t k, std::int64_t ld, In* out,
                    std::int64_t ldp, cudaStream_t stream);

}  // namespace memlab::detail::gemm_tc
