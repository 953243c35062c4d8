#pragma once
// Summary statistics of timing samples (CPU-only, unit-tested).
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

}  // namespace memlab::bench
