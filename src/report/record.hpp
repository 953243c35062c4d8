#pragma once
// The one reader of a run record (run.json, docs/RECORD.md), shared by `memlab report`,
// `memlab compare` and the run's Markdown view. It checks the record's shape once, so the
// renderers can trust it, and turns each experiment's declaration into types.
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace memlab::report {

using json = nlohmann::json;

/// A record that cannot be read or does not have the record's shape. what() is one line
/// naming the file and the first offending path, e.g. "run.json: rows: expected an array".
class record_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// axis -> accepted values as text ("max"/"min": the extreme present; "!v": all but v).
using row_filter = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct axis_decl {
  std::string name, kind, unit, description;
  bool log_scale = false;
};
struct metric_decl {
  std::string name, unit, description;
};
struct headline_decl {
  std::string question;
  row_filter where;
  std::string best_by = "median_ms";
  bool higher_is_better = false;
  std::string compare;  ///< "ratio_to_peer", "ratio_to_ceiling", "baseline" or ""
  row_filter baseline;
};
struct seed_figure_decl {
  std::string label;
  double value = 0;
  std::string unit, gpu, section;
  std::vector<std::pair<std::string, std::string>> at;
};
struct plot_decl {
  std::string file, title, kind, x, y;
  std::vector<std::string> series;
  std::string panels;
};

/// A summary table's cell: a metric of the best row of an experiment of the record, a key of
/// the record's device, a published figure with its source, or nothing.
struct table_cell_decl {
  std::string experiment, metric, pick, device, source;
  row_filter where;
  std::optional<double> value;
};
struct table_decl {
  std::string title, note;
  std::vector<std::pair<std::string, std::string>> columns;  ///< label, unit
  std::vector<std::pair<std::string, std::vector<table_cell_decl>>> rows;
};

/// One entry of the record's `experiments`.
struct experiment_entry {
  std::string id, description, seed_ref, status;
  long points = 0;
  bool declared = false;  ///< false: a format-1 record, rows only
  std::vector<axis_decl> axes;
  std::vector<metric_decl> metrics;
  headline_decl headline;
  std::vector<seed_figure_decl> seed_figures;
  std::string shows, look_for, seed_note;
  std::vector<plot_decl> plots;
  std::vector<table_decl> tables;  ///< optional in the record: [] when absent
  bool paired_in_blocks = false;   ///< optional: long pairs timed in blocks (docs/timing.md, "Paired in blocks")

  axis_decl const* axis(std::string const& name) const;
  metric_decl const* metric(std::string const& name) const;
};

struct run_record {
  std::string path;
  int format_version = 0;
  json doc;                               ///< the whole document (header fields, rows)
  std::vector<experiment_entry> experiments;
  std::vector<json const*> rows;          ///< every row, each an object of the row shape

  experiment_entry const* find(std::string const& id) const;
};

/// Reads and checks `path`. Throws record_error.
run_record read_record(std::string const& path);
/// Checks an already parsed document; `name` prefixes the error. Throws record_error.
run_record check_record(json doc, std::string const& name);

/// Whether `row` passes `f` among `rows` of its experiment ("max"/"min" against those rows).
bool matches(json const& row, row_filter const& f, std::vector<json const*> const& rows);

/// The experiment's declared headline row among its rows: the best verified row passing
/// `where` by `best_by`; null when none.
json const* headline_row(experiment_entry const& e, std::vector<json const*> const& rows);
/// The row the headline compares with under "baseline": the best row's params with the
/// baseline filter's axes changed; null when there is none.
json const* baseline_row(experiment_entry const& e, json const& best, std::vector<json const*> const& rows);

/// A metric's value on a row: a top-level number or "extra.k" / "predicted.k".
std::optional<double> metric_value(json const& row, std::string const& metric);

}  // namespace memlab::report
