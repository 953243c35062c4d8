#pragma once
// A single-host all-reduce (sum of float) over peer memory: every GPU of the group reads the
// others' buffers directly through NVLink or PCIe peer-to-peer, with flags in peer memory
// for synchronisation. Two algorithms:
//   one_shot  each GPU pushes its input into its slot of every GPU's scratch buffer (stores to
//             peer memory are posted: no round trip), signals the others, then sums the N slots
//             of its own scratch: one round of flags, (N-1) x bytes written over the links per
//             GPU. Best for small messages (latency-bound).
//   two_shot  reduce-scatter then all-gather through peer memory: GPU r sums shard r of every
//             GPU's scratch into its own scratch, signals, then every GPU reads the other
//             reduced shards: two rounds of flags, 2 (N-1)/N x bytes over the links per GPU.
//             Best for medium messages (bandwidth-bound).
//   low_latency one-shot without a barrier (NCCL's LL idea): each 8 bytes of data travel with
//             the call's epoch in one 16-byte store (two 64-bit words, each {epoch, float}),
//             and the receiver polls its own scratch until every word it needs carries the
//             epoch. No fence and no flag round: the time is a kernel start and one one-way
//             trip over the link. Twice the bytes cross the link, so it is for small messages.
// Every element is summed in rank order 0, 1, ..., N-1 (acc = x0; acc += x1; ...) on
// whichever GPU reduces it, so the result is bit-identical on every GPU, run to run, for
// both algorithms, and equal to the same loop on the host.
//
//   std::vector<int> devs = {0, 1};
//   memlab::peer_allreduce ar(devs);                 // allocates scratch, enables peer access
// (Not capturable in a CUDA graph: each call's epoch is a kernel argument set by the host.)
//   ar.sum(ins.data(), outs.data(), count, streams.data());  // one pointer and stream per GPU
//
// Each call enqueues one kernel per GPU (per chunk of at most max_bytes) on that GPU's
// stream and returns; the result is complete when each stream reaches it. The kernels of
// one call wait for each other across GPUs, so every GPU's stream must reach the call (do not
// make one GPU's stream wait on the host for another's result first). Calls on one object
// must be issued in the same order on every GPU (one host thread issuing them all does).
// Not thread-safe. The same device may appear more than once (ranks sharing a GPU, for tests);
// then those ranks' kernels must run concurrently on it, which the grid size allows for.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memlab/buffer.hpp"

namespace memlab {

enum class allreduce_algorithm { automatic, one_shot, two_shot, low_latency };

/// The name rows and logs use: "automatic", "one_shot", "two_shot", "low_latency".
constexpr char const* allreduce_algorithm_name(allreduce_algorithm a) {
  switch (a) {
    case allreduce_algorithm::automatic: return "automatic";
    case allreduce_algorithm::one_shot: return "one_shot";
    case allreduce_algorithm::two_shot: return "two_shot";
    case allreduce_algorithm::low_latency: return "low_latency";
  }
  return "";
}

struct allreduce_options {
  /// Largest message handled by one kernel per GPU; larger ones are reduced in chunks of it.
  /// Scratch per GPU is 2 x ranks x max_bytes (a slot per rank for one-shot's pushes, two
  /// parities so a call never waits for the previous one's readers).
  std::size_t max_bytes = std::size_t{8} << 20;
  /// The two thresholds below count the bytes a rank pushes to its peers, the message times
  /// (ranks - 1): what one_shot and low_latency send grows with the ranks, two_shot's does not.
  /// automatic: one_shot while a rank pushes at most this many bytes, two_shot above (from 3
  /// ranks: with 2, both move the same bytes over the link and two-shot pays a second
  /// synchronisation, so one_shot always; measured on 2 x H200: one_shot 1.24-1.63x NCCL from
  /// 512 KiB to 16 MiB, two_shot 0.82-1.32x). On 4 x H200 one_shot leads two_shot to 1 MiB
  /// (21.3 against 24.6 us; 3 MiB pushed) and trails it at 4 MiB (62 against 53 us).
  std::size_t one_shot_max_bytes = std::size_t{3} << 20;
  /// automatic: low_latency while a rank pushes at most this many bytes (and while twice the
  /// message fits a slot, 2 x bytes <= max_bytes), before one_shot and two_shot are considered.
  /// Measured on 2 x H200: low_latency 4.2-6.1 us from 8 KiB to 256 KiB against one_shot's
  /// 6.9-7.7, still ahead at 1 MiB (10.9 against 12.0 us), behind from 4 MiB (31 against 22 us);
  /// on 4 x H200 ahead to 256 KiB (12.5 against 12.8 us; 768 KiB pushed), behind at 512 KiB
  /// (18.7 against 16.2).
  std::size_t low_latency_max_bytes = std::size_t{1} << 20;
  /// CTAs per GPU (0: the device's SM count, capped so all ranks' CTAs are co-resident).
  int blocks = 0;
  int threads = 512;
};

/// The algorithm `automatic` takes for a message (or a chunk of one) of `bytes` over `ranks`
/// GPUs with options `opt` (peer_allreduce::choose; CPU-tested).
inline allreduce_algorithm allreduce_choice(std::size_t bytes, int ranks, allreduce_options const& opt) noexcept {
  std::size_t const pushed = bytes * static_cast<std::size_t>(ranks > 1 ? ranks - 1 : 1);
  if (pushed <= opt.low_latency_max_bytes && 2 * bytes <= opt.max_bytes) return allreduce_algorithm::low_latency;
  return ranks <= 2 || pushed <= opt.one_shot_max_bytes ? allreduce_algorithm::one_shot : allreduce_algorithm::two_shot;
}

/// Upper bound on the ranks of one group.
inline constexpr int allreduce_max_ranks = 16;
/// Upper bound on CTAs per GPU (the flag arrays are sized for it).
inline constexpr int allreduce_max_blocks = 1024;

class peer_allreduce {
 public:
  /// `devices[r]` is rank r's GPU. Enables peer access between distinct devices (and disables
  /// on destruction what it enabled). Throws memlab::error when a pair cannot access each
  /// other, for an empty or too large group, or bad options.
  explicit peer_allreduce(std::vector<int> devices, allreduce_options const& opt = {});
  peer_allreduce(peer_allreduce const&) = delete;
  peer_allreduce& operator=(peer_allreduce const&) = delete;
  ~peer_allreduce();

  /// out[r][i] = sum over ranks k (in order) of in[k][i], for i < count, on every rank r.
  /// in[r] and out[r] live on devices()[r], are 16-byte aligned, and may be the same pointer
  /// (in place). streams[r] is a stream of devices()[r]. Restores the current device.
  void sum(float const* const* in, float* const* out, std::size_t count, cudaStream_t const* streams,
           allreduce_algorithm algo = allreduce_algorithm::automatic);

  /// The algorithm `automatic` picks for a message (or a chunk of one) of `bytes`.
  allreduce_algorithm choose(std::size_t bytes) const noexcept { return allreduce_choice(bytes, ranks(), opt_); }
  int ranks() const noexcept { return static_cast<int>(devices_.size()); }
  std::vector<int> const& devices() const noexcept { return devices_; }
  int blocks() const noexcept { return blocks_; }
  /// Kernels issued so far per GPU (the epoch the flags carry; one per chunk of a call). It
  /// skips 0 and 1 when it wraps, so the parity still alternates and no epoch matches the
  /// zeroed scratch.
  std::uint32_t epoch() const noexcept { return epoch_; }

 private:
  void release() noexcept;

  std::vector<int> devices_;
  allreduce_options opt_;
  int blocks_ = 0;
  std::uint32_t epoch_ = 0;
  std::vector<void*> scratch_;               ///< per rank: 2 parities x ranks slots x max_bytes
  std::vector<std::uint32_t*> flags_;         ///< per rank: [2 rounds][ranks][max_blocks] on its device
  std::vector<std::pair<int, int>> enabled_;  ///< (device, peer) pairs whose access this object enabled
};

}  // namespace memlab
