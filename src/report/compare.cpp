// memlab compare A.json B.json: per-row ratio B/A with a noise-aware verdict.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <ostream>
#include <sstream>

#include "report/record.hpp"
#include "report/record_view.hpp"
#include "report/report.hpp"

namespace memlab::report {

namespace {

using namespace detail;

/// How many combined noises a difference must exceed before it counts. A row's noise is now
/// a 95% bound on where a second run's median lands (docs/timing.md), so this is generous;
/// it stays for records written when noise was stdev / mean. --repeat uses the bound itself.
constexpr double noise_factor = 2.0;

struct indexed {
  json rec;
  std::vector<json const*> order;
  std::map<std::string, json const*> by_key;
  int duplicates = 0;
};

indexed index_rows(json rec) {
  indexed x{std::move(rec), {}, {}, 0};
  for (auto const& r : arr(x.rec, "rows")) {
    if (!r.is_object()) continue;
    auto k = row_key(r);
    if (x.by_key.count(k)) {
      ++x.duplicates;
      continue;
    }
    x.by_key[k] = &r;
    x.order.push_back(&r);
  }
  return x;
}

std::string side_state(json const& r) {
  switch (state_of(r)) {
    case row_state::skipped: return "skipped (" + str(r, "skipped") + ")";
    case row_state::error: return "error (" + str(r, "error") + ")";
    case row_state::failed: return "failed verification";
    case row_state::no_timing: return "no timing";
    default: return "";
  }
}

std::string row_label(json const& r) {
  return "| " + cell(str(r, "experiment", "?")) + " | " + cell(str(r, "variant", "?")) + " | " +
         cell(params_text(obj(r, "params"))) + " |";
}

struct timed_pair {
  std::string label;  ///< "| experiment | variant | params |"
  double ma, mb, na, nb;
  bool headline = false;  ///< A's declared headline row of its experiment
};

/// The --repeat section: the 3% criterion on rows that should hold it, and whether the
/// fraction of rows differing by more than their noise fits the noise's confidence.
bool repeat_section(std::vector<timed_pair> const& rows, int newly_failed, bool same_gpu, std::ostream& md) {
  using namespace repeat_check;
  std::vector<std::string> beyond_tol, beyond_noise;
  int long_rows = 0, short_rows = 0, headlines = 0;
  for (auto const& p : rows) {
    double const d = std::fabs(p.mb / p.ma - 1.0);
    double const noise = std::max(p.na, p.nb);
    std::string const line = p.label + " " + fmt(p.ma) + " | " + fmt(p.mb) + " | " + fmt(d * 100.0) + "% | " +
                             fmt(p.na * 100.0) + "% / " + fmt(p.nb * 100.0) + "% |" + (p.headline ? " headline" : "");
    bool const held_to_3 = p.ma > long_row_ms || p.headline;
    (p.ma > long_row_ms ? long_rows : short_rows) += 1;
    headlines += p.headline;
    if (d > (held_to_3 ? tolerance : short_tolerance)) beyond_tol.push_back(line);
    if (d > noise) beyond_noise.push_back(line);
  }
  int const m = static_cast<int>(rows.size());
  double const frac = m ? static_cast<double>(beyond_noise.size()) / m : 0.0;
  double const allowed = allowed_fraction(m);
  bool const calibrated = m == 0 || frac <= allowed;
  bool const ok = beyond_tol.empty() && calibrated && newly_failed == 0 && m > 0;
  md << "## Repeatability: " << (ok ? "✅ passed" : "❌ **failed**") << "\n\n";
  if (!same_gpu) md << "> ⚠ The two runs are on different GPUs: a repeat check compares one build on one GPU.\n\n";
  md << "- **Agreement:** " << long_rows << " rows above " << fmt(long_row_ms * 1e3) << " µs and " << headlines
     << " headline rows are held to " << fmt(tolerance * 100.0) << "%, the other " << short_rows << " (microsecond rows) to "
     << fmt(short_tolerance * 100.0) << "%; " << beyond_tol.size() << " differ by more.\n";
  md << "- **Noise calibration:** " << beyond_noise.size() << " of " << m << " rows (" << fmt(frac * 100.0)
     << "%) differ by more than their reported noise (max of A's and B's); a " << fmt(confidence * 100.0)
     << "% bound allows at most " << fmt(allowed * 100.0) << "% (5% + 2 binomial s.d.): "
     << (calibrated ? "calibrated" : "**the noise understates the spread**") << ".\n";
  if (newly_failed > 0) md << "- " << newly_failed << " row(s) fail in B that passed in A.\n";
  if (m == 0) md << "- No row was timed in both runs.\n";
  char const* head = "| experiment | variant | params | A ms | B ms | difference | noise A / B |\n|---|---|---|--:|--:|--:|--:|\n";
  if (!beyond_tol.empty()) {
    md << "\n### Rows beyond their tolerance (" << beyond_tol.size() << ")\n\n" << head;
    for (auto const& l : beyond_tol) md << l << "\n";
  }
  if (!beyond_noise.empty()) {
    md << "\n### Rows beyond their noise (" << beyond_noise.size() << ")\n\n" << head;
    for (auto const& l : beyond_noise) md << l << "\n";
  }
  md << "\n";
  return ok;
}

/// The row_key of each experiment's headline row in `rec` (format 2; none in format 1).
std::set<std::string> headline_row_keys(run_record const& rec) {
  std::set<std::string> keys;
  for (auto const& e : rec.experiments) {
    if (!e.declared) continue;
    std::vector<json const*> rows;
    for (json const* r : rec.rows)
      if (str(*r, "experiment", "") == e.id) rows.push_back(r);
    if (json const* h = headline_row(e, rows)) keys.insert(row_key(*h));
  }
  return keys;
}


std::string gpu_name(indexed const& x) { return str(obj(x.rec, "device"), "name", "unknown GPU"); }

/// The two records side by side, then warnings: different GPUs, repeated rows.
void write_header(std::ostream& md, compare_options const& opt, indexed const& a, indexed const& b) {
  std::string const gpu_a = gpu_name(a), gpu_b = gpu_name(b);
  md << "# memlab compare\n\n| | A (baseline) | B (candidate) |\n|---|---|---|\n";
  md << "| record | `" << cell(opt.baseline) << "` | `" << cell(opt.candidate) << "` |\n";
  md << "| GPU | " << cell(gpu_a) << " | " << cell(gpu_b) << " |\n";
  md << "| revision | `" << cell(str(obj(a.rec, "memlab"), "git_revision", "?")) << "` | `"
     << cell(str(obj(b.rec, "memlab"), "git_revision", "?")) << "` |\n";
  md << "| started | " << cell(str(a.rec, "started", "?")) << " | " << cell(str(b.rec, "started", "?")) << " |\n";
  md << "| finished | " << cell(str(a.rec, "finished", "**not finished**")) << " | "
     << cell(str(b.rec, "finished", "**not finished**")) << " |\n\n";
  if (gpu_a != gpu_b)
    md << "> ⚠ **Different GPUs** (" << cell(gpu_a) << " → " << cell(gpu_b)
       << "): the ratios compare the hardware as well as the code.\n\n";
  // Records before `timing.flush` flushed by writing (docs/timing.md, "The flush").
  std::string const flush_a = str(obj(a.rec, "timing"), "flush", "write"),
                    flush_b = str(obj(b.rec, "timing"), "flush", "write");
  if (flush_a != flush_b)
    md << "> ⚠ **Different L2 flushes** (" << cell(flush_a) << " → " << cell(flush_b)
       << "): cold rows start from different cache states (a write flush leaves dirty lines whose "
          "write-back the timed launch pays; short bandwidth rows differ by up to ~7%).\n\n";
  for (auto const* x : {&a, &b})
    if (x->duplicates > 0)
      md << "> " << (x == &a ? "A" : "B") << " repeats " << x->duplicates
         << " row(s) with the same experiment, variant and params; only the first of each is compared.\n\n";
}

/// One experiment's rows timed in both runs.
struct per_experiment {
  int rows = 0, faster = 0, slower = 0, same = 0;
  double log_sum = 0;  ///< of B/A, for the geometric mean
};

/// What the walk over the rows in both runs found.
struct comparison {
  int faster = 0, slower = 0, same = 0, incomparable = 0, newly_failed = 0;
  std::vector<std::string> regressions;  ///< "| experiment | variant | params | what" (without the closing bar)
  std::vector<timed_pair> timed;         ///< rows timed in both, for --repeat
  std::vector<std::string> exp_order;    ///< experiments with timed rows, in A's order
  std::map<std::string, per_experiment> by_exp;
  std::ostringstream table, changed;  ///< every matched row; those whose verdict is not "same"
  int n_changed = 0;

  int matched() const { return faster + slower + same + incomparable + newly_failed; }
};

/// A row of A and its match in B.
struct matched_row {
  json const& a;
  json const& b;
  std::optional<double> ma, mb;  ///< medians (ms)
  double na, nb;                 ///< noises (0 when absent)
};

bool batched(json const& r) { return num(obj(r, "timing"), "batch").value_or(1.0) > 1.0; }

/// A row's median and noise as compared with `other`'s. When one run batched a launch and the
/// other timed it alone (its probe fell on the other side of the batching threshold), the
/// batched row's `timing.cold_events` — the same launch also timed alone — is what compares
/// like with like. Records without it compare their medians.
std::pair<std::optional<double>, double> comparable_timing(json const& r, json const& other) {
  json const& cold = obj(obj(r, "timing"), "cold_events");
  if (batched(r) && !batched(other) && num(cold, "ms")) return {num(cold, "ms"), num(cold, "noise").value_or(0.0)};
  return {num(r, "median_ms"), num(r, "noise").value_or(0.0)};
}

matched_row match(json const& ra, json const& rb) {
  auto const [ma, na] = comparable_timing(ra, rb);
  auto const [mb, nb] = comparable_timing(rb, ra);
  return {ra, rb, ma, mb, na, nb};
}

std::string timed_cell(std::optional<double> m, double n) {
  return m ? fmt(*m) + " ± " + fmt(n * 100.0) + "%" : std::string("—");
}

/// A row timed in both runs: same within `tol`, faster, or slower (a regression); counted in
/// its experiment and in the totals.
std::string timed_verdict(matched_row const& m, double tol, comparison& c) {
  double const r = *m.mb / *m.ma;
  std::string const e = str(m.a, "experiment", "?");
  if (!c.by_exp.count(e)) c.exp_order.push_back(e);
  auto& pe = c.by_exp[e];
  ++pe.rows;
  pe.log_sum += std::log(r);
  if (std::fabs(r - 1.0) <= tol) {
    ++pe.same;
    ++c.same;
    return "same (within " + fmt(tol * 100.0) + "%)";
  }
  if (r < 1.0) {
    ++pe.faster;
    ++c.faster;
    return "faster (" + fmt(1.0 / r) + "×)";
  }
  ++pe.slower;
  ++c.slower;
  c.regressions.push_back(row_label(m.b) + " " + fmt(r) + "× the time of A");
  return "❌ **slower** (" + fmt(r) + "×, beyond " + fmt(tol * 100.0) + "%)";
}

/// The verdict on one row in both runs, counted in `c`; `ratio` gets B/A when both are timed.
std::string row_verdict(matched_row const& m, double threshold, std::set<std::string> const& headline_keys,
                        comparison& c, std::string& ratio) {
  std::string const sa = side_state(m.a), sb = side_state(m.b);
  bool const a_good = sa.empty(), b_good = sb.empty();
  if (a_good && (state_of(m.b) == row_state::failed || state_of(m.b) == row_state::error)) {
    ++c.newly_failed;
    c.regressions.push_back(row_label(m.b) + " " + sb + " in B");
    return "❌ **regression**: " + cell(sb) + " in B";
  }
  if (!a_good || !b_good) {
    ++c.incomparable;
    return "not compared: " + (a_good ? "" : "A " + cell(sa)) + (!a_good && !b_good ? "; " : "") +
           (b_good ? "" : "B " + cell(sb));
  }
  if (!m.ma || !m.mb || *m.ma <= 0) {
    ++c.incomparable;
    return "not compared: no timing";
  }
  c.timed.push_back({row_label(m.a), *m.ma, *m.mb, m.na, m.nb, headline_keys.count(row_key(m.a)) > 0});
  ratio = fmt(*m.mb / *m.ma);
  std::string verdict = timed_verdict(m, std::max(threshold, noise_factor * (m.na + m.nb)), c);
  // Paired launch by launch, a kernel runs at the clock its mix with the peer sets; in blocks, at
  // its own (docs/timing.md, "Paired in blocks"): at the power cap the two differ by a few percent.
  std::string const ta = str(obj(m.a, "timing"), "method"), tb = str(obj(m.b, "timing"), "method");
  if (ta != tb && (ta == "events_paired_blocks" || tb == "events_paired_blocks"))
    verdict += " (timed " + ta + " in A, " + tb + " in B)";
  return verdict;
}

/// Every row of A that B also has, in A's order, with its verdict.
comparison compare_rows(indexed const& a, indexed const& b, double threshold,
                        std::set<std::string> const& headline_keys) {
  char const* table_head =
      "| experiment | variant | params | A ms ± noise | B ms ± noise | B/A time | verdict |\n"
      "|---|---|---|--:|--:|--:|---|\n";
  comparison c;
  c.table << table_head;
  c.changed << table_head;
  for (auto const* ra : a.order) {
    auto it = b.by_key.find(row_key(*ra));
    if (it == b.by_key.end()) continue;
    json const& rb = *it->second;
    matched_row const m = match(*ra, rb);
    std::string ratio = "—";
    std::string const verdict = row_verdict(m, threshold, headline_keys, c, ratio);
    std::string const line = row_label(*ra) + " " + timed_cell(m.ma, m.na) + " | " + timed_cell(m.mb, m.nb) + " | " +
                             ratio + " | " + verdict + " |\n";
    c.table << line;
    if (verdict.rfind("same", 0) != 0) {
      c.changed << line;
      ++c.n_changed;
    }
  }
  return c;
}

/// The rows of `x` that `y` lacks, in x's order.
std::vector<json const*> rows_missing_from(indexed const& x, indexed const& y) {
  std::vector<json const*> v;
  for (auto const* r : x.order)
    if (!y.by_key.count(row_key(*r))) v.push_back(r);
  return v;
}

void write_totals(std::ostream& md, comparison const& c, std::size_t only_a, std::size_t only_b, double threshold) {
  md << "**" << c.matched() << " rows in both**: " << c.faster << " faster, " << c.slower << " slower, " << c.same
     << " same, " << c.newly_failed << " newly failing, " << c.incomparable << " not compared; " << only_a
     << " only in A, " << only_b << " only in B. Threshold " << fmt(threshold * 100.0)
     << "%: a row is *same* when |B/A − 1| ≤ max(threshold, " << fmt(noise_factor)
     << " × (noise A + noise B)); B/A below 1 is faster.\n\n";
}

void write_regressions(std::ostream& md, comparison const& c) {
  if (c.regressions.empty()) return;
  md << "## ❌ Regressions (" << c.regressions.size()
     << ")\n\n| experiment | variant | params | what |\n|---|---|---|---|\n";
  for (auto const& r : c.regressions) md << r << " |\n";
  md << "\n";
}

void write_by_experiment(std::ostream& md, comparison const& c) {
  if (c.exp_order.empty()) return;
  md << "## By experiment\n\n| experiment | rows timed in both | geometric mean B/A time | faster | slower | same |\n"
        "|---|--:|--:|--:|--:|--:|\n";
  for (auto const& e : c.exp_order) {
    auto const& pe = c.by_exp.at(e);
    md << "| " << cell(e) << " | " << pe.rows << " | " << fmt(std::exp(pe.log_sum / pe.rows)) << " | " << pe.faster
       << " | " << pe.slower << " | " << pe.same << " |\n";
  }
  md << "\n";
}

/// The rows that differ, then every row in both (folded).
void write_matched(std::ostream& md, comparison const& c) {
  int const matched = c.matched();
  if (matched == 0) {
    md << "## Rows in both\n\n*No row is in both runs.*\n\n";
    return;
  }
  md << "## Rows that differ (" << c.n_changed << ")\n\n";
  if (c.n_changed == 0)
    md << "*Every row in both runs is the same within the threshold and the noise.*\n\n";
  else
    md << c.changed.str() << "\n";
  md << "## Rows in both (" << matched << ")\n\n<details><summary>All " << matched << " rows</summary>\n\n"
     << c.table.str() << "\n</details>\n\n";
}

void write_only_in(std::ostream& md, char const* title, std::vector<json const*> const& v) {
  if (v.empty()) return;
  md << "## " << title << " (" << v.size() << ")\n\n| experiment | variant | params |\n|---|---|---|\n";
  for (auto const* r : v) md << row_label(*r) << "\n";
  md << "\n";
}

}  // namespace

double repeat_check::allowed_fraction(int rows) {
  if (rows <= 0) return 1.0;
  double const p = 1.0 - confidence;
  return p + 2.0 * std::sqrt(p * (1.0 - p) / rows);
}

int compare(compare_options const& opt, std::ostream& out, std::ostream& err) {
  if (!(opt.threshold >= 0.0) || !std::isfinite(opt.threshold)) {
    err << "memlab compare: the threshold must be a fraction >= 0 (e.g. 0.05), not " << opt.threshold << "\n";
    return 2;
  }
  indexed a, b;
  std::set<std::string> headline_keys;  // A's declared headline rows (held to 3% by --repeat)
  try {
    // The shared reader: a record of the wrong shape is refused here, not compared as empty.
    run_record const ra = read_record(opt.baseline);
    headline_keys = headline_row_keys(ra);
    a = index_rows(ra.doc);
    b = index_rows(read_record(opt.candidate).doc);
  } catch (std::exception const& e) {
    err << "memlab compare: " << e.what() << "\n";
    return 2;
  }

  std::ostringstream md;
  write_header(md, opt, a, b);
  comparison const c = compare_rows(a, b, opt.threshold, headline_keys);
  std::vector<json const*> const only_a = rows_missing_from(a, b), only_b = rows_missing_from(b, a);
  write_totals(md, c, only_a.size(), only_b.size(), opt.threshold);
  write_regressions(md, c);
  write_by_experiment(md, c);
  write_matched(md, c);
  write_only_in(md, "Only in A", only_a);
  write_only_in(md, "Only in B", only_b);

  if (opt.repeat) {
    std::ostringstream rep;
    bool const ok = repeat_section(c.timed, c.newly_failed, gpu_name(a) == gpu_name(b), rep);
    out << rep.str() << md.str();
    err << "memlab compare --repeat: " << (ok ? "passed" : "failed") << "\n";
    return ok ? 0 : 1;
  }
  out << md.str();
  return c.regressions.empty() ? 0 : 1;
}

}  // namespace memlab::report
