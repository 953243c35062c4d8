// The opt-in autotune cache of memlab::gemm_ex: the best measured plan per GPU, shape and
// layout, written by `MEMLAB_GEMM_AUTOTUNE_WRITE=1 memlab run gemm.shapes` and read only when
// the caller asks (gemm_params::autotune or MEMLAB_GEMM_AUTOTUNE=1). A corrupt file never
// stops a GEMM: it reads as an empty cache with a one-line warning.
#include <cstdio>
#include <exception>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>

#include "memlab/error.hpp"
#include "memlab/gemm.hpp"

namespace memlab {
namespace {
constexpr char const* kFormat = "memlab-gemm-autotune";
constexpr int kVersion = 1;

std::string env(char const* name) {
  char const* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

/// The cache's entries from a parsed document; the empty string on success, else the fault.
std::string read_entries(nlohmann::json const& doc, gemm_autotune_cache* out) {
  if (!doc.is_object()) return "not a JSON object";
  if (doc.value("format", std::string()) != kFormat) return std::string("\"format\" is not \"") + kFormat + "\"";
  if (!doc.contains("version") || !doc["version"].is_number_integer() || doc["version"].get<int>() != kVersion)
    return "\"version\" is not " + std::to_string(kVersion);
  if (!doc.contains("plans") || !doc["plans"].is_object()) return "\"plans\" is not an object";
  for (auto it = doc["plans"].begin(); it != doc["plans"].end(); ++it) {
    auto const& e = it.value();
    if (!e.is_object() || !e.contains("plan") || !e["plan"].is_string())
      return "plans['" + it.key() + "'] has no string \"plan\"";
    gemm_autotune_entry entry;
    entry.plan = e["plan"].get<std::string>();
    if (e.contains("us") && e["us"].is_number()) entry.us = e["us"].get<double>();
    try {
      (void)gemm_parse_plan(entry.plan);
    } catch (error const&) {
      return "plans['" + it.key() + "']: unknown plan '" + entry.plan + "'";
    }
    out->plans[it.key()] = entry;
  }
  return {};
}
}  // namespace

std::string gemm_autotune_path() {
  if (std::string const f = env("MEMLAB_GEMM_AUTOTUNE_FILE"); !f.empty()) return f;
  if (std::string const x = env("XDG_CACHE_HOME"); !x.empty()) return x + "/memlab/gemm-autotune.json";
  if (std::string const h = env("HOME"); !h.empty()) return h + "/.cache/memlab/gemm-autotune.json";
  return {};
}

std::string gemm_autotune_key(std::string const& gpu_name, gemm_shape const& s) {
  std::ostringstream k;
  k << gpu_name << "|" << s.m << "x" << s.n << "x" << s.k << "b" << s.batch << "|" << (s.trans_a ? "T" : "N")
    << (s.trans_b ? "T" : "N") << "|" << (s.aligned ? "a16" : "u");
  return k.str();
}

gemm_autotune_cache gemm_autotune_cache::load(std::string const& path, std::string* warning) {
  gemm_autotune_cache c;
  if (warning != nullptr) warning->clear();
  std::error_code ec;
  if (path.empty() || !std::filesystem::exists(path, ec)) return c;  // no cache yet: not a fault
  std::string fault;
  try {
    if (!std::filesystem::is_regular_file(path, ec)) {
      fault = "not a regular file";
    } else {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream text;
      if (in) text << in.rdbuf();
      if (!in) {
        fault = "cannot be read";
      } else {
        nlohmann::json const doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
        fault = doc.is_discarded() ? "not valid JSON" : read_entries(doc, &c);
      }
    }
  } catch (std::exception const& e) {  // an I/O or allocation failure: still only a warning
    fault = std::string("cannot be read (") + e.what() + ")";
  }
  if (!fault.empty()) {
    c.plans.clear();
    if (warning != nullptr) {
      *warning = "memlab: gemm autotune cache " + path + ": " + fault + "; ignored";
      for (char& ch : *warning)
        if (ch == '\n' || ch == '\r') ch = ' ';  // one line, whatever the file's keys hold
    }
  }
  return c;
}

void gemm_autotune_cache::save(std::string const& path) const {
  MEMLAB_EXPECTS(!path.empty(), "no autotune cache path (set MEMLAB_GEMM_AUTOTUNE_FILE, XDG_CACHE_HOME or HOME)");
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path const p(path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
  MEMLAB_EXPECTS(!ec, "cannot create the directory of " + path + ": " + ec.message());
  nlohmann::json doc{{"format", kFormat}, {"version", kVersion}, {"plans", nlohmann::json::object()}};
  for (auto const& [key, e] : plans) doc["plans"][key] = nlohmann::json{{"plan", e.plan}, {"us", e.us}};
  // A temporary file renamed over the old one: a reader never sees half a file.
  std::string const tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    MEMLAB_EXPECTS(static_cast<bool>(out), "cannot write " + tmp);
    out << doc.dump(1) << "\n";
    out.close();
    MEMLAB_EXPECTS(static_cast<bool>(out), "cannot write " + tmp);
  }
  fs::rename(tmp, p, ec);
  MEMLAB_EXPECTS(!ec, "cannot rename " + tmp + " to " + path + ": " + ec.message());
}

}  // namespace memlab
