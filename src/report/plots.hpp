#pragma once
// Drawing the report's PNGs with python3 + matplotlib (report/plots.py). The script reads
// the plots each experiment declares from the record itself; nothing is planned here.
#include <map>
#include <string>
#include <vector>


namespace memlab::report::detail {

/// The first interpreter that imports matplotlib: $MEMLAB_PYTHON, python3, /usr/bin/python3; "" if none.
/// `only`, when not empty, is the one interpreter tried.
std::string find_python_with_matplotlib(std::string const& only = "");
/// plots.py: $MEMLAB_REPORT_SCRIPTS, the source tree's report/, the installed one; "" if none.
std::string find_plot_script();

struct plot_outcome {
  std::map<std::string, bool> drawn;  ///< file -> written
  std::string problem;                ///< "" or why nothing (or not everything) was drawn
  std::string log_path;               ///< the script's output, relative to the report folder
};

/// Draws the record's declared plots into out_dir/plots/; `files` are those the report
/// expects (a missing one is reported). Never throws.
plot_outcome draw_plots(std::string const& record_path, std::string const& out_dir,
                        std::vector<std::string> const& files, std::string const& python = "");

inline constexpr char const* install_matplotlib_hint =
    "sudo apt-get install python3-matplotlib (or: python3 -m pip install matplotlib)";

}  // namespace memlab::report::detail
