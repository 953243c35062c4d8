#pragma once
// NCCL's collectives as memlab measures them, in one process over every GPU (link.nccl,
// link_nccl.cpp) or one process per GPU under MPI (memlab-mpi, src/mpi/): the default size
// sweep, one rank's call of each collective, the host reference each rank's output is checked
// against, what a row records (nccl-tests' size and bus bandwidth) and the declaration both
// experiments share. One home for each; both programs include this header.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/experiment.hpp"
#include "bench/state.hpp"
#include "kernels/link/link_kernels.hpp"
#include "kernels/link/partition.hpp"
#include "memlab/detail/host_parallel.hpp"
#include "memlab/error.hpp"

#if MEMLAB_HAVE_NCCL
#include <nccl.h>
#endif

namespace memlab::link_exp {

/// The default size sweep (nccl-tests' size: the larger buffer of one rank), 8 B to 1 GiB.
inline std::vector<std::int64_t> nccl_sizes() {
  return {8, std::int64_t{1} << 10, std::int64_t{64} << 10, std::int64_t{1} << 20, std::int64_t{16} << 20,
          std::int64_t{256} << 20, std::int64_t{1} << 30};
}

/// The collectives' names, in link::all_collectives' order (the variant axis).
inline std::vector<std::string> collective_names() {
  std::vector<std::string> out;
  for (link::collective c : link::all_collectives) out.emplace_back(link::collective_name(c));
  return out;
}

/// The collective a row's variant names (the axis admits only the names above).
inline link::collective collective_of(std::string const& name) {
  link::collective c = link::collective::all_reduce;
  MEMLAB_EXPECTS(link::collective_from_name(name, &c), "unknown collective '" + name + "'");
  return c;
}

/// The expected recv[i] of `rank` among `n` (v(k, j): rank k's send element j, the seeded
/// small integers link::fill_seeded writes, so every sum is exact in any order).
inline float expected(link::collective kind, int rank, std::size_t i, link::collective_shape const& sh, int n,
                      std::uint64_t seed) {
  using link::collective;
  auto v = [&](int k, std::size_t j) { return link::seeded_small_int(seed, k, j); };
  auto sum = [&](std::size_t j) {
    float acc = 0;
    for (int k = 0; k < n; ++k) acc += v(k, j);
    return acc;
  };
  switch (kind) {
    case collective::all_reduce:
    case collective::reduce: return sum(i);
    case collective::broadcast: return v(0, i);
    case collective::all_gather: return v(static_cast<int>(i / sh.part), i % sh.part);
    case collective::reduce_scatter: return sum(static_cast<std::size_t>(rank) * sh.part + i);
    case collective::alltoall:  // block j of rank r's output is block r of rank j's input
      return v(static_cast<int>(i / sh.part), static_cast<std::size_t>(rank) * sh.part + i % sh.part);
  }
  return 0;
}

/// Whether `rank`'s output is defined (reduce: only the root's, rank 0).
constexpr bool output_defined(link::collective kind, int rank) { return kind != link::collective::reduce || rank == 0; }

/// Mismatches of `rank`'s recv (device memory, downloaded in 64 MiB pieces) against the
/// host reference.
inline std::size_t check_rank(link::collective kind, int rank, float const* recv, link::collective_shape const& sh,
                              int n, std::uint64_t seed) {
  std::size_t bad = 0;
  std::size_t const piece = std::size_t{16} << 20;
  std::vector<float> host(std::min(piece, sh.recv));
  for (std::size_t off = 0; off < sh.recv; off += piece) {
    std::size_t const len = std::min(piece, sh.recv - off);
    MEMLAB_CUDA_CHECK(cudaMemcpy(host.data(), recv + off, len * sizeof(float), cudaMemcpyDefault));
    std::atomic<std::size_t> b{0};
    memlab::detail::host_parallel_for(len, [&](std::size_t lo, std::size_t hi) {
      std::size_t k = 0;
      for (std::size_t i = lo; i < hi; ++i) k += !(host[i] == expected(kind, rank, off + i, sh, n, seed));
      b += k;
    });
    bad += b;
  }
  return bad;
}

/// The row's verification from the mismatches counted over every checked rank.
inline bench::verification collective_verification(std::size_t bad, std::size_t checked) {
  bench::verification v;
  v.metric = "elements differing from the host reference (exact: small integers sum exactly)";
  v.tolerance = 0;
  v.error = static_cast<double>(bad);
  v.status = bad ? bench::verdict::failed : bench::verdict::passed;
  v.detail = std::to_string(checked) + " elements checked";
  return v;
}

/// Declares a row's bytes (nccl-tests' size) and what link.nccl and memlab-mpi record beside
/// it; bus_gbps follows once the row is timed (record_bus_gbps).
inline void describe_collective_row(bench::state& s, link::collective kind, link::collective_shape const& sh, int n,
                                    std::string const& nccl_version) {
  s.add_bytes_read(static_cast<double>(std::max(sh.send, sh.recv) * sizeof(float)));
  s.set_extra("bytes_counted", "nccl-tests' size: the larger of the send and receive buffers of one rank; "
                               "gbps is its algorithm bandwidth");
  s.set_extra("ranks", n);
  s.set_extra("nccl_version", nccl_version);
  s.set_extra("elements_per_rank", {{"send", sh.send}, {"recv", sh.recv}});
  s.set_extra("bus_factor", link::bus_factor(kind, n));
}

/// extra.bus_gbps: algorithm bandwidth x nccl-tests' factor, from the row's median.
inline void record_bus_gbps(bench::state& s, link::collective kind, int n) {
  if (auto m = s.result().median_ms)
    s.set_extra("bus_gbps", link::bus_factor(kind, n) * s.result().bytes / (*m * 1e-3) / 1e9);
}

/// The declaration link.nccl and link.nccl_mpi share: the bytes and variant axes, metrics (the
/// peer being the same operations timed as nccl-tests times them) and headline. The caller sets
/// id, description, prose and plot.
inline bench::experiment collective_declaration(std::vector<std::int64_t> sizes, std::vector<std::int64_t> quick_sizes,
                                                std::vector<std::string> collectives) {
  using namespace bench;
  experiment e;
  e.seed_ref = "";
  e.axes = {int_axis("bytes", std::move(sizes), std::move(quick_sizes)), variant_axis(std::move(collectives))};
  e.axes[0].min_value = 4;
  e.axes[0].max_value = std::int64_t{4} << 30;
  e.axes[0].log_scale = true;
  e.describe_axis("bytes", "bytes", "nccl-tests' size: the larger buffer of one rank (full sweep: -a bytes=2^3:2^32)", true);
  e.describe_axis("variant", "", "the collective (float, sum; root 0; alltoall as grouped ncclSend/ncclRecv)");
  e.metrics = {metrics::time(), {"gbps", "GB/s", "algorithm bandwidth: size / time"},
               {"extra.bus_gbps", "GB/s", "bus bandwidth: algorithm bandwidth x nccl-tests' factor"},
               metrics::vs_peer("the nccl-tests-style loop")};
  e.headline = best_row("What bus bandwidth does NCCL reach on this machine's links?", {{"variant", {"all_reduce"}}},
                        "extra.bus_gbps", "ratio_to_peer");
  e.headline.higher_is_better = true;
  return e;
}

#if MEMLAB_HAVE_NCCL
#define MEMLAB_NCCL_CHECK(call)                                                                         \
  do {                                                                                                  \
    ncclResult_t const memlab_nccl_rc_ = (call);                                                        \
    if (memlab_nccl_rc_ != ncclSuccess)                                                                 \
      throw ::memlab::error(std::string(#call) + " failed: " + ncclGetErrorString(memlab_nccl_rc_));   \
  } while (0)

inline std::string nccl_version_text() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

/// One rank's call of `kind` on `comm` (float, sum, root 0): `in` holds sh.send floats, `out`
/// sh.recv. Inside an ncclGroupStart/End when one thread drives several ranks; alltoall groups
/// its own sends and receives (groups nest).
inline void issue_collective(link::collective kind, float const* in, float* out, link::collective_shape const& sh,
                             int n, ncclComm_t comm, cudaStream_t st) {
  using link::collective;
  switch (kind) {
    case collective::all_reduce: MEMLAB_NCCL_CHECK(ncclAllReduce(in, out, sh.send, ncclFloat, ncclSum, comm, st)); break;
    case collective::all_gather: MEMLAB_NCCL_CHECK(ncclAllGather(in, out, sh.part, ncclFloat, comm, st)); break;
    case collective::reduce_scatter:
      MEMLAB_NCCL_CHECK(ncclReduceScatter(in, out, sh.part, ncclFloat, ncclSum, comm, st));
      break;
    case collective::broadcast: MEMLAB_NCCL_CHECK(ncclBroadcast(in, out, sh.send, ncclFloat, 0, comm, st)); break;
    case collective::reduce: MEMLAB_NCCL_CHECK(ncclReduce(in, out, sh.send, ncclFloat, ncclSum, 0, comm, st)); break;
    case collective::alltoall:
      MEMLAB_NCCL_CHECK(ncclGroupStart());
      for (int p = 0; p < n; ++p) {
        MEMLAB_NCCL_CHECK(ncclSend(in + static_cast<std::size_t>(p) * sh.part, sh.part, ncclFloat, p, comm, st));
        MEMLAB_NCCL_CHECK(ncclRecv(out + static_cast<std::size_t>(p) * sh.part, sh.part, ncclFloat, p, comm, st));
      }
      MEMLAB_NCCL_CHECK(ncclGroupEnd());
      break;
  }
}
#endif

}  // namespace memlab::link_exp
