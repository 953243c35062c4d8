#include "report/record_view.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace memlab::report::detail {

std::optional<double> num(json const& j, char const* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string str(json const& j, char const* key, std::string const& fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

json const& obj(json const& j, char const* key) {
  static json const empty = json::object();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return empty;
  return *it;
}

json const& arr(json const& j, char const* key) {
  static json const empty = json::array();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  if (it == j.end() || !it->is_array()) return empty;
  return *it;
}

std::string fmt(double v) {
  if (!std::isfinite(v)) return "—";
  char buf[64];
  double a = std::fabs(v);
  if (a == 0.0)
    return "0";
  else if (a >= 1e7 || a < 1e-4)
    std::snprintf(buf, sizeof buf, "%.3g", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 10)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  // "50.0" -> "50", "2.50" -> "2.5": trailing zeros only suggest precision we do not have.
  std::string s = buf;
  if (s.find('.') != std::string::npos && s.find('e') == std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

std::string fmt(std::optional<double> v, std::string const& none) { return v ? fmt(*v) : none; }

std::string fmt_bytes(double bytes) {
  static char const* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  double v = bytes;
  while (std::fabs(v) >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return fmt(v) + " " + units[u];
}

namespace {
bool is_size_key(std::string const& key) {
  std::string k;
  for (char c : key) k += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return k.find("bytes") != std::string::npos || k == "size" || k == "region" ||
         k.find("size_b") != std::string::npos;
}
}  // namespace

std::string value_text(json const& v, std::string const& key) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "null";
  if (v.is_number_integer() || v.is_number_unsigned()) {
    double d = v.get<double>();
    if (!key.empty() && is_size_key(key) && std::fabs(d) >= 1024) return fmt_bytes(d);
    return v.dump();
  }
  if (v.is_number()) {
    double d = v.get<double>();
    if (!key.empty() && is_size_key(key) && std::fabs(d) >= 1024) return fmt_bytes(d);
    return fmt(d);
  }
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

std::string params_text(json const& params) {
  if (!params.is_object() || params.empty()) return "—";
  std::string s;
  for (auto it = params.begin(); it != params.end(); ++it) {
    if (!s.empty()) s += ", ";
    s += it.key() + "=" + value_text(it.value(), it.key());
  }
  return s;
}

std::string row_key(json const& row) {
  json p = obj(row, "params");  // nlohmann's default object keeps keys sorted
  return str(row, "experiment", "?") + "\x1f" + str(row, "variant", "?") + "\x1f" + p.dump();
}

std::string cell(std::string s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n' || c == '\r')
      o += ' ';
    else
      o += c;
  }
  return o;
}

std::string anchor(std::string const& heading) {
  std::string a;
  for (unsigned char c : heading) {
    if (std::isalnum(c) || c == '-' || c == '_')
      a += static_cast<char>(std::tolower(c));
    else if (c == ' ')
      a += '-';
    else if (c >= 0x80)
      a += static_cast<char>(c);  // GitHub keeps non-ASCII letters
  }
  return a;
}

row_state state_of(json const& row) {
  if (!str(row, "skipped").empty()) return row_state::skipped;
  if (!str(row, "error").empty()) return row_state::error;
  std::string v = str(row, "verified");
  if (v == "failed") return row_state::failed;
  if (!num(row, "median_ms")) return row_state::no_timing;
  if (v == "passed") return row_state::ok;
  return row_state::not_verified;
}

bool verified_untimed(json const& row) {
  return state_of(row) == row_state::no_timing && str(row, "verified") == "passed";
}

}  // namespace memlab::report::detail
