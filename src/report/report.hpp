#pragma once
// The report: Markdown and PNG plots from a run record, and the compare of two runs.
// The record (run.json) is the only thing read here.
#include <iosfwd>
#include <string>

namespace memlab::report {

struct report_options {
  std::string record_path;  ///< run.json
  std::string out_dir;      ///< "" = the record's folder
  bool plots = true;        ///< draw PNGs with matplotlib (python3) when available
  std::string python;       ///< "" = search ($MEMLAB_PYTHON, python3, /usr/bin/python3); else only this one
};

/// Writes out_dir/report.md (and PNGs). Returns the process exit code (0 ok);
/// one-line errors go to `err`.
int render(report_options const& opt, std::ostream& out, std::ostream& err);

struct compare_options {
  std::string baseline;      ///< A.json
  std::string candidate;     ///< B.json
  double threshold = 0.05;   ///< a slowdown beyond this fraction (and beyond the noise) is a regression
};

/// Prints the per-row comparison to `out`. Returns 0, or 1 when a regression beyond
/// the threshold was found; 2 for unreadable input (one-line error on `err`).
int compare(compare_options const& opt, std::ostream& out, std::ostream& err);

}  // namespace memlab::report
