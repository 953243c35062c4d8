#include "report/record.hpp"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "report/record_view.hpp"

namespace memlab::report {

namespace {

/// Walks the document with the path so far; the first mismatch throws with that path.
class checker {
 public:
  explicit checker(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(std::string const& path, std::string const& what) const {
    throw record_error(name_ + ": " + (path.empty() ? "" : path + ": ") + what);
  }
  static std::string type_of(json const& j) {
    switch (j.type()) {
      case json::value_t::null: return "null";
      case json::value_t::boolean: return "a boolean";
      case json::value_t::string: return "a string";
      case json::value_t::array: return "an array";
      case json::value_t::object: return "an object";
      default: return "a number";
    }
  }
  json const& need(json const& obj, std::string const& path, char const* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) fail(path, std::string("missing key '") + key + "'");
    return *it;
  }
  void expect(bool ok, json const& j, std::string const& path, char const* what) const {
    if (!ok) fail(path, std::string("expected ") + what + ", found " + type_of(j));
  }
  std::string string_at(json const& obj, std::string const& path, char const* key, bool required = true) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) fail(path, std::string("missing key '") + key + "'");
      return "";
    }
    expect(it->is_string(), *it, join(path, key), "a string");
    return it->get<std::string>();
  }
  bool bool_at(json const& obj, std::string const& path, char const* key) const {
    auto it = obj.find(key);
    if (it == obj.end()) return false;
    expect(it->is_boolean(), *it, join(path, key), "a boolean");
    return it->get<bool>();
  }
  /// Optional keys that must be of one kind (or null) when present.
  void optional(json const& obj, std::string const& path, char const* key, char const* kind) const {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return;
    std::string k = kind;
    bool ok = (k == "number" && it->is_number()) || (k == "string" && it->is_string()) ||
              (k == "object" && it->is_object()) || (k == "array" && it->is_array()) ||
              (k == "boolean" && it->is_boolean()) || (k == "number or string" && (it->is_number() || it->is_string()));
    if (!ok) fail(join(path, key), "expected " + std::string(k == "object" || k == "array" ? "an " : "a ") + k +
                                       " or null, found " + type_of(*it));
  }
  static std::string join(std::string const& path, std::string const& key) { return path.empty() ? key : path + "." + key; }
  static std::string at(std::string const& path, std::size_t i) { return path + "[" + std::to_string(i) + "]"; }

  row_filter filter(json const& obj, std::string const& path, char const* key) const {
    row_filter f;
    auto it = obj.find(key);
    if (it == obj.end()) return f;
    std::string p = join(path, key);
    expect(it->is_object(), *it, p, "an object");
    for (auto v = it->begin(); v != it->end(); ++v) {
      expect(v->is_array(), *v, join(p, v.key()), "an array of strings");
      std::vector<std::string> values;
      for (std::size_t i = 0; i < v->size(); ++i) {
        expect((*v)[i].is_string(), (*v)[i], at(join(p, v.key()), i), "a string");
        values.push_back((*v)[i].get<std::string>());
      }
      f.emplace_back(v.key(), std::move(values));
    }
    return f;
  }

  void row(json const& r, std::string const& path) const {
    expect(r.is_object(), r, path, "an object");
    string_at(r, path, "experiment");
    string_at(r, path, "variant");
    expect(need(r, path, "params").is_object(), r["params"], join(path, "params"), "an object");
    for (auto const* k : {"median_ms", "noise", "min_ms", "max_ms", "samples", "bytes", "flops", "gbps", "tflops",
                          "peer_median_ms", "ratio_to_peer", "ratio_to_ceiling"})
      optional(r, path, k, "number");
    for (auto const* k : {"verified", "peer", "skipped", "error", "repro"}) optional(r, path, k, "string");
    for (auto const* k : {"verification", "predicted", "extra"}) optional(r, path, k, "object");
    optional(r, path, "cold", "boolean");
    optional(r, path, "throttled", "boolean");
  }

  experiment_entry experiment(json const& e, std::string const& path, bool declared) const {
    expect(e.is_object(), e, path, "an object");
    experiment_entry x;
    x.id = string_at(e, path, "id");
    x.description = string_at(e, path, "description", false);
    x.seed_ref = string_at(e, path, "seed_ref", false);
    x.status = string_at(e, path, "status", false);
    optional(e, path, "points", "number");
    if (auto it = e.find("points"); it != e.end() && it->is_number()) x.points = it->get<long>();
    if (!declared) return x;
    x.declared = true;
    declared_axes(e, path, x);
    declared_metrics(e, path, x);
    declared_headline(e, path, x);
    auto const& seeds = need(e, path, "seed_figures");
    expect(seeds.is_array(), seeds, join(path, "seed_figures"), "an array");
    for (std::size_t i = 0; i < seeds.size(); ++i)
      x.seed_figures.push_back(seed_figure(seeds[i], at(join(path, "seed_figures"), i)));
    declared_prose(e, path, x);
    auto const& plots = need(e, path, "plots");
    expect(plots.is_array(), plots, join(path, "plots"), "an array");
    for (std::size_t i = 0; i < plots.size(); ++i) x.plots.push_back(plot(plots[i], at(join(path, "plots"), i)));
    if (auto it = e.find("tables"); it != e.end()) {
      std::string tp = join(path, "tables");
      expect(it->is_array(), *it, tp, "an array");
      for (std::size_t i = 0; i < it->size(); ++i) x.tables.push_back(table((*it)[i], at(tp, i)));
    }
    if (auto it = e.find("paired_in_blocks"); it != e.end()) {
      expect(it->is_boolean(), *it, join(path, "paired_in_blocks"), "a boolean");
      x.paired_in_blocks = it->get<bool>();
    }
    return x;
  }

  void declared_axes(json const& e, std::string const& path, experiment_entry& x) const {
    auto const& axes = need(e, path, "axes");
    expect(axes.is_array(), axes, join(path, "axes"), "an array");
    for (std::size_t i = 0; i < axes.size(); ++i) {
      std::string p = at(join(path, "axes"), i);
      expect(axes[i].is_object(), axes[i], p, "an object");
      x.axes.push_back({string_at(axes[i], p, "name"), string_at(axes[i], p, "kind", false),
                        string_at(axes[i], p, "unit"), string_at(axes[i], p, "description"),
                        bool_at(axes[i], p, "log_scale")});
    }
  }

  void declared_metrics(json const& e, std::string const& path, experiment_entry& x) const {
    auto const& metrics = need(e, path, "metrics");
    expect(metrics.is_array(), metrics, join(path, "metrics"), "an array");
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      std::string p = at(join(path, "metrics"), i);
      expect(metrics[i].is_object(), metrics[i], p, "an object");
      x.metrics.push_back({string_at(metrics[i], p, "name"), string_at(metrics[i], p, "unit"),
                           string_at(metrics[i], p, "description", false)});
    }
  }

  void declared_headline(json const& e, std::string const& path, experiment_entry& x) const {
    auto const& h = need(e, path, "headline");
    std::string hp = join(path, "headline");
    expect(h.is_object(), h, hp, "an object");
    x.headline.question = string_at(h, hp, "question");
    x.headline.where = filter(h, hp, "where");
    x.headline.best_by = string_at(h, hp, "best_by");
    x.headline.higher_is_better = bool_at(h, hp, "higher_is_better");
    x.headline.compare = string_at(h, hp, "compare", false);
    x.headline.baseline = filter(h, hp, "baseline");
  }

  seed_figure_decl seed_figure(json const& s, std::string const& p) const {
    expect(s.is_object(), s, p, "an object");
    seed_figure_decl f;
    f.label = string_at(s, p, "label");
    auto const& v = need(s, p, "value");
    expect(v.is_number(), v, join(p, "value"), "a number");
    f.value = v.get<double>();
    f.unit = string_at(s, p, "unit");
    f.gpu = string_at(s, p, "gpu");
    f.section = string_at(s, p, "section");
    if (auto it = s.find("at"); it != s.end()) {
      expect(it->is_object(), *it, join(p, "at"), "an object");
      for (auto a = it->begin(); a != it->end(); ++a) {
        expect(a->is_string(), *a, join(join(p, "at"), a.key()), "a string");
        f.at.emplace_back(a.key(), a->get<std::string>());
      }
    }
    return f;
  }

  void declared_prose(json const& e, std::string const& path, experiment_entry& x) const {
    auto const& prose = need(e, path, "prose");
    std::string pp = join(path, "prose");
    expect(prose.is_object(), prose, pp, "an object");
    x.shows = string_at(prose, pp, "shows");
    x.look_for = string_at(prose, pp, "look_for", false);
    x.seed_note = string_at(prose, pp, "seed", false);
  }

  plot_decl plot(json const& q, std::string const& p) const {
    expect(q.is_object(), q, p, "an object");
    plot_decl d;
    d.file = string_at(q, p, "file");
    if (d.file.empty() || d.file.find('/') != std::string::npos || d.file.find("..") != std::string::npos)
      fail(join(p, "file"), "expected a plain PNG file name");
    d.title = string_at(q, p, "title");
    d.kind = string_at(q, p, "kind");
    if (d.kind != "line" && d.kind != "bars" && d.kind != "timeline" && d.kind != "roofline" && d.kind != "heatmap")
      fail(join(p, "kind"), "expected \"line\", \"bars\", \"timeline\", \"roofline\" or \"heatmap\"");
    d.x = string_at(q, p, "x");
    d.y = string_at(q, p, "y");
    d.panels = string_at(q, p, "panels", false);
    if (auto it = q.find("series"); it != q.end()) {
      expect(it->is_array(), *it, join(p, "series"), "an array");
      for (std::size_t k = 0; k < it->size(); ++k) {
        expect((*it)[k].is_string(), (*it)[k], at(join(p, "series"), k), "a string");
        d.series.push_back((*it)[k].get<std::string>());
      }
    }
    return d;
  }

  table_decl table(json const& t, std::string const& path) const {
    expect(t.is_object(), t, path, "an object");
    table_decl d;
    d.title = string_at(t, path, "title");
    d.note = string_at(t, path, "note", false);
    auto const& cols = need(t, path, "columns");
    expect(cols.is_array(), cols, join(path, "columns"), "an array");
    for (std::size_t i = 0; i < cols.size(); ++i) {
      std::string p = at(join(path, "columns"), i);
      expect(cols[i].is_object(), cols[i], p, "an object");
      d.columns.emplace_back(string_at(cols[i], p, "label"), string_at(cols[i], p, "unit", false));
    }
    auto const& rows = need(t, path, "rows");
    expect(rows.is_array(), rows, join(path, "rows"), "an array");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::string p = at(join(path, "rows"), i);
      expect(rows[i].is_object(), rows[i], p, "an object");
      std::vector<table_cell_decl> cells;
      auto const& cs = need(rows[i], p, "cells");
      expect(cs.is_array() && cs.size() == d.columns.size(), cs, join(p, "cells"), "an array of one cell a column");
      for (std::size_t k = 0; k < cs.size(); ++k) {
        std::string cp = at(join(p, "cells"), k);
        json const& c = cs[k];
        expect(c.is_object(), c, cp, "an object");
        table_cell_decl cell;
        cell.experiment = string_at(c, cp, "experiment", false);
        cell.where = filter(c, cp, "where");
        cell.metric = string_at(c, cp, "metric", false);
        cell.pick = string_at(c, cp, "pick", false);
        cell.device = string_at(c, cp, "device", false);
        cell.source = string_at(c, cp, "source", false);
        optional(c, cp, "value", "number");
        if (auto v = c.find("value"); v != c.end() && v->is_number()) cell.value = v->get<double>();
        cells.push_back(std::move(cell));
      }
      d.rows.emplace_back(string_at(rows[i], p, "label"), std::move(cells));
    }
    return d;
  }

 private:
  std::string name_;
};

/// Value text for matching a filter: strings as they are, numbers as plain numbers.
bool value_is(json const& v, std::string const& want) {
  if (v.is_string()) return v.get<std::string>() == want;
  if (!v.is_number()) return false;
  char* end = nullptr;
  double w = std::strtod(want.c_str(), &end);
  return end && *end == '\0' && !want.empty() && std::fabs(v.get<double>() - w) <= 1e-9 * std::max(1.0, std::fabs(w));
}

json const* field(json const& row, std::string const& axis) {
  if (axis == "variant") return row.contains("variant") ? &row["variant"] : nullptr;
  auto const& p = row["params"];
  auto it = p.find(axis);
  return it == p.end() ? nullptr : &*it;
}

}  // namespace

axis_decl const* experiment_entry::axis(std::string const& name) const {
  for (auto const& a : axes)
    if (a.name == name) return &a;
  return nullptr;
}

metric_decl const* experiment_entry::metric(std::string const& name) const {
  for (auto const& m : metrics)
    if (m.name == name) return &m;
  return nullptr;
}

experiment_entry const* run_record::find(std::string const& id) const {
  for (auto const& e : experiments)
    if (e.id == id) return &e;
  return nullptr;
}

run_record check_record(json doc, std::string const& name) {
  checker c(name);
  run_record rec;
  c.expect(doc.is_object(), doc, "", "a JSON object (a run record)");
  // rows first: a document whose rows are not a list is not a record of any version.
  auto const& rows = c.need(doc, "", "rows");
  c.expect(rows.is_array(), rows, "rows", "an array");
  auto const& fv = c.need(doc, "", "format_version");
  c.expect(fv.is_number_integer(), fv, "format_version", "an integer");
  rec.format_version = fv.get<int>();
  if (rec.format_version != 1 && rec.format_version != 2)
    c.fail("format_version", "expected 1 or 2, found " + std::to_string(rec.format_version));
  for (auto const* k : {"device", "ceilings", "timing", "memlab", "build", "image"}) c.optional(doc, "", k, "object");
  for (auto const* k : {"command_line", "started", "finished", "aborted"}) c.optional(doc, "", k, "string");
  for (std::size_t i = 0; i < rows.size(); ++i) c.row(rows[i], checker::at("rows", i));
  bool const declared = rec.format_version >= 2;
  auto it = doc.find("experiments");
  if (it == doc.end()) {
    if (declared) c.fail("", "missing key 'experiments'");
  } else {
    c.expect(it->is_array(), *it, "experiments", "an array");
    for (std::size_t i = 0; i < it->size(); ++i)
      rec.experiments.push_back(c.experiment((*it)[i], checker::at("experiments", i), declared));
  }
  rec.doc = std::move(doc);
  for (auto const& r : rec.doc["rows"]) rec.rows.push_back(&r);
  return rec;
}

run_record read_record(std::string const& path) {
  std::string const name = std::filesystem::path(path).filename().string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw record_error(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw record_error(path + ": not valid JSON");
  run_record rec = check_record(std::move(j), path);
  rec.path = path;
  return rec;
}

std::optional<double> metric_value(json const& row, std::string const& metric) {
  auto dot = metric.find('.');
  if (dot == std::string::npos) return detail::num(row, metric.c_str());
  return detail::num(detail::obj(row, metric.substr(0, dot).c_str()), metric.substr(dot + 1).c_str());
}

bool matches(json const& row, row_filter const& f, std::vector<json const*> const& rows) {
  for (auto const& [axis, values] : f) {
    json const* v = field(row, axis);
    if (!v) return false;
    bool any = false, negated_only = true;
    for (auto const& want : values) {
      if (!want.empty() && want[0] == '!') {
        if (value_is(*v, want.substr(1))) return false;
        continue;
      }
      negated_only = false;
      if (want == "max" || want == "min") {
        // The extreme among the experiment's verified rows, so a failed point does not move it
        // (rows with no timing of their own, such as a swept staircase, count when verified).
        std::optional<double> ext;
        for (auto const* r : rows) {
          json const* q = field(*r, axis);
          bool const verified = detail::state_of(*r) == detail::row_state::ok || detail::verified_untimed(*r);
          if (!q || !q->is_number() || !verified) continue;
          double d = q->get<double>();
          if (!ext || (want == "max" ? d > *ext : d < *ext)) ext = d;
        }
        any |= ext && v->is_number() && v->get<double>() == *ext;
      } else {
        any |= value_is(*v, want);
      }
    }
    if (!any && !negated_only) return false;
  }
  return true;
}

json const* headline_row(experiment_entry const& e, std::vector<json const*> const& rows) {
  auto const& h = e.headline;
  if (h.question.empty()) return nullptr;
  json const* best = nullptr;
  std::optional<double> best_v;
  for (auto const* r : rows) {
    if (detail::state_of(*r) != detail::row_state::ok || !matches(*r, h.where, rows)) continue;
    auto v = metric_value(*r, h.best_by);
    if (!v) continue;
    if (!best || (h.higher_is_better ? *v > *best_v : *v < *best_v)) best = r, best_v = v;
  }
  return best;
}

json const* baseline_row(experiment_entry const& e, json const& best, std::vector<json const*> const& rows) {
  auto const& base = e.headline.baseline;
  for (auto const* r : rows) {
    if (r == &best || detail::state_of(*r) != detail::row_state::ok || !matches(*r, base, rows)) continue;
    // Every axis the baseline does not name keeps the best row's value.
    bool same = true;
    auto const& p = best["params"];
    for (auto it = p.begin(); it != p.end() && same; ++it) {
      bool named = false;
      for (auto const& [a, v] : base) named |= a == it.key();
      if (!named) same = (*r)["params"].contains(it.key()) && (*r)["params"][it.key()] == *it;
    }
    bool variant_named = false;
    for (auto const& [a, v] : base) variant_named |= a == "variant";
    if (same && (variant_named || (*r)["variant"] == best["variant"])) return r;
  }
  return nullptr;
}

}  // namespace memlab::report
