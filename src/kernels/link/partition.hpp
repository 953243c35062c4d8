#pragma once
// The arithmetic of the link family, on host and device alike, so the CPU tests can check it:
// which slice of a message each CTA of memlab::peer_allreduce owns, and how nccl-tests sizes a
// collective and converts its algorithm bandwidth to bus bandwidth.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string_view>

namespace memlab::link {

/// A half-open range [lo, hi) of 16-byte vectors (empty when hi <= lo).
struct vec_range {
  std::size_t lo = 0, hi = 0;
  __host__ __device__ constexpr std::size_t size() const { return hi > lo ? hi - lo : 0; }
};

__host__ __device__ constexpr std::size_t min_size(std::size_t a, std::size_t b) { return a < b ? a : b; }

/// One-shot: CTA b of `grid` owns a contiguous slice of the `vecs` vectors.
__host__ __device__ constexpr vec_range one_shot_slice(std::size_t vecs, unsigned grid, unsigned b) {
  std::size_t const per = (vecs + grid - 1) / grid;
  std::size_t const lo = min_size(vecs, static_cast<std::size_t>(b) * per);
  return {lo, min_size(vecs, lo + per)};
}

/// Two-shot: the vectors split into `ranks` shards (the last may be shorter or empty); CTA b
/// owns the same relative slice of every shard, so it only waits for CTA b of the other ranks.
__host__ __device__ constexpr vec_range two_shot_slice(std::size_t vecs, int ranks, unsigned grid, int shard,
                                                       unsigned b) {
  std::size_t const len = (vecs + ranks - 1) / ranks;
  std::size_t const per = (len + grid - 1) / grid;
  std::size_t const s0 = min_size(vecs, static_cast<std::size_t>(shard) * len);
  std::size_t const s1 = min_size(vecs, s0 + len);
  std::size_t const lo = min_size(s1, s0 + static_cast<std::size_t>(b) * per);
  return {lo, min_size(s1, lo + per)};
}

enum class collective { all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall };

/// Every collective, in the order rows and option lists name them.
inline constexpr collective all_collectives[] = {collective::all_reduce, collective::all_gather,
                                                 collective::reduce_scatter, collective::broadcast,
                                                 collective::reduce, collective::alltoall};

/// The name rows and command lines use (nccl-tests' binary names without "_perf").
constexpr char const* collective_name(collective c) {
  switch (c) {
    case collective::all_reduce: return "all_reduce";
    case collective::all_gather: return "all_gather";
    case collective::reduce_scatter: return "reduce_scatter";
    case collective::broadcast: return "broadcast";
    case collective::reduce: return "reduce";
    case collective::alltoall: return "alltoall";
  }
  return "";
}

/// The collective called `name`; false when there is none.
constexpr bool collective_from_name(std::string_view name, collective* out) {
  for (collective c : all_collectives)
    if (name == collective_name(c)) {
      *out = c;
      return true;
    }
  return false;
}

/// nccl-tests' bus-bandwidth factor (its doc/PERFORMANCE.md) at n ranks.
constexpr double bus_factor(collective c, int n) {
  double const nn = n;
  switch (c) {
    case collective::all_reduce: return 2.0 * (nn - 1) / nn;
    case collective::broadcast:
    case collective::reduce: return 1.0;
    default: return (nn - 1) / nn;  // all_gather, reduce_scatter, alltoall
  }
}

/// Floats per rank of a collective of nccl-tests' `size` (the larger buffer of one rank, in
/// floats here): send, receive, and the per-rank part (gather/scatter/alltoall blocks).
struct collective_shape {
  std::size_t send = 0, recv = 0, part = 0;
};
constexpr collective_shape shape_of(collective c, std::size_t total, int n) {
  std::size_t const part = total / static_cast<std::size_t>(n);
  switch (c) {
    case collective::all_gather: return {part, part * n, part};
    case collective::reduce_scatter: return {part * n, part, part};
    case collective::alltoall: return {part * n, part * n, part};
    default: return {total, total, total};
  }
}

}  // namespace memlab::link
