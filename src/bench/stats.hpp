#pragma once
// Summary statistics of timing samples (CPU-only, unit-tested).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace memlab::bench {

struct sample_summary {
  int samples = 0;
  double median = 0.0;   ///< median of the samples
  double mean = 0.0;
  double min = 0.0, max = 0.0;
  double stdev = 0.0;    ///< sample standard deviation (n-1)
  double noise = 0.0;    ///< relative standard deviation: stdev / mean (0 for one sample)
};

/// Summarises `samples` (any order). An empty input gives samples == 0 and zeros.
sample_summary summarize(std::vector<double> samples);

/// Median of `values` (average of the middle two for even counts). Throws on empty input.
double median(std::vector<double> values);

/// How far a second run's median may land from this one, relative to the median
/// (docs/timing.md). The relative standard deviation of the samples (sample_summary::noise)
/// is the stopping rule's measure of spread; it says nothing about drift within a run and
/// overstates the uncertainty of a median of many samples. This is what rows report.
struct noise_estimate {
  double noise = 0.0;                 ///< max(sqrt(2) x bootstrap, chunk_spread, floor): the reported noise
  double bootstrap = 0.0;             ///< 95% bootstrap interval of the median: half-width / median
  std::optional<double> chunk_spread; ///< (max - min of the chunk medians) / median; none under 6 samples
  int chunks = 0;                     ///< contiguous chunks the samples were split into (0: none)
  double floor = 0.0;                 ///< the between-process floor applied (between_run_noise_floor)
  std::string method = "bootstrap";   ///< which estimate is `noise`: "bootstrap", "chunks" or "floor"
};

/// What two processes measuring the same launch on the same GPU differ by even when each
/// run's samples are tight: the physical pages behind the buffers, the L2 slices they map
/// to, the DRAM refresh phase. Measured with scripts/repeat.sh on an H200 (two default suites
/// of one build, rows above 50 us timed with events: median |difference| 0.07%, 95th
/// percentile 0.40%, while their within-run estimates had a median of 0.09%). The reported
/// noise is never below it (docs/timing.md, "Noise").
inline constexpr double between_run_noise_floor = 0.005;
/// The same for microsecond rows timed in batches: two suites of one build on an H200 put the
/// 127 batched device rows at a median difference of 0.42% and a 95th percentile of 1.97%
/// (launch timing jitter between processes), 6 of them beyond 2%.
inline constexpr double between_run_noise_floor_batched = 0.02;

/// Rows whose work crosses the host, for the lent H200 (a 16-vCPU VM, one NUMA node exposed,
/// PCIe Gen5 x16): two default suites of one build (results/nvidia-h200/repeat/, stop 20) put
/// the 363 transfer rows far apart while each run's samples were tight, so these floors are
/// the 95th percentiles of |B/A - 1| by class (docs/timing.md, "Rows that cross the host").
/// Copies over PCIe taking at least 50 us (84 rows): p95 0.049-0.077.
inline constexpr double between_run_noise_floor_pcie = 0.05;
/// Copies over PCIe shorter than 50 us, latency-bound (115 rows): p95 0.13-0.26.
inline constexpr double between_run_noise_floor_pcie_short = 0.15;
/// Host work: pageable copies (the driver's staging memcpy) and driver calls timed on the
/// host (87 rows): p95 0.30. Host memory bandwidth and CPU clocks are shared on a VM.
inline constexpr double between_run_noise_floor_host = 0.30;

/// Rows that stream a matrix from DRAM: the tensor-core GEMM experiments' decode points (m <= 128;
/// src/experiments/gemm_tc_ladder.cu, weight_ring). Their time is B's stream, and what a second
/// process changes is where B's pages land, so which DRAM channels and banks it streams from.
/// `gemm.tc_decode` and its repeat (session 39; in results/nvidia-h{100,200}/gemm_tc_decode/:
/// rev-5f79061/ and repeat-5f79061/, rev-2db24ab/ and repeat-2db24ab/) put the rows timed one
/// launch at a time (50-220 us, L2 flushed before each) at a 95th percentile of |B/A - 1| of 1.2%
/// on the H100 (32 rows, at most 1.45%) and 0.8% on the H200 (12 rows, at most 1.6%), where
/// between_run_noise_floor left 8 and 5 of them beyond their noise. Batched rows keep their larger
/// floor (between_run_noise_floor_batched).
inline constexpr double between_run_noise_floor_streamed_weights = 0.015;

/// Samples in the order they were taken (the chunks are contiguous runs of them).
/// Deterministic: the bootstrap uses a fixed seed, so the same samples give the same noise
/// on every machine. Fewer than 2 samples, or a median <= 0, give 0 ("bootstrap").
/// `floor`: the smallest noise reported (between_run_noise_floor for every timed row; 0 in
/// tests of the estimators themselves).
noise_estimate estimate_noise(std::vector<double> const& samples_in_order, double floor = between_run_noise_floor);

/// The percentile bootstrap of the median: `resamples` resamples of n drawn with replacement
/// (std::mt19937_64 seeded with `seed`), the 2.5th and 97.5th percentiles of their medians;
/// returns (hi - lo) / 2 / median. 0 for fewer than 2 samples or a median <= 0.
double bootstrap_median_halfwidth(std::vector<double> const& samples, int resamples = 1000,
                                  std::uint64_t seed = 0x6d656d6c6162ull);

/// Splits the samples into `chunks` contiguous runs of (nearly) equal length and returns
/// (max - min of their medians) / median of all. Needs at least 2 samples a chunk.
std::optional<double> chunk_median_spread(std::vector<double> const& samples_in_order, int chunks);

}  // namespace memlab::bench
