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
