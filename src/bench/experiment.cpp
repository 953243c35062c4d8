#include "bench/experiment.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "memlab/error.hpp"

namespace memlab::bench {

std::string to_string(param_value const& v) {
  if (auto const* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (auto const* d = std::get_if<double>(&v)) {
    std::ostringstream os;
    os << *d;
    return os.str();
  }
  return std::get<std::string>(v);
}

std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t step) {
  std::vector<std::int64_t> out;
  if (step <= 0) return out;
  for (std::int64_t v = lo; v <= hi; v += step) out.push_back(v);
  return out;
}

axis int_axis(std::string name, std::vector<std::int64_t> values, std::vector<std::int64_t> quick) {
  axis a;
  a.name = std::move(name);
  a.kind = axis_kind::integer;
  for (auto v : values) a.values.emplace_back(v);
  for (auto v : quick) a.quick_values.emplace_back(v);
  return a;
}

axis pow2_axis(std::string name, int lo, int hi, std::optional<int> qlo, std::optional<int> qhi) {
  std::vector<std::int64_t> full, quick;
  for (int e = lo; e <= hi; ++e) full.push_back(std::int64_t{1} << e);
  if (qlo || qhi)
    for (int e = qlo.value_or(lo); e <= qhi.value_or(hi); ++e) quick.push_back(std::int64_t{1} << e);
  return int_axis(std::move(name), full, quick);
}

axis float_axis(std::string name, std::vector<double> values, std::vector<double> quick) {
  axis a;
  a.name = std::move(name);
  a.kind = axis_kind::floating;
  for (auto v : values) a.values.emplace_back(v);
  for (auto v : quick) a.quick_values.emplace_back(v);
  return a;
}

axis string_axis(std::string name, std::vector<std::string> values, std::vector<std::string> quick) {
  axis a;
  a.name = std::move(name);
  a.kind = axis_kind::string;
  for (auto& v : values) a.values.emplace_back(v);
  for (auto& v : quick) a.quick_values.emplace_back(v);
  return a;
}

axis variant_axis(std::vector<std::string> values, std::vector<std::string> quick) {
  return string_axis(variant_axis_name, std::move(values), std::move(quick));
}

headline_spec best_row(std::string question, row_filter where, std::string by, std::string compare,
                       row_filter baseline) {
  headline_spec h;
  h.question = std::move(question);
  h.where = std::move(where);
  // Times, cycles and nanoseconds are better low; bandwidths, rates and ratios high.
  auto ends = [&](std::string const& t) { return by.size() >= t.size() && by.compare(by.size() - t.size(), t.size(), t) == 0; };
  h.higher_is_better = !(ends("_ms") || by.find("cycles") != std::string::npos || by.find("ns_per") != std::string::npos);
  h.best_by = std::move(by);
  h.compare = std::move(compare);
  h.baseline = std::move(baseline);
  return h;
}

plot_spec line_plot(std::string file, std::string title, std::string x, std::string y, std::vector<std::string> series) {
  plot_spec p;
  p.file = std::move(file);
  p.title = std::move(title);
  p.x = std::move(x);
  p.y = std::move(y);
  p.series = std::move(series);
  return p;
}

plot_spec bar_plot(std::string file, std::string title, std::string x, std::string y, std::vector<std::string> series) {
  plot_spec p = line_plot(std::move(file), std::move(title), std::move(x), std::move(y), std::move(series));
  p.kind = "bars";
  return p;
}

void experiment::describe_axis(std::string const& name, std::string unit_, std::string description_, bool log) {
  for (auto& a : axes)
    if (a.name == name) {
      a.unit = std::move(unit_);
      a.description = std::move(description_);
      a.log_scale = log;
      return;
    }
  throw error("experiment '" + id + "' describes axis '" + name + "', which it does not have");
}

namespace {

/// A declaration that names an axis or metric the experiment lacks would draw an empty
/// plot or pick no headline; refuse it at registration, where the author sees it.
void check_declaration(experiment const& e) {
  auto has_axis = [&](std::string const& n) {
    for (auto const& a : e.axes)
      if (a.name == n) return true;
    return false;
  };
  auto has_metric = [&](std::string const& n) {
    if (n.rfind("extra.", 0) == 0 || n.rfind("predicted.", 0) == 0) return true;
    for (auto const& m : e.metrics)
      if (m.name == n) return true;
    return false;
  };
  auto where = "experiment '" + e.id + "': ";
  auto check_filter = [&](row_filter const& f, std::string const& what) {
    for (auto const& [a, v] : f)
      if (!has_axis(a)) throw error(where + what + " names axis '" + a + "', which it does not have");
  };
  for (auto const& m : e.metrics)
    if (m.unit.empty()) throw error(where + "metric '" + m.name + "' has no unit");
  if (!e.headline.question.empty()) {
    check_filter(e.headline.where, "headline");
    check_filter(e.headline.baseline, "headline baseline");
    if (!has_metric(e.headline.best_by)) throw error(where + "headline ranks by undeclared metric '" + e.headline.best_by + "'");
    if (e.headline.compare == "baseline" && e.headline.baseline.empty())
      throw error(where + "headline compares with a baseline but names none");
  }
  for (auto const& f : e.seed_figures)
    for (auto const& [a, v] : f.at)
      if (!has_axis(a)) throw error(where + "seed figure '" + f.label + "' names axis '" + a + "', which it does not have");
  for (auto const& t : e.tables)
    for (auto const& [label, cells] : t.rows) {
      if (cells.size() != t.columns.size())
        throw error(where + "table '" + t.title + "' row '" + label + "' has " + std::to_string(cells.size()) +
                    " cells for " + std::to_string(t.columns.size()) + " columns");
      for (auto const& c : cells) {
        int const sources = !c.experiment.empty() + !c.device.empty() + c.value.has_value();
        if (sources > 1) throw error(where + "table '" + t.title + "' row '" + label + "' has a cell with two sources");
        if (!c.experiment.empty() && c.metric.empty())
          throw error(where + "table '" + t.title + "' row '" + label + "' reads a row without naming a metric");
        if (!c.pick.empty() && c.pick != "max" && c.pick != "min")
          throw error(where + "table '" + t.title + "' row '" + label + "' picks '" + c.pick + "' (max or min)");
      }
    }
  for (auto const& p : e.plots) {
    if (p.kind != "line" && p.kind != "bars" && p.kind != "timeline" && p.kind != "roofline" && p.kind != "heatmap")
      throw error(where + "plot " + p.file + " has unknown kind '" + p.kind + "'");
    if (p.kind == "heatmap" && p.series.size() != 1)
      throw error(where + "heatmap " + p.file + " needs exactly one series axis (its rows)");
    if (p.kind != "roofline" && !has_axis(p.x))
      throw error(where + "plot " + p.file + " has x axis '" + p.x + "', which it does not have");
    if (!has_metric(p.y)) throw error(where + "plot " + p.file + " draws undeclared metric '" + p.y + "'");
    for (auto const& s : p.series)
      if (!has_axis(s)) throw error(where + "plot " + p.file + " has series axis '" + s + "', which it does not have");
    if (!p.panels.empty() && !has_axis(p.panels))
      throw error(where + "plot " + p.file + " has panel axis '" + p.panels + "', which it does not have");
    check_filter(p.where, "plot " + p.file);
  }
}

}  // namespace

registry& registry::instance() {
  static registry r;
  return r;
}

void registry::add(experiment e) {
  auto const dot = e.id.find('.');
  if (e.id.empty() || dot == std::string::npos || dot == 0 || dot + 1 == e.id.size())
    throw error("experiment id '" + e.id + "' is not of the form family.name");
  if (find(e.id) != nullptr) throw error("experiment id '" + e.id + "' is registered twice");
  if (!e.body) throw error("experiment '" + e.id + "' has no body");
  check_declaration(e);
  experiments_.push_back(std::move(e));
  // Keep `memlab list` and the run order stable regardless of static-init order;
  // `ceilings` first, since every bandwidth row is compared with it.
  std::stable_sort(experiments_.begin(), experiments_.end(), [](experiment const& a, experiment const& b) {
    bool const ca = a.family() == "ceilings", cb = b.family() == "ceilings";
    if (ca != cb) return ca;
    return a.id < b.id;
  });
}

experiment const* registry::find(std::string const& id) const {
  for (auto const& e : experiments_)
    if (e.id == id) return &e;
  return nullptr;
}

std::vector<experiment const*> registry::select(std::vector<std::string> const& names) const {
  std::vector<experiment const*> out;
  auto add = [&](experiment const* e) {
    if (std::find(out.begin(), out.end(), e) == out.end()) out.push_back(e);
  };
  if (names.empty()) {
    for (auto const& e : experiments_)
      if (e.default_suite) add(&e);
    return out;
  }
  for (auto const& name : names) {
    bool matched = false;
    for (auto const& e : experiments_) {
      if (e.id == name || e.family() == name) {
        add(&e);
        matched = true;
      }
    }
    if (!matched) throw usage_error("unknown experiment or family '" + name + "' (see `memlab list`)");
  }
  // Run in registry order whatever order the user typed.
  std::sort(out.begin(), out.end());
  return out;
}

registrar::registrar(experiment e) { registry::instance().add(std::move(e)); }

}  // namespace memlab::bench
