#pragma once
// Accessors and formatting over a record's JSON values. The record's shape is checked
// once by read_record (record.hpp); these still cope with a missing or null key (a
// row's optional fields) and never throw.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace memlab::report::detail {

using json = nlohmann::json;

/// A finite number under `key`, or nullopt (missing, null, not a number, NaN).
std::optional<double> num(json const& j, char const* key);
/// A string under `key`, or `fallback`.
std::string str(json const& j, char const* key, std::string const& fallback = "");
/// The object under `key`, or an empty object.
json const& obj(json const& j, char const* key);
/// The array under `key`, or an empty array.
json const& arr(json const& j, char const* key);

/// Three significant figures, no exponent for ordinary magnitudes ("2950", "0.412", "12.8").
std::string fmt(double v);
std::string fmt(std::optional<double> v, std::string const& none = "—");
/// 1073741824 -> "1 GiB"; non-power-of-1024 sizes keep three figures ("1.5 MiB").
std::string fmt_bytes(double bytes);
/// One JSON value as short text: numbers via fmt (integers exact), strings unquoted.
std::string value_text(json const& v, std::string const& key = "");
/// params as "k=v, k=v" (sizes named *bytes* or size shown as KiB/MiB/GiB).
std::string params_text(json const& params);
/// Canonical identity of a row: experiment, variant and params (sorted keys).
std::string row_key(json const& row);
/// Escapes '|' and newlines so text can sit in a Markdown table cell.
std::string cell(std::string s);
/// GitHub heading anchor for a heading text (lowercase, spaces to '-', punctuation dropped).
std::string anchor(std::string const& heading);

/// The row's state for display and comparison.
enum class row_state { ok, failed, error, skipped, not_verified, no_timing };
row_state state_of(json const& row);
/// A verified row with no time of its own (a swept staircase records its curve, no median).
bool verified_untimed(json const& row);

}  // namespace memlab::report::detail
