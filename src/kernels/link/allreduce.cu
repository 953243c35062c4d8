// memlab::peer_allreduce (include/memlab/allreduce.hpp): one-shot and two-shot all-reduce
// through peer memory, synchronised per CTA with epoch flags (never reset).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "kernels/link/partition.hpp"
#include "memlab/allreduce.hpp"
#include "memlab/error.hpp"
#include "memlab/device.hpp"

namespace memlab {
namespace {

constexpr int max_ranks = allreduce_max_ranks;
constexpr int max_blocks = allreduce_max_blocks;
constexpr int rounds = 2;  // round 0: inputs staged; round 1 (two-shot): reduced shards ready
/// A wait that lasts this long means a peer's kernel never ran (a serialising tool, a rank whose
/// stream never reached the call): trap instead of hanging the process.
constexpr unsigned long long spin_timeout_ns = 10ull * 1000 * 1000 * 1000;

struct ar_args {
  float const* in;
  float* out;
  float* scratch[max_ranks];         ///< each rank's scratch of this call's parity: `ranks` slots
  std::size_t slot;                  ///< floats per slot
  std::uint32_t* flags[max_ranks];   ///< each rank's flag array [rounds][ranks][max_blocks]
  int rank, ranks;
  std::size_t count;
  std::uint32_t epoch;
};

__device__ __forceinline__ void store_release_sys(std::uint32_t* p, std::uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ std::uint32_t load_acquire_sys(std::uint32_t const* p) {
  std::uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// CTA `b` of every rank meets here: thread t < ranks tells rank t that this CTA's writes are
/// done (fence, then a release store of the epoch into rank t's slot for us) and waits until
/// rank t's CTA b has told us the same. Epochs grow by one per call, so a slot holding an
/// epoch >= ours is a completed arrival and nothing is ever reset.
__device__ void cta_barrier(ar_args const& a, int round) {
  __syncthreads();
  int const t = static_cast<int>(threadIdx.x);
  if (t < a.ranks) {
    std::size_t const per_round = static_cast<std::size_t>(a.ranks) * max_blocks;
    __threadfence_system();  // this CTA's scratch writes, seen by every thread via the bar.sync
    store_release_sys(a.flags[t] + round * per_round + static_cast<std::size_t>(a.rank) * max_blocks + blockIdx.x,
                      a.epoch);
    std::uint32_t const* mine =
        a.flags[a.rank] + round * per_round + static_cast<std::size_t>(t) * max_blocks + blockIdx.x;
    unsigned long long const t0 = global_ns();
    while (static_cast<std::int32_t>(load_acquire_sys(mine) - a.epoch) < 0) {
      if (global_ns() - t0 > spin_timeout_ns) __trap();
    }
  }
  __syncthreads();
}

__device__ __forceinline__ void add4(float4& acc, float4 const v) {
  acc.x += v.x;
  acc.y += v.y;
  acc.z += v.z;
  acc.w += v.w;
}

/// Sum over ranks in order 0..N-1 of vector i of every rank's scratch (L2 loads: the data was
/// written by another GPU during this kernel, so no L1 line of it may be trusted).
__device__ __forceinline__ float4 sum_ranks(ar_args const& a, std::size_t i) {
  float4 v[max_ranks];
#pragma unroll
  for (int k = 0; k < max_ranks; ++k)
    if (k < a.ranks) v[k] = __ldcg(reinterpret_cast<float4 const*>(a.scratch[k]) + i);
  float4 acc = v[0];
#pragma unroll
  for (int k = 1; k < max_ranks; ++k)
    if (k < a.ranks) add4(acc, v[k]);
  return acc;
}

/// One-shot's sum of vector i over the slots of our own scratch, in rank order (the slots were
/// written by the other GPUs during this kernel: L2 loads, no L1 line of them is trusted).
__device__ __forceinline__ float4 sum_slots(ar_args const& a, std::size_t i) {
  auto const* mine = reinterpret_cast<float4 const*>(a.scratch[a.rank]);
  std::size_t const slot4 = a.slot / 4;
  float4 v[max_ranks];
#pragma unroll
  for (int k = 0; k < max_ranks; ++k)
    if (k < a.ranks) v[k] = __ldcg(mine + k * slot4 + i);
  float4 acc = v[0];
#pragma unroll
  for (int k = 1; k < max_ranks; ++k)
    if (k < a.ranks) add4(acc, v[k]);
  return acc;
}

/// The count % 4 trailing floats: CTA 0 of every rank stages them and sums them itself
/// (two-shot: in slot 0 of its own scratch, read by the others; one-shot: pushed into slot
/// `rank` of every rank's scratch, summed from its own slots).
__device__ void stage_tail(ar_args const& a, std::size_t vecs) {
  std::size_t const i = vecs * 4 + threadIdx.x;
  if (blockIdx.x == 0 && i < a.count) a.scratch[a.rank][i] = a.in[i];
}
__device__ void reduce_tail(ar_args const& a, std::size_t vecs) {
  std::size_t const i = vecs * 4 + threadIdx.x;
  if (blockIdx.x == 0 && i < a.count) {
    float acc = __ldcg(a.scratch[0] + i);
    for (int k = 1; k < a.ranks; ++k) acc += __ldcg(a.scratch[k] + i);
    a.out[i] = acc;
  }
}

__global__ void one_shot_kernel(ar_args a) {
  std::size_t const vecs = a.count / 4;
  link::vec_range const r = link::one_shot_slice(vecs, gridDim.x, blockIdx.x);
  std::size_t const slot4 = a.slot / 4;
  auto const* in4 = reinterpret_cast<float4 const*>(a.in);
  // Push: our slice into slot `rank` of every rank's scratch. Stores to another GPU are posted
  // (no round trip), so the data travels with, not before, the flag that follows it.
  for (std::size_t i = r.lo + threadIdx.x; i < r.hi; i += blockDim.x) {
    float4 const v = in4[i];
#pragma unroll
    for (int k = 0; k < max_ranks; ++k)
      if (k < a.ranks) __stcg(reinterpret_cast<float4*>(a.scratch[k]) + a.rank * slot4 + i, v);
  }
  std::size_t const t = vecs * 4 + threadIdx.x;
  if (blockIdx.x == 0 && t < a.count) {
    float const v = a.in[t];
    for (int k = 0; k < a.ranks; ++k) a.scratch[k][a.rank * a.slot + t] = v;
  }
  cta_barrier(a, 0);
  auto* out4 = reinterpret_cast<float4*>(a.out);
  for (std::size_t i = r.lo + threadIdx.x; i < r.hi; i += blockDim.x) out4[i] = sum_slots(a, i);
  if (blockIdx.x == 0 && t < a.count) {
    float const* mine = a.scratch[a.rank];
    float acc = __ldcg(mine + t);
    for (int k = 1; k < a.ranks; ++k) acc += __ldcg(mine + k * a.slot + t);
    a.out[t] = acc;
  }
}

__global__ void two_shot_kernel(ar_args a) {
  std::size_t const vecs = a.count / 4;
  // CTA b owns the same slice of every shard in all three phases, so it only ever waits for
  // CTA b of the other ranks.
  auto slice = [&](int k, std::size_t& lo, std::size_t& hi) {
    link::vec_range const r = link::two_shot_slice(vecs, a.ranks, gridDim.x, k, blockIdx.x);
    lo = r.lo;
    hi = r.hi;
  };
  auto const* in4 = reinterpret_cast<float4 const*>(a.in);
  auto* mine = reinterpret_cast<float4*>(a.scratch[a.rank]);
  auto* out4 = reinterpret_cast<float4*>(a.out);
  std::size_t lo, hi;
  for (int k = 0; k < a.ranks; ++k) {
    slice(k, lo, hi);
    for (std::size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) mine[i] = in4[i];
  }
  stage_tail(a, vecs);
  cta_barrier(a, 0);
  // Reduce-scatter: shard `rank` summed over ranks, into the output and back into our scratch
  // (no other rank reads our copy of this shard before the next barrier).
  slice(a.rank, lo, hi);
  for (std::size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) {
    float4 const s = sum_ranks(a, i);
    out4[i] = s;
    __stcg(mine + i, s);
  }
  reduce_tail(a, vecs);
  cta_barrier(a, 1);
  // All-gather: every other shard from the rank that reduced it.
  for (int k = 0; k < a.ranks; ++k) {
    if (k == a.rank) continue;
    slice(k, lo, hi);
    auto const* theirs = reinterpret_cast<float4 const*>(a.scratch[k]);
    for (std::size_t i = lo + threadIdx.x; i < hi; i += blockDim.x) out4[i] = __ldcg(theirs + i);
  }
}

/// A 16-byte line of the low-latency protocol: two 64-bit words, each {epoch (high), float
/// bits (low)}. A 64-bit relaxed access is single-copy atomic (PTX memory model), so a word
/// that carries this call's epoch carries this call's float: no fence, no flag.
__device__ __forceinline__ void store_line_sys(void* p, unsigned long long w0, unsigned long long w1) {
  asm volatile("st.relaxed.sys.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(w0), "l"(w1) : "memory");
}
__device__ __forceinline__ void load_line_sys(void const* p, unsigned long long& w0, unsigned long long& w1) {
  asm volatile("ld.relaxed.sys.global.v2.u64 {%0, %1}, [%2];" : "=l"(w0), "=l"(w1) : "l"(p) : "memory");
}

/// Line i of the input as two floats (the second 0 past an odd count).
__device__ __forceinline__ float2 input_pair(ar_args const& a, std::size_t i) {
  if (2 * i + 1 < a.count) return reinterpret_cast<float2 const*>(a.in)[i];
  return make_float2(a.in[2 * i], 0.0f);
}

/// The pair of line i that rank k pushed into our scratch, once both words carry our epoch.
__device__ __forceinline__ float2 wait_pair(void const* line, std::uint32_t epoch) {
  unsigned long long w0, w1;
  load_line_sys(line, w0, w1);
  if (static_cast<std::uint32_t>(w0 >> 32) != epoch || static_cast<std::uint32_t>(w1 >> 32) != epoch) {
    unsigned long long const t0 = global_ns();
    do {
      if (global_ns() - t0 > spin_timeout_ns) __trap();
      load_line_sys(line, w0, w1);
    } while (static_cast<std::uint32_t>(w0 >> 32) != epoch || static_cast<std::uint32_t>(w1 >> 32) != epoch);
  }
  return make_float2(__uint_as_float(static_cast<std::uint32_t>(w0)), __uint_as_float(static_cast<std::uint32_t>(w1)));
}

/// Low-latency one-shot: every thread pushes its lines (8 bytes of input and the epoch, twice)
/// into slot `rank` of every other rank's scratch, then sums its lines over the ranks in
/// order, waiting on each peer's line in its own scratch. A line is read only by the thread
/// of the same index on the receiving rank, so nothing waits for anything but its own data.
__global__ void low_latency_kernel(ar_args a) {
  std::size_t const lines = (a.count + 1) / 2;
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t const first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::size_t const slot_lines = a.slot / 4;  // 16-byte lines per slot
  unsigned long long const tag = static_cast<unsigned long long>(a.epoch) << 32;
  for (std::size_t i = first; i < lines; i += stride) {
    float2 const d = input_pair(a, i);
    unsigned long long const w0 = tag | __float_as_uint(d.x), w1 = tag | __float_as_uint(d.y);
    for (int k = 0; k < a.ranks; ++k)
      if (k != a.rank)
        store_line_sys(reinterpret_cast<ulonglong2*>(a.scratch[k]) + static_cast<std::size_t>(a.rank) * slot_lines + i,
                       w0, w1);
  }
  auto const* mine = reinterpret_cast<ulonglong2 const*>(a.scratch[a.rank]);
  for (std::size_t i = first; i < lines; i += stride) {
    float2 const own = input_pair(a, i);
    float2 acc = a.rank == 0 ? own : wait_pair(mine + i, a.epoch);
    for (int k = 1; k < a.ranks; ++k) {
      float2 const v = k == a.rank ? own : wait_pair(mine + static_cast<std::size_t>(k) * slot_lines + i, a.epoch);
      acc.x += v.x;
      acc.y += v.y;
    }
    if (2 * i + 1 < a.count)
      reinterpret_cast<float2*>(a.out)[i] = acc;
    else
      a.out[2 * i] = acc.x;
  }
}

struct device_restore {
  int dev = 0;
  device_restore() { MEMLAB_CUDA_CHECK(cudaGetDevice(&dev)); }
  ~device_restore() { MEMLAB_CUDA_CHECK_NOTHROW(cudaSetDevice(dev)); }
};

}  // namespace

peer_allreduce::peer_allreduce(std::vector<int> devices, allreduce_options const& opt)
    : devices_(std::move(devices)), opt_(opt) {
  int const n = static_cast<int>(devices_.size());
  MEMLAB_EXPECTS(n >= 1 && n <= max_ranks, "peer_allreduce: 1 to " + std::to_string(max_ranks) + " ranks, got " +
                                               std::to_string(n));
  MEMLAB_EXPECTS(opt_.max_bytes >= 16 && opt_.max_bytes % 16 == 0, "peer_allreduce: max_bytes must be a positive multiple of 16");
  MEMLAB_EXPECTS(opt_.threads >= 32 && opt_.threads <= 1024 && opt_.threads % 32 == 0 && opt_.threads >= n,
                 "peer_allreduce: threads must be a multiple of 32 in 32..1024");
  MEMLAB_EXPECTS(opt_.blocks >= 0 && opt_.blocks <= max_blocks,
                 "peer_allreduce: blocks must be in 0.." + std::to_string(max_blocks));
  int const count = device_count();
  for (int d : devices_)
    MEMLAB_EXPECTS(d >= 0 && d < count, "peer_allreduce: no device " + std::to_string(d) + " (this machine has " +
                                            std::to_string(count) + ")");
  device_restore restore;
  // Peer access, each direction between distinct devices; refuse before allocating anything.
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      int const a = devices_[i], b = devices_[j];
      if (a == b) continue;
      int can = 0;
      MEMLAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a, b));
      MEMLAB_EXPECTS(can != 0, "peer_allreduce: device " + std::to_string(a) + " cannot access device " +
                                   std::to_string(b) + " (no NVLink or PCIe peer-to-peer between them)");
    }
  // The grid: every rank the same, small enough that ranks sharing a GPU all stay resident.
  int sharing = 1, sms = 1 << 30;
  for (int d : devices_) {
    sharing = std::max<int>(sharing, static_cast<int>(std::count(devices_.begin(), devices_.end(), d)));
    sms = std::min(sms, query_device(d).sm_count);
  }
  blocks_ = opt_.blocks > 0 ? opt_.blocks : std::min(max_blocks, std::max(1, sms / sharing));
  if (sharing > 1) blocks_ = std::min(blocks_, std::max(1, sms / sharing));
  try {
    for (int i = 0; i < n; ++i) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(devices_[i]));
      for (int j = 0; j < n; ++j) {
        int const peer = devices_[j];
        if (peer == devices_[i] ||
            std::find(enabled_.begin(), enabled_.end(), std::make_pair(devices_[i], peer)) != enabled_.end())
          continue;
        cudaError_t const st = cudaDeviceEnablePeerAccess(peer, 0);
        if (st == cudaErrorPeerAccessAlreadyEnabled) {
          (void)cudaGetLastError();  // someone else's: leave it on afterwards
        } else {
          MEMLAB_CUDA_CHECK(st);
          enabled_.emplace_back(devices_[i], peer);
        }
      }
      void* s = nullptr;
      MEMLAB_CUDA_CHECK(cudaMalloc(&s, 2 * static_cast<std::size_t>(n) * opt_.max_bytes));
      scratch_.push_back(s);
      // Zero: no low-latency word may carry an epoch before a call wrote it (epochs skip 0).
      MEMLAB_CUDA_CHECK(cudaMemset(s, 0, 2 * static_cast<std::size_t>(n) * opt_.max_bytes));
      std::uint32_t* f = nullptr;
      std::size_t const flag_bytes = sizeof(std::uint32_t) * rounds * n * max_blocks;
      MEMLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&f), flag_bytes));
      flags_.push_back(f);
      MEMLAB_CUDA_CHECK(cudaMemset(f, 0, flag_bytes));
    }
    for (int d : devices_) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(d));
      MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());  // the flags are zero before any kernel reads them
    }
  } catch (...) {
    release();
    throw;
  }
}

peer_allreduce::~peer_allreduce() { release(); }

void peer_allreduce::release() noexcept {
  int dev = 0;
  (void)cudaGetDevice(&dev);
  for (std::size_t i = 0; i < scratch_.size(); ++i) {
    (void)cudaSetDevice(devices_[i]);
    MEMLAB_CUDA_CHECK_NOTHROW(cudaDeviceSynchronize());
    MEMLAB_CUDA_CHECK_NOTHROW(cudaFree(scratch_[i]));
  }
  for (std::size_t i = 0; i < flags_.size(); ++i) {
    (void)cudaSetDevice(devices_[i]);
    MEMLAB_CUDA_CHECK_NOTHROW(cudaFree(flags_[i]));
  }
  for (auto const& [d, p] : enabled_) {
    (void)cudaSetDevice(d);
    MEMLAB_CUDA_CHECK_NOTHROW(cudaDeviceDisablePeerAccess(p));
  }
  scratch_.clear();
  flags_.clear();
  enabled_.clear();
  (void)cudaSetDevice(dev);
}

void peer_allreduce::sum(float const* const* in, float* const* out, std::size_t count, cudaStream_t const* streams,
                         allreduce_algorithm algo) {
  int const n = ranks();
  MEMLAB_EXPECTS(in && out && streams, "peer_allreduce::sum: null array of pointers or streams");
  for (int r = 0; r < n; ++r) {
    MEMLAB_EXPECTS(count == 0 || (in[r] && out[r]), "peer_allreduce::sum: null buffer of rank " + std::to_string(r));
    MEMLAB_EXPECTS(reinterpret_cast<std::uintptr_t>(in[r]) % 16 == 0 && reinterpret_cast<std::uintptr_t>(out[r]) % 16 == 0,
                   "peer_allreduce::sum: buffers must be 16-byte aligned (rank " + std::to_string(r) + ")");
  }
  if (count == 0) return;
  device_restore restore;
  // Chunks no larger than one scratch slot: whole float4 vectors for one- and two-shot; for
  // low_latency, whose lines carry 8 bytes of data in 16, half a slot's floats.
  std::size_t const flag_chunk = (opt_.max_bytes / sizeof(float)) / 4 * 4;
  std::size_t const ll_chunk = opt_.max_bytes / 8;
  for (std::size_t off = 0; off < count;) {
    std::size_t const rest = count - off;
    allreduce_algorithm const a =
        algo == allreduce_algorithm::automatic ? choose(std::min(rest, flag_chunk) * sizeof(float)) : algo;
    std::size_t const len = std::min(a == allreduce_algorithm::low_latency ? ll_chunk : flag_chunk, rest);
    // Epochs skip 0 and 1 on wrap-around: the parity keeps alternating and no epoch equals the
    // zeroed scratch's.
    if (++epoch_ == 0) epoch_ = 2;
    ar_args args{};
    std::size_t const parity = (epoch_ & 1u) * static_cast<std::size_t>(n) * opt_.max_bytes;
    for (int r = 0; r < n; ++r) {
      args.scratch[r] = reinterpret_cast<float*>(static_cast<char*>(scratch_[r]) + parity);
      args.flags[r] = flags_[r];
    }
    args.ranks = n;
    args.slot = opt_.max_bytes / sizeof(float);
    args.count = len;
    args.epoch = epoch_;
    // CTAs: about one vector (low_latency: one line) per thread for the part each CTA owns,
    // at most blocks_.
    std::size_t const vecs = len / 4;
    std::size_t const work = a == allreduce_algorithm::low_latency ? (len + 1) / 2
                             : a == allreduce_algorithm::one_shot  ? vecs
                                                                   : (vecs + n - 1) / n;
    int const grid = static_cast<int>(
        std::clamp<std::size_t>((work + opt_.threads - 1) / opt_.threads, 1, static_cast<std::size_t>(blocks_)));
    for (int r = 0; r < n; ++r) {
      args.rank = r;
      args.in = in[r] + off;
      args.out = out[r] + off;
      MEMLAB_CUDA_CHECK(cudaSetDevice(devices_[r]));
      if (a == allreduce_algorithm::low_latency)
        low_latency_kernel<<<grid, opt_.threads, 0, streams[r]>>>(args);
      else if (a == allreduce_algorithm::one_shot)
        one_shot_kernel<<<grid, opt_.threads, 0, streams[r]>>>(args);
      else
        two_shot_kernel<<<grid, opt_.threads, 0, streams[r]>>>(args);
      MEMLAB_CHECK_LAUNCH();
    }
    off += len;
  }
}

}  // namespace memlab
