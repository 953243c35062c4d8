// hierarchy.*: the memory-hierarchy atlas (PMPP ch. 5, seed 004; Best Practices Guide ch. 9,
// seed 000): latency, bandwidth and capacity of every level, measured on this GPU.
//
//   hierarchy.latency    one thread chases a random cycle of `footprint` bytes at `stride`
//                        through ld.global, ld.global.cg or ld.global.nc: the staircase of
//                        L1, L2, device memory and TLB reach, in cycles and ns per load; and
//                        the fixed-stride cycle of the published P-chase beside it (order)
//   hierarchy.capacity   the same chase over a fine footprint sweep in one point per path,
//                        with the steps located and set beside cudaDeviceProp's L1 and L2
//   hierarchy.l1_carveout the L1 step at each shared-memory carve-out (L1 + shared = the
//                        unified L1/shared size per SM)
//   hierarchy.bandwidth  every SM streams 16-byte loads over a footprint (shared: each block
//                        reads all of it; partitioned: each its slice): the L1, L2 and DRAM
//                        plateaus
//   hierarchy.onchip     shared memory, constant cache (broadcast and divergent) and
//                        register dependencies, in cycles per dependent operation
//   hierarchy.dsmem_*    Hopper's distributed shared memory: latency of a load from another
//                        block of the cluster, and bandwidth of reading a neighbour's (sm_90)
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "bench/state.hpp"
#include "kernels/hierarchy/hierarchy.hpp"
#include "kernels/hierarchy/steps.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
namespace mh = memlab::hierarchy;

std::vector<std::string> const paths = {"ld.global", "ld.global.cg", "ld.global.nc"};

/// How every latency row's cycles become ns (docs/hierarchy.md): the kernel reads clock64 and
/// %globaltimer around the same timed loop, so the ns are measured, not converted, and their
/// ratio is the SM clock the loop actually ran at (NVML's reading, in the row's `gpu`, is
/// taken before and after the samples, not during them).
constexpr char const* time_basis = "ns from %globaltimer around the timed loop; sm_clock_mhz = clock64 cycles / ns";

/// An exact check of one value the kernel produced against the host's (a chain's end, a
/// checksum): every experiment here verifies that way.
template <class T>
verification exact(T got, T want, char const* what) {
  verification v;
  v.metric = what;
  v.status = got == want ? verdict::passed : verdict::failed;
  v.error = got == want ? 0 : 1;
  if (got != want) v.detail = std::string(what) + ": got " + std::to_string(got) + ", expected " + std::to_string(want);
  return v;
}

/// Skips a point whose buffer would not fit comfortably in the free device memory.
void require_free_memory(state& s, std::size_t bytes) {
  std::size_t free_b = 0, total_b = 0;
  MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (bytes > free_b / 10 * 8)
    s.skip("needs " + std::to_string(bytes >> 20) + " MiB; " + std::to_string(free_b >> 20) + " MiB are free");
}

struct chase_setup {
  device_buffer<std::uint32_t> chain;
  std::vector<std::uint32_t> next;
  std::size_t stride_words = 0;
};

chase_setup make_chase(state& s, std::size_t footprint, std::size_t stride, bool sequential = false) {
  if (stride < 4 || stride % 4) s.skip("stride must be a multiple of 4 bytes");
  if (footprint < stride) s.skip("the footprint is smaller than one stride");
  if (footprint / 4 > (std::size_t{1} << 32)) s.skip("the chain indexes at most 2^32 words (16 GiB)");
  require_free_memory(s, footprint);
  chase_setup c;
  c.stride_words = stride / 4;
  c.next = sequential ? mh::sequential_cycle(footprint / stride) : mh::random_cycle(footprint / stride, s.seed());
  c.chain = device_buffer<std::uint32_t>(footprint / 4);
  mh::write_chain(c.chain.data(), c.next, c.stride_words, s.stream());
  return c;
}

/// Warm-up loads: a full pass when the chain could fit L2 (so every line it can hold is
/// there); past 2 x L2 only enough to warm the TLB's recent pages (a pass over GiBs of
/// misses would take seconds and warm nothing).
std::uint64_t warmup_loads(std::size_t slots, std::size_t footprint, std::size_t l2_bytes) {
  if (footprint > 2 * l2_bytes) return std::min<std::uint64_t>(slots, std::uint64_t{1} << 14);
  return std::min<std::uint64_t>(slots, std::uint64_t{1} << 21);
}

// ---------------------------------------------------------------- latency

void latency_body(state& s) {
  auto const path = mh::parse_load_path(s.get_string("path"));
  auto const footprint = static_cast<std::size_t>(s.get_int("footprint"));
  auto const stride = static_cast<std::size_t>(s.get_int("stride"));
  std::string const order = s.get_string("order");
  if (order != "random" && order != "sequential") s.skip("order must be random or sequential");
  chase_setup c = make_chase(s, footprint, stride, order == "sequential");
  std::uint64_t const warm = warmup_loads(c.next.size(), footprint, s.device().l2_bytes);
  std::uint64_t const loads = s.quick() ? 1u << 13 : 1u << 15;

  // Each sample goes on from where the last one ended, so a chain longer than the samples
  // walk never revisits a slot (restarting at slot 0 would measure the cache holding the
  // first slots); the kernel's own clocks time only the timed part.
  std::vector<double> cycles;
  std::uint32_t last = 0;
  std::uint64_t walked = 0;
  auto const samples = sample_until_stable(
      [&] {
        auto const r = mh::pointer_chase(c.chain.data(), c.stride_words, path, last, warm, loads, s.stream());
        cycles.push_back(r.cycles_per_load);
        last = r.last_slot;
        walked += warm + loads;
        return r.ns_per_load * static_cast<double>(loads) * 1e-6;  // ms for `loads` loads
      },
      capped(s.timing(), 0.5, 5));
  s.set_samples(samples);
  s.set_verification(exact(last, mh::follow(c.next, 0, walked), "slot the chain ended at"));
  std::vector<double> ns;
  for (double ms : samples) ns.push_back(ms * 1e6 / static_cast<double>(loads));
  s.set_extra("ns_per_load", median(ns));
  s.set_extra("cycles_per_load", median(cycles));
  s.set_extra("sm_clock_mhz", median(cycles) / median(ns) * 1e3);
  s.set_extra("time_basis", time_basis);
  s.set_extra("loads", loads);
  s.set_extra("warmup_loads", warm);
  s.set_extra("slots_walked", walked);
}

// ---------------------------------------------------------------- capacity

/// Footprints from 4 KiB to `max` in quarter-octave steps (2^(k/4)), rounded to the stride.
std::vector<std::size_t> fine_footprints(std::size_t stride, std::size_t max) {
  std::vector<std::size_t> out;
  for (int k = 48; ; ++k) {
    auto const f = static_cast<std::size_t>(std::ldexp(1.0, k / 4) * std::pow(2.0, (k % 4) / 4.0)) / stride * stride;
    if (f > max) break;
    if (out.empty() || f != out.back()) out.push_back(f);
  }
  return out;
}

/// A staircase over `footprints` (each rounded to the 128-byte stride): a fresh random cycle per
/// footprint in `chain`, `chase(at, warmup, loads)` timed 3 times going on where the last ended,
/// the medians kept. `ok` turns false if any chase ended elsewhere than the host says.
struct staircase {
  std::vector<double> footprint, cycles, ns;
  bool ok = true;
};
template <class Chase>
staircase chase_staircase(state& s, std::uint32_t* chain, std::vector<std::size_t> const& footprints, Chase&& chase) {
  std::size_t const stride = 128;
  std::uint64_t const loads = s.quick() ? 1u << 12 : 1u << 14;
  staircase out;
  for (std::size_t f : footprints) {
    auto const next = mh::random_cycle(f / stride, s.seed() ^ f);
    mh::write_chain(chain, next, stride / 4, s.stream());
    std::uint64_t const warm = warmup_loads(next.size(), f, s.device().l2_bytes);
    std::vector<double> cyc, ns;
    std::uint32_t at = 0;
    for (int rep = 0; rep < 3; ++rep) {  // each rep goes on where the last ended (see latency)
      mh::chase_result const r = chase(at, warm, loads);
      out.ok = out.ok && r.last_slot == mh::follow(next, at, warm + loads);
      at = r.last_slot;
      cyc.push_back(r.cycles_per_load);
      ns.push_back(r.ns_per_load);
    }
    out.footprint.push_back(static_cast<double>(f));
    out.cycles.push_back(median(cyc));
    out.ns.push_back(median(ns));
  }
  return out;
}

/// Verifies the row by the staircase's chains and records its curve and located steps.
std::vector<mh::level_step> record_staircase(state& s, staircase const& st) {
  s.set_verification(exact(st.ok, true, "every chain ended where the host says"));
  auto const found = mh::find_steps(st.footprint, st.cycles);
  nlohmann::json steps = nlohmann::json::array();
  for (auto const& step : found)
    steps.push_back({{"capacity_bytes", step.capacity_bytes}, {"half_rise_bytes", step.half_rise_bytes},
                     {"cycles_below", step.below}, {"cycles_above", step.above}});
  s.set_extra("steps", steps);
  s.set_extra("footprint_bytes", st.footprint);
  s.set_extra("cycles_per_load", st.cycles);
  s.set_extra("ns_per_load", st.ns);
  return found;
}

void capacity_body(state& s) {
  auto const path = mh::parse_load_path(s.get_string("path"));
  std::size_t const stride = 128;  // one cache line a load: capacities in lines, not words
  std::size_t const max = std::min<std::size_t>(s.device().l2_bytes * 4, std::size_t{1} << 30);
  require_free_memory(s, max);
  device_buffer<std::uint32_t> chain(max / 4);
  staircase const st = chase_staircase(s, chain.data(), fine_footprints(stride, max),
                                       [&](std::uint32_t at, std::uint64_t warm, std::uint64_t loads) {
                                         return mh::pointer_chase(chain.data(), stride / 4, path, at, warm, loads, s.stream());
                                       });
  auto const found = record_staircase(s, st);
  // Each level's step: the one nearest (in log footprint) to the size the device reports for
  // it, within a factor of 2 (L1: the unified L1/shared memory per SM; the near L2
  // partition: half of L2; L2). A level with no step near it gets none.
  auto const name_step = [&](char const* key, double size) {
    double best = 1.0;  // |log2| distance
    mh::level_step const* at = nullptr;
    for (auto const& step : found) {
      double const d = std::abs(std::log2(step.capacity_bytes / size));
      if (d < best) best = d, at = &step;
    }
    if (!at) return;
    s.set_extra(std::string(key) + "_bytes", at->half_rise_bytes);
    s.set_extra(std::string(key) + "_onset_bytes", at->capacity_bytes);
    s.set_extra(std::string(key) + "_cycles_above", at->above);
  };
  if (path == mh::load_path::ca) name_step("l1", static_cast<double>(s.device().smem_per_sm_bytes));
  name_step("l2_near", static_cast<double>(s.device().l2_bytes) / 2);
  name_step("l2", static_cast<double>(s.device().l2_bytes));
  // What the device says, beside what the staircase shows.
  s.set_predicted({{"l1_and_shared_per_sm_bytes", s.device().smem_per_sm_bytes},
                   {"l2_bytes", s.device().l2_bytes}});
}

// ---------------------------------------------------------------- L1 against the carve-out

/// The L1 a chase sees when its block holds `shared_kib` KiB of the SM's unified L1/shared
/// storage: the kernel asks for that much dynamic shared memory (less the block's reserved
/// part) and prefers that carve-out; a linear 2 KiB sweep up to the SM's shared memory +
/// 64 KiB (past every unified size) locates the first step. L1 + shared should stay constant
/// across rows: the unified size, which cudaDeviceProp does not report.
void l1_carveout_body(state& s) {
  auto const shared = static_cast<std::size_t>(s.get_int("shared_kib")) * 1024;
  std::size_t const per_sm = s.device().smem_per_sm_bytes;
  if (shared > per_sm)
    s.skip("this device has " + std::to_string(per_sm >> 10) + " KiB of shared memory per SM");
  int reserved = 0;
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, s.device().index));
  std::size_t const dynamic = shared > static_cast<std::size_t>(reserved) ? shared - reserved : 0;
  if (dynamic > s.device().smem_per_block_optin_bytes)
    s.skip("a block may hold at most " + std::to_string(s.device().smem_per_block_optin_bytes >> 10) + " KiB");
  // The largest whole percentage of the SM's shared memory within `shared`: the driver rounds
  // the preference up to the next carve-out it supports, which is then `shared` itself when
  // `shared` is one (a percentage above it would round past it).
  int const percent = static_cast<int>(shared * 100 / per_sm);
  std::size_t const stride = 128, max = per_sm + (64u << 10);
  std::vector<std::size_t> footprints;
  for (std::size_t f = 2048; f <= max; f += 2048) footprints.push_back(f);
  device_buffer<std::uint32_t> chain(max / 4);
  mh::carveout_readback const back = mh::set_chase_carveout(static_cast<int>(dynamic), percent);
  staircase const st = chase_staircase(s, chain.data(), footprints, [&](std::uint32_t at, std::uint64_t warm, std::uint64_t loads) {
    return mh::pointer_chase_carveout(chain.data(), stride / 4, at, warm, loads, static_cast<int>(dynamic), s.stream());
  });
  auto const found = record_staircase(s, st);
  s.set_extra("shared_bytes", shared);
  s.set_extra("dynamic_smem_bytes", dynamic);
  s.set_extra("reserved_smem_per_block_bytes", reserved);
  s.set_extra("carveout_percent", percent);
  s.set_extra("readback_carveout_percent", back.preferred_percent);
  s.set_extra("readback_max_dynamic_bytes", back.max_dynamic_bytes);
  if (!found.empty()) {
    s.set_extra("l1_bytes", found.front().half_rise_bytes);
    s.set_extra("l1_onset_bytes", found.front().capacity_bytes);
    s.set_extra("l1_cycles", found.front().below);
    s.set_extra("l1_plus_shared_bytes", found.front().half_rise_bytes + static_cast<double>(shared));
  }
}

// ---------------------------------------------------------------- bandwidth

/// The variants pair a mode with a load path so each plateau is measured where it is clean:
///   shared_ld_global      every block reads the whole footprint through L1: the L1 plateau
///                         (footprint within L1); past it, blocks of one SM share lines in L1
///   partitioned_ld_cg     each block its slice, L1 bypassed: the L2 plateau (within L2) and
///                         device memory (past it)
///   partitioned_ld_global the same through L1 (slices that fit an SM's L1 hit there)
///   partitioned_ld_cg_rw  read and write back: device memory's read + write rate
///   grid_stride_<path>_x<U>  the device-memory read ceiling (grid_stride_stream): block b
///                         reads chunks b, b + blocks, ... of U x 4 KiB, U independent 16-byte
///                         loads a thread before any is used; cg: ld.global.cg, nc:
///                         ld.global.nc.L1::no_allocate.L2::256B
std::vector<std::string> const bandwidth_variants = {
    "shared_ld_global",  "partitioned_ld_cg", "partitioned_ld_global", "partitioned_ld_cg_rw", "grid_stride_cg_x1",
    "grid_stride_cg_x4", "grid_stride_cg_x8", "grid_stride_nc_x8",     "grid_stride_nc_x16"};
/// The device-memory read rows the atlas takes its best from.
std::vector<std::string> const dram_read_variants = {"partitioned_ld_cg", "grid_stride_cg_x1", "grid_stride_cg_x4",
                                                     "grid_stride_cg_x8", "grid_stride_nc_x8", "grid_stride_nc_x16"};

void bandwidth_body(state& s) {
  std::string const& v = s.variant();
  bool const grid_stride = v.rfind("grid_stride", 0) == 0;
  int const loads = grid_stride ? std::stoi(v.substr(v.rfind("_x") + 2)) : 0;
  bool const nc_hint = grid_stride && v.find("_nc_") != std::string::npos;
  auto const mode = v.rfind("shared", 0) == 0 ? mh::footprint_mode::shared : mh::footprint_mode::partitioned;
  bool const write = v.size() > 3 && v.compare(v.size() - 3, 3, "_rw") == 0;
  auto const path = v.find("_cg") != std::string::npos ? mh::load_path::cg : mh::load_path::ca;
  auto const footprint = static_cast<std::size_t>(s.get_int("footprint"));
  if (mode == mh::footprint_mode::shared && footprint > 2 * s.device().l2_bytes)
    s.skip("shared mode reads the whole footprint in every block: only up to 2 x L2");
  require_free_memory(s, (write ? 2 : 1) * footprint);
  int const blocks = (grid_stride ? mh::grid_stride_blocks_per_sm(loads, nc_hint) : mh::footprint_blocks_per_sm()) *
                     s.device().sm_count;
  if (mode == mh::footprint_mode::partitioned && footprint / blocks < 4096)
    s.skip("each block's slice would be under 4 KiB: the loop, not the memory, would be timed");
  // A grid-stride round is blocks x U x 4 KiB; under two of them most of the bytes would be
  // the part round's, read one load at a time: not what the variant names.
  std::size_t const round_bytes = static_cast<std::size_t>(blocks) * loads * 4096;
  if (grid_stride && footprint < 2 * round_bytes)
    s.skip("under two grid-stride rounds (" + std::to_string(round_bytes >> 10) + " KiB each): the part round, one "
           "load at a time, would be most of it");
  std::size_t const words = footprint / 4;
  device_buffer<std::uint32_t> in(words), out(write ? words : 1), sums(blocks);
  // in[i] = i * K (K = stream_pattern): varied bits, and a closed-form sum for the check. Written
  // on the device: the host checks against the closed form, not against a copy of the data.
  mh::fill_stream_pattern(in.data(), words, s.stream());
  // Enough repetitions that one launch moves about 2 GiB (256 MiB in --quick).
  double const target = s.quick() ? 256.0 * (1 << 20) : 2048.0 * (1 << 20);
  double const per_rep = static_cast<double>(footprint) * (mode == mh::footprint_mode::shared ? blocks : 1);
  int const reps = static_cast<int>(std::clamp(target / per_rep, 1.0, 1e6));
  auto const launch = [&](cudaStream_t st) {
    if (grid_stride)
      mh::grid_stride_stream(in.data(), footprint, loads, nc_hint, reps, blocks, sums.data(), st);
    else
      mh::footprint_stream(in.data(), out.data(), footprint, mode, write, path, reps, blocks, sums.data(), st);
  };

  sums.fill_bytes(0xFF);  // poisoned: a block that reports nothing fails the check
  launch(s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  auto const got_sums = sums.download();
  std::uint32_t got = 0;
  for (auto x : got_sums) got += x;
  std::uint32_t const copies = static_cast<std::uint32_t>(reps) * (mode == mh::footprint_mode::shared ? blocks : 1);
  s.set_verification(exact(got, mh::stream_pattern_sum(footprint) * copies, "checksum of every word read"));

  s.add_bytes_read(per_rep * reps);
  if (write) s.add_bytes_written(static_cast<double>(footprint) * reps);
  s.exec(launch);
  s.set_extra("reps", reps);
  s.set_extra("blocks", blocks);
  if (grid_stride) {
    s.set_extra("loads_per_thread", loads);
    // What each SM has requested right after a round's loads issue (every resident block).
    s.set_extra("bytes_in_flight_per_sm", static_cast<double>(blocks / s.device().sm_count) * 256 * 16 * loads);
  }
  double const peak = s.device().dram_peak_gbps();
  if (auto const ms = s.result().median_ms; ms && *ms > 0 && peak > 0)
    s.set_extra("ratio_to_dram_peak", s.result().bytes / (*ms * 1e6) / peak);
  s.set_extra("level", footprint <= static_cast<std::size_t>(s.device().smem_per_sm_bytes) ? "L1"
                       : footprint <= s.device().l2_bytes                                   ? "L2"
                                                                                            : "DRAM");
}

// ---------------------------------------------------------------- on-chip

void onchip_body(state& s) {
  auto const op = mh::parse_onchip_op(s.variant());
  std::uint64_t const ops = std::uint64_t{1} << 16;
  std::vector<double> cycles, ns;
  std::uint32_t checksum = 0;
  // The kernel counts cycles and %globaltimer ns over the same pass; the row's time is the ns.
  auto const samples = sample_until_stable(
      [&] {
        auto const r = mh::onchip_latency(op, ops, s.seed(), s.stream());
        cycles.push_back(r.cycles_per_op);
        ns.push_back(r.ns_per_op);
        checksum = r.checksum;
        return r.ns_per_op * static_cast<double>(ops) * 1e-6;
      },
      capped(s.timing(), 0.3, 5));
  s.set_samples(samples);
  s.set_verification(exact(checksum, mh::onchip_reference(op, ops, s.seed()), "end of the dependent chain"));
  s.set_extra("cycles_per_op", median(cycles));
  s.set_extra("ns_per_op", median(ns));
  s.set_extra("sm_clock_mhz", median(cycles) / median(ns) * 1e3);
  s.set_extra("ops", ops);
  s.set_extra("time_basis", time_basis);
}

// ---------------------------------------------------------------- distributed shared memory

/// Cluster sizes past 8 are non-portable: skipped where the device cannot launch them.
void require_cluster(state& s, bool stream, int cluster, std::size_t smem, int threads) {
  s.require_arch(mh::dsmem_kernel(stream), memlab::arch::cluster, "thread-block clusters (ld.shared::cluster)");
  if (mh::dsmem_max_clusters(stream, cluster, smem, threads) < 1)
    s.skip("a cluster of " + std::to_string(cluster) + " blocks cannot be launched on this device" +
           (cluster > 8 ? " (16 is the non-portable size)" : ""));
}

void dsmem_latency_body(state& s) {
  int const cluster = static_cast<int>(s.get_int("cluster"));
  std::string const& where = s.get_string("target");
  int const target = where == "own" ? 0 : where == "neighbour" ? 1 : cluster - 1;
  int const slots = 1024;
  require_cluster(s, false, cluster, slots * 4, 32);
  std::uint64_t const loads = 1u << 14;
  std::vector<double> cycles, ns;
  bool ok = true;
  auto const samples = sample_until_stable(
      [&] {
        auto const r = mh::dsmem_chase(cluster, target, slots, loads, s.seed(), s.stream());
        ok = ok && r.last_slot == r.expected_slot;
        cycles.push_back(r.cycles_per_load);
        ns.push_back(r.ns_per_load);
        return r.ns_per_load * static_cast<double>(loads) * 1e-6;
      },
      capped(s.timing(), 0.3, 5));
  s.set_samples(samples);
  s.set_verification(exact(ok, true, "every chain ended where the host says"));
  s.set_extra("cycles_per_load", median(cycles));
  s.set_extra("ns_per_load", median(ns));
  s.set_extra("sm_clock_mhz", median(cycles) / median(ns) * 1e3);
  s.set_extra("target_rank", target);
  s.set_extra("time_basis", time_basis);
}

void dsmem_bandwidth_body(state& s) {
  int const cluster = static_cast<int>(s.get_int("cluster"));
  int const distance = static_cast<int>(s.get_int("distance"));
  int const words = 8192;  // 32 KiB of shared memory a block
  require_cluster(s, true, cluster, words * 4, mh::dsmem_threads);
  int const clusters = mh::dsmem_max_clusters(true, cluster, words * 4, mh::dsmem_threads);
  int const blocks = cluster * clusters;
  int const reps = s.quick() ? 64 : 256;
  device_buffer<std::uint32_t> sums(blocks);
  mh::dsmem_stream(cluster, clusters, words, distance % cluster, reps, sums.data(), s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  auto const got_sums = sums.download();
  std::uint32_t got = 0;
  for (auto x : got_sums) got += x;
  s.set_verification(
      exact(got, mh::dsmem_stream_reference(cluster, clusters, words, distance % cluster, reps), "checksum of every word read"));
  s.add_bytes_read(static_cast<double>(blocks) * words * 4 * reps);
  s.exec([&](cudaStream_t st) { mh::dsmem_stream(cluster, clusters, words, distance % cluster, reps, sums.data(), st); });
  s.set_extra("clusters", clusters);
  s.set_extra("blocks", blocks);
  s.set_extra("reps", reps);
}

// ---------------------------------------------------------------- TLB reach

/// Footprints from `lo` to `hi` in quarter-octave steps, rounded down to the stride.
std::vector<std::size_t> quarter_octaves(std::size_t lo, std::size_t hi, std::size_t stride) {
  std::vector<std::size_t> out;
  for (double f = static_cast<double>(lo); f <= static_cast<double>(hi) * 1.0001; f *= std::pow(2.0, 0.25)) {
    auto const v = static_cast<std::size_t>(f) / stride * stride;
    if (v >= 2 * stride && (out.empty() || v != out.back())) out.push_back(v);
  }
  return out;
}

/// Dependent ld.global.cg loads through a random cycle of slots spread evenly over each
/// footprint F: one a 2 MiB page (cudaMalloc's page size on recent GPUs), at least 4096, at
/// most slots_max (65536: 8 MiB of lines, kept in L2 after the warm-up pass). 4096 lines
/// average the near and far L2 partitions at every footprint, and the lines stay few, so the
/// only thing that grows with F is the number of pages touched: the climbs and steps are the
/// TLB levels. Slots sit a 128-byte line further into their stride for each of 16 (a stride of
/// exactly 2 MiB would put every line at the same page offset, in the same cache sets). The
/// chain is slot-indexed (the address computed from the slot in 64 bits), so F may pass 16
/// GiB: up to 70% of the free memory.
void tlb_body(state& s) {
  auto const slots_max = static_cast<std::size_t>(s.get_int("slots_max"));
  std::size_t constexpr slots_min = 4096;
  if (slots_max < slots_min) s.skip("slots_max must be at least 4096");
  std::size_t free_b = 0, total_b = 0;
  MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  std::size_t constexpr page = std::size_t{2} << 20;
  std::size_t const max = free_b / 10 * 7 / page * page;
  std::size_t const lo = std::size_t{8} << 20;
  if (max < 4 * lo) s.skip("too little free device memory for a TLB sweep from " + std::to_string(lo >> 20) + " MiB");
  device_buffer<std::uint32_t> chain(max / 4);
  std::uint64_t const loads = s.quick() ? 2048 : 8192;
  std::vector<double> fp, cyc_med, ns_med, last_ms, slots_used;
  bool all_ok = true;
  std::size_t constexpr stagger = 128 / 4;  // words: one line
  for (std::size_t f : quarter_octaves(lo, max, page)) {
    std::size_t const slots = std::clamp<std::size_t>(f / page, slots_min, slots_max);
    std::size_t const stride = f / slots / 128 * 128;  // bytes between slots, whole lines (>= 2 KiB)
    auto const next = mh::random_cycle(slots, s.seed() ^ f);
    mh::write_slot_chain(chain.data(), next, stride / 4, stagger, s.stream());
    std::uint64_t const warm = next.size();  // a full pass: every line in L2, the latest pages in the TLB
    slots_used.push_back(static_cast<double>(slots));
    std::vector<double> cyc, ns;
    std::uint32_t at = 0;
    for (int rep = 0; rep < 3; ++rep) {
      auto const r = mh::slot_chase(chain.data(), stride / 4, stagger, at, rep == 0 ? warm : 0, loads, s.stream());
      all_ok = all_ok && r.last_slot == mh::follow(next, at, (rep == 0 ? warm : 0) + loads);
      at = r.last_slot;
      cyc.push_back(r.cycles_per_load);
      ns.push_back(r.ns_per_load);
    }
    fp.push_back(static_cast<double>(f));
    cyc_med.push_back(median(cyc));
    ns_med.push_back(median(ns));
    last_ms.clear();
    for (double x : ns) last_ms.push_back(x * static_cast<double>(loads) * 1e-6);
  }
  s.set_verification(exact(all_ok, true, "every chain ended where the host says"));
  auto const steps = mh::find_steps(fp, cyc_med);
  nlohmann::json js = nlohmann::json::array();
  for (auto const& st : steps)
    js.push_back({{"capacity_bytes", st.capacity_bytes}, {"cycles_below", st.below}, {"cycles_above", st.above}});
  s.set_extra("steps", js);
  s.set_extra("footprint_bytes", fp);
  s.set_extra("cycles_per_load", cyc_med);
  s.set_extra("ns_per_load", ns_med);
  s.set_extra("pages_max", max / page);
  s.set_extra("slots", slots_used);
  // A TLB level whose misses are served one level down does not step: past its reach a random
  // chase misses 1 - reach / F of its loads, so the latency climbs gradually
  // (mh::fit_gradual_levels, up to two levels). find_steps' 20% steps are kept beside it.
  auto const levels = mh::fit_gradual_levels(fp, cyc_med);
  nlohmann::json jl = nlohmann::json::array();
  for (auto const& g : levels)
    jl.push_back({{"reach_bytes", g.reach_bytes}, {"reach_pages_2mib", g.reach_bytes / static_cast<double>(page)},
                  {"miss_cycles", g.miss_cost}});
  s.set_extra("levels", jl);
  s.set_extra("levels_model", "cycles = base + sum of miss_k x max(0, 1 - reach_k / footprint), least squares");
  s.set_extra("cycles_within_reach", levels.empty() ? cyc_med.front() : levels.front().base);
  if (!levels.empty()) {
    s.set_extra("tlb_reach_bytes", levels.front().reach_bytes);
    s.set_extra("cycles_past_reach", levels.front().base + levels.front().miss_cost);
    s.set_extra("tlb_miss_cycles", levels.front().miss_cost);
  }
  if (levels.size() > 1) {
    s.set_extra("tlb_reach_last_bytes", levels.back().reach_bytes);
    s.set_extra("cycles_past_last_reach", levels.front().base + levels.front().miss_cost + levels.back().miss_cost);
    s.set_extra("tlb_last_miss_cycles", levels.back().miss_cost);
  } else {
    s.set_extra("no_second_level_up_to_bytes", fp.back());  // the sweep's end
  }
  // Time: the three timed passes at the largest footprint, from the kernel's own timer.
  s.set_samples(last_ms, "events");
}

// ---------------------------------------------------------------- TMA, bulk copy, equal bytes in flight

/// The streamed buffer: a power of two at least 64 x L2 (4 GiB on an H100 or H200; 16 x L2
/// in --quick), so the launch's ramp and drain, and the write-back of the dirty lines the cold
/// L2 flush (a memset) leaves behind, are each under 2% of the time, and nothing is an L2 hit.
/// Less where the free memory is short, but never under 4 x L2.
std::size_t stream_footprint(state& s) {
  std::size_t const want = (s.quick() ? 16 : 64) * s.device().l2_bytes;
  std::size_t b = std::size_t{64} << 20;
  while (b < want) b *= 2;
  std::size_t free_b = 0, total_b = 0;
  MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  while (b > free_b / 2 && b / 2 >= 4 * s.device().l2_bytes) b /= 2;
  return b;
}

/// Device memory's unloaded latency in ns, for the Little's-law model: 4096 dependent loads,
/// each its own line 1/4096 of `buf` apart, after L2 is flushed (the buffer's pattern is
/// overwritten: call it after the timing).
double dram_latency_ns(state& s, std::uint32_t* buf, std::size_t bytes) {
  std::size_t const slots = 4096, stride_words = bytes / 4 / slots;
  auto const next = mh::random_cycle(slots, s.seed() ^ 0x5eedu);
  mh::write_chain(buf, next, stride_words, s.stream());
  device_buffer<std::uint8_t> flush(2 * s.device().l2_bytes);
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(flush.data(), 1, flush.size(), s.stream()));
  auto const r = mh::pointer_chase(buf, stride_words, mh::load_path::cg, 0, 0, slots - 1, s.stream());
  if (r.last_slot != mh::follow(next, 0, slots - 1)) throw error("the latency chain ended in the wrong slot");
  return r.ns_per_load;
}

/// Runs `plan` over a fresh pattern buffer: the checked run, the timing, the model.
void stream_point(state& s, mh::stream_plan const& plan, double bytes_in_flight) {
  if (int const need = mh::copy_method_arch(plan.method); need > 0)
    s.require_arch(mh::copy_kernel(plan.method), need, mh::to_string(plan.method));
  std::size_t const bytes = stream_footprint(s);
  try {
    mh::check_stream_plan(plan, bytes);
  } catch (memlab::error const& e) {
    s.skip(e.what());
  }
  device_buffer<std::uint32_t> data(bytes / 4);
  int const blocks = mh::stream_blocks(plan);
  device_buffer<std::uint32_t> out(2 * static_cast<std::size_t>(blocks));
  mh::fill_stream_pattern(data.data(), bytes / 4, s.stream());
  out.fill_bytes(0xFF);  // poisoned: a block that reports nothing fails the check
  // Prepared once (checks, tensor map): the checked run and every timed sample issue the same launch.
  auto const launch = mh::prepare_stream_read(data.data(), bytes, plan, out.data());
  launch(s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  auto const got = mh::collect_stream_sums(out.data(), blocks);
  auto v = exact(got.sum, mh::stream_pattern_sum(bytes), "checksum of every word read");
  if (v.status == verdict::passed && got.mismatches != 0) {
    v.status = verdict::failed;
    v.error = static_cast<double>(got.mismatches);
    v.detail = std::to_string(got.mismatches) + " words did not hold their index's pattern";
  }
  s.set_verification(v);
  s.add_bytes_read(static_cast<double>(bytes));
  s.exec(launch);
  // Little's law: each SM keeps `bytes_in_flight` moving for one latency, so the rate is
  // SMs x bytes in flight / latency, until device memory's peak caps it.
  double const lat = dram_latency_ns(s, data.data(), bytes);
  double const peak = s.device().dram_peak_gbps();
  double const sms = static_cast<double>(blocks) / plan.ctas_per_sm;
  double const little = sms * bytes_in_flight / lat;  // bytes per ns = GB/s
  s.set_predicted({{"gbps", std::min(peak, little)}, {"little_gbps", little}, {"dram_latency_ns", lat}});
  s.set_extra("blocks", blocks);
  s.set_extra("ctas_per_sm", plan.ctas_per_sm);
  s.set_extra("bytes_in_flight_per_sm", bytes_in_flight);
  s.set_extra("tile_bytes", plan.tile_bytes);
  s.set_extra("stages", plan.method == mh::copy_method::ld_global_v4 ? 1 : plan.stages);
  s.set_extra("footprint_bytes", bytes);
  s.set_extra("dram_peak_gbps", peak);
  if (auto const ms = s.result().median_ms; ms && *ms > 0 && peak > 0)
    s.set_extra("ratio_to_dram_peak", static_cast<double>(bytes) / (*ms * 1e6) / peak);
}

void tma_body(state& s) {
  auto const side = static_cast<std::size_t>(s.get_int("box"));
  int const stages = static_cast<int>(s.get_int("stages"));
  mh::stream_plan plan;
  plan.method = s.variant() == "bulk_1d" ? mh::copy_method::bulk : mh::copy_method::tma;
  plan.tile_bytes = side * side;  // side bytes wide, side rows
  // tensor_2d_wide: the same bytes as rows of 1024 bytes (256 words, TMA's widest box row),
  // as few rows as hold them: 8 lines of each 4 KiB tensor row a request instead of 1/4-2.
  plan.tile_w_bytes = s.variant() == "tensor_2d_wide" ? std::min<std::size_t>(1024, plan.tile_bytes) : side;
  plan.stages = stages;
  plan.ctas_per_sm = static_cast<int>(s.get_int("ctas_per_sm"));
  stream_point(s, plan, static_cast<double>(plan.tile_bytes) * stages * plan.ctas_per_sm);
}

void inflight_body(state& s) {
  auto const method = mh::parse_copy_method(s.get_string("method"));
  auto const bif = static_cast<std::size_t>(s.get_int("bytes_in_flight_per_sm"));
  mh::stream_plan plan;
  plan.method = method;
  if (method == mh::copy_method::ld_global_v4) {
    plan.tile_bytes = bif;  // 256 threads x bif / 4096 loads of 16 bytes, all issued before any is used
  } else {
    plan.stages = 4;  // a ring of 4 tiles of bif / 4
    plan.tile_bytes = bif / 4;
    plan.tile_w_bytes = std::min<std::size_t>(256, plan.tile_bytes);  // tma: boxes 256 B wide
  }
  stream_point(s, plan, static_cast<double>(bif));
}

// ---------------------------------------------------------------- L2 -> SM through TMA

void intake_body(state& s) {
  mh::intake_plan p;
  p.ctas = static_cast<int>(s.get_int("ctas"));
  p.share = static_cast<int>(s.get_int("share"));
  p.multicast = s.variant() == "multicast";
  std::size_t const box_bytes = static_cast<std::size_t>(s.get_int("box"));
  std::size_t const in_flight = static_cast<std::size_t>(s.get_int("bytes_in_flight_per_sm"));
  p.box_rows = static_cast<int>(box_bytes / 128);
  if (in_flight % box_bytes != 0 || in_flight / box_bytes > static_cast<std::size_t>(mh::intake_max_stages))
    s.skip("the bytes in flight must be 1 to " + std::to_string(mh::intake_max_stages) + " whole boxes");
  p.stages = static_cast<int>(in_flight / box_bytes);
  p.steps = s.quick() ? 1024 : 4096;
  s.require_arch(mh::intake_kernel(p.multicast), memlab::arch::bulk_copy, "cp.async.bulk.tensor");
  if (p.multicast && p.share % 2 != 0) s.skip("multicast shares each read between the two CTAs of a pair: share must be even");
  if (p.ctas > s.device().sm_count)
    s.skip(std::to_string(p.ctas) + " blocks, one an SM, on " + std::to_string(s.device().sm_count) + " SMs");
  try {
    mh::check_intake_plan(p);
  } catch (memlab::error const& e) {
    s.skip(e.what());
  }
  int const blocks = mh::intake_blocks(p);
  std::size_t const bytes = mh::intake_footprint_bytes(p, blocks);
  device_buffer<std::uint32_t> data(bytes / 4), out(static_cast<std::size_t>(blocks));
  mh::fill_stream_pattern(data.data(), bytes / 4, s.stream());
  out.fill_bytes(0xFF);  // poisoned: a block that reports nothing fails the check
  // Prepared once (checks, tensor map): the checked run and every timed sample issue the same launch.
  auto const launch = mh::prepare_intake_read(data.data(), p, out.data());
  launch(s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  std::vector<std::uint32_t> got(static_cast<std::size_t>(blocks));
  MEMLAB_CUDA_CHECK(cudaMemcpy(got.data(), out.data(), got.size() * 4, cudaMemcpyDeviceToHost));
  auto const want = mh::intake_expected_sums(p, blocks);
  std::size_t bad = 0;
  for (std::size_t b = 0; b < got.size(); ++b) bad += got[b] != want[b];
  s.set_verification(zero_mismatches("blocks", bad, std::to_string(bad) + " of " + std::to_string(blocks) +
                                                          " blocks' sums of the rows they read differ from the host's"));
  double const delivered = static_cast<double>(blocks) * p.steps * static_cast<double>(box_bytes);
  s.add_bytes_read(delivered);
  s.exec(launch);
  double const l2_reads = delivered / (p.multicast ? 2.0 : 1.0);
  s.set_extra("blocks", blocks);
  s.set_extra("stages", p.stages);
  s.set_extra("consumer_warps", mh::intake_consumers(p.stages));
  s.set_extra("footprint_bytes", static_cast<double>(bytes));
  s.set_extra("l2_read_bytes", l2_reads);
  if (auto const ms = s.result().median_ms; ms && *ms > 0) {
    s.set_extra("l2_read_gbps", l2_reads / (*ms * 1e6));
    s.set_extra("per_sm_gbps", delivered / (*ms * 1e6) / blocks);
  }
}

/// The per-GPU atlas: every level's figures gathered from this run's rows (the report fills
/// the cells from the record), beside the driver's properties and published microbenchmarks.
table_spec atlas_table() {
  // Published figures are for the H100 (SXM, 1.98 GHz boost unless noted), in SM cycles.
  std::string const luo = "Luo et al. 2024, Benchmarking and Dissecting the Nvidia Hopper GPU Architecture (H100)";
  std::string const cnc = "gpu-benches / Chips and Cheese, Nvidia's H100 (H100 PCIe)";
  std::string const cnc_far = "gpu-benches / Chips and Cheese (H100 PCIe): far L2 320-480 cycles, midpoint shown";
  std::string const luo_pchase =
      "Luo et al. 2024 (H100), global memory, a fixed-stride P-chase (the method of Mei and Chu's group)";
  std::string const luo_dsm = "Luo et al. 2024 (H100): distributed shared memory, aggregate over the GPU, cluster size 2";
  // Every latency cell reads the random chase unless it names the order.
  auto const random_order = [](row_filter w) {
    bool const named = std::any_of(w.begin(), w.end(), [](auto const& kv) { return kv.first == "order"; });
    if (!named) w.push_back({"order", {"random"}});
    return w;
  };
  auto const lat = [&](row_filter w) {
    return from_row("hierarchy.latency", random_order(std::move(w)), "extra.cycles_per_load");
  };
  auto const lat_ns = [&](row_filter w) {
    return from_row("hierarchy.latency", random_order(std::move(w)), "extra.ns_per_load");
  };
  auto const cap = [](char const* key) { return from_row("hierarchy.capacity", {{"path", {"ld.global"}}}, key); };
  table_spec t;
  t.title = "The memory-hierarchy atlas of this GPU";
  t.columns = {{"latency", "cycles"},        {"latency", "ns"},        {"bandwidth", "GB/s"},
               {"measured capacity", "bytes"}, {"driver's size", "bytes"}, {"driver's peak", "GB/s"},
               {"published latency", "cycles"}, {"published (2nd source)", "cycles"}, {"published bandwidth", "GB/s"}};
  t.rows = {
      {"shared memory (the load alone: each value the next address)",
       {from_row("hierarchy.onchip", {{"variant", {"shared_load"}}}, "extra.cycles_per_op"),
        from_row("hierarchy.onchip", {{"variant", {"shared_load"}}}, "extra.ns_per_op"), no_cell(), no_cell(),
        from_device("smem_per_block_optin_bytes"), no_cell(), no_cell(), no_cell(), no_cell()}},
      {"shared memory (j = s[j]: the published P-chase, an IMAD a load)",
       {from_row("hierarchy.onchip", {{"variant", {"shared_load_indexed"}}}, "extra.cycles_per_op"),
        from_row("hierarchy.onchip", {{"variant", {"shared_load_indexed"}}}, "extra.ns_per_op"), no_cell(), no_cell(),
        no_cell(), no_cell(), published(29, luo), no_cell(), no_cell()}},
      {"L1 (ld.global, 1 KiB; capacity: a kernel holding no shared memory)",
       {lat({{"path", {"ld.global"}}, {"footprint", {"min"}}}), lat_ns({{"path", {"ld.global"}}, {"footprint", {"min"}}}),
        from_row("hierarchy.bandwidth", {{"variant", {"shared_ld_global"}}}, "gbps", "max"),
        from_row("hierarchy.l1_carveout", {{"shared_kib", {"0"}}}, "extra.l1_bytes"), no_cell(), no_cell(),
        published(41, luo), published(34, cnc), no_cell()}},
      {"L1 + shared memory per SM (L1 at the largest carve-out + that carve-out; the driver reports the shared part)",
       {no_cell(), no_cell(), no_cell(), from_row("hierarchy.l1_carveout", {{"shared_kib", {"max"}}}, "extra.l1_plus_shared_bytes"),
        from_device("smem_per_sm_bytes"), no_cell(), no_cell(), no_cell(), no_cell()}},
      {"L2, near partition (ld.global.cg, 1 KiB)",
       {lat({{"path", {"ld.global.cg"}}, {"footprint", {"min"}}}),
        lat_ns({{"path", {"ld.global.cg"}}, {"footprint", {"min"}}}), no_cell(), cap("extra.l2_near_bytes"), no_cell(),
        no_cell(), published(263, luo), published(265, cnc), no_cell()}},
      {"L2, far partition (past the near step)",
       {cap("extra.l2_near_cycles_above"), no_cell(),
        from_row("hierarchy.bandwidth", {{"variant", {"partitioned_ld_cg"}}}, "gbps", "max"), cap("extra.l2_bytes"),
        from_device("l2_bytes"), no_cell(), no_cell(), published(400, cnc_far), no_cell()}},
      {"device memory (ld.global, random chase, largest footprint)",
       {lat({{"path", {"ld.global"}}, {"footprint", {"max"}}}), lat_ns({{"path", {"ld.global"}}, {"footprint", {"max"}}}),
        from_row("hierarchy.bandwidth", {{"variant", dram_read_variants}, {"footprint", {"max"}}}, "gbps", "max"),
        no_cell(),
        from_device("global_mem_bytes"), from_device("dram_peak_gbps"), no_cell(), no_cell(), no_cell()}},
      {"device memory (ld.global, fixed-stride chase: the published method)",
       {lat({{"path", {"ld.global"}}, {"order", {"sequential"}}, {"footprint", {"max"}}}),
        lat_ns({{"path", {"ld.global"}}, {"order", {"sequential"}}, {"footprint", {"max"}}}), no_cell(), no_cell(),
        no_cell(), no_cell(), published(479, luo_pchase), no_cell(), no_cell()}},
      {"device memory through TMA (best box)",
       {no_cell(), no_cell(), from_row("hierarchy.tma", {{"variant", {"tensor_2d", "tensor_2d_wide"}}}, "gbps", "max"),
        no_cell(), no_cell(),
        from_device("dram_peak_gbps"), no_cell(), no_cell(), no_cell()}},
      {"TLB (past the first reach)",
       {from_row("hierarchy.tlb", {}, "extra.cycles_past_reach"), no_cell(), no_cell(),
        from_row("hierarchy.tlb", {}, "extra.tlb_reach_bytes"), no_cell(), no_cell(), no_cell(), no_cell(), no_cell()}},
      {"TLB (past the last reach)",
       {from_row("hierarchy.tlb", {}, "extra.cycles_past_last_reach"), no_cell(), no_cell(),
        from_row("hierarchy.tlb", {}, "extra.tlb_reach_last_bytes"), no_cell(), no_cell(), no_cell(), no_cell(), no_cell()}},
      {"distributed shared memory (neighbour, cluster 2)",
       {from_row("hierarchy.dsmem_latency", {{"target", {"neighbour"}}, {"cluster", {"2"}}}, "extra.cycles_per_load"),
        from_row("hierarchy.dsmem_latency", {{"target", {"neighbour"}}, {"cluster", {"2"}}}, "extra.ns_per_load"),
        from_row("hierarchy.dsmem_bandwidth", {{"cluster", {"2"}}, {"distance", {"1"}}}, "gbps"), no_cell(), no_cell(),
        no_cell(), no_cell(), no_cell(), published(3270, luo_dsm)}},
  };
  t.note = "Every measured cell is read from a row of this record (— where that experiment or row did not run or did "
           "not verify); ns are measured with %globaltimer around the same loop as the cycles. The published figures "
           "are the H100's: compare cycles, not ns, on another GPU of the same architecture.";
  return t;
}

registrar const dsmem_latency{[] {
  experiment e;
  e.id = "hierarchy.dsmem_latency";
  e.description = "cycles per dependent load from another block's shared memory (sm_90 clusters)";
  e.seed_ref = "004 §5.2 (beyond the seed: Hopper's distributed shared memory)";
  e.axes = {int_axis("cluster", {2, 4, 8, 16}, {2, 8}), string_axis("target", {"own", "neighbour", "farthest"})};
  e.body = dsmem_latency_body;
  e.describe_axis("cluster", "blocks", "blocks per cluster");
  e.describe_axis("target", "", "whose shared memory is read: own block, neighbour, farthest block");
  e.metrics = {metrics::time(), {"extra.cycles_per_load", "cycles", "SM cycles per dependent load"},
               {"extra.ns_per_load", "ns", "ns per dependent load (%globaltimer)"}};
  e.headline = best_row("What does reading a neighbour's shared memory cost against one's own?",
                        {{"target", {"neighbour"}}, {"cluster", {"2"}}}, "extra.cycles_per_load", "baseline",
                        {{"target", {"own"}}});
  e.prose = {"Hopper's distributed shared memory: ld.shared::cluster after mapa reads another block's shared memory "
             "in the cluster. The dependent chase measures its latency against the block's own shared memory.",
             "Own against neighbour against farthest, and whether the cluster size moves them.", ""};
  {
    plot_spec p = line_plot("hierarchy_dsmem_latency.png", "Distributed shared memory latency against cluster size", "cluster", "extra.cycles_per_load", {"target"});
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const dsmem_bandwidth{[] {
  experiment e;
  e.id = "hierarchy.dsmem_bandwidth";
  e.description = "every block reading a neighbour's shared memory with 16-byte loads (sm_90 clusters)";
  e.seed_ref = "004 §5.2 (beyond the seed: Hopper's distributed shared memory)";
  e.axes = {int_axis("cluster", {2, 4, 8, 16}, {2, 8}), int_axis("distance", {0, 1})};
  e.axes[1].description = "0: each block reads its own shared memory through the cluster window; 1: its neighbour's";
  e.body = dsmem_bandwidth_body;
  e.describe_axis("cluster", "blocks", "blocks per cluster");
  e.describe_axis("distance", "blocks", "0: a block reads its own shared memory; 1: its neighbour's");
  e.metrics = {metrics::time(), metrics::gbps()};
  e.headline = best_row("What bandwidth does reading a neighbour's shared memory reach against one's own?",
                        {{"distance", {"1"}}}, "gbps", "baseline", {{"distance", {"0"}}});
  e.prose = {"Every block of a cluster reads a neighbour's shared memory with 16-byte loads: the bandwidth of the "
             "SM-to-SM network against a block reading its own.",
             "The gap between distance 0 and 1 per cluster size.", ""};
  {
    plot_spec p = line_plot("hierarchy_dsmem_bandwidth.png", "Distributed shared memory bandwidth against cluster size", "cluster", "gbps", {"distance"});
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const latency{[] {
  experiment e;
  e.id = "hierarchy.latency";
  e.description = "dependent loads through a random cycle: latency vs footprint on each load path";
  e.seed_ref = "004 §5.1, 000 §9.2";
  e.axes = {string_axis("path", paths, {"ld.global", "ld.global.cg"}), pow2_axis("footprint", 10, 32, 12, 28),
            int_axis("stride", {128}), string_axis("order", {"random", "sequential"})};
  e.axes[1].description = "bytes chased";
  e.axes[2].description = "bytes between consecutive slots (128: one cache line a load; 2 MiB: one page)";
  e.axes[2].min_value = 4;
  e.body = latency_body;
  e.describe_axis("path", "", "the load instruction: ld.global (L1), ld.global.cg (L2 only), ld.global.nc (read-only)");
  e.describe_axis("footprint", "bytes", "bytes the random cycle spans", true);
  e.describe_axis("stride", "bytes", "distance between the cycle's slots");
  e.describe_axis("order", "",
                  "random: a random single cycle (no two consecutive loads share a DRAM page); sequential: slot s "
                  "then s + 1, the fixed-stride P-chase of the published microbenchmarks");
  e.metrics = {metrics::time(), {"extra.cycles_per_load", "cycles", "SM cycles per dependent load"},
               {"extra.ns_per_load", "ns", "ns per dependent load (%globaltimer)"}};
  e.headline = best_row("What is a load's latency from device memory, past every cache?",
                        {{"path", {"ld.global"}}, {"order", {"random"}}, {"footprint", {"max"}}}, "extra.cycles_per_load");
  e.prose = {"Dependent loads through a random cycle: each load's address comes from the last, so the time per load is "
             "the latency of the level the footprint fits in: L1, L2, then device memory. The sequential order walks "
             "the same slots one stride apart, as the fixed-stride P-chase of the published figures does: past L2 "
             "its loads find the DRAM page the previous one opened.",
             "The staircase: a step where the footprint outgrows L1, another where it outgrows L2. Past L2, the gap "
             "between the orders is the cost of opening a DRAM page.", ""};
  {
    plot_spec p = line_plot("hierarchy_latency.png", "Load latency against footprint, per load path and order", "footprint", "extra.cycles_per_load", {"path", "order"});
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const capacity{[] {
  experiment e;
  e.id = "hierarchy.capacity";
  e.description = "L1 and L2 capacities located in a fine latency staircase, beside cudaDeviceProp";
  e.seed_ref = "004 §5.1";
  e.axes = {string_axis("path", {"ld.global", "ld.global.cg"})};
  e.body = capacity_body;
  e.describe_axis("path", "", "the load instruction the staircase is measured with");
  e.metrics = {metrics::time(), {"extra.cycles_per_load", "cycles", "SM cycles per dependent load"}};
  e.headline = best_row("Where are the cache steps, beside what cudaDeviceProp says?", {{"path", {"ld.global"}}},
                        "median_ms");
  e.prose = {"A fine latency staircase from which the L1 and L2 capacities are located, printed beside "
             "cudaDeviceProp's figures (model column).",
             "The located steps against the model's sizes.", ""};
  e.metrics.push_back({"extra.l1_bytes", "bytes", "half rise of the located step nearest the L1/shared carve-out"});
  e.metrics.push_back({"extra.l2_near_bytes", "bytes", "half rise of the located step nearest half of L2 (Hopper's near partition)"});
  e.metrics.push_back({"extra.l2_bytes", "bytes", "half rise of the located step nearest the L2 size"});
  e.metrics.push_back({"extra.l1_onset_bytes", "bytes", "the last footprint before the L1 step (misses begin past it)"});
  e.metrics.push_back({"extra.l2_onset_bytes", "bytes", "the last footprint before the L2 step"});
  e.tables = {atlas_table()};
  return e;
}()};

registrar const l1_carveout{[] {
  experiment e;
  e.id = "hierarchy.l1_carveout";
  e.description = "the L1 a chase sees while its block holds a shared-memory carve-out: L1 + shared = the unified size";
  e.seed_ref = "004 §5.1, 000 §9.2 (beyond the seed: the L1/shared carve-out)";
  e.axes = {int_axis("shared_kib", {0, 8, 16, 32, 64, 100, 132, 164, 196, 228}, {0, 64, 132, 228})};
  e.body = l1_carveout_body;
  e.describe_axis("shared_kib", "KiB",
                  "shared memory the chasing block holds (dynamic + the block's reserved KiB) and the carve-out it "
                  "prefers; past the device's shared memory per SM the row is skipped");
  e.metrics = {metrics::time(), {"extra.l1_bytes", "bytes", "the first step's half rise (half the loads miss): the L1 at this carve-out"},
               {"extra.l1_onset_bytes", "bytes", "the last footprint before the first step: where misses begin"},
               {"extra.l1_plus_shared_bytes", "bytes", "L1 + the shared memory held: the unified L1/shared size per SM"}};
  e.headline = best_row("How much L1 is left at each shared-memory carve-out?", {{"shared_kib", {"0"}}},
                        "extra.l1_bytes");
  e.headline.higher_is_better = true;
  e.prose = {"Volta and later SMs split one unified storage between L1 and shared memory; the split (the carve-out) "
             "is set per kernel launch. Here one thread chases a random cycle through ld.global at 2 KiB footprint "
             "steps while its block holds a given amount of shared memory and prefers that carve-out, so the driver "
             "must configure at least that much shared memory: the L1 step moves down by what the carve-out takes.",
             "The located L1 against the shared memory held, and L1 + shared (flat when the carve-out is exactly "
             "what was asked for; a step up where the driver rounds the carve-out to a larger configuration).", ""};
  {
    plot_spec p = line_plot("hierarchy_l1_carveout.png", "Located L1 against the shared memory the block holds",
                            "shared_kib", "extra.l1_bytes");
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const bandwidth{[] {
  experiment e;
  e.id = "hierarchy.bandwidth";
  e.description = "every SM streaming 16-byte loads: bandwidth vs footprint (L1, L2, device memory)";
  e.seed_ref = "004 §5.1, 000 §9.2";
  e.axes = {variant_axis(bandwidth_variants, {"shared_ld_global", "partitioned_ld_cg", "grid_stride_cg_x8"}),
            pow2_axis("footprint", 14, 32, 16, 28)};
  e.body = bandwidth_body;
  e.ceiling = ceiling_relation::peer;
  e.describe_axis("variant", "", "all SMs on one buffer (ld.global), each on its own part (ld.global.cg / ld.global, read or read+write), or grid_stride_<cg|nc>_x<U>: chunks dealt round the grid, U 16-byte loads a thread in flight (nc: ld.global.nc.L1::no_allocate.L2::256B)");
  e.describe_axis("footprint", "bytes", "bytes streamed repeatedly", true);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling(),
               {"extra.ratio_to_dram_peak", "x", "GB/s / the theoretical DRAM peak (memory clock x bus width)"},
               {"extra.bytes_in_flight_per_sm", "bytes", "grid_stride: 16-byte loads requested per SM after a round issues"}};
  e.headline = best_row("What bandwidth does L2 give when the footprint fits it?",
                        {{"variant", {"partitioned_ld_cg"}}}, "gbps", "ratio_to_ceiling");
  e.prose = {"Every SM streams 16-byte loads over a footprint: while it fits L1 the rate is L1's, then L2's, then device "
             "memory's. The grid_stride variants deal chunks round the grid (the grid's loads stay within a few pages) "
             "with 1 to 16 independent loads a thread in flight: device memory's read ceiling.",
             "The plateaus and where they end, against the copy ceiling; past 1 GiB, partitioned against grid_stride "
             "(the TLB), and x1 against x8 (bytes in flight).", ""};
  {
    plot_spec p = line_plot("hierarchy_bandwidth.png", "Streaming bandwidth against footprint", "footprint", "gbps", {"variant"});
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const onchip{[] {
  experiment e;
  e.id = "hierarchy.onchip";
  e.description = "cycles per dependent shared load (address and index chains), constant load (broadcast, divergent), IMAD, FFMA";
  e.seed_ref = "004 §5.1-5.3, 003";
  e.axes = {variant_axis({"shared_load", "shared_load_indexed", "constant_uniform", "constant_divergent", "register_imad", "register_ffma"})};
  e.body = onchip_body;
  e.describe_axis("variant", "", "the dependent operation timed");
  e.metrics = {metrics::time(), {"extra.cycles_per_op", "cycles", "SM cycles per dependent operation"},
               {"extra.ns_per_op", "ns", "ns per dependent operation (%globaltimer)"}};
  e.headline = best_row("How many cycles does a dependent shared-memory load take?", {{"variant", {"shared_load"}}},
                        "extra.cycles_per_op");
  e.prose = {"Latencies of on-chip storage and arithmetic: a dependent shared load, a constant load read uniformly and "
             "divergently, a dependent IMAD and FFMA. The shared chase runs twice: each value the next address (the "
             "load alone), and each value the next index (j = s[j], as the classic P-chase writes it: the load plus "
             "the address arithmetic between loads).",
             "Shared against constant, and the divergent constant read's serialization.", ""};
  {
    plot_spec p = bar_plot("hierarchy_onchip.png", "On-chip latencies", "variant", "extra.cycles_per_op");
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const tlb{[] {
  experiment e;
  e.id = "hierarchy.tlb";
  e.description = "dependent loads over 8 MiB to 70% of free memory of 2 MiB pages, every line in L2: the TLB reach";
  e.seed_ref = "004 §5.1 (beyond the seed: address translation)";
  e.axes = {int_axis("slots_max", {65536})};
  e.axes[0].min_value = 4096;
  e.body = tlb_body;
  e.describe_axis("slots_max", "slots", "most lines (and pages) a footprint's chase touches (65536: 8 MiB of lines, 128 GiB of pages); at least 4096");
  e.metrics = {metrics::time(), {"extra.tlb_reach_bytes", "bytes", "footprint where the latency begins to climb (the first TLB level's reach)"},
               {"extra.cycles_within_reach", "cycles", "cycles per load while every page is in the TLB"},
               {"extra.cycles_past_reach", "cycles", "cycles per load once every load misses the first level"}};
  e.headline = best_row("How far does the TLB reach, and what does a miss cost?", {}, "extra.tlb_reach_bytes");
  e.headline.higher_is_better = true;
  e.prose = {"Dependent ld.global.cg loads through a random cycle of one slot a 2 MiB page (at least 4096) spread over each footprint, "
             "from 8 MiB to 70% of the free memory in quarter octaves. The lines touched "
             "stay in L2, so the latency rises only when the pages outgrow a TLB level: a level with cheap misses "
             "climbs gradually past its reach; fit_gradual_levels fits up to two such levels (find_steps any 20% step).",
             "extra.levels: each level's reach and what a miss of it adds.", ""};
  return e;
}()};

registrar const tma{[] {
  experiment e;
  e.id = "hierarchy.tma";
  e.description = "TMA tensor loads and 1-D bulk copies streaming 64 x L2 through shared memory: box size x stages x blocks per SM (sm_90)";
  e.seed_ref = "004 §5 (beyond the seed: Hopper's tensor memory accelerator)";
  e.axes = {variant_axis({"tensor_2d", "tensor_2d_wide", "bulk_1d"}, {"tensor_2d", "bulk_1d"}),
            int_axis("box", {32, 64, 128, 256}, {64, 128}),
            int_axis("stages", {1, 2, 4, 8}, {2, 8}), int_axis("ctas_per_sm", {1, 2}, {1})};
  e.axes[3].min_value = 1;
  e.axes[3].max_value = 32;
  e.body = tma_body;
  e.ceiling = ceiling_relation::ratio;
  e.describe_axis("variant", "", "cp.async.bulk.tensor.2d with a tensor map (tensor_2d: box side bytes wide, side rows; tensor_2d_wide: the same bytes in rows of 1024 bytes) or cp.async.bulk of side x side contiguous bytes");
  e.describe_axis("box", "bytes", "the box's side: side bytes wide by side rows (32: 1 KiB, 256: 64 KiB a load)", true);
  e.describe_axis("stages", "tiles", "boxes in the shared-memory ring, all in flight while none is being read", true);
  e.describe_axis("ctas_per_sm", "blocks", "blocks per SM, each with its own ring (skipped where the rings do not fit)");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling(),
               {"extra.ratio_to_dram_peak", "x", "GB/s / the theoretical DRAM peak (memory clock x bus width)"},
               {"predicted.gbps", "GB/s", "Little's law: SMs x ctas x stages x box / unloaded DRAM latency, capped at the DRAM peak"}};
  e.headline = best_row("What fraction of device memory's bandwidth do TMA loads reach at their best box?",
                        {{"variant", {"tensor_2d", "tensor_2d_wide"}}}, "gbps", "ratio_to_ceiling");
  e.headline.higher_is_better = true;
  e.prose = {"One or two blocks per SM stream a tensor of 64 x L2 through a ring of shared-memory tiles, each filled by "
             "one TMA load (a box of a 2-D tensor map encoded on the host) or one 1-D bulk copy and completed on an "
             "mbarrier. A producer warp keeps every free slot in flight; 8 consumer warps check every word against its "
             "index and release the slot on its empty barrier. Small boxes or few stages keep too few bytes in flight "
             "to cover device memory's latency.",
             "Bandwidth climbing with box x stages (the bytes in flight) and flattening near the DRAM peak; the square "
             "2-D box against the same bytes in 1024-byte rows and against the contiguous bulk copy.", ""};
  {
    // One plot (a filtered second one would be empty, and fail to draw, in a run without two blocks per SM).
    plot_spec p = line_plot("hierarchy_tma.png", "TMA and bulk-copy bandwidth against the box, per stage count and blocks per SM",
                            "box", "gbps", {"stages", "ctas_per_sm"});
    p.panels = "variant";
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    p.model = "predicted.gbps";
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const intake{[] {
  experiment e;
  e.id = "hierarchy.l2_intake";
  e.description = "L2 to the SMs through TMA: bandwidth by blocks (one an SM), blocks reading the same rows, 2-CTA multicast (sm_90)";
  e.seed_ref = "004 §5 (beyond the seed: the intake a tensor-core GEMM's pipeline needs)";
  // Not in the default suite: a diagnostic for the tensor-core GEMM work (docs/tc-gemm.md, "Session 36").
  e.default_suite = false;
  e.axes = {variant_axis({"own", "multicast"}),
            int_axis("ctas", {8, 16, 32, 64, 96, 128}, {16, 128}).about("blocks", "blocks, one an SM, each streaming its boxes"),
            int_axis("share", {1, 16}, {16}).about("blocks", "consecutive blocks reading the same rows at about the same time"),
            int_axis("box", {8192, 16384, 32768}, {16384})
                .about("bytes", "bytes a box (rows of 128 bytes): 8 KiB is a 64-row slice of a 64-deep BF16 k-block, 16 KiB a 128-row one", true),
            int_axis("bytes_in_flight_per_sm", {65536, 131072, 196608}, {131072})
                .about("bytes", "the ring: boxes a block has asked for and not yet released (a 128 x 64 BF16 GEMM tile's 8 stages hold 192 KiB)")};
  e.axes[1].min_value = 2;
  e.axes[1].max_value = 1024;
  e.axes[2].min_value = 1;
  e.axes[2].max_value = 1024;
  e.axes[3].allowed = {std::int64_t{2048}, std::int64_t{4096}, std::int64_t{8192}, std::int64_t{16384}, std::int64_t{32768}};
  e.axes[4].min_value = 2048;
  e.axes[4].max_value = 200 << 10;
  e.body = intake_body;
  e.describe_axis("variant", "",
                  "own: every block loads its whole box; multicast: 2-CTA clusters whose CTAs read the same rows, each "
                  "loading half of every box into both (one L2 read for two SMs)");
  e.metrics = {metrics::time(), metrics::gbps(),
               {"extra.l2_read_gbps", "GB/s", "bytes read from L2 / median time (multicast: half the bytes delivered)"},
               {"extra.per_sm_gbps", "GB/s", "bytes delivered into one SM's shared memory / median time"}};
  e.headline = best_row("How many bytes a second can TMA bring from L2 into 128 SMs at once?", {{"ctas", {"128"}}}, "gbps", "");
  e.headline.higher_is_better = true;
  e.prose = {"Blocks of a producer warp and up to four consumer warps, one an SM, stream boxes (rows of 128 bytes) of a "
             "tensor that L2 holds through a ring of shared-memory slots (64-192 KiB in flight a block), as a tensor-core "
             "GEMM's pipeline does with its operands. `share` consecutive blocks read the same rows at about the same time "
             "(a GEMM's A rows are read by every CTA of a tile row); with multicast the two CTAs of a 2-CTA cluster read "
             "their rows once for both. The consumer warps take the slots in turn (4, 2 or 1, the most that divides the "
             "ring: extra.consumer_warps); each adds one word of each row of its box (3% of the bytes) and releases the slot. "
             "One consumer warp alone held a block to its per-box hand-off (on the H100 about 57, 97 and 170 GB/s for 8, "
             "16 and 32 KiB boxes; docs/hierarchy.md, \"L2 into the SMs through TMA\"). Bytes are those delivered into "
             "shared memory.",
             "Where each block's rate stays level as blocks are added, L2 keeps up; where it falls (extra.per_sm_gbps), "
             "the chip-wide limit for that pattern: blocks reading their own rows against 16 reading the same ones, and "
             "multicast, which halves L2's reads, against plain loads of the same shared rows.",
             ""};
  {
    plot_spec p = line_plot("hierarchy_l2_intake.png", "L2 to SMs through TMA: bandwidth against blocks", "ctas", "gbps",
                            {"variant", "share", "box"});
    p.panels = "bytes_in_flight_per_sm";
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const inflight{[] {
  experiment e;
  e.id = "hierarchy.inflight";
  e.description = "plain loads, cp.async, cp.async.bulk and TMA at equal bytes in flight per SM: who reaches DRAM bandwidth with how much";
  e.seed_ref = "004 §5, 000 §9.2 (beyond the seed: Ampere's and Hopper's copy paths)";
  e.axes = {string_axis("method", {"ld.global.v4", "cp.async", "cp.async.bulk", "tma"}),
            pow2_axis("bytes_in_flight_per_sm", 12, 17, 12, 16)};
  e.body = inflight_body;
  e.ceiling = ceiling_relation::ratio;
  e.describe_axis("method", "", "ld.global.v4 into registers; cp.async 16 B, cp.async.bulk or a TMA box into a 4-tile shared-memory ring");
  e.describe_axis("bytes_in_flight_per_sm", "bytes", "bytes a block (one per SM) has requested and not yet used", true);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling(),
               {"extra.ratio_to_dram_peak", "x", "GB/s / the theoretical DRAM peak (memory clock x bus width)"},
               {"predicted.gbps", "GB/s", "Little's law: SMs x bytes in flight / unloaded DRAM latency, capped at the DRAM peak"}};
  e.headline = best_row("Which copy path comes closest to device memory's bandwidth with 32 KiB in flight per SM?",
                        {{"bytes_in_flight_per_sm", {"32768"}}}, "gbps", "ratio_to_ceiling");
  e.headline.higher_is_better = true;
  e.prose = {"Four ways of bringing device memory to an SM at the same bytes in flight per SM (one block of 256 "
             "threads per SM, plus a producer warp for the bulk and TMA rings; a buffer of 64 x L2 read once): 16-byte ld.global.v4 into registers, all issued before "
             "any is used; 16-byte cp.async, one 1-D cp.async.bulk, or one TMA box per tile of a 4-tile shared-memory "
             "ring. Little's law says the rate is SMs x bytes in flight / latency until the DRAM peak caps it.",
             "The bytes in flight each path needs to reach the plateau, against the dashed Little's-law model (which "
             "uses the unloaded latency, so it is optimistic where the memory is busy).", ""};
  {
    plot_spec p = line_plot("hierarchy_inflight.png", "Bandwidth against bytes in flight per SM, per copy path",
                            "bytes_in_flight_per_sm", "gbps", {"method"});
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    p.model = "predicted.gbps";
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
