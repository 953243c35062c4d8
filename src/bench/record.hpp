#pragma once
// The run record: one JSON document per run (docs/RECORD.md), written atomically
// (temporary file, then rename) each time an experiment completes.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/experiment.hpp"
#include "bench/state.hpp"
#include "memlab/device.hpp"

namespace memlab::bench {

/// 2: experiments carry their declarations (axes with units, metrics, headline, seed
/// figures, prose, plots). 1: rows only; still read by report and compare.
inline constexpr int record_format_version = 2;

nlohmann::json to_json(device_info const& d);
/// An experiment's entry in the record's `experiments` (without `points` and `status`):
/// id, description, seed_ref and its declaration (docs/RECORD.md "Declarations").
nlohmann::json declaration_json(experiment const& e);

/// The record's `build`: the architectures this binary was compiled for and the nvcc version.
nlohmann::json build_json();
/// timing_options as JSON, every field under its own name (the worker's plan carries it; the
/// record's `timing` extends it).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(timing_options, cold, flush, max_noise, min_time_s, min_samples, max_samples,
                                   timeout_s, warmup, profile, discard_throttled)
/// The record's `timing`: the sampling policy in force (docs/RECORD.md).
nlohmann::json timing_policy_json(timing_options const& t, bool quick, std::uint64_t seed);
/// Now, UTC, ISO 8601 (the record's `started` and `finished`).
std::string utc_now_iso();

class run_record {
 public:
  run_record() = default;
  /// `path` "" keeps the record in memory only.
  explicit run_record(std::string path) : path_(std::move(path)) {}

  nlohmann::json meta = nlohmann::json::object();  ///< version, revision, command line, device, ...
  std::vector<row> rows;

  void append(std::vector<row> const& more) { rows.insert(rows.end(), more.begin(), more.end()); }
  nlohmann::json to_json() const;
  /// Writes path.tmp, then renames it over path. No-op without a path.
  void flush() const;
  std::string const& path() const noexcept { return path_; }

  /// Reads a record; throws memlab::error with a one-line reason when unreadable.
  static run_record load(std::string const& path);

 private:
  std::string path_;
};

/// The CSV view of a record (the Markdown views are the report's: report::run_markdown).
std::string to_csv(run_record const& rec);

}  // namespace memlab::bench
