#pragma once
// What the report knows about each experiment: a few sentences on the technique,
// the figure the seed notes quote (if any), and the plots drawn for it.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace memlab::report::detail {

struct seed_value {
  std::string label;  ///< e.g. "tile 8", "simpleMultiply"
  double value = 0;
  std::string match;  ///< how plots find the matching row: a param value ("8") or variant substrings ("simple|strided")
};

struct technique {
  std::string prose;      ///< two to four sentences, ours
  std::string seed_note;  ///< Markdown: the seed's quoted figure or table ("" when none)
  std::string seed_device;
  std::string seed_unit;  ///< "ms" or "GB/s"
  std::vector<seed_value> seed_values;
};

/// The entry for an experiment id: exact id first, then its family ("reduce" for "reduce.ladder"); null if unknown.
technique const* find_technique(std::string const& id);

struct plot_spec {
  std::string file;                      ///< PNG name inside the plots folder
  std::string title;                     ///< alt text / caption
  std::string kind;                      ///< sweep | seed_bars | ladder | timeline | roofline
  std::vector<std::string> experiments;  ///< experiments whose section links it ("" = the summary)
  nlohmann::json hints = nlohmann::json::object();  ///< passed to plots.py
};

/// The plots this record calls for (only those with rows to draw).
std::vector<plot_spec> plan_plots(nlohmann::json const& record);

}  // namespace memlab::report::detail
