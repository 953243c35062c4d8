// The dispatcher's helper kernels: the skinny (GEMV-like) paths for m or n <= 16, the
// fixed-order split-K reduction, and the transpose that packs op(A) = A^T / op(B) = B^T
// into the row-major form the tiled kernels read. Plain CUDA (no cp.async): every
// architecture runs them.
//
// Skinny shapes are memory-bound: C = A B with m <= 16 reads all of B (k x n) once for
// 2 m FLOP per element, far below the ~15 FLOP/byte where FFMA would limit. So the
// kernels only have to keep enough bytes in flight per SM (about 32 KB on an H100) and
// read the big operand ("X") exactly once, coalesced; the small one ("S", at most 16
// vectors of length k) is staged in shared memory and reused by every thread.
#include <cstdint>

#include "kernels/gemm/common.cuh"

namespace memlab::detail::gemm {
namespace {

constexpr int kSkinnyThreads = 256;
constexpr int kStreamKc = 128;  // k values of S staged per step (stream kernel)
// The stream kernel's block: kStreamGroups groups of threads walk the same outputs over
// different quarters of each staged step and sum in shared memory at the end (in group
// order: deterministic). A block covers kStreamOut outputs, so a 4096-wide GEMV has 16
// blocks per split instead of 4: with 32 splits 512 blocks, about 4 per SM — one block an
// SM kept ~32 KB in flight and reached 1.3 TB/s on the H200 (gemm.shapes, first run).
constexpr int kStreamGroups = 4;
constexpr int kStreamLanes = kSkinnyThreads / kStreamGroups;
constexpr int kStreamOut = kStreamLanes * 4;
constexpr int kDotKc = 128;    // k values per step of the dot kernel: 32 lanes x 4
constexpr int kDotRows = 4;    // X rows per warp in the dot kernel

/// Where split `sp` of batch `z` writes: the output (no split) or its workspace slice.
struct skinny_out {
  float* base;
  long long o_s, o_x;
  float alpha, beta;
  bool raw;  ///< partial sums (alpha 1, beta 0, C not read)
};
__device__ __forceinline__ skinny_out out_for(skinny_args const& a, long long z, int sp) {
  if (a.splits > 1)
    return {a.ws + (z * a.splits + sp) * static_cast<long long>(a.s_count) * a.x_count,
            static_cast<long long>(a.x_count), 1LL, 1.f, 0.f, true};
  return {a.o + z * a.o_batch, a.o_s, a.o_x, a.alpha, a.beta, false};
}
__device__ __forceinline__ void put(skinny_out const& o, int i, int j, float acc) {
  float* p = o.base + i * o.o_s + j * o.o_x;
  *p = (o.raw || o.beta == 0.f) ? o.alpha * acc : o.alpha * acc + o.beta * *p;
}

/// This block's share of a skinny problem: batch z (blockIdx.z), split sp (blockIdx.y), the
/// split's K range, and the batch's X and S.
struct skinny_slice {
  long long z;
  int sp, k_begin, k_end;
  float const* xs;
  float const* sb;
};
__device__ __forceinline__ skinny_slice slice_of(skinny_args const& a) {
  long long const z = blockIdx.z;
  int const sp = static_cast<int>(blockIdx.y);
  int const k_begin = a.splits > 1 ? sp * a.kchunk : 0;
  int const k_end = a.splits > 1 ? min(a.k, k_begin + a.kchunk) : a.k;
  return {z, sp, k_begin, k_end, a.x + z * a.x_batch, a.s + z * a.s_batch};
}

/// S(i, k0 .. k0 + KC) into shared memory (zero past s_count and k_end). Consecutive
/// threads walk S's contiguous direction: k when s_k == 1, i otherwise (S = op(B)'s columns
/// of a row-major B: the i of one k are adjacent). Rows padded by 4 floats: the i-major
/// stores spread over banks, and rows stay 16-byte aligned for the float4 reads.
template <int S, int KC>
__device__ __forceinline__ void stage_s(skinny_args const& a, float const* sb, int k0, int k_end,
                                        float (&ss)[S][KC + 4]) {
  bool const i_major = a.s_k != 1;
  for (int e = static_cast<int>(threadIdx.x); e < S * KC; e += kSkinnyThreads) {
    int const i = i_major ? e % S : e / KC, t = i_major ? e / S : e % KC, kk = k0 + t;
    ss[i][t] = (i < a.s_count && kk < k_end) ? sb[i * a.s_vec + static_cast<long long>(kk) * a.s_k] : 0.f;
  }
}

/// X(j, kk) contiguous in j (x_pos == 1): each thread owns 4 outputs j of every S row and
/// walks its group's quarter of every staged step of the split's K range; S(i, kk) comes
/// from shared memory as a broadcast. VEC: the 4 j are one 16-byte load; otherwise lanes
/// take j = t, t + 64, ... (still coalesced).
template <int S, bool VEC>
__global__ void __launch_bounds__(kSkinnyThreads) skinny_stream_kernel(skinny_args a) {
  __shared__ __align__(16) float ss[S][kStreamKc + 4];
  auto const [z, sp, k_begin, k_end, xs, sb] = slice_of(a);
  int const tid = static_cast<int>(threadIdx.x);
  int const lane = tid % kStreamLanes, group = tid / kStreamLanes;
  int const j_block = static_cast<int>(blockIdx.x) * kStreamOut;
  int j[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) j[q] = VEC ? j_block + lane * 4 + q : j_block + lane + q * kStreamLanes;
  float acc[S][4];
#pragma unroll
  for (int i = 0; i < S; ++i)
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[i][q] = 0.f;

  for (int k0 = k_begin; k0 < k_end; k0 += kStreamKc) {
    __syncthreads();  // the previous step's reads of ss are done
    stage_s<S, kStreamKc>(a, sb, k0, k_end, ss);
    __syncthreads();
    int const steps = min(kStreamKc, k_end - k0);
    // 4 k values per step: 4 loads of X in flight per thread (8 with the unroll), and S's
    // 4 values of each row in one 16-byte shared load (1 LDS per 16 FFMA).
    // A fixed trip count (the tail chunk's extra steps load nothing: k_ok is false there).
    constexpr int kPerGroup = kStreamKc / kStreamGroups;
#pragma unroll 2
    for (int tt = 0; tt < kPerGroup; tt += 4) {
      int const t = group * kPerGroup + tt;
      float x[4][4];
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        bool const k_ok = t + u < steps;
        float const* const row = xs + static_cast<long long>(k0 + t + u) * a.x_k;
        if (VEC) {
          // x_count % 4 == 0 on this path: all four or none. Out of range, the load reads
          // X's first element (always valid here) and the select drops it: no branch.
          bool const ok = k_ok && j[0] < a.x_count;
          float4 const v = __ldg(reinterpret_cast<float4 const*>(ok ? row + j[0] : xs));
          x[u][0] = ok ? v.x : 0.f, x[u][1] = ok ? v.y : 0.f, x[u][2] = ok ? v.z : 0.f, x[u][3] = ok ? v.w : 0.f;
        } else {
#pragma unroll
          for (int q = 0; q < 4; ++q) x[u][q] = (k_ok && j[q] < a.x_count) ? __ldg(row + j[q]) : 0.f;
        }
      }
#pragma unroll
      for (int i = 0; i < S; ++i) {
        float4 const sv = *reinterpret_cast<float4 const*>(&ss[i][t]);
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          acc[i][q] = fmaf(sv.x, x[0][q], acc[i][q]);
          acc[i][q] = fmaf(sv.y, x[1][q], acc[i][q]);
          acc[i][q] = fmaf(sv.z, x[2][q], acc[i][q]);
          acc[i][q] = fmaf(sv.w, x[3][q], acc[i][q]);
        }
      }
    }
  }
  // The groups' partial sums, one S row at a time through 4 KB of shared memory; group 0
  // adds them in group order and writes.
  __shared__ float4 red[kStreamGroups][kStreamLanes];
  skinny_out const o = out_for(a, z, sp);
#pragma unroll
  for (int i = 0; i < S; ++i) {
    if (i >= a.s_count) break;  // uniform over the block: the barriers below stay matched
    __syncthreads();
    red[group][lane] = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
    __syncthreads();
    if (group == 0) {
      float sum[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int g = 0; g < kStreamGroups; ++g) {
        float4 const v = red[g][lane];
        sum[0] += v.x, sum[1] += v.y, sum[2] += v.z, sum[3] += v.w;
      }
#pragma unroll
      for (int q = 0; q < 4; ++q)
        if (j[q] < a.x_count) put(o, i, j[q], sum[q]);
    }
  }
}

/// X(j, kk) contiguous in kk (x_k == 1): each warp owns kDotRows rows j; a lane reads 4
/// consecutive kk of each (one 16-byte load when VEC), multiplies them with S's 4 values
/// from shared memory, and the warp sums its lanes with a fixed butterfly at the end.
template <int S, bool VEC>
__global__ void __launch_bounds__(kSkinnyThreads) skinny_dot_kernel(skinny_args a) {
  __shared__ __align__(16) float ss[S][kDotKc + 4];
  auto const [z, sp, k_begin, k_end, xs, sb] = slice_of(a);
  int const tid = static_cast<int>(threadIdx.x), lane = tid % 32, warp = tid / 32;
  int const j0 = (static_cast<int>(blockIdx.x) * (kSkinnyThreads / 32) + warp) * kDotRows;
  float acc[kDotRows][S];
#pragma unroll
  for (int r = 0; r < kDotRows; ++r)
#pragma unroll
    for (int i = 0; i < S; ++i) acc[r][i] = 0.f;

  for (int k0 = k_begin; k0 < k_end; k0 += kDotKc) {
    // X first: its DRAM latency overlaps the staging of S and the two barriers.
    int const kk = k0 + lane * 4;  // this lane's 4 k values
    float x[kDotRows][4];
#pragma unroll
    for (int r = 0; r < kDotRows; ++r) {
      int const j = j0 + r;
      float const* const row = xs + static_cast<long long>(j) * a.x_pos;
      if (VEC && j < a.x_count && kk + 3 < k_end) {
        float4 const v = __ldg(reinterpret_cast<float4 const*>(row + kk));
        x[r][0] = v.x, x[r][1] = v.y, x[r][2] = v.z, x[r][3] = v.w;
      } else {
#pragma unroll
        for (int q = 0; q < 4; ++q) x[r][q] = (j < a.x_count && kk + q < k_end) ? __ldg(row + kk + q) : 0.f;
      }
    }
    __syncthreads();
    stage_s<S, kDotKc>(a, sb, k0, k_end, ss);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < S; ++i) {
      float4 const sv = *reinterpret_cast<float4 const*>(&ss[i][lane * 4]);
#pragma unroll
      for (int r = 0; r < kDotRows; ++r) {
        acc[r][i] = fmaf(sv.x, x[r][0], acc[r][i]);
        acc[r][i] = fmaf(sv.y, x[r][1], acc[r][i]);
        acc[r][i] = fmaf(sv.z, x[r][2], acc[r][i]);
        acc[r][i] = fmaf(sv.w, x[r][3], acc[r][i]);
      }
    }
  }
  // Butterfly: every lane ends with the same sums, added in the same order on every run.
#pragma unroll
  for (int r = 0; r < kDotRows; ++r)
#pragma unroll
    for (int i = 0; i < S; ++i)
#pragma unroll
      for (int off = 16; off > 0; off /= 2) acc[r][i] += __shfl_xor_sync(0xffffffffu, acc[r][i], off);
  skinny_out const o = out_for(a, z, sp);
#pragma unroll
  for (int r = 0; r < kDotRows; ++r)
#pragma unroll
    for (int i = 0; i < S; ++i)
      if (lane == (r * S + i) % 32 && i < a.s_count && j0 + r < a.x_count) put(o, i, j0 + r, acc[r][i]);
}

/// The fixed-order split-K reduction. A thread owns V consecutive outputs of a row (V = 4:
/// 16-byte loads of every partial, when the workspace rows allow it); a block covers
/// `256 / groups` consecutive such vectors (coalesced: consecutive threads, consecutive
/// columns); group g of its threads sums the g-th contiguous range of splits in index order,
/// and group 0 adds the groups' sums in group order. A thread issues B loads at a time and
/// adds them in index order. The order of the additions does not depend on V.
template <int V>
__global__ void __launch_bounds__(256) splitk_reduce_kernel(float const* __restrict__ ws, long long slice,
                                                             long long ws_ld, int splits, int groups, int rows,
                                                             int cols, float alpha, float beta, float* c,
                                                             long long c_row, long long c_col, long long stride_c) {
  constexpr int B = V == 4 ? 4 : 8;  // 64 or 32 bytes of loads in flight a thread
  __shared__ float part[V][256];
  long long const z = blockIdx.y;
  long long const vcols = (cols + V - 1) / V;
  long long const vtotal = static_cast<long long>(rows) * vcols;
  float const* const base = ws + z * splits * slice;
  float* const cz = c + z * stride_c;
  int const tid = static_cast<int>(threadIdx.x);
  int const width = 256 / groups, lane = tid % width, g = tid / width;
  int const per = (splits + groups - 1) / groups;
  int const s_begin = min(splits, g * per), s_end = min(splits, s_begin + per);
  long long const chunks = (vtotal + width - 1) / width;
  for (long long ch = blockIdx.x; ch < chunks; ch += gridDim.x) {  // uniform over the block
    long long const e = ch * width + lane;
    bool const ok = e < vtotal;
    long long const r = ok ? e / vcols : 0, col = ok ? (e % vcols) * V : 0;
    float acc[V] = {};
    if (ok) {
      float const* const p = base + r * ws_ld + col;
      for (int s = s_begin; s < s_end; s += B) {  // B loads issued, then added in index order
        float v[B][V];
#pragma unroll
        for (int q = 0; q < B; ++q) {
          if constexpr (V == 4) {
            float4 const x = s + q < s_end ? __ldg(reinterpret_cast<float4 const*>(p + (s + q) * slice))
                                           : make_float4(0.f, 0.f, 0.f, 0.f);
            v[q][0] = x.x, v[q][1] = x.y, v[q][2] = x.z, v[q][3] = x.w;
          } else {
            v[q][0] = s + q < s_end ? __ldg(p + (s + q) * slice) : 0.f;
          }
        }
#pragma unroll
        for (int q = 0; q < B; ++q)
          if (s + q < s_end)
#pragma unroll
            for (int i = 0; i < V; ++i) acc[i] += v[q][i];
      }
    }
    if (groups > 1) {
      __syncthreads();  // the previous chunk's reads of part are done
#pragma unroll
      for (int i = 0; i < V; ++i) part[i][tid] = acc[i];
      __syncthreads();
      if (g != 0) continue;
#pragma unroll
      for (int i = 0; i < V; ++i) {
        acc[i] = 0.f;
        for (int q = 0; q < groups; ++q) acc[i] += part[i][q * width + lane];
      }
    }
    if (!ok) continue;
    float* const out = cz + r * c_row + col * c_col;
    if constexpr (V == 4) {
      if (c_col == 1 && col + 4 <= cols && reinterpret_cast<std::uintptr_t>(out) % 16 == 0) {
        float4 o = make_float4(alpha * acc[0], alpha * acc[1], alpha * acc[2], alpha * acc[3]);
        if (beta != 0.f) {
          float4 const old = *reinterpret_cast<float4 const*>(out);
          o.x += beta * old.x, o.y += beta * old.y, o.z += beta * old.z, o.w += beta * old.w;
        }
        *reinterpret_cast<float4*>(out) = o;
        continue;
      }
    }
#pragma unroll
    for (int i = 0; i < V; ++i) {
      if (col + i >= cols) break;
      float* const o = out + i * c_col;
      *o = beta == 0.f ? alpha * acc[i] : alpha * acc[i] + beta * *o;
    }
  }
}

/// 32 x 32 tiles through shared memory (padded against bank conflicts), both sides coalesced.
__global__ void pack_transpose_kernel(float const* __restrict__ src, long long ld_src, long long stride_src,
                                      int out_rows, int out_cols, float* __restrict__ dst, long long ld_dst,
                                      long long stride_dst) {
  __shared__ float tile[32][33];
  long long const z = blockIdx.z;
  int const r0 = static_cast<int>(blockIdx.y) * 32, c0 = static_cast<int>(blockIdx.x) * 32;
  int const tx = static_cast<int>(threadIdx.x), ty = static_cast<int>(threadIdx.y);
  float const* const s = src + z * stride_src;
  float* const d = dst + z * stride_dst;
  // dst(r, c) = src(c, r): read src rows c0.., columns r0.. (contiguous in r).
  for (int i = ty; i < 32; i += 8) {
    int const c = c0 + i, r = r0 + tx;
    if (c < out_cols && r < out_rows) tile[i][tx] = s[static_cast<long long>(c) * ld_src + r];
  }
  __syncthreads();
  for (int i = ty; i < 32; i += 8) {
    int const r = r0 + i, c = c0 + tx;
    if (r < out_rows && c < out_cols) d[static_cast<long long>(r) * ld_dst + c] = tile[tx][i];
  }
}

template <int S>
void launch_skinny_s(skinny_args const& a, bool vec, cudaStream_t st) {
  unsigned const ys = static_cast<unsigned>(a.splits > 1 ? a.splits : 1);
  unsigned const zs = static_cast<unsigned>(a.batch);
  if (a.x_pos == 1) {
    unsigned const xs = static_cast<unsigned>(ceil_div(a.x_count, kStreamOut));
    if (vec)
      skinny_stream_kernel<S, true><<<dim3(xs, ys, zs), kSkinnyThreads, 0, st>>>(a);
    else
      skinny_stream_kernel<S, false><<<dim3(xs, ys, zs), kSkinnyThreads, 0, st>>>(a);
  } else {
    unsigned const xs = static_cast<unsigned>(ceil_div(a.x_count, (kSkinnyThreads / 32) * kDotRows));
    if (vec)
      skinny_dot_kernel<S, true><<<dim3(xs, ys, zs), kSkinnyThreads, 0, st>>>(a);
    else
      skinny_dot_kernel<S, false><<<dim3(xs, ys, zs), kSkinnyThreads, 0, st>>>(a);
  }
  MEMLAB_CHECK_LAUNCH();
}
}  // namespace

bool skinny_vector_ok(skinny_args const& a) {
  auto al = [](void const* q) { return reinterpret_cast<std::uintptr_t>(q) % 16 == 0; };
  if (!al(a.x) || (a.batch > 1 && a.x_batch % 4 != 0)) return false;
  if (a.x_pos == 1) return a.x_count % 4 == 0 && a.x_k % 4 == 0;  // every row of X a whole number of float4
  return a.x_k == 1 && a.x_pos % 4 == 0 && (a.splits <= 1 || a.kchunk % 4 == 0);
}

void launch_skinny(skinny_args const& a, bool vec, cudaStream_t st) {
  if (a.s_count <= 1) return launch_skinny_s<1>(a, vec, st);
  if (a.s_count <= 2) return launch_skinny_s<2>(a, vec, st);
  if (a.s_count <= 4) return launch_skinny_s<4>(a, vec, st);
  if (a.s_count <= 8) return launch_skinny_s<8>(a, vec, st);
  return launch_skinny_s<16>(a, vec, st);
}

void launch_splitk_reduce(float const* ws, long long slice, long long ws_ld, int splits, int rows, int cols, int batch,
                          float alpha, float beta, float* c, long long c_row, long long c_col, long long stride_c,
                          cudaStream_t st) {
  // 16-byte loads when every partial row starts on 16 bytes (the tile path's rows are
  // round4(n) floats; the skinny path's are x_count floats).
  bool const vec = ws_ld % 4 == 0 && slice % 4 == 0 && reinterpret_cast<std::uintptr_t>(ws) % 16 == 0;
  int const v = vec ? 4 : 1;
  long long const vtotal = static_cast<long long>(rows) * ((cols + v - 1) / v);
  int const groups = splitk_reduce_groups(vtotal * batch, splits);
  long long const want = (vtotal + 256 / groups - 1) / (256 / groups);
  unsigned const blocks = static_cast<unsigned>(want < 4096 ? (want > 0 ? want : 1) : 4096);
  dim3 const grid(blocks, static_cast<unsigned>(batch));
  if (vec)
    splitk_reduce_kernel<4><<<grid, 256, 0, st>>>(ws, slice, ws_ld, splits, groups, rows, cols, alpha, beta, c, c_row,
                                                  c_col, stride_c);
  else
    splitk_reduce_kernel<1><<<grid, 256, 0, st>>>(ws, slice, ws_ld, splits, groups, rows, cols, alpha, beta, c, c_row,
                                                  c_col, stride_c);
  MEMLAB_CHECK_LAUNCH();
}

void launch_pack_transpose(float const* src, long long ld_src, long long stride_src, int out_rows, int out_cols,
                           float* dst, long long ld_dst, long long stride_dst, int batch, cudaStream_t st) {
  if (out_rows <= 0 || out_cols <= 0) return;  // k = 0: nothing to pack (and a grid of 0 is invalid)
  for (int z0 = 0; z0 < batch; z0 += 65535) {  // gridDim.z holds at most 65535 entries
    int const nz = batch - z0 < 65535 ? batch - z0 : 65535;
    dim3 const grid(static_cast<unsigned>(ceil_div(out_cols, 32)), static_cast<unsigned>(ceil_div(out_rows, 32)),
                    static_cast<unsigned>(nz));
    pack_transpose_kernel<<<grid, dim3(32, 8), 0, st>>>(src + z0 * stride_src, ld_src, stride_src, out_rows, out_cols,
                                                       dst + z0 * stride_dst, ld_dst, stride_dst);
    MEMLAB_CHECK_LAUNCH();
  }
}

}  // namespace memlab::detail::gemm
