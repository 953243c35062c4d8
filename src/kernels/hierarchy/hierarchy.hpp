#pragma once
// The memory-hierarchy atlas (PMPP ch. 5, Best Practices Guide ch. 9): what each level
// costs, measured. Latency: one thread follows a dependent chain of loads through a random
// cycle (no prefetcher or coalescing helps), timed in cycles (clock64) and nanoseconds
// (%globaltimer). Bandwidth: every SM streams 16-byte loads over a footprint that fits one
// level. On-chip: shared memory, the constant cache and register dependencies.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace memlab::hierarchy {

/// How the chase loads: ld.global (L1 and L2), ld.global.cg (L2 only), ld.global.nc
/// (the read-only / texture path).
enum class load_path { ca, cg, nc };
char const* to_string(load_path p) noexcept;
load_path parse_load_path(std::string const& name);  ///< "ld.global", "ld.global.cg", "ld.global.nc"

/// A random single cycle over `slots` slots (Sattolo's algorithm): next[s] is the slot after
/// s, and following next from any slot visits every slot before returning.
std::vector<std::uint32_t> random_cycle(std::size_t slots, std::uint64_t seed);

/// The fixed-stride cycle of the classic P-chase (Mei and Chu): next[s] = s + 1, wrapping.
/// Consecutive loads fall in the same DRAM page, which the random cycle avoids.
std::vector<std::uint32_t> sequential_cycle(std::size_t slots);

/// Where the chain starts and ends after `loads` steps from `start` (host reference).
std::uint32_t follow(std::vector<std::uint32_t> const& next, std::uint32_t start, std::uint64_t loads);

/// Lays the cycle out in device memory: word s * stride_words holds (next[s] * stride_words),
/// so each load's value is the word index of the next load. `chain` spans at least
/// slots * stride_words words; the other words are not touched.
void write_chain(std::uint32_t* chain, std::vector<std::uint32_t> const& next, std::size_t stride_words,
                 cudaStream_t stream);

struct chase_result {
  double cycles_per_load = 0;  ///< SM clock cycles (clock64) per dependent load
  double ns_per_load = 0;      ///< nanoseconds (%globaltimer) per dependent load
  std::uint32_t last_slot = 0; ///< where the chain ended (checked against follow())
};

/// One thread: `warmup` untimed loads from slot `start`, then `loads` timed ones.
chase_result pointer_chase(std::uint32_t const* chain, std::size_t stride_words, load_path path,
                           std::uint32_t start, std::uint64_t warmup, std::uint64_t loads, cudaStream_t stream);

/// What cudaFuncGetAttributes reports for the carve-out chase kernel after it was set.
struct carveout_readback {
  int preferred_percent = -1;  ///< cudaFuncAttributes::preferredShmemCarveout
  int max_dynamic_bytes = -1;  ///< cudaFuncAttributes::maxDynamicSharedSizeBytes
};
/// Sets the carve-out chase kernel's attributes: up to `dynamic_smem_bytes` of dynamic shared
/// memory and `carveout_percent` (0 = most L1, 100 = most shared memory) as its preferred
/// carve-out; returns what cudaFuncGetAttributes then reports. Once per configuration, before
/// pointer_chase_carveout.
carveout_readback set_chase_carveout(int dynamic_smem_bytes, int carveout_percent);
/// pointer_chase through ld.global from that kernel, launched with `dynamic_smem_bytes` (at
/// most what set_chase_carveout allowed) of dynamic shared memory: the block's shared memory
/// forces the configuration at least that large, and what is left of the SM's unified
/// L1/shared storage is the L1 the chase sees. The other chases keep the driver's default.
chase_result pointer_chase_carveout(std::uint32_t const* chain, std::size_t stride_words, std::uint32_t start,
                                    std::uint64_t warmup, std::uint64_t loads, int dynamic_smem_bytes,
                                    cudaStream_t stream);

/// The slot-indexed layout for footprints past 2^32 words (16 GiB): slot j lives at word
/// j * stride_words + (j % 16) * stagger_words and holds next[j] itself; the chase computes
/// the address from the slot (a 64-bit multiply on the chain, a few cycles more per load than
/// the word chain). A stagger (e.g. one 128-byte line) keeps slots a power of two apart from
/// sharing their low address bits (and so their cache sets); it needs stride_words >= 16 x
/// stagger_words. `chain` spans at least slots * stride_words words; the other words are not
/// touched.
void write_slot_chain(std::uint32_t* chain, std::vector<std::uint32_t> const& next, std::size_t stride_words,
                      std::size_t stagger_words, cudaStream_t stream);
/// One thread follows a slot chain through ld.global.cg: `warmup` untimed loads from slot
/// `start`, then `loads` timed ones.
chase_result slot_chase(std::uint32_t const* chain, std::size_t stride_words, std::size_t stagger_words,
                        std::uint32_t start,
                        std::uint64_t warmup, std::uint64_t loads, cudaStream_t stream);

/// On-chip latencies, one warp or one thread, in cycles per dependent operation.
enum class onchip_op {
  shared_load,          ///< ld.shared chase through a random cycle in shared memory (value = next address)
  shared_load_indexed,  ///< the same cycle holding slot indices: j = s[j], an address computation a load
  constant_uniform,     ///< every lane loads the same __constant__ word (broadcast)
  constant_divergent,   ///< every lane loads a different __constant__ word (serialized)
  register_imad,        ///< a dependent integer multiply-add (IMAD; a chain of adds would fuse into IADD3)
  register_ffma,        ///< a dependent fused multiply-add
};
char const* to_string(onchip_op op) noexcept;
onchip_op parse_onchip_op(std::string const& name);

struct onchip_result {
  double cycles_per_op = 0;
  double ns_per_op = 0;        ///< %globaltimer over the same timed pass
  std::uint32_t checksum = 0;  ///< the chain's end (checked on the host)
};
/// `ops` dependent operations after `ops` untimed ones; seeded so the result is checkable.
onchip_result onchip_latency(onchip_op op, std::uint64_t ops, std::uint64_t seed, cudaStream_t stream);
/// Host reference of onchip_latency's checksum.
std::uint32_t onchip_reference(onchip_op op, std::uint64_t ops, std::uint64_t seed);

/// Bandwidth over a footprint: `blocks` blocks of 256 threads read `bytes` (a multiple of
/// 16) of `in` with 16-byte loads through `path` (ld.global or ld.global.cg), `reps` times. shared: every block reads all of it (each
/// SM's L1 sees the whole footprint: the L1 and L2 plateaus); partitioned: block b reads
/// only its slice (each byte once per rep: the L2 and device-memory plateaus). With `write`,
/// each word read is also stored, plus one, to `out` (read + write traffic). Each block adds
/// every word it read (mod 2^32) into block_sums[blockIdx.x], for the host to check.
enum class footprint_mode { shared, partitioned };
void footprint_stream(std::uint32_t const* in, std::uint32_t* out, std::size_t bytes, footprint_mode mode, bool write,
                      load_path path, int reps, int blocks, std::uint32_t* block_sums, cudaStream_t stream);
/// Blocks per SM of the footprint kernel that fit at once (its grid is that x SMs).
int footprint_blocks_per_sm();

/// The device-memory read ceiling (hierarchy.bandwidth's grid_stride_* variants): block b
/// reads chunks b, b + blocks, b + 2 blocks, ... of `loads` x 256 x 16 bytes: `loads`
/// independent 16-byte loads a thread, all issued before any is used, then added (a cheap
/// consumer). At any moment the grid's loads fall in one window of blocks x chunk bytes (a few
/// 2 MiB pages; partitioned mode's 1000 concurrent slices spread over as many pages), and the
/// bytes past the last whole round are spread over every thread of the grid (at most `loads`
/// each), so no block runs a long tail. `nc_hint`: ld.global.nc.L1::no_allocate.L2::256B (the
/// read-only path, no L1 allocation, the L2 fetching 256 bytes a miss) instead of ld.global.cg.
/// `reps` passes over `bytes` (a multiple of 16); each block's sum of its words (mod 2^32) into
/// block_sums[blockIdx.x]. loads: 1, 4, 8 or 16.
void grid_stride_stream(std::uint32_t const* in, std::size_t bytes, int loads, bool nc_hint, int reps, int blocks,
                        std::uint32_t* block_sums, cudaStream_t stream);
/// Blocks per SM of that kernel that fit at once (its grid is that x SMs).
int grid_stride_blocks_per_sm(int loads, bool nc_hint);

/// Distributed shared memory (sm_90 clusters). dsmem_kernel(false) is the chase kernel,
/// dsmem_kernel(true) the stream kernel: check their image before launching (memlab/arch.hpp).
void const* dsmem_kernel(bool stream);
inline constexpr int dsmem_threads = 256;
/// Clusters of `cluster` blocks of the kernel that fit the device at once (0: this size
/// cannot be launched here, e.g. 16 where the non-portable size is not allowed).
int dsmem_max_clusters(bool stream, int cluster, std::size_t smem_bytes, int threads);

struct dsmem_chase_result {
  double cycles_per_load = 0;
  double ns_per_load = 0;      ///< %globaltimer over the same timed loads
  std::uint32_t last_slot = 0, expected_slot = 0;
};
/// Block 0 of one cluster of `cluster` blocks chases a random cycle of `slots` words that
/// lives in block `target`'s shared memory (target 0: its own, through the same path).
dsmem_chase_result dsmem_chase(int cluster, int target, int slots, std::uint64_t loads, std::uint64_t seed,
                               cudaStream_t stream);
/// `clusters` clusters; every block reads `words` words of block (rank + distance) % cluster
/// `reps` times with 16-byte ld.shared::cluster; per-block sums into block_sums.
void dsmem_stream(int cluster, int clusters, int words, int distance, int reps, std::uint32_t* block_sums,
                  cudaStream_t stream);
std::uint32_t dsmem_stream_reference(int cluster, int clusters, int words, int distance, int reps);

/// Streaming device memory toward the SMs by four paths (hierarchy.tma, hierarchy.inflight):
/// one block per SM (ctas_per_sm where they fit) walks tiles b, b + blocks, ... of a buffer
/// that holds word g = g * stream_pattern (mod 2^32), checks every word against that and sums it.
///   ld_global_v4  each thread issues tile_bytes / 4096 independent 16-byte ld.global.v4,
///                 then consumes them: tile_bytes in flight, in registers
///   cp_async      every thread copies 16-byte pieces with cp.async (sm_80) into a ring of
///                 `stages` tiles in shared memory, completion by mbarrier arrive-on
///   bulk          a producer warp (one lane) issues one cp.async.bulk of tile_bytes contiguous
///                 bytes per stage (sm_90), completion by mbarrier transaction bytes; 8
///                 consumer warps read a slot and release it on its `empty` mbarrier
///   tma           the same with one cp.async.bulk.tensor.2d of a box tile_w_bytes wide and
///                 tile_rows rows of a 2-D tensor (sm_90; the tensor map is encoded on the host
///                 with cuTensorMapEncodeTiled, found with cudaGetDriverEntryPoint)
enum class copy_method { ld_global_v4, cp_async, bulk, tma };
char const* to_string(copy_method m) noexcept;  ///< "ld.global.v4", "cp.async", "cp.async.bulk", "tma"
copy_method parse_copy_method(std::string const& name);
/// The architecture the method's instructions need (memlab/arch.hpp), 0 for none.
int copy_method_arch(copy_method m) noexcept;
/// The kernel a method launches: check its image before launching (memlab/arch.hpp).
void const* copy_kernel(copy_method m);
inline constexpr int stream_threads = 256;
inline constexpr std::uint32_t stream_pattern = 2654435761u;
inline constexpr int stream_max_stages = 16;
/// The row of the 2-D tensor the tma method reads: the buffer is rows of this many bytes.
inline constexpr std::size_t stream_row_bytes = 4096;

struct stream_plan {
  copy_method method = copy_method::bulk;
  std::size_t tile_bytes = 4096;   ///< bytes of one tile (one stage, or one batch of loads)
  std::size_t tile_w_bytes = 0;    ///< tma: the box's width in bytes (tile_bytes / tile_w_bytes rows)
  int stages = 4;                  ///< tiles in the shared-memory ring (ignored by ld_global_v4)
  int blocks = 0;                  ///< blocks (0: ctas_per_sm per SM)
  int ctas_per_sm = 1;             ///< blocks per SM when `blocks` is 0 (each with its own ring)
};
/// Throws memlab::error naming what is wrong with `plan` for `bytes` (tile sizes, the ring
/// against the opt-in shared memory, ctas_per_sm rings on one SM, the box limits of TMA),
/// before any work is issued.
void check_stream_plan(stream_plan const& plan, std::size_t bytes);
/// Dynamic shared memory the plan's ring needs.
std::size_t stream_smem_bytes(stream_plan const& plan);

struct stream_sums {
  std::uint32_t sum = 0;         ///< every word read, added mod 2^32
  std::uint64_t mismatches = 0;  ///< words that did not hold g * stream_pattern
};
/// Writes word g = g * stream_pattern over `words` words.
void fill_stream_pattern(std::uint32_t* data, std::size_t words, cudaStream_t stream);
/// The host's checksum of `bytes` of the pattern read once: sum of g * stream_pattern.
std::uint32_t stream_pattern_sum(std::size_t bytes);

/// Reads `bytes` (a multiple of the tile, and for tma of stream_row_bytes * tile rows) of
/// `data` once with `plan`; per-block sums and mismatch counts go to `block_out`
/// (2 x blocks words: sum, mismatches). The tma method encodes its tensor map here.
void stream_read(std::uint32_t const* data, std::size_t bytes, stream_plan const& plan, std::uint32_t* block_out,
                 cudaStream_t stream);
/// stream_read prepared once: the plan checked, the image required, the ring's shared memory
/// allowed and the tensor map encoded here; the function returned issues the kernel alone on its
/// stream, so a sample timed around it holds none of that host work. `data` and `block_out` must
/// outlive it.
std::function<void(cudaStream_t)> prepare_stream_read(std::uint32_t const* data, std::size_t bytes,
                                                      stream_plan const& plan, std::uint32_t* block_out);
/// Adds up stream_read's per-block words after the stream has finished.
stream_sums collect_stream_sums(std::uint32_t const* block_out, int blocks);
/// The block count stream_read uses for `plan` (ctas_per_sm per SM when plan.blocks is 0).
int stream_blocks(stream_plan const& plan);

// ---- L2 -> SM through TMA (intake.cu) ----------------------------------------------------
// How many bytes a second TMA brings from L2 into the SMs, by how many SMs ask at once, how
// many of them read the same bytes at the same time, and whether the two CTAs of a 2-CTA cluster
// share one read by multicast: the intake a tensor-core GEMM's pipeline needs (128 x 64 tiles a
// CTA take 24 KB a k-block). `ctas` blocks (one an SM, a producer warp, 1-4 consumer warps) each
// stream `steps` boxes of box_rows rows x 128 bytes through a ring of `stages` slots, from a
// tensor of rows of intake_row_bytes that L2 holds: block b reads the box_rows rows of row block
// (b / share), box after box across the row (intake_row_bytes / 128 boxes, then again), so
// `share` consecutive blocks read the same box at about the same time. With `multicast` the
// blocks run in 2-CTA clusters (share must be even, pairs share their rows) and each loads half of
// every box into both. The consumer adds one word of each row of a box (row r's word r % 32; word
// g holds g * stream_pattern) and releases the slot; the block's sum is checked against the host's.

inline constexpr std::size_t intake_row_bytes = 1024;  ///< 8 boxes of 128 bytes across
inline constexpr int intake_max_stages = 32;

struct intake_plan {
  int ctas = 0;             ///< blocks, one an SM (0: the device's SM count)
  int share = 1;            ///< consecutive blocks reading the same rows (at least 1)
  bool multicast = false;   ///< 2-CTA clusters, each CTA loading half of every box into both
  int box_rows = 128;       ///< rows of 128 bytes a box: 16 .. 256, a multiple of 16
  int stages = 8;           ///< slots in the ring (1 .. intake_max_stages)
  std::uint32_t steps = 4096;  ///< boxes each block reads
};
/// The plan's block count (ctas, or the current device's SM count where it is 0).
int intake_blocks(intake_plan const& p);
/// Throws memlab::error naming what is wrong with `p` (counts, box, ring against the opt-in
/// shared memory, multicast with an odd block count or share), before any work is issued.
void check_intake_plan(intake_plan const& p);
/// Bytes of the tensor `p` reads: ceil(blocks / share) row blocks of box_rows rows.
std::size_t intake_footprint_bytes(intake_plan const& p, int blocks);
/// The host's sum for each of `blocks` blocks (mod 2^32), as intake_read's consumers add them.
std::vector<std::uint32_t> intake_expected_sums(intake_plan const& p, int blocks);
/// Runs `p` over `data` (intake_footprint_bytes of the stream pattern, 128-byte aligned); block
/// b's sum goes to block_out[b].
void intake_read(std::uint32_t const* data, intake_plan const& p, std::uint32_t* block_out, cudaStream_t stream);
/// intake_read prepared once (checks, image, shared memory, tensor map); the function returned
/// issues the kernel alone. `data` and `block_out` must outlive it.
std::function<void(cudaStream_t)> prepare_intake_read(std::uint32_t const* data, intake_plan const& p,
                                                      std::uint32_t* block_out);
/// The kernel the plan launches: check its image before launching (memlab/arch.hpp).
void const* intake_kernel(bool multicast);
/// Consumer warps a block runs for a ring of `stages` slots: 4, 2 or 1, whichever divides it
/// (each warp keeps to its own slots).
int intake_consumers(int stages);

}  // namespace memlab::hierarchy
