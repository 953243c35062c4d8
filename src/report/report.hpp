#pragma once
// The report: Markdown and PNG plots from a run record, and the compare of two runs.
// The record (run.json) is the only thing read here.
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace memlab::report {

struct report_options {
  std::string record_path;  ///< run.json
  std::string out_dir;      ///< "" = the record's folder
  bool plots = true;        ///< draw PNGs with matplotlib (python3) when available
  std::string python;       ///< "" = search ($MEMLAB_PYTHON, python3, /usr/bin/python3); else only this one
  bool headlines = false;   ///< print only the headline table (Markdown) on stdout; write nothing
};

/// Writes out_dir/report.md (and PNGs). Returns the process exit code (0 ok);
/// one-line errors go to `err`.
int render(report_options const& opt, std::ostream& out, std::ostream& err);

/// The run's own Markdown (run.md, `memlab run` on stdout): the report's header, summary and
/// one table per experiment, from the same reader and table code as report.md, without
/// prose or plots. Throws record_error when `record` does not have the record's shape.
std::string run_markdown(nlohmann::json const& record);

struct compare_options {
  std::string baseline;      ///< A.json
  std::string candidate;     ///< B.json
  double threshold = 0.05;   ///< a slowdown beyond this fraction (and beyond the noise) is a regression
  bool repeat = false;       ///< A and B are two runs of one build: the repeatability check decides the exit code
};

/// The repeatability check (memlab compare --repeat, docs/timing.md).
namespace repeat_check {
inline constexpr double tolerance = 0.03;        ///< rows above long_row_ms, and headline rows, agree within 3%
inline constexpr double long_row_ms = 0.05;      ///< the 3% rows: A's median above 50 us
inline constexpr double short_tolerance = 0.05;  ///< microsecond rows (A's median at most 50 us) within 5%
inline constexpr double confidence = 0.95;       ///< the reported noise is a 95% bound
/// The largest fraction of `rows` rows that may differ by more than their noise: 5% plus two
/// binomial standard deviations of the count (sqrt(0.05 * 0.95 / rows)), so an honest 95%
/// noise fails this about 2.5% of the time.
double allowed_fraction(int rows);
}  // namespace repeat_check

/// Prints the per-row comparison to `out`. Returns 0, or 1 when a regression beyond
/// the threshold was found (with `repeat`: when the repeatability check fails); 2 for
/// unreadable input (one-line error on `err`).
int compare(compare_options const& opt, std::ostream& out, std::ostream& err);

}  // namespace memlab::report
