// memlab report: run.json -> report.md (+ plots/*.png).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "report/plots.hpp"
#include "report/record.hpp"
#include "report/record_view.hpp"
#include "report/report.hpp"

namespace fs = std::filesystem;

namespace memlab::report {

namespace {

using namespace detail;

std::string pct(double ratio) { return fmt(ratio * 100.0) + "%"; }

/// The blockquotes above the header table: a fixture, a partial or stopped run, format 1.
void header_notices(std::ostream& md, json const& rec) {
  if (auto it = rec.find("synthetic_fixture"); it != rec.end() && it->is_boolean() && it->get<bool>())
    md << "> **Synthetic test fixture**: these numbers were made up to test the report; they were "
          "not measured.\n\n";
  if (!rec.contains("finished") || rec["finished"].is_null())
    md << "> **Partial run**: the record has no finish time (the run was interrupted or is still "
          "going), so some experiments may be missing or incomplete.\n\n";
  if (auto why = str(rec, "aborted"); !why.empty())
    md << "> ⚠ **The run stopped early**: " << cell(why) << "\n\n";
  if (auto v = num(rec, "format_version"); v && *v < 2)
    md << "> Record format " << fmt(*v) << " carries rows but no declarations (axes, headline, prose, plots): "
          "this report shows the rows only. `scripts/upgrade_record.py` adds today's declarations.\n\n";
}

/// The GPU row's cell: name, compute capability, SMs, L2, DRAM peak, copy engines.
std::string gpu_text(json const& dev) {
  std::string g = "**" + cell(str(dev, "name", "unknown GPU")) + "**";
  if (auto cc = str(dev, "cc"); !cc.empty()) g += " · cc " + cc;
  if (auto v = num(dev, "sm_count")) g += " · " + fmt(*v) + " SMs";
  if (auto v = num(dev, "l2_bytes")) {
    g += " · L2 " + fmt_bytes(*v);
    if (auto p = num(dev, "persisting_l2_max_bytes")) g += " (persisting max " + fmt_bytes(*p) + ")";
  }
  if (auto v = num(dev, "dram_peak_gbps")) g += " · DRAM peak " + fmt(*v) + " GB/s";
  if (auto v = num(dev, "async_engine_count")) g += " · " + fmt(*v) + " copy engines";
  return g;
}

/// The Timing row (cold or hot, the noise bound and what noise means), when the record says.
void timing_row(std::ostream& md, json const& rec) {
  auto const& t = obj(rec, "timing");
  if (t.empty()) return;
  std::string s;
  if (t.contains("cold") && t["cold"].is_boolean())
    s += t["cold"].get<bool>() ? "cold (L2 flushed by " + std::string(str(t, "flush", "write") == "read" ? "reading" : "writing") +
                                     " a 2 x L2 buffer before every sample)"
                               : "hot (back to back)";
  if (auto n = num(t, "max_noise")) s += (s.empty() ? "" : " · ") + std::string("noise bound ") + pct(*n);
  // Records before the noise estimator (format 1 without noise_estimator) report stdev / mean.
  std::string const noise = t.contains("noise_estimator")
                                ? "noise = what a second run may see (95%): the larger of the bootstrap bound "
                                  "on two medians' difference and the spread of 3 chunk medians"
                                : "noise = relative std. deviation";
  if (!s.empty()) md << "| Timing | " << s << " · median of samples, " << noise << " |\n";
}

/// The rows on how the run was measured: launch floor, NVML, the persistence check's warnings.
void conditions_rows(std::ostream& md, json const& rec) {
  if (auto f = num(rec, "launch_floor_us")) {
    auto const& lf = obj(rec, "launch_floor");
    std::string how = str(lf, "method");
    if (auto b = num(lf, "batch"); b && *b > 1) how += ", " + fmt(*b) + " launches a sample";
    md << "| Launch floor | " << fmt(*f) << " µs per launch (an empty kernel" << (how.empty() ? "" : ", " + how)
       << "): rows near it measure launch overhead |\n";
  }
  if (auto nv = str(rec, "nvml"); !nv.empty()) md << "| NVML | " << cell(nv) << " |\n";
  if (auto const& pc = obj(rec, "persistence_check"); !arr(pc, "warnings").empty()) {
    std::string w;
    for (auto const& x : arr(pc, "warnings")) w += (w.empty() ? "" : " · ") + (x.is_string() ? x.get<std::string>() : x.dump());
    md << "| ⚠ Persistence check | " << cell(w) << " |\n";
  }
}

/// The Ceilings row's cell: the measured D2D copy (against the DRAM peak) and FP32 peak.
std::string ceilings_text(json const& rec) {
  auto const& dev = obj(rec, "device");
  auto const& ceil = obj(rec, "ceilings");
  std::string cs;
  if (auto v = num(ceil, "d2d_copy_gbps")) {
    cs += "cudaMemcpy D2D **" + fmt(*v) + " GB/s**";
    if (auto p = num(dev, "dram_peak_gbps"); p && *p > 0) cs += " (" + pct(*v / *p) + " of DRAM peak)";
  } else {
    cs += "cudaMemcpy D2D not measured";
  }
  if (auto v = num(ceil, "fp32_peak_tflops"))
    cs += " · FP32 FMA peak **" + fmt(*v) + " TFLOP/s**";
  else
    cs += " · FP32 peak not measured";
  // Tensor-core peaks (ceilings.tensor), where the run measured them: "mma_sync.bf16 480".
  if (auto it = ceil.find("tensor_peak_tflops"); it != ceil.end() && it->is_object() && !it->empty()) {
    std::string t;
    for (auto const& [key, v] : it->items())
      if (v.is_number()) t += (t.empty() ? "" : ", ") + key + " " + fmt(v.get<double>());
    if (!t.empty()) cs += " · tensor peaks (TFLOP/s) " + t;
  }
  return cs;
}

void header(std::ostream& md, json const& rec) {
  auto const& mem = obj(rec, "memlab");
  md << "# memlab report: " << str(obj(rec, "device"), "name", "unknown GPU") << "\n\n";
  header_notices(md, rec);
  md << "| | |\n|---|---|\n";
  md << "| GPU | " << gpu_text(obj(rec, "device")) << " |\n";
  std::string run = "started " + str(rec, "started", "?");
  run += " · finished " + (str(rec, "finished").empty() ? std::string("**not finished**") : str(rec, "finished"));
  md << "| Run | " << cell(run) << " |\n";
  md << "| memlab | " << cell(str(mem, "version", "?")) << " (revision `" << cell(str(mem, "git_revision", "?"))
     << "`) |\n";
  if (auto c = str(rec, "command_line"); !c.empty()) md << "| Command | `" << cell(c) << "` |\n";
  timing_row(md, rec);
  conditions_rows(md, rec);
  md << "| Ceilings | " << ceilings_text(rec) << " |\n\n";
}

std::string verified_text(json const& r) {
  switch (state_of(r)) {
    case row_state::skipped:
      return "skipped";
    case row_state::error:
      return "❌ **ERROR**: " + cell(str(r, "error"));
    case row_state::failed: {
      auto const& v = obj(r, "verification");
      std::string s = "❌ **FAILED**";
      // The harness writes an infinite error (NaN in the output) as the string "inf".
      std::string e_text = num(v, "error")                                   ? fmt(*num(v, "error"))
                           : v.is_object() && v.contains("error") && v["error"].is_string() ? v["error"].get<std::string>()
                                                                                             : "";
      if (!e_text.empty()) {
        s += " (" + str(v, "metric", "error") + " " + cell(e_text);
        if (auto tol = num(v, "tolerance")) s += " > " + fmt(*tol);
        s += ")";
      }
      if (auto d = str(v, "detail"); !d.empty()) s += " " + cell(d);
      return s;
    }
    case row_state::no_timing:
      return str(r, "verified", "—") + " (no timing)";
    case row_state::not_verified:
      return str(r, "verified").empty() ? "—" : "not verified";
    case row_state::ok:
      return "passed";
  }
  return "—";
}

std::string predicted_text(json const& r) {
  auto it = r.find("predicted");
  if (it == r.end() || it->is_null()) return "";
  if (!it->is_object()) return cell(value_text(*it));
  std::string s;
  for (auto p = it->begin(); p != it->end(); ++p) {
    if (!s.empty()) s += ", ";
    s += p.key() + " " + (p->is_number() ? fmt(p->get<double>()) : value_text(*p));
  }
  // The measurement against the model, where both speak the same unit.
  if (auto pg = num(*it, "gbps"), g = num(r, "gbps"); pg && g && *pg > 0)
    s += " → measured/model " + fmt(*g / *pg);
  else {
    std::optional<double> pm;
    for (auto const* k : {"ms", "time_ms", "median_ms", "predicted_ms"})
      if (!pm) pm = num(*it, k);
    if (auto m = num(r, "median_ms"); pm && m && *pm > 0) s += " → measured/model " + fmt(*m / *pm);
  }
  return cell(s);
}

std::string extra_text(json const& r) {
  auto const& ex = obj(r, "extra");
  std::string s;
  for (auto p = ex.begin(); p != ex.end(); ++p) {
    if (!s.empty()) s += ", ";
    if (p->is_array())
      s += p.key() + "[" + std::to_string(p->size()) + "]";
    else if (p->is_object())
      s += p.key() + "{…}";
    else
      s += p.key() + "=" + value_text(*p, p.key());
  }
  return cell(s);
}

/// Whether a timing method times launches in batches (the per-launch slope of back-to-back launches,
/// no launch overhead) rather than each alone between two events.
bool batched_method(std::string const& m) { return m == "graph_batch" || m == "launch_batch"; }

std::string peer_text(json const& r) {
  auto ratio = num(r, "ratio_to_peer");
  if (!ratio) return "";
  std::string peer = str(r, "peer", "peer");
  std::string s = pct(*ratio) + " of " + cell(peer);
  // Either launch under 50 us is not paired, and each side's own probe picks its method: one near
  // the threshold may be timed alone while the other is batched, and the ratio then carries one
  // launch's overhead (docs/timing.md, "Paired with the peer"). Say so where it happens.
  std::string const ours = str(obj(r, "timing"), "method"), theirs = str(obj(obj(r, "extra"), "peer_timing"), "method");
  if (!ours.empty() && !theirs.empty() && batched_method(ours) != batched_method(theirs))
    s += batched_method(ours) ? " (ours batched, the peer timed alone)" : " (ours timed alone, the peer batched)";
  return s;
}

std::string time_text(json const& r) {
  auto m = num(r, "median_ms");
  if (!m) return "—";
  std::string s = fmt(*m);
  if (auto n = num(r, "noise")) s += " ± " + pct(*n);
  if (auto it = r.find("throttled"); it != r.end() && it->is_boolean() && it->get<bool>()) s += " ⚠ throttled";
  return s;
}

/// One experiment's table; returns the number of rows that lacked fields.
int table(std::ostream& md, std::vector<json const*> const& rows) {
  bool any_tflops = false, any_peer = false, any_pred = false, any_extra = false, any_gbps = false;
  for (auto const* r : rows) {
    any_tflops |= num(*r, "tflops").has_value();
    any_gbps |= num(*r, "gbps").has_value();
    any_peer |= num(*r, "ratio_to_peer").has_value();
    any_pred |= !predicted_text(*r).empty();
    any_extra |= !extra_text(*r).empty();
  }
  md << "| variant | params | median ms ± noise |" << (any_gbps ? " GB/s |" : "") << (any_tflops ? " TFLOP/s |" : "")
     << (any_peer ? " vs peer |" : "") << " verified |" << (any_pred ? " model |" : "") << (any_extra ? " extra |" : "")
     << "\n|---|---|--:|" << (any_gbps ? "--:|" : "") << (any_tflops ? "--:|" : "") << (any_peer ? "--:|" : "") << "---|"
     << (any_pred ? "---|" : "") << (any_extra ? "---|" : "") << "\n";
  int lacking = 0;
  for (auto const* rp : rows) {
    json const& r = *rp;
    auto st = state_of(r);
    bool bad = st == row_state::failed || st == row_state::error;
    if (st == row_state::no_timing || !r.contains("variant") || !r.contains("verified")) ++lacking;
    std::string variant = cell(str(r, "variant", "?"));
    md << "| " << (bad ? "❌ **" + variant + "**" : variant) << " | " << cell(params_text(obj(r, "params"))) << " | "
       << time_text(r) << " |";
    if (any_gbps) md << " " << fmt(num(r, "gbps")) << " |";
    if (any_tflops) md << " " << fmt(num(r, "tflops")) << " |";
    if (any_peer) md << " " << peer_text(r) << " |";
    md << " " << verified_text(r) << " |";
    if (any_pred) md << " " << predicted_text(r) << " |";
    if (any_extra) md << " " << extra_text(r) << " |";
    md << "\n";
  }
  return lacking;
}

struct section {
  std::string id;
  experiment_entry const* entry = nullptr;  // the experiments[] entry, if any
  std::vector<json const*> rows;
};

std::string figure_text(json const& r, std::string const& metric, experiment_entry const& e) {
  auto v = metric_value(r, metric);
  if (!v) return "—";
  if (metric == "median_ms") {
    std::string t = fmt(*v) + " ms";
    if (auto n = num(r, "noise")) t += " ± " + pct(*n);
    return t;
  }
  std::string unit = e.metric(metric) ? e.metric(metric)->unit : "";
  return fmt(*v) + (unit.empty() ? "" : " " + unit);
}

/// One line per experiment: the row its declaration names as the answer to its question,
/// and the comparison it declares (peer, ceiling or a baseline row).
/// `links`: where each experiment's name points: "" for the report's own sections, or a
/// path to a report.md (the README's table, generated with `memlab report --headlines`).
void at_a_glance(std::ostream& md, std::vector<section> const& sections, std::string const& links = "") {
  std::ostringstream t;
  int n = 0, undeclared = 0;
  for (auto const& s : sections) {
    if (!s.entry || !s.entry->declared) {
      ++undeclared;
      continue;
    }
    auto const& e = *s.entry;
    json const* best = headline_row(e, s.rows);
    if (!best) continue;
    auto const& h = e.headline;
    std::string fig = figure_text(*best, h.best_by, e);
    if (h.best_by != "gbps" && num(*best, "gbps") && e.metric("gbps")) fig += " · " + fmt(*num(*best, "gbps")) + " GB/s";
    std::string cmp = "—";
    if (h.compare == "ratio_to_peer") {
      if (auto p = peer_text(*best); !p.empty()) cmp = p;
    } else if (h.compare == "ratio_to_ceiling") {
      if (auto c = num(*best, "ratio_to_ceiling")) cmp = pct(*c) + " of the copy ceiling";
    } else if (h.compare == "baseline") {
      // Compared in the metric the headline ranks by (time, GB/s, cycles), as "N× better/worse":
      // a ratio below 1 reads badly as a speed.
      json const* b = baseline_row(e, *best, s.rows);
      auto vb = b ? metric_value(*b, h.best_by) : std::nullopt;
      auto v = metric_value(*best, h.best_by);
      if (b && vb && v && *v > 0 && *vb > 0) {
        std::string who = cell(str(*b, "variant")) + (str(*b, "variant").empty() ? "" : " ") + "(" +
                          cell(params_text(obj(*b, "params"))) + ")";
        double const better = h.higher_is_better ? *v / *vb : *vb / *v;
        bool const speed = h.best_by == "median_ms" || h.best_by == "gbps" || h.best_by == "tflops";
        std::string const up = speed ? "faster" : "better", down = speed ? "slower" : "worse";
        cmp = better >= 1 ? fmt(better) + "× " + up + " than " + who : fmt(1 / better) + "× " + down + " than " + who;
      }
    }
    std::string row = str(*best, "variant");
    std::string params = params_text(obj(*best, "params"));
    t << "| [" << cell(s.id) << "](" << links << "#" << anchor(s.id) << ") | " << cell(h.question) << " | " << cell(row)
      << (row.empty() ? "" : " ") << "(" << cell(params) << ") | " << fig << " | " << cmp << " |\n";
    ++n;
  }
  if (n == 0 && undeclared == 0) return;
  md << "### At a glance: each experiment's headline\n\n";
  if (n > 0)
    md << "The row each experiment declares as the answer to its question, with the comparison it declares.\n\n"
       << "| experiment | question | row | figure | compared |\n|---|---|---|--:|---|\n"
       << t.str() << "\n";
  if (undeclared > 0)
    md << "*" << undeclared << " experiment(s) carry no declaration (a format-1 record), so no headline is shown for "
       << "them.*\n\n";
}

/// The plots a section links: its declared plots, drawn or not (with why).
void plot_links(std::ostream& md, experiment_entry const& e, plot_outcome const& po) {
  for (auto const& p : e.plots) {
    auto it = po.drawn.find(p.file);
    if (it == po.drawn.end()) continue;  // nothing to draw: no timed rows
    if (it->second)
      md << "![" << p.title << "](plots/" << p.file << ")\n\n";
    else
      md << "*Plot not drawn: `plots/" << p.file << "` (" << p.title << ")" << "; see the note at the top.*\n\n";
  }
}

/// One summary-table cell, from the record alone: the declared row's metric, the device's
/// property, or the published figure with its source.
std::string table_cell_text(table_cell_decl const& c, std::string const& unit, run_record const& rec,
                            std::vector<std::string>& sources) {
  auto const shown = [&](double v) { return unit == "bytes" ? fmt_bytes(v) : fmt(v); };
  if (c.value) {
    if (c.source.empty()) return shown(*c.value);
    auto it = std::find(sources.begin(), sources.end(), c.source);
    if (it == sources.end()) it = sources.insert(sources.end(), c.source);
    return shown(*c.value) + " [" + std::to_string(it - sources.begin() + 1) + "]";
  }
  if (!c.device.empty()) {
    auto v = num(obj(rec.doc, "device"), c.device.c_str());
    return v ? shown(*v) : "—";
  }
  if (c.experiment.empty()) return "";
  std::vector<json const*> rows;
  for (auto const* r : rec.rows)
    if (str(*r, "experiment") == c.experiment) rows.push_back(r);
  std::optional<double> best;
  for (auto const* r : rows) {
    if (state_of(*r) != row_state::ok && state_of(*r) != row_state::no_timing) continue;
    if (!matches(*r, c.where, rows)) continue;
    auto v = metric_value(*r, c.metric);
    if (!v) continue;
    if (!best || (c.pick == "max" && *v > *best) || (c.pick == "min" && *v < *best)) best = v;
    if (c.pick.empty()) break;
  }
  return best ? shown(*best) : "—";
}

void summary_tables(std::ostream& md, experiment_entry const& e, run_record const& rec) {
  for (auto const& t : e.tables) {
    std::vector<std::string> sources;
    md << "**" << cell(t.title) << ".**\n\n|  |";
    for (auto const& [label, unit] : t.columns)
      md << " " << cell(label) << (unit.empty() || unit == "bytes" ? "" : " (" + cell(unit) + ")") << " |";
    md << "\n|---|";
    for (std::size_t i = 0; i < t.columns.size(); ++i) md << "--:|";
    md << "\n";
    for (auto const& [label, cells] : t.rows) {
      md << "| " << cell(label) << " |";
      for (std::size_t i = 0; i < cells.size() && i < t.columns.size(); ++i)
        md << " " << cell(table_cell_text(cells[i], t.columns[i].second, rec, sources)) << " |";
      md << "\n";
    }
    md << "\n";
    for (std::size_t i = 0; i < sources.size(); ++i) md << "[" << i + 1 << "] " << cell(sources[i]) << "  \n";
    if (!sources.empty()) md << "\n";
    if (!t.note.empty()) md << t.note << "\n\n";
  }
}

/// The section's heading, its one-line description and status, and a note on a stopped,
/// failed or unlisted experiment.
void section_intro(std::ostream& md, section const& s) {
  std::string heading = s.id.empty() ? "Rows without an experiment id" : s.id;
  md << "## " << heading << "\n\n";
  std::string line;
  experiment_entry const* e = s.entry;
  if (e && !e->description.empty()) line += "*" + e->description + "*";
  if (e && !e->seed_ref.empty()) line += (line.empty() ? "" : " · ") + std::string("seed ") + e->seed_ref;
  std::string status = e ? e->status : "";
  if (!status.empty()) line += (line.empty() ? "" : " · ") + std::string("status **") + status + "**";
  if (!line.empty()) md << line << "\n\n";
  if (status == "aborted")
    md << "> ⚠ This experiment was **aborted**: the rows below are those recorded before it stopped.\n\n";
  else if (status == "failed")
    md << "> ❌ This experiment **failed**: at least one row failed verification or stopped with an error.\n\n";
  else if (!e && !s.id.empty())
    md << "> This experiment is not in the record's list of experiments; its rows are shown as found.\n\n";
}

/// What a declared experiment says of itself: prose, axes, the seed's figures. The blocks' threshold
/// is the record's (meta timing.paired_blocks.above_ms), not this build's constant.
void section_declaration(std::ostream& md, experiment_entry const& e, run_record const& rec) {
  if (!e.shows.empty()) md << e.shows << "\n\n";
  if (!e.look_for.empty()) md << "**What to look for.** " << e.look_for << "\n\n";
  if (!e.seed_note.empty()) md << "**The seed's figure.** " << e.seed_note << "\n\n";
  if (e.paired_in_blocks) {
    auto const above = num(obj(obj(rec.doc, "timing"), "paired_blocks"), "above_ms");
    md << "**Timing.** Where a row and its peer take " << (above ? fmt(*above) + " ms or more" : "long enough")
       << ", they alternate in blocks of each one's launches (timing `events_paired_blocks`), so that at the power "
          "cap each runs at the clock its own power sets (docs/timing.md, \"Paired in blocks\").\n\n";
  }
  std::string axes;
  for (auto const& a : e.axes) {
    if (a.description.empty() && a.unit.empty()) continue;
    axes += "- `" + a.name + "`" + (a.unit.empty() ? "" : " (" + a.unit + ")") + ": " + a.description + "\n";
  }
  if (!axes.empty()) md << "**Axes.**\n\n" << axes << "\n";
  if (!e.seed_figures.empty()) {
    md << "| seed figure | value | GPU | section |\n|---|--:|---|---|\n";
    for (auto const& f : e.seed_figures)
      md << "| " << cell(f.label) << " | " << fmt(f.value) << " " << cell(f.unit) << " | " << cell(f.gpu) << " | "
         << cell(f.section) << " |\n";
    md << "\n";
  }
}

/// The rows on this GPU (folded above 30), then the skipped ones with their reasons.
void section_rows(std::ostream& md, std::vector<json const*> const& rows) {
  std::vector<json const*> shown, skipped;
  for (auto const* r : rows) (state_of(*r) == row_state::skipped ? skipped : shown).push_back(r);
  if (!shown.empty()) {
    md << "**This GPU.**\n\n";
    bool fold = shown.size() > 30;
    if (fold) md << "<details><summary>All " << shown.size() << " rows</summary>\n\n";
    int lacking = table(md, shown);
    md << "\n";
    if (fold) md << "</details>\n\n";
    if (lacking > 0)
      md << "> " << lacking << " row(s) lack fields (timing, variant or verification status) and are shown with "
         << "—; the record may be incomplete.\n\n";
  }
  if (!skipped.empty()) {
    md << "Skipped (" << skipped.size() << "):\n\n";
    for (auto const* r : skipped)
      md << "- " << cell(str(*r, "variant", "?")) << " (" << cell(params_text(obj(*r, "params")))
         << "): " << cell(str(*r, "skipped")) << "\n";
    md << "\n";
  }
}

void render_section(std::ostream& md, section const& s, plot_outcome const& po, run_record const& rec) {
  experiment_entry const* e = s.entry;
  section_intro(md, s);
  if (e && e->declared) section_declaration(md, *e, rec);
  if (s.rows.empty()) {
    md << "*No rows were recorded for this experiment.*\n\n";
    return;
  }
  section_rows(md, s.rows);
  if (e && e->declared) summary_tables(md, *e, rec);
  if (e) plot_links(md, *e, po);
}

/// Sections: the record's experiments in order, then any experiment seen only in rows.
std::vector<section> sections_of(run_record const& rec) {
  std::vector<section> sections;
  std::map<std::string, std::size_t> index;
  for (auto const& e : rec.experiments) {
    if (e.id.empty() || index.count(e.id)) continue;
    index[e.id] = sections.size();
    sections.push_back({e.id, &e, {}});
  }
  for (auto const* r : rec.rows) {
    std::string id = str(*r, "experiment");
    if (!index.count(id)) {
      index[id] = sections.size();
      sections.push_back({id, nullptr, {}});
    }
    sections[index[id]].rows.push_back(r);
  }

  return sections;
}

/// Counts by state, the throttled rows, then every failed row with its rerun line.
void summary(std::ostream& md, std::vector<section> const& sections) {
  int n_ok = 0, n_fail = 0, n_err = 0, n_skip = 0, n_nv = 0, n_nt = 0;
  std::vector<json const*> bad;
  for (auto const& s : sections)
    for (auto const* r : s.rows) switch (state_of(*r)) {
        case row_state::ok: ++n_ok; break;
        case row_state::failed: ++n_fail; bad.push_back(r); break;
        case row_state::error: ++n_err; bad.push_back(r); break;
        case row_state::skipped: ++n_skip; break;
        case row_state::not_verified: ++n_nv; break;
        case row_state::no_timing: ++n_nt; break;
      }
  std::map<std::string, int> by_status;
  for (auto const& s : sections)
    ++by_status[!s.entry ? "not listed" : s.entry->status.empty() ? "unknown" : s.entry->status];
  md << "## Summary\n\n" << sections.size() << " experiments (";
  bool first = true;
  for (auto const& [k, v] : by_status) {
    md << (first ? "" : ", ") << v << " " << k;
    first = false;
  }
  md << "), " << (n_ok + n_fail + n_err + n_skip + n_nv + n_nt) << " rows: " << n_ok << " verified, ";
  if (n_fail + n_err > 0)
    md << "**" << n_fail << " failed verification, " << n_err << " stopped with an error**, ";
  else
    md << "0 failed, ";
  md << n_nv << " not verified, " << n_skip << " skipped";
  if (n_nt > 0) md << ", " << n_nt << " without timing";
  md << ".\n\n";
  // Rows NVML saw throttled (power or heat) measured a slowed GPU: say so before any number.
  std::vector<json const*> throttled;
  for (auto const& s : sections)
    for (auto const* r : s.rows)
      if (auto it = r->find("throttled"); it != r->end() && it->is_boolean() && it->get<bool>()) throttled.push_back(r);
  if (!throttled.empty()) {
    // One line a reader can take in (rows and reasons by experiment, in record order), then every
    // row folded: a long run at the power cap flags hundreds.
    auto const reasons = [](json const& r) {
      std::vector<std::string> v;
      for (auto const& x : arr(r, "throttle_reasons")) v.push_back(x.is_string() ? x.get<std::string>() : x.dump());
      return v;
    };
    std::vector<std::string> order;
    std::map<std::string, std::pair<int, std::vector<std::pair<std::string, int>>>> by_exp;  // rows, reason tallies
    for (auto const* r : throttled) {
      std::string const id = str(*r, "experiment", "?");
      auto [it, fresh] = by_exp.try_emplace(id);
      if (fresh) order.push_back(id);
      ++it->second.first;
      for (auto const& why : reasons(*r)) {
        auto& tally = it->second.second;
        auto t = std::find_if(tally.begin(), tally.end(), [&](auto const& e) { return e.first == why; });
        if (t == tally.end()) tally.emplace_back(why, 1);
        else ++t->second;
      }
    }
    md << "⚠ **" << throttled.size() << " row(s) were timed while the GPU throttled** (marked ⚠ throttled; "
       << "`memlab run --discard-throttled` retakes them):";
    for (std::size_t i = 0; i < order.size(); ++i) {
      auto const& [rows, tally] = by_exp[order[i]];
      md << (i == 0 ? " " : "; ") << cell(order[i]) << " " << rows;
      for (std::size_t j = 0; j < tally.size(); ++j)
        md << (j == 0 ? " (" : ", ") << cell(tally[j].first) << " " << tally[j].second << (j + 1 == tally.size() ? ")" : "");
    }
    md << ".\n\n<details><summary>The " << throttled.size() << " throttled row(s)</summary>\n\n";
    for (auto const* r : throttled) {
      std::string why;
      for (auto const& x : reasons(*r)) why += (why.empty() ? "" : ", ") + x;
      md << "- " << cell(str(*r, "experiment", "?")) << " " << cell(str(*r, "variant")) << " ("
         << cell(params_text(obj(*r, "params"))) << ")" << (why.empty() ? "" : ": " + cell(why)) << "\n";
    }
    md << "\n</details>\n\n";
  }
  if (!bad.empty()) {
    md << "### ❌ Failed rows\n\n";
    for (auto const* r : bad) {
      std::string id = str(*r, "experiment");
      md << "- [" << cell(id.empty() ? "?" : id) << "](#" << anchor(id) << ") " << cell(str(*r, "variant", "?"))
         << " (" << cell(params_text(obj(*r, "params"))) << "): " << verified_text(*r);
      if (auto rp = str(*r, "repro"); !rp.empty()) md << " · rerun: `" << cell(rp) << "`";
      md << "\n";
    }
    md << "\n";
  }
}

/// The declared plots of experiments with timed (or verified untimed) rows to draw.
std::vector<std::string> plots_to_draw(std::vector<section> const& sections) {
  std::vector<std::string> plans;
  for (auto const& s : sections) {
    if (!s.entry) continue;
    bool timed = false;
    for (auto const* r : s.rows)  // a verified row with no time of its own plots its declared metrics
      timed |= state_of(*r) == row_state::ok || state_of(*r) == row_state::not_verified || verified_untimed(*r);
    if (timed)
      for (auto const& p : s.entry->plots) plans.push_back(p.file);
  }
  return plans;
}

/// Why plots are missing, when they are (turned off, no python or matplotlib, a failed plot).
/// Marks every plan the drawing did not report as not drawn in `po`.
void plot_notice(std::ostream& md, report_options const& opt, std::vector<std::string> const& plans,
                 plot_outcome& po) {
  if (plans.empty()) return;
  bool none_drawn = true;
  for (auto const& [f, ok] : po.drawn) none_drawn &= !ok;
  if (!opt.plots) {
    md << "> Plots were not drawn (plots turned off).\n\n";
  } else if (!po.problem.empty()) {
    md << "> ⚠ " << (none_drawn ? "Plots were not drawn" : "Some plots are missing") << ": " << po.problem << ".";
    if (po.problem.find("matplotlib") != std::string::npos)
      md << " Install it with `" << install_matplotlib_hint << "`, then run `memlab report " << opt.record_path
         << "` again.";
    md << " Missing:";
    for (auto const& p : plans)
      if (!po.drawn[p]) md << " `plots/" << p << "`";
    md << "\n\n";
  }
}

/// The table of contents, with each experiment's status unless it completed.
void contents(std::ostream& md, std::vector<section> const& sections) {
  if (sections.empty()) return;
  md << "## Contents\n\n";
  for (auto const& s : sections) {
    std::string h = s.id.empty() ? "Rows without an experiment id" : s.id;
    md << "- [" << h << "](#" << anchor(h) << ")";
    if (s.entry && !s.entry->status.empty() && s.entry->status != "completed") md << " (" << s.entry->status << ")";
    md << "\n";
  }
  md << "\n";
}

/// report.md: header, plot notice, summary, the headlines, contents, one section per experiment.
std::string report_markdown(report_options const& opt, run_record const& rec, std::vector<section> const& sections,
                            std::vector<std::string> const& plans, plot_outcome& po) {
  std::ostringstream md;
  header(md, rec.doc);
  plot_notice(md, opt, plans, po);
  summary(md, sections);
  if (sections.empty()) md << "*The record holds no experiments and no rows.*\n\n";
  at_a_glance(md, sections);
  contents(md, sections);
  for (auto const& s : sections) {
    try {
      render_section(md, s, po, rec);
    } catch (std::exception const& e) {  // a malformed section must not lose the others
      md << "> This section could not be rendered: " << e.what() << "\n\n";
    }
  }
  md << "---\n*Written by `memlab report` from `" << fs::path(opt.record_path).filename().string()
     << "`. Model columns are the prediction of the technique's model; \"vs peer\" is the peer's time over ours "
        "(above 100%: faster than the peer), or for bandwidth rows our GB/s over the measured cudaMemcpy D2D.*\n";
  return md.str();
}

/// The one line on stdout, and on stderr why plots are missing.
void report_written(report_options const& opt, fs::path const& report, std::size_t n_sections, std::size_t n_plans,
                    plot_outcome const& po, std::ostream& out, std::ostream& err) {
  int drawn = 0;
  for (auto const& [k, v] : po.drawn) drawn += v;
  out << "wrote " << report.string() << " (" << n_sections << " experiments, " << drawn << " of " << n_plans
      << " plots)\n";
  // On stderr: `memlab run` keeps its stdout for the tables, and this is a warning.
  if (opt.plots && !po.problem.empty()) {
    err << "memlab report: plots: " << po.problem << "\n";
    if (po.problem.find("matplotlib") != std::string::npos)
      err << "memlab report: install matplotlib with: " << install_matplotlib_hint << "\n";
  }
}

}  // namespace

int render(report_options const& opt, std::ostream& out, std::ostream& err) {
  run_record rec;
  try {
    rec = read_record(opt.record_path);
  } catch (std::exception const& e) {
    err << "memlab report: " << e.what() << "\n";
    return 2;
  }
  if (opt.headlines) {  // only the headline table, on `out`, its links into the record's report.md
    fs::path const report = fs::path(opt.record_path).parent_path() / "report.md";
    at_a_glance(out, sections_of(rec), report.generic_string());
    return 0;
  }
  fs::path out_dir = opt.out_dir.empty() ? fs::path(opt.record_path).parent_path() : fs::path(opt.out_dir);
  if (out_dir.empty()) out_dir = ".";
  try {
    fs::create_directories(out_dir);
  } catch (std::exception const& e) {
    err << "memlab report: cannot create " << out_dir.string() << ": " << e.what() << "\n";
    return 2;
  }

  std::vector<section> const sections = sections_of(rec);
  std::vector<std::string> const plans = plots_to_draw(sections);
  plot_outcome po;
  for (auto const& p : plans) po.drawn[p] = false;
  if (opt.plots && !plans.empty()) po = draw_plots(opt.record_path, out_dir.string(), plans, opt.python);
  std::string const md = report_markdown(opt, rec, sections, plans, po);

  fs::path report = out_dir / "report.md";
  std::ofstream f(report);
  f << md;
  f.close();
  if (!f) {
    err << "memlab report: cannot write " << report.string() << "\n";
    return 2;
  }
  report_written(opt, report, sections.size(), plans.size(), po, out, err);
  return 0;
}

std::string run_markdown(json const& record) {
  run_record const rec = check_record(record, "run.json");
  std::vector<section> const sections = sections_of(rec);
  std::ostringstream md;
  header(md, rec.doc);
  summary(md, sections);
  for (auto const& s : sections) {
    md << "## " << (s.id.empty() ? "Rows without an experiment id" : s.id) << "\n\n";
    std::vector<json const*> shown, skipped;
    for (auto const* r : s.rows) (state_of(*r) == row_state::skipped ? skipped : shown).push_back(r);
    if (!shown.empty()) table(md, shown);
    for (auto const* r : skipped)
      md << "- skipped: " << cell(str(*r, "variant", "?")) << " (" << cell(params_text(obj(*r, "params"))) << "): "
         << cell(str(*r, "skipped")) << "\n";
    md << "\n";
  }
  return md.str();
}

}  // namespace memlab::report
