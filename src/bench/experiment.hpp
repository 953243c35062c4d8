#pragma once
// Experiments: an id, parameter axes swept as a cartesian product, and a body
// that receives a `state` per point. Each experiment file registers itself:
//
//   namespace {
//   memlab::bench::registrar const reg{[] {
//     memlab::bench::experiment e;
//     e.id = "coalescing.offset";
//     e.description = "float copy at offsets 0..32 elements (Best Practices Guide 9.2.1)";
//     e.axes = {memlab::bench::int_axis("offset", range(0, 32), {0, 1, 8, 16})};
//     e.body = [](memlab::bench::state& s) { ... };
//     return e;
//   }()};
//   }
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace memlab::bench {

class state;

/// A mistake in what the user asked for (unknown id, bad axis value): exit code 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using param_value = std::variant<std::int64_t, double, std::string>;
std::string to_string(param_value const& v);

enum class axis_kind { integer, floating, string };

struct axis {
  std::string name;
  axis_kind kind = axis_kind::integer;
  std::vector<param_value> values;        ///< the full sweep
  std::vector<param_value> quick_values;  ///< the --quick sweep (empty: same as values)
  std::optional<std::int64_t> min_value;  ///< integer axes: smallest value a user may give
  std::optional<std::int64_t> max_value;  ///< integer axes: largest value a user may give
  std::vector<param_value> allowed;       ///< if set, a user's values must be among these
                                          ///< (string axes: always among `values`)
  std::string description;
  std::string unit;          ///< what one step of the axis is: "elements", "bytes", "" for names
  bool log_scale = false;    ///< plotted on a log axis (doubling sweeps)

  /// Declares the axis's unit and meaning for the record: int_axis(...).about("bytes", "...").
  axis about(std::string unit_, std::string description_, bool log = false) && {
    unit = std::move(unit_);
    description = std::move(description_);
    log_scale = log;
    return std::move(*this);
  }
};

/// The axis named "variant" is special: its value becomes the row's `variant`, not a param.
inline constexpr char const* variant_axis_name = "variant";

axis int_axis(std::string name, std::vector<std::int64_t> values, std::vector<std::int64_t> quick = {});
/// Powers of two 2^lo .. 2^hi (the quick sweep 2^qlo .. 2^qhi, when given).
axis pow2_axis(std::string name, int lo, int hi, std::optional<int> qlo = {}, std::optional<int> qhi = {});
axis float_axis(std::string name, std::vector<double> values, std::vector<double> quick = {});
axis string_axis(std::string name, std::vector<std::string> values, std::vector<std::string> quick = {});
/// A string axis named "variant".
axis variant_axis(std::vector<std::string> values, std::vector<std::string> quick = {});
/// lo, lo+step, ..., <= hi
std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t step = 1);

// ---------------------------------------------------------------------------------------------
// What an experiment declares about itself, copied into the record (docs/RECORD.md,
// "Declarations") so that the report and its plots need nothing but run.json.

/// A row field a plot or headline reads: "median_ms", "gbps", "tflops", "ratio_to_peer",
/// "ratio_to_ceiling", or "extra.<key>" / "predicted.<key>".
struct metric {
  std::string name;
  std::string unit;
  std::string description;
};

/// Rows kept by a headline or plot: axis -> accepted values as text; "max" / "min" pick the
/// largest / smallest value present among verified rows.
using row_filter = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// The row that answers the experiment's question, and the comparison that matters.
struct headline_spec {
  std::string question;         ///< one line: what the experiment exists to answer
  row_filter where;             ///< the candidate rows (variant is an axis here)
  std::string best_by = "median_ms";  ///< the metric the best candidate is chosen by
  bool higher_is_better = false;
  /// "ratio_to_peer", "ratio_to_ceiling", "baseline" (the best row's time against the row of
  /// `baseline_variant` with the same params) or "" (the figure alone).
  std::string compare;
  /// For "baseline": the axes whose values differ in the baseline row, e.g. {{"offset", {"0"}}};
  /// every other param matches the best row's.
  row_filter baseline;
};

/// A figure the seed notes quote, as data.
struct seed_figure {
  std::string label;     ///< "TILE_SIZE 8", "sharedABMultiply"
  double value = 0;
  std::string unit;      ///< "ms", "GB/s", "%"
  std::string gpu;       ///< the GPU the seed measured on ("Tesla P100")
  std::string section;   ///< "001 §2"
  /// The row it corresponds to (axis -> value as text), so plots put it beside that row.
  std::vector<std::pair<std::string, std::string>> at;
};

struct prose_spec {
  std::string shows;     ///< what the experiment shows, two to four sentences
  std::string look_for;  ///< what to look for in the table and plot
  std::string seed;      ///< the seed's own words on it (Markdown), "" when none
};

/// A horizontal line: "ceiling" (d2d copy GB/s), "fp32_peak" (TFLOP/s), "value", or
/// "seed" (the seed figures, each at its row's x).
struct reference_line {
  std::string kind;
  std::string label;
  double value = 0;
};

struct plot_spec {
  std::string file;              ///< PNG name, e.g. "coalescing_offset.png"
  std::string title;
  /// "line" (x numeric) or "bars" (x categorical); "timeline": the list `y` ("extra.timeline") of
  /// the first row passing `where`, one lane per stream; "roofline": every row in the record of an
  /// experiment that declares tflops, against its arithmetic intensity (x unused); "heatmap": a
  /// matrix per panel, columns the values of `x`, rows those of the one `series` axis, cells `y`.
  std::string kind = "line";
  std::string x;                 ///< an axis name ("variant" allowed)
  std::string y;                 ///< a metric name
  bool log_y = false;
  std::vector<std::string> series;  ///< axes whose values name a series ({} = one series)
  std::string panels;            ///< an axis splitting the plot into panels, "" = one panel
  row_filter where;              ///< rows drawn
  std::vector<reference_line> refs;
  std::string model;             ///< "predicted.<key>": the model drawn dashed beside each series
};

/// One cell of a summary table (below), filled by the report from the record alone. Exactly
/// one source: a metric of the best row of an experiment in the same record, a key of the
/// record's `device`, or a published figure with its source.
struct table_cell {
  std::string experiment;  ///< the rows of this experiment id ...
  row_filter where;        ///< ... passing this filter (as a headline's `where`) ...
  std::string metric;      ///< ... read in this metric ("extra.cycles_per_load", "gbps")
  std::string pick;        ///< "max" / "min": the row with the largest / smallest metric ("": the first)
  std::string device;      ///< or: this key of the record's device ("l2_bytes")
  std::optional<double> value;  ///< or: a figure published elsewhere ...
  std::string source;      ///< ... and where: the paper or site and the GPU it was measured on
};
inline table_cell from_row(std::string experiment, row_filter where, std::string metric, std::string pick = "") {
  table_cell c;
  c.experiment = std::move(experiment);
  c.where = std::move(where);
  c.metric = std::move(metric);
  c.pick = std::move(pick);
  return c;
}
inline table_cell from_device(std::string key) {
  table_cell c;
  c.device = std::move(key);
  return c;
}
inline table_cell published(double value, std::string source) {
  table_cell c;
  c.value = value;
  c.source = std::move(source);
  return c;
}
inline table_cell no_cell() { return {}; }

/// A summary table the report renders in the experiment's section: one line per `rows`
/// entry, one cell per column. It may gather figures from several experiments of the run
/// (the report knows none of them by name: the declaration names them).
struct table_spec {
  std::string title;
  std::vector<std::pair<std::string, std::string>> columns;  ///< label, unit ("bytes": shown as KiB/MiB/GiB)
  std::vector<std::pair<std::string, std::vector<table_cell>>> rows;  ///< label, one cell per column
  std::string note;  ///< a line under the table (Markdown)
};

/// Row fields every experiment may declare as metrics.
namespace metrics {
inline metric time() { return {"median_ms", "ms", "median time of one launch"}; }
inline metric gbps() { return {"gbps", "GB/s", "bytes read + written / median time"}; }
inline metric tflops() { return {"tflops", "TFLOP/s", "floating-point operations / median time"}; }
inline metric vs_peer(std::string peer) { return {"ratio_to_peer", "x", peer + "'s time / ours (above 1: faster)"}; }
inline metric vs_ceiling() { return {"ratio_to_ceiling", "x", "GB/s / the run's cudaMemcpy D2D GB/s"}; }
}  // namespace metrics

/// The best row among `where` by `by` (lower is better for times and cycles), compared as `compare`.
headline_spec best_row(std::string question, row_filter where, std::string by, std::string compare = "",
                       row_filter baseline = {});
/// A plot of metric `y` against axis `x` ("line": x numeric; "bars": x categorical).
plot_spec line_plot(std::string file, std::string title, std::string x, std::string y,
                    std::vector<std::string> series = {});
plot_spec bar_plot(std::string file, std::string title, std::string x, std::string y,
                   std::vector<std::string> series = {});

/// How an experiment's rows relate to the run's measured cudaMemcpy D2D bandwidth.
enum class ceiling_relation {
  none,   ///< not bandwidth rows
  ratio,  ///< the run measures `ceilings` first; rows with bytes get ratio_to_ceiling
  peer,   ///< ... and a row with no peer of its own takes the copy as its peer
};

struct experiment {
  std::string id;           ///< "family.name"
  std::string description;  ///< one line for `memlab list`
  std::string seed_ref;     ///< where in the seed notes it comes from, e.g. "000 §9.2.1"
  std::vector<axis> axes;
  std::function<void(state&)> body;
  std::vector<metric> metrics;   ///< the row fields this experiment's results are read in
  headline_spec headline;
  std::vector<seed_figure> seed_figures;
  prose_spec prose;
  std::vector<plot_spec> plots;
  std::vector<table_spec> tables;  ///< summary tables (optional; written to the record only when present)
  bool default_suite = true;   ///< part of `memlab run` with no argument
  ceiling_relation ceiling = ceiling_relation::none;  ///< how rows relate to the measured copy ceiling
  bool listed = true;          ///< shown by `memlab list` (false: the harness's own self-tests)
  /// Rows paired with a peer (state::exec_paired, measure_paired_once) whose longer launch takes
  /// paired_blocks_above_ms or more alternate with it in blocks, not launch by launch: for
  /// experiments whose kernels run the board at its power cap, where the clock follows the running
  /// kernel's power and launches alternated one by one share one clock (docs/timing.md, "Paired in
  /// blocks"). The record's declaration says so.
  bool paired_in_blocks = false;
  /// Sets the unit and meaning (and log plotting) of the axis `name`; throws if there is none.
  void describe_axis(std::string const& name, std::string unit, std::string description, bool log = false);
  std::string family() const { return id.substr(0, id.find('.')); }
};

class registry {
 public:
  static registry& instance();
  /// Throws memlab::error on a duplicate or malformed id.
  void add(experiment e);
  std::vector<experiment> const& all() const { return experiments_; }
  experiment const* find(std::string const& id) const;
  /// Resolves ids and family names (in registry order, no duplicates). An empty list
  /// selects the default suite. Throws usage_error naming the first unknown name.
  std::vector<experiment const*> select(std::vector<std::string> const& names) const;

 private:
  std::vector<experiment> experiments_;
};

/// Registers an experiment at static-initialisation time.
struct registrar {
  explicit registrar(experiment e);
};

}  // namespace memlab::bench
