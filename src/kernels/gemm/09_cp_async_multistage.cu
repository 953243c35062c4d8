// 09: warp tiling fed by a multistage cp.async pipeline (sm_80+). Tiles k+1 .. k+S-1 are
// in flight from global to shared memory while tile k is multiplied, without passing
// through registers and with one barrier per BK slice. A goes through 4-byte copies that
// land transposed ([k][m]); B through 16-byte copies when its rows are 16-byte aligned,
// 4-byte copies otherwise. Out-of-range elements are zero-filled by the copy itself.
// Blocks are rasterized in groups of 8 tile rows for L2 reuse.
//
// Blocks whose tile lies inside C, when k is a multiple of BK, run interior_mainloop:
// unpredicated copies from pointers stepped one slice at a time and a branch-free body.
// The *_db variants (kFragDB) also double-buffer the fragments in registers and put the
// slice barrier inside the last k step, so the next slice's first shared loads overlap
// the last FFMAs (docs/gemm-notes.md, steps 4-5, with the ncu readings behind both).
#include <array>
#include <atomic>

#include "kernels/gemm/cp_async_configs.cuh"
#include "memlab/device.hpp"

namespace memlab::detail::gemm {
namespace {
[[maybe_unused]] constexpr int kGroup = 8;  // unreferenced in the sm_75 pass (bodies trap)

/// acc += a (x) b, visiting each 2x2 block of outputs in turn: (a0,b0) (a0,b1) (a1,b0)
/// (a1,b1), the order cuBLAS's SIMT kernel issues its FFMAs in (its SASS on the H200): the
/// two registers of a pair sit in different banks, so both multiplicands can come from the
/// operand reuse caches. ptxas reorders FFMAs as it sees fit, so this is a hint, not a
/// guarantee; measured, it took cp_async_128x256_db from 0.927 to 0.958 of cuBLAS at 4096^3,
/// but only while the edge path's loop kept the row-by-row order (docs/gemm-notes.md, step 5).
template <class Cfg>
__device__ __forceinline__ void outer_product_2x2(float const (&a)[Cfg::mi * 4], float const (&b)[Cfg::ni * 4],
                                                  float (&acc)[Cfg::mi * 4][Cfg::ni * 4]) {
#pragma unroll
  for (int i = 0; i < Cfg::mi * 4; i += 2)
#pragma unroll
    for (int j = 0; j < Cfg::ni * 4; j += 2) {
      acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
      acc[i][j + 1] = fmaf(a[i], b[j + 1], acc[i][j + 1]);
      acc[i + 1][j] = fmaf(a[i + 1], b[j], acc[i + 1][j]);
      acc[i + 1][j + 1] = fmaf(a[i + 1], b[j + 1], acc[i + 1][j + 1]);
    }
}

/// The main loop of a block whose tile lies wholly inside C, with k a multiple of BK.
/// Every copy is unpredicated and its addresses are pointers advanced by one slice per
/// tile (no per-slice index arithmetic: the first H200 profile showed ~50 dependent
/// integer instructions per slice right after the barrier, issued while both warps of a
/// scheduler had no FFMA to overlap them: the "wait" stall ncu reported and cuBLAS did
/// not). The loop body has no branch, so the scheduler can spread the copies among the
/// FFMAs. Past the last tile the copies re-read the last tile into a slot that is never
/// read again (harmless, and it keeps the body branch-free).
template <class Cfg, bool kVec, bool kFragDB>
__device__ __forceinline__ void interior_mainloop(problem const& p, int m0, int n0, float* as, float* bs, int a_off,
                                                  int b_off, float (&acc)[Cfg::mi * 4][Cfg::ni * 4]) {
  constexpr int S = Cfg::stages, BK = Cfg::bk;
  constexpr int a_step = Cfg::threads / BK;
  constexpr int a_stage_bytes = Cfg::a_stage * 4, b_stage_bytes = Cfg::b_stage * 4;
  int const tid = static_cast<int>(threadIdx.x);
  int const a_k = tid % BK, a_m = tid / BK;
  float const* a_src = p.a + static_cast<long long>(m0 + a_m) * p.lda + a_k;
  long long const a_stride = static_cast<long long>(a_step) * p.lda;
  std::uint32_t const a_dst = smem_addr(as) + static_cast<std::uint32_t>(a_k * Cfg::lda_s + a_m) * 4;
  // B: a thread's copies lie in one column run, b_rows_per_pass rows apart.
  constexpr int b_per_row = kVec ? Cfg::bn / 4 : Cfg::bn;  // copies per row of the slice
  constexpr int b_loads = kVec ? Cfg::b_loads_vec : Cfg::b_loads_scalar;
  static_assert(Cfg::threads % b_per_row == 0, "a thread's B copies keep one column");
  constexpr int b_rows_per_pass = Cfg::threads / b_per_row;
  int const b_k = tid / b_per_row, b_n = (tid % b_per_row) * (kVec ? 4 : 1);
  float const* b_src = p.b + static_cast<long long>(b_k) * p.ldb + n0 + b_n;
  long long const b_stride = static_cast<long long>(b_rows_per_pass) * p.ldb;
  long long const b_advance = static_cast<long long>(BK) * p.ldb;
  std::uint32_t const b_dst = smem_addr(bs) + static_cast<std::uint32_t>(b_k * Cfg::ldb_s + b_n) * 4;
  int const ktiles = p.k / BK;

  int loaded = 0;  // tiles whose copies were issued
  auto issue = [&](int slot) {
    std::uint32_t const ad = a_dst + slot * a_stage_bytes, bd = b_dst + slot * b_stage_bytes;
    float const* q = a_src;
#pragma unroll
    for (int i = 0; i < Cfg::a_loads; ++i, q += a_stride) cp_async_4_full(ad + i * a_step * 4, q);
    float const* r = b_src;
#pragma unroll
    for (int i = 0; i < b_loads; ++i, r += b_stride) {
      if constexpr (kVec)
        cp_async_16_full(bd + i * b_rows_per_pass * Cfg::ldb_s * 4, r);
      else
        cp_async_4_full(bd + i * b_rows_per_pass * Cfg::ldb_s * 4, r);
    }
    ++loaded;
    bool const more = loaded < ktiles;  // stay on the last tile once it is issued
    a_src += more ? BK : 0;
    b_src += more ? b_advance : 0;
  };

#pragma unroll
  for (int s = 0; s < S - 1; ++s) {
    issue(s);  // ktiles >= 1 (k > 0 on this path); re-reads past the end are harmless
    cp_async_commit();
  }
  int read_slot = 0, write_slot = S - 1;
  if constexpr (kFragDB) {
    float fa[2][Cfg::mi * 4], fb[2][Cfg::ni * 4];
    auto load_frag = [&](float (&a)[Cfg::mi * 4], float (&b)[Cfg::ni * 4], int slot, int kk) {
      load_fragments<Cfg>(as + slot * Cfg::a_stage, bs + slot * Cfg::b_stage, a_off, b_off, kk, a, b);
    };
    static_assert(Cfg::bk % 2 == 0, "k step 0 of every slice uses fragment buffer 0");
    cp_async_wait<S - 2>();
    __syncthreads();
    load_frag(fa[0], fb[0], 0, 0);
    for (int kt = 0; kt < ktiles; ++kt) {
      issue(write_slot);
      cp_async_commit();
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        int const cur = kk & 1, nxt = cur ^ 1;
        if (kk + 1 < BK) {
          load_frag(fa[nxt], fb[nxt], read_slot, kk + 1);
        } else {
          cp_async_wait<S - 2>();
          __syncthreads();
          read_slot = read_slot + 1 == S ? 0 : read_slot + 1;
          write_slot = write_slot + 1 == S ? 0 : write_slot + 1;
          load_frag(fa[nxt], fb[nxt], read_slot, 0);  // past the end: a stale slot, never used
        }
        outer_product_2x2<Cfg>(fa[cur], fb[cur], acc);
      }
    }
  } else {
    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<S - 2>();
      __syncthreads();
      issue(write_slot);
      cp_async_commit();
      warp_tile_mma<Cfg>(as + read_slot * Cfg::a_stage, bs + read_slot * Cfg::b_stage, a_off, b_off, acc);
      read_slot = read_slot + 1 == S ? 0 : read_slot + 1;
      write_slot = write_slot + 1 == S ? 0 : write_slot + 1;
    }
  }
  cp_async_wait<0>();
}

/// One block's tile: block `pid` of a tiles_m x tiles_n grid over problem p.
template <class Cfg, bool kVec, bool kFragDB = false>
__device__ __forceinline__ void cp_async_tile(problem const& p, int tiles_m, int tiles_n, int pid) {
  extern __shared__ __align__(16) float smem[];
  float* const as = smem;
  float* const bs = smem + Cfg::stages * Cfg::a_stage;
  int const tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  tile_coord const t = swizzle_tile(pid, tiles_m, tiles_n, kGroup);
  int const m0 = t.m * Cfg::bm, n0 = t.n * Cfg::bn;

  // A: thread owns column a_k of the slice and rows a_m + i * a_step (32-byte row segments
  // per warp, fully used sectors). Destination [k][m]: with the 4-float row pad, the 8
  // k values of a warp hit banks 4k + m, all distinct for BK = 8.
  constexpr int a_step = Cfg::threads / Cfg::bk;
  int const a_k = tid % Cfg::bk, a_m = tid / Cfg::bk;
  // One base pointer and a validity bit per row (not a pointer per row: at BK = 16 that
  // array alone would cost 32 registers).
  long long const a_stride = static_cast<long long>(a_step) * p.lda;
  float const* const a_base = p.a + static_cast<long long>(m0 + a_m) * p.lda + a_k;
  unsigned a_rows_ok = 0;
#pragma unroll
  for (int i = 0; i < Cfg::a_loads; ++i) a_rows_ok |= (m0 + a_m + i * a_step < p.m ? 1u : 0u) << i;
  static_assert(Cfg::a_loads <= 32, "row mask");

  // Blocks whose tile lies wholly inside C take an unpredicated path for every full BK
  // slice: the copy addresses are a fixed offset plus k0, and no src-size operands or
  // bounds tests are issued. Those instructions compete with the FFMAs for issue slots
  // (the first H200 run found ~170 non-FFMA instructions per 1024 FFMAs in the main loop).
  bool const interior = m0 + Cfg::bm <= p.m && n0 + Cfg::bn <= p.n;

  auto load_tile = [&](int slot, int kt) {
    int const k0 = kt * Cfg::bk;
    float* const as_s = as + slot * Cfg::a_stage;
    float* const bs_s = bs + slot * Cfg::b_stage;
    if (interior && k0 + Cfg::bk <= p.k) {
      float const* const a_tile = a_base + k0;
      float const* const b_tile = p.b + static_cast<long long>(k0) * p.ldb + n0;
#pragma unroll
      for (int i = 0; i < Cfg::a_loads; ++i)
        cp_async_4_full(&as_s[a_k * Cfg::lda_s + a_m + i * a_step], a_tile + i * a_stride);
      if constexpr (kVec) {
#pragma unroll
        for (int i = 0; i < Cfg::b_loads_vec; ++i) {
          int const e = tid + i * Cfg::threads, k = e / (Cfg::bn / 4), n = (e % (Cfg::bn / 4)) * 4;
          cp_async_16_full(&bs_s[k * Cfg::ldb_s + n], b_tile + static_cast<long long>(k) * p.ldb + n);
        }
      } else {
#pragma unroll
        for (int i = 0; i < Cfg::b_loads_scalar; ++i) {
          int const e = tid + i * Cfg::threads, k = e / Cfg::bn, n = e % Cfg::bn;
          cp_async_4_full(&bs_s[k * Cfg::ldb_s + n], b_tile + static_cast<long long>(k) * p.ldb + n);
        }
      }
      return;
    }
    bool const k_ok = k0 + a_k < p.k;
#pragma unroll
    for (int i = 0; i < Cfg::a_loads; ++i) {
      bool const ok = ((a_rows_ok >> i) & 1u) && k_ok;
      cp_async_4(&as_s[a_k * Cfg::lda_s + a_m + i * a_step], ok ? a_base + i * a_stride + k0 : p.a, ok);
    }
    if constexpr (kVec) {
#pragma unroll
      for (int i = 0; i < Cfg::b_loads_vec; ++i) {
        int const e = tid + i * Cfg::threads, k = e / (Cfg::bn / 4), n = (e % (Cfg::bn / 4)) * 4;
        int const r = k0 + k, c = n0 + n;
        int const left = p.n - c;
        int const bytes = (r < p.k && left > 0) ? (left >= 4 ? 16 : left * 4) : 0;
        cp_async_16(&bs_s[k * Cfg::ldb_s + n], bytes > 0 ? p.b + static_cast<long long>(r) * p.ldb + c : p.b, bytes);
      }
    } else {
#pragma unroll
      for (int i = 0; i < Cfg::b_loads_scalar; ++i) {
        int const e = tid + i * Cfg::threads, k = e / Cfg::bn, n = e % Cfg::bn;
        int const r = k0 + k, c = n0 + n;
        bool const ok = r < p.k && c < p.n;
        cp_async_4(&bs_s[k * Cfg::ldb_s + n], ok ? p.b + static_cast<long long>(r) * p.ldb + c : p.b, ok);
      }
    }
  };

  float acc[Cfg::mi * 4][Cfg::ni * 4];
#pragma unroll
  for (int i = 0; i < Cfg::mi * 4; ++i)
#pragma unroll
    for (int j = 0; j < Cfg::ni * 4; ++j) acc[i][j] = 0.f;

  int const warp_m = warp % Cfg::warps_m, warp_n = warp / Cfg::warps_m;
  int const a_off = warp_m * Cfg::wm + lane_row(lane) * 4;
  int const b_off = warp_n * Cfg::wn + lane_col(lane) * 4;
  if (interior && p.k % Cfg::bk == 0) {
    interior_mainloop<Cfg, kVec, kFragDB>(p, m0, n0, as, bs, a_off, b_off, acc);
    warp_tile_epilogue<Cfg, kVec>(p, m0 + a_off, n0 + b_off, acc);
    return;
  }
  int const ktiles = ceil_div(p.k, Cfg::bk);
#pragma unroll
  for (int s = 0; s < Cfg::stages - 1; ++s) {
    if (s < ktiles) load_tile(s, s);
    cp_async_commit();  // empty groups keep the group count aligned with the tile index
  }
  // Slots rotate with counters (no kt % STAGES division in the loop).
  int read_slot = 0, write_slot = Cfg::stages - 1;
  if constexpr (kFragDB) {
    // Register-double-buffered fragments: the LDS for k step kk+1 is issued before the
    // FFMAs of step kk, and the slice barrier sits inside the last k step, so the first
    // fragments of slice kt+1 load while the last 16*MI*NI FFMAs of slice kt issue; no
    // warp starts a slice by waiting on shared memory.
    float fa[2][Cfg::mi * 4], fb[2][Cfg::ni * 4];
    auto load_frag = [&](float (&a)[Cfg::mi * 4], float (&b)[Cfg::ni * 4], int slot, int kk) {
      load_fragments<Cfg>(as + slot * Cfg::a_stage, bs + slot * Cfg::b_stage, a_off, b_off, kk, a, b);
    };
    static_assert(Cfg::bk % 2 == 0, "k step 0 of every slice uses fragment buffer 0");
    cp_async_wait<Cfg::stages - 2>();  // tile 0 has landed
    __syncthreads();
    load_frag(fa[0], fb[0], 0, 0);
    for (int kt = 0; kt < ktiles; ++kt) {
      // Slot write_slot held tile kt-1, whose last reads came before the barrier below
      // in the previous slice.
      int const next = kt + Cfg::stages - 1;
      if (next < ktiles) load_tile(write_slot, next);
      cp_async_commit();
#pragma unroll
      for (int kk = 0; kk < Cfg::bk; ++kk) {
        int const cur = kk & 1, nxt = cur ^ 1;
        if (kk + 1 < Cfg::bk) {
          load_frag(fa[nxt], fb[nxt], read_slot, kk + 1);
        } else {
          cp_async_wait<Cfg::stages - 2>();  // tile kt+1 has landed (for this thread) ...
          __syncthreads();                   // ... for every thread; slot of tile kt is done
          read_slot = read_slot + 1 == Cfg::stages ? 0 : read_slot + 1;
          write_slot = write_slot + 1 == Cfg::stages ? 0 : write_slot + 1;
          if (kt + 1 < ktiles) load_frag(fa[nxt], fb[nxt], read_slot, 0);
        }
        #pragma unroll
        for (int i = 0; i < Cfg::mi * 4; ++i)
#pragma unroll
          for (int j = 0; j < Cfg::ni * 4; ++j) acc[i][j] = fmaf(fa[cur][i], fb[cur][j], acc[i][j]);
      }
    }
  } else {
    for (int kt = 0; kt < ktiles; ++kt) {
      cp_async_wait<Cfg::stages - 2>();  // tile kt has landed (for this thread) ...
      __syncthreads();                   // ... for every thread; slot (kt-1)%S is free again
      int const next = kt + Cfg::stages - 1;
      if (next < ktiles) load_tile(write_slot, next);
      cp_async_commit();
      warp_tile_mma<Cfg>(as + read_slot * Cfg::a_stage, bs + read_slot * Cfg::b_stage, a_off, b_off, acc);
      read_slot = read_slot + 1 == Cfg::stages ? 0 : read_slot + 1;
      write_slot = write_slot + 1 == Cfg::stages ? 0 : write_slot + 1;
    }
  }
  cp_async_wait<0>();
  warp_tile_epilogue<Cfg, kVec>(p, m0 + a_off, n0 + b_off, acc);
}

// Below sm_80 there is no cp.async: memlab::gemm refuses these variants there
// (variant_entry::needs_arch), and a launch that slipped through traps instead of
// running a synchronous imitation under a cp.async name.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define MEMLAB_GEMM_NO_CP_ASYNC 1
#endif

template <class Cfg, bool kVec, bool kFragDB = false>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks) cp_async_kernel(problem p, int tiles_m, int tiles_n) {
#ifdef MEMLAB_GEMM_NO_CP_ASYNC
  __trap();
#else
  cp_async_tile<Cfg, kVec, kFragDB>(p, tiles_m, tiles_n, static_cast<int>(blockIdx.x));
#endif
}

/// Two problems in one launch (the bottom and right remainder strips): their blocks run
/// side by side instead of one strip after the other.
template <class Cfg, bool kVec>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks)
    cp_async_pair_kernel(problem p0, int tm0, int tn0, problem p1, int tm1, int tn1) {
#ifdef MEMLAB_GEMM_NO_CP_ASYNC
  __trap();
#else
  int const pid = static_cast<int>(blockIdx.x), first = tm0 * tn0;
  if (pid < first)
    cp_async_tile<Cfg, kVec>(p0, tm0, tn0, pid);
  else
    cp_async_tile<Cfg, kVec>(p1, tm1, tn1, pid - first);
#endif
}

template <class Cfg, bool kVec>
void launch_pair_cfg(problem const& p0, problem const& p1, cudaStream_t s) {
  auto kernel = cp_async_pair_kernel<Cfg, kVec>;
  if (Cfg::smem_bytes > 48 * 1024)
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes));
  int const tm0 = ceil_div(p0.m, Cfg::bm), tn0 = ceil_div(p0.n, Cfg::bn);
  int const tm1 = ceil_div(p1.m, Cfg::bm), tn1 = ceil_div(p1.n, Cfg::bn);
  kernel<<<static_cast<unsigned>(tm0) * tn0 + static_cast<unsigned>(tm1) * tn1, Cfg::threads, Cfg::smem_bytes, s>>>(
      p0, tm0, tn0, p1, tm1, tn1);
  MEMLAB_CHECK_LAUNCH();
}

template <class Cfg, bool kVec, bool kFragDB = false>
void launch_cfg(problem const& p, cudaStream_t s) {
  auto kernel = cp_async_kernel<Cfg, kVec, kFragDB>;
  if (Cfg::smem_bytes > 48 * 1024)
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes));
  int const tm = ceil_div(p.m, Cfg::bm), tn = ceil_div(p.n, Cfg::bn);
  kernel<<<static_cast<unsigned>(tm) * tn, Cfg::threads, Cfg::smem_bytes, s>>>(p, tm, tn);
  MEMLAB_CHECK_LAUNCH();
}
template <class Cfg, bool kFragDB = false>
void launch_one(problem const& p, cudaStream_t s) {
  if (bc_vector_aligned(p))
    launch_cfg<Cfg, true, kFragDB>(p, s);
  else
    launch_cfg<Cfg, false, kFragDB>(p, s);
}

/// Resident blocks of a configuration on the whole current device, kept per device ordinal
/// (a process may see GPUs of different sizes; a single static kept the first one's answer).
template <class Cfg, bool kFragDB = false>
int blocks_per_sm() {
  static std::array<std::atomic<int>, 64> cache{};
  int dev = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  bool const cached = dev >= 0 && dev < 64;
  if (cached) {
    if (int const known = cache[dev].load(std::memory_order_relaxed); known > 0) return known;
  }
  int b = 0;
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(cp_async_kernel<Cfg, true, kFragDB>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         Cfg::smem_bytes));
  MEMLAB_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, cp_async_kernel<Cfg, true, kFragDB>, Cfg::threads, Cfg::smem_bytes));
  int const slots = b * current_device_sm_count();
  if (cached && slots > 0) cache[dev].store(slots, std::memory_order_relaxed);
  return slots;
}

/// A thin remainder (4097 = 32 x 128 + 1) adds a whole row and column of tiles that are
/// almost empty but cost as much as full ones, and can add a wave: 1089 tiles on 264
/// slots is 5 waves where 1024 is 4. Then the tile-multiple part runs alone and the
/// remainder strips go to a small-tile kernel (cfg_edge).
template <class Cfg, bool kFragDB = false>
void launch_any(problem const& p, cudaStream_t s) {
  int const m_main = p.m / Cfg::bm * Cfg::bm, n_main = p.n / Cfg::bn * Cfg::bn;
  int const rem_m = p.m - m_main, rem_n = p.n - n_main;
  bool split = m_main > 0 && n_main > 0 && (rem_m > 0 || rem_n > 0) && rem_m <= Cfg::bm / 4 && rem_n <= Cfg::bn / 4;
  if (split) {
    long long const slots = blocks_per_sm<Cfg, kFragDB>();
    long long const full = static_cast<long long>(ceil_div(p.m, Cfg::bm)) * ceil_div(p.n, Cfg::bn);
    long long const main = static_cast<long long>(m_main / Cfg::bm) * (n_main / Cfg::bn);
    split = slots > 0 && (main + slots - 1) / slots < (full + slots - 1) / slots;
  }
  if (!split) return launch_one<Cfg, kFragDB>(p, s);
  problem q = p;
  q.m = m_main;
  q.n = n_main;
  launch_one<Cfg, kFragDB>(q, s);
  problem b = p;  // bottom strip: the last rem_m rows, every column
  b.m = rem_m;
  b.a = p.a + static_cast<long long>(m_main) * p.lda;
  b.c = p.c + static_cast<long long>(m_main) * p.ldc;
  problem r = p;  // right strip: the last rem_n columns of the first m_main rows
  r.m = m_main;
  r.n = rem_n;
  r.b = p.b + n_main;
  r.c = p.c + n_main;
  if (rem_m == 0) return launch_one<cfg_edge>(r, s);
  if (rem_n == 0) return launch_one<cfg_edge>(b, s);
  // Both strips share B's and C's row alignment (n_main is a multiple of 4).
  if (bc_vector_aligned(p))
    launch_pair_cfg<cfg_edge, true>(b, r, s);
  else
    launch_pair_cfg<cfg_edge, false>(b, r, s);
}
template <class Cfg, bool kFragDB = false>
cudaFuncAttributes attributes_any(bool aligned) {
  return aligned ? func_attributes(cp_async_kernel<Cfg, true, kFragDB>)
                 : func_attributes(cp_async_kernel<Cfg, false, kFragDB>);
}

template <class Cfg, bool kFragDB = false>
void const* kernel_any() {
  return reinterpret_cast<void const*>(cp_async_kernel<Cfg, true, kFragDB>);
}
/// The dispatcher's general launch: blockIdx.x the tile, blockIdx.y the split of K,
/// blockIdx.z the batch. A split's block runs the same tile code on a K-range of A and B
/// and writes its raw partial sums (alpha 1, beta 0) to its own slice of the workspace;
/// splitk_reduce adds the slices in index order afterwards, so no two blocks ever write
/// the same word and the result does not depend on which block finished first.
template <class Cfg, bool kVec, bool kFragDB>
__global__ void __launch_bounds__(Cfg::threads, Cfg::min_blocks)
    tiled_kernel(problem p, tiled_args args, int tiles_m, int tiles_n) {
#ifdef MEMLAB_GEMM_NO_CP_ASYNC
  __trap();
#else
  long long const z = blockIdx.z;
  problem q = p;
  q.a += z * args.stride_a;
  q.b += z * args.stride_b;
  if (args.splits > 1) {
    int const s = static_cast<int>(blockIdx.y);
    int const k0 = s * args.kchunk;
    q.k = min(args.kchunk, p.k - k0);
    q.a += k0;
    q.b += static_cast<long long>(k0) * p.ldb;
    q.c = args.ws + (z * args.splits + s) * static_cast<long long>(p.m) * args.ws_ld;
    q.ldc = args.ws_ld;
    q.alpha = 1.f;
    q.beta = 0.f;
  } else {
    q.c += z * args.stride_c;
  }
  cp_async_tile<Cfg, kVec, kFragDB>(q, tiles_m, tiles_n, static_cast<int>(blockIdx.x));
#endif
}

template <class Cfg, bool kFragDB>
void launch_tiled_cfg(problem const& p, tiled_args const& args, cudaStream_t s) {
  bool const vec = tiled_vector_ok(p, args);
  auto kernel = vec ? tiled_kernel<Cfg, true, kFragDB> : tiled_kernel<Cfg, false, kFragDB>;
  if (Cfg::smem_bytes > 48 * 1024)
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::smem_bytes));
  int const tm = ceil_div(p.m, Cfg::bm), tn = ceil_div(p.n, Cfg::bn);
  dim3 const grid(static_cast<unsigned>(tm) * tn, static_cast<unsigned>(args.splits > 1 ? args.splits : 1),
                  static_cast<unsigned>(args.batch));
  kernel<<<grid, Cfg::threads, Cfg::smem_bytes, s>>>(p, args, tm, tn);
  MEMLAB_CHECK_LAUNCH();
}
}  // namespace

bool tiled_vector_ok(problem const& p, tiled_args const& args) {
  auto al = [](void const* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
  bool const b_ok = p.ldb % 4 == 0 && al(p.b) && (args.batch <= 1 || args.stride_b % 4 == 0);
  bool const c_ok = args.splits > 1 ? (args.ws_ld % 4 == 0 && al(args.ws))
                                    : (p.ldc % 4 == 0 && al(p.c) && (args.batch <= 1 || args.stride_c % 4 == 0));
  return b_ok && c_ok;
}

std::vector<tile_info> const& tile_table() {
  // Efficiencies: the model's fraction of the FFMA peak with the SM full, from the H200
  // ladder (docs/gemm-notes.md: 128x256_db 0.96 of cuBLAS at 86 % of peak; 128x128 w64
  // ~0.85; 64x64 ~0.70); the two new tiles are guesses between, to be replaced by measurement.
  static std::vector<tile_info> const t{
      {tile_kind::t128x256, "tile_128x256", 128, 256, 8, cfg_128x256::threads, 1, cfg_128x256::smem_bytes, 0.80, cfg_128x256::stages},
      {tile_kind::t128x128, "tile_128x128", 128, 128, 8, cfg_128x128_w64::threads, 2, cfg_128x128_w64::smem_bytes, 0.72, cfg_128x128_w64::stages},
      {tile_kind::t64x128, "tile_64x128", 64, 128, 8, cfg_64x128::threads, cfg_64x128::min_blocks, cfg_64x128::smem_bytes, 0.64, cfg_64x128::stages},
      {tile_kind::t64x64, "tile_64x64", 64, 64, 8, cfg_64x64::threads, cfg_64x64::min_blocks, cfg_64x64::smem_bytes, 0.58, cfg_64x64::stages},
      {tile_kind::t32x64, "tile_32x64", 32, 64, 8, cfg_32x64::threads, cfg_32x64::min_blocks, cfg_32x64::smem_bytes, 0.45, cfg_32x64::stages},
      // A guess (2 LDS.128 per 16 FFMA, like tile_32x64's lanes): it runs memory-bound where
      // it is picked.
      {tile_kind::t64x16, "tile_64x16", 64, 16, 16, cfg_64x16::threads, cfg_64x16::min_blocks, cfg_64x16::smem_bytes, 0.40, cfg_64x16::stages},
  };
  return t;
}

tile_info const* find_tile(std::string const& name) {
  for (auto const& t : tile_table())
    if (name == t.name) return &t;
  return nullptr;
}

void launch_tiled(tile_kind t, problem const& p, tiled_args const& args, cudaStream_t s) {
  switch (t) {
    case tile_kind::t128x256: return launch_tiled_cfg<cfg_128x256, true>(p, args, s);
    case tile_kind::t128x128: return launch_tiled_cfg<cfg_128x128_w64, true>(p, args, s);
    case tile_kind::t64x128: return launch_tiled_cfg<cfg_64x128, false>(p, args, s);
    case tile_kind::t64x64: return launch_tiled_cfg<cfg_64x64, false>(p, args, s);
    case tile_kind::t32x64: return launch_tiled_cfg<cfg_32x64, false>(p, args, s);
    case tile_kind::t64x16: return launch_tiled_cfg<cfg_64x16, false>(p, args, s);
  }
}

void launch_cp_async_128x128(problem const& p, cudaStream_t s) { launch_any<cfg_128x128>(p, s); }
void launch_cp_async_128x128_w64x64(problem const& p, cudaStream_t s) { launch_any<cfg_128x128_w64>(p, s); }
void launch_cp_async_128x256(problem const& p, cudaStream_t s) { launch_any<cfg_128x256>(p, s); }
void launch_cp_async_64x64(problem const& p, cudaStream_t s) { launch_any<cfg_64x64>(p, s); }
void launch_cp_async_128x256_k16(problem const& p, cudaStream_t s) { launch_any<cfg_128x256_k16>(p, s); }
void launch_cp_async_128x256_k16_s4(problem const& p, cudaStream_t s) { launch_any<cfg_128x256_k16_s4>(p, s); }
cudaFuncAttributes attributes_cp_async_128x256_k16_s4(bool v) { return attributes_any<cfg_128x256_k16_s4>(v); }
void launch_cp_async_256x128(problem const& p, cudaStream_t s) { launch_any<cfg_256x128>(p, s); }
void launch_cp_async_128x256_db(problem const& p, cudaStream_t s) { launch_any<cfg_128x256, true>(p, s); }
void launch_cp_async_128x256_k16_db(problem const& p, cudaStream_t s) { launch_any<cfg_128x256_k16, true>(p, s); }
void launch_cp_async_128x128_w64x64_db(problem const& p, cudaStream_t s) { launch_any<cfg_128x128_w64, true>(p, s); }
cudaFuncAttributes attributes_cp_async_128x256_db(bool v) { return attributes_any<cfg_128x256, true>(v); }
cudaFuncAttributes attributes_cp_async_128x256_k16_db(bool v) { return attributes_any<cfg_128x256_k16, true>(v); }
cudaFuncAttributes attributes_cp_async_128x128_w64x64_db(bool v) { return attributes_any<cfg_128x128_w64, true>(v); }

cudaFuncAttributes attributes_cp_async_128x256_k16(bool v) { return attributes_any<cfg_128x256_k16>(v); }
cudaFuncAttributes attributes_cp_async_256x128(bool v) { return attributes_any<cfg_256x128>(v); }
cudaFuncAttributes attributes_cp_async_128x128(bool v) { return attributes_any<cfg_128x128>(v); }
cudaFuncAttributes attributes_cp_async_128x128_w64x64(bool v) { return attributes_any<cfg_128x128_w64>(v); }
cudaFuncAttributes attributes_cp_async_128x256(bool v) { return attributes_any<cfg_128x256>(v); }
cudaFuncAttributes attributes_cp_async_64x64(bool v) { return attributes_any<cfg_64x64>(v); }

void const* kernel_cp_async_128x128() { return kernel_any<cfg_128x128>(); }
void const* kernel_cp_async_128x128_w64x64() { return kernel_any<cfg_128x128_w64>(); }
void const* kernel_cp_async_128x256() { return kernel_any<cfg_128x256>(); }
void const* kernel_cp_async_64x64() { return kernel_any<cfg_64x64>(); }
void const* kernel_cp_async_128x256_k16() { return kernel_any<cfg_128x256_k16>(); }
void const* kernel_cp_async_128x256_k16_s4() { return kernel_any<cfg_128x256_k16_s4>(); }
void const* kernel_cp_async_256x128() { return kernel_any<cfg_256x128>(); }
void const* kernel_cp_async_128x256_db() { return kernel_any<cfg_128x256, true>(); }
void const* kernel_cp_async_128x256_k16_db() { return kernel_any<cfg_128x256_k16, true>(); }
void const* kernel_cp_async_128x128_w64x64_db() { return kernel_any<cfg_128x128_w64, true>(); }

}  // namespace memlab::detail::gemm
