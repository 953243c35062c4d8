#include "report/plots.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

namespace fs = std::filesystem;

namespace memlab::report::detail {

namespace {

std::string shell_quote(std::string const& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

bool imports_matplotlib(std::string const& python) {
  std::string cmd = shell_quote(python) + " -c 'import matplotlib' >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace

std::string find_python_with_matplotlib(std::string const& only) {
  if (!only.empty()) return imports_matplotlib(only) ? only : "";
  std::vector<std::string> candidates;
  if (char const* p = std::getenv("MEMLAB_PYTHON"); p && *p) candidates.emplace_back(p);
  candidates.emplace_back("python3");
  candidates.emplace_back("/usr/bin/python3");
  for (auto const& c : candidates)
    if (imports_matplotlib(c)) return c;
  return "";
}

std::string find_plot_script() {
  std::vector<std::string> dirs;
  if (char const* p = std::getenv("MEMLAB_REPORT_SCRIPTS"); p && *p) dirs.emplace_back(p);
#ifdef MEMLAB_SOURCE_REPORT_DIR
  dirs.emplace_back(MEMLAB_SOURCE_REPORT_DIR);
#endif
#ifdef MEMLAB_INSTALL_REPORT_DIR
  dirs.emplace_back(MEMLAB_INSTALL_REPORT_DIR);
#endif
  for (auto const& d : dirs) {
    std::error_code ec;
    fs::path p = fs::path(d) / "plots.py";
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

plot_outcome draw_plots(std::string const& record_path, std::string const& out_dir,
                        std::vector<std::string> const& files, std::string const& python_choice) {
  plot_outcome o;
  for (auto const& f : files) o.drawn[f] = false;
  if (files.empty()) return o;
  try {
    std::string python = find_python_with_matplotlib(python_choice);
    if (python.empty()) {
      o.problem = python_choice.empty()
                      ? "no Python with matplotlib found (tried $MEMLAB_PYTHON, python3, /usr/bin/python3)"
                      : "no matplotlib in " + python_choice;
      return o;
    }
    std::string script = find_plot_script();
    if (script.empty()) {
      o.problem = "report/plots.py not found (set MEMLAB_REPORT_SCRIPTS to its folder)";
      return o;
    }
    fs::path dir = fs::path(out_dir) / "plots";
    fs::create_directories(dir);
    for (auto const& f : files) {
      std::error_code ec;
      fs::remove(dir / f, ec);  // a stale PNG must not pass for a fresh one
    }
    fs::path log = dir / "plots.log";
    o.log_path = "plots/plots.log";
    std::string cmd = shell_quote(python) + " " + shell_quote(script) + " " +
                      shell_quote(fs::absolute(record_path).string()) + " " + shell_quote(fs::absolute(dir).string()) +
                      " >" + shell_quote(log.string()) + " 2>&1";
    int rc = std::system(cmd.c_str());
    int missing = 0;
    for (auto const& f : files) {
      std::error_code ec;
      bool ok = fs::is_regular_file(dir / f, ec) && fs::file_size(dir / f, ec) > 0;
      o.drawn[f] = ok;
      if (!ok) ++missing;
    }
    if (rc != 0 || missing > 0)
      o.problem = std::to_string(missing) + " of " + std::to_string(files.size()) +
                  " plots were not drawn (see " + o.log_path + ")";
  } catch (std::exception const& e) {
    o.problem = std::string("plotting failed: ") + e.what();
  }
  return o;
}

}  // namespace memlab::report::detail
