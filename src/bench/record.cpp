#include "bench/record.hpp"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "memlab/error.hpp"
#include "memlab/version.hpp"

namespace memlab::bench {

nlohmann::json to_json(device_info const& d) {
  return {{"index", d.index},
          {"name", d.name},
          {"cc", std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)},
          {"sm_count", d.sm_count},
          {"warp_size", d.warp_size},
          {"global_mem_bytes", d.global_mem_bytes},
          {"l2_bytes", d.l2_bytes},
          {"persisting_l2_max_bytes", d.persisting_l2_max_bytes},
          {"smem_per_sm_bytes", d.smem_per_sm_bytes},
          {"smem_per_block_bytes", d.smem_per_block_bytes},
          {"smem_per_block_optin_bytes", d.smem_per_block_optin_bytes},
          {"regs_per_sm", d.regs_per_sm},
          {"regs_per_block", d.regs_per_block},
          {"max_threads_per_sm", d.max_threads_per_sm},
          {"max_threads_per_block", d.max_threads_per_block},
          {"async_engine_count", d.async_engine_count},
          {"can_map_host_memory", d.can_map_host_memory},
          {"unified_addressing", d.unified_addressing},
          {"integrated", d.integrated},
          {"concurrent_managed_access", d.concurrent_managed_access},
          {"sm_clock_mhz", d.sm_clock_khz / 1000.0},
          {"mem_clock_mhz", d.mem_clock_khz / 1000.0},
          {"mem_bus_width_bits", d.mem_bus_width_bits},
          {"dram_peak_gbps", d.dram_peak_gbps()},
          {"pci_bus_id", [&] {
             char buf[32];
             std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", d.pci_domain, d.pci_bus, d.pci_device);
             return std::string(buf);
           }()}};
}

nlohmann::json build_json() {
  return {{"cuda_architectures", MEMLAB_CUDA_ARCHITECTURES}, {"cuda_compiler", MEMLAB_CUDA_COMPILER}};
}

nlohmann::json timing_policy_json(timing_options const& t, bool quick, std::uint64_t seed) {
  nlohmann::json j = t;
  j.update({{"quick", quick},
            {"seed", seed},
            {"stop_rule", stop_rule_text},
            {"noise_estimator",
             "max(sqrt(2) x 95% bootstrap half-width of the median, max - min of 3 chunk medians) / median"},
            {"batch_below_ms", batch_below_ms},
            {"batch_target_ms", batch_target_ms},
            {"paired_blocks", {{"above_ms", paired_blocks_above_ms},
                               {"settle_ms", paired_block_settle_ms},
                               {"kept_ms", paired_block_ms},
                               {"rounds", paired_block_rounds},
                               {"min_launches", paired_block_min_launches}}}});
  return j;
}

std::string utc_now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

nlohmann::json run_record::to_json() const {
  nlohmann::json j = meta;
  j["memlab"] = {{"version", MEMLAB_VERSION}, {"git_revision", MEMLAB_GIT_REVISION}};
  j["rows"] = nlohmann::json::array();
  for (auto const& r : rows) j["rows"].push_back(bench::to_json(r));
  return j;
}

void run_record::flush() const {
  if (path_.empty()) return;
  namespace fs = std::filesystem;
  fs::path const target(path_);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
  fs::path const tmp = target.string() + ".tmp";
  {
    std::ofstream out(tmp);
    if (!out) throw error("cannot write the run record " + tmp.string());
    out << to_json().dump(1) << '\n';
    if (!out) throw error("cannot write the run record " + tmp.string());
  }
  fs::rename(tmp, target, ec);
  if (ec) throw error("cannot rename " + tmp.string() + " to " + target.string() + ": " + ec.message());
}

run_record run_record::load(std::string const& path) {
  std::ifstream in(path);
  if (!in) throw error("cannot read run record '" + path + "'");
  nlohmann::json j;
  try {
    in >> j;
  } catch (nlohmann::json::exception const& e) {
    throw error("'" + path + "' is not a memlab run record: " + e.what());
  }
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array())
    throw error("'" + path + "' is not a memlab run record (no rows array)");
  run_record rec(path);
  for (auto const& r : j["rows"]) rec.rows.push_back(row_from_json(r));
  j.erase("rows");
  rec.meta = j;
  return rec;
}

// ------------------------------------------------------------------ views

namespace {

std::string fmt(std::optional<double> v, char const* spec) {
  if (!v) return "";
  char buf[64];
  std::snprintf(buf, sizeof buf, spec, *v);
  return buf;
}

std::string params_text(nlohmann::json const& p) {
  std::string out;
  for (auto it = p.begin(); it != p.end(); ++it) {
    out += (out.empty() ? "" : " ") + it.key() + "=" + (it->is_string() ? it->get<std::string>() : it->dump());
  }
  return out;
}

std::string csv_escape(std::string const& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

namespace {

nlohmann::json filter_json(row_filter const& f) {
  auto j = nlohmann::json::object();
  for (auto const& [axis, values] : f) j[axis] = values;
  return j;
}

nlohmann::json value_json(param_value const& v) {
  if (auto const* i = std::get_if<std::int64_t>(&v)) return *i;
  if (auto const* d = std::get_if<double>(&v)) return *d;
  return std::get<std::string>(v);
}

nlohmann::json axes_json(experiment const& e) {
  using nlohmann::json;
  json axes = json::array();
  for (auto const& a : e.axes) {
    json values = json::array();
    for (auto const& v : a.values) values.push_back(value_json(v));
    axes.push_back({{"name", a.name},
                    {"kind", a.kind == axis_kind::integer ? "integer" : a.kind == axis_kind::floating ? "float" : "string"},
                    {"unit", a.unit},
                    {"description", a.description},
                    {"log_scale", a.log_scale},
                    {"values", values}});
  }
  return axes;
}

nlohmann::json seed_figures_json(experiment const& e) {
  using nlohmann::json;
  json seeds = json::array();
  for (auto const& f : e.seed_figures) {
    json at = json::object();
    for (auto const& [k, v] : f.at) at[k] = v;
    seeds.push_back({{"label", f.label}, {"value", f.value}, {"unit", f.unit}, {"gpu", f.gpu}, {"section", f.section},
                     {"at", at}});
  }
  return seeds;
}

nlohmann::json plots_json(experiment const& e) {
  using nlohmann::json;
  json plots = json::array();
  for (auto const& p : e.plots) {
    json refs = json::array();
    for (auto const& r : p.refs) refs.push_back({{"kind", r.kind}, {"label", r.label}, {"value", r.value}});
    plots.push_back({{"file", p.file}, {"title", p.title}, {"kind", p.kind}, {"x", p.x}, {"y", p.y},
                     {"log_y", p.log_y}, {"series", p.series}, {"panels", p.panels}, {"where", filter_json(p.where)},
                     {"refs", refs}, {"model", p.model}});
  }
  return plots;
}

/// A summary table's cell: another experiment's row, a device property, or a sourced value.
nlohmann::json table_cell_json(table_cell const& c) {
  using nlohmann::json;
  json j = json::object();
  if (!c.experiment.empty())
    j = {{"experiment", c.experiment}, {"where", filter_json(c.where)}, {"metric", c.metric}, {"pick", c.pick}};
  else if (!c.device.empty())
    j = {{"device", c.device}};
  else if (c.value)
    j = {{"value", *c.value}, {"source", c.source}};
  return j;
}

nlohmann::json tables_json(experiment const& e) {
  using nlohmann::json;
  json tables = json::array();
  for (auto const& t : e.tables) {
    json columns = json::array(), rows = json::array();
    for (auto const& [label, unit] : t.columns) columns.push_back({{"label", label}, {"unit", unit}});
    for (auto const& [label, cells] : t.rows) {
      json cs = json::array();
      for (auto const& c : cells) cs.push_back(table_cell_json(c));
      rows.push_back({{"label", label}, {"cells", cs}});
    }
    tables.push_back({{"title", t.title}, {"columns", columns}, {"rows", rows}, {"note", t.note}});
  }
  return tables;
}

}  // namespace

nlohmann::json declaration_json(experiment const& e) {
  using nlohmann::json;
  json metrics = json::array();
  for (auto const& m : e.metrics) metrics.push_back({{"name", m.name}, {"unit", m.unit}, {"description", m.description}});
  auto const& h = e.headline;
  json headline = {{"question", h.question},     {"where", filter_json(h.where)}, {"best_by", h.best_by},
                   {"higher_is_better", h.higher_is_better}, {"compare", h.compare},
                   {"baseline", filter_json(h.baseline)}};
  json out = {{"id", e.id},
          {"description", e.description},
          {"seed_ref", e.seed_ref},
          {"axes", axes_json(e)},
          {"metrics", metrics},
          {"headline", headline},
          {"seed_figures", seed_figures_json(e)},
          {"prose", {{"shows", e.prose.shows}, {"look_for", e.prose.look_for}, {"seed", e.prose.seed}}},
          {"plots", plots_json(e)},
          {"ceiling", e.ceiling == ceiling_relation::none    ? "none"
                      : e.ceiling == ceiling_relation::ratio ? "ratio"
                                                             : "peer"}};
  // Only when declared: the other experiments' declarations stay as they were.
  if (!e.tables.empty()) out["tables"] = tables_json(e);
  if (e.paired_in_blocks) out["paired_in_blocks"] = true;
  return out;
}

std::string to_csv(run_record const& rec) {
  std::ostringstream os;
  os << "experiment,variant,params,median_ms,noise,samples,bytes,flops,gbps,tflops,peer,ratio_to_peer,"
        "ratio_to_ceiling,verified,error_metric,error,skipped,failure,timing_method,batch,throttled\n";
  for (auto const& r : rec.rows) {
    os << csv_escape(r.experiment) << ',' << csv_escape(r.variant) << ',' << csv_escape(params_text(r.params)) << ','
       << fmt(r.median_ms, "%.6g") << ',' << fmt(r.noise, "%.4g") << ',' << r.samples << ','
       << fmt(r.bytes, "%.0f") << ',' << fmt(r.flops, "%.0f") << ',' << fmt(r.gbps, "%.6g") << ','
       << fmt(r.tflops, "%.6g") << ',' << csv_escape(r.peer.value_or("")) << ',' << fmt(r.ratio_to_peer, "%.4g") << ','
       << fmt(r.ratio_to_ceiling, "%.4g") << ',' << to_string(r.check.status) << ',' << csv_escape(r.check.metric)
       << ',' << (r.check.error < 0 ? std::string() : fmt(r.check.error, "%.4g")) << ','
       << csv_escape(r.skipped.value_or("")) << ',' << csv_escape(r.error.value_or(r.check.status == verdict::failed ? r.check.detail : ""))
       << ',' << csv_escape(r.timing.is_object() ? r.timing.value("method", "") : "") << ','
       << (r.timing.is_object() ? std::to_string(r.timing.value("batch", 1)) : std::string()) << ','
       << (r.throttled ? (*r.throttled ? "true" : "false") : "") << '\n';
  }
  return os.str();
}

}  // namespace memlab::bench
