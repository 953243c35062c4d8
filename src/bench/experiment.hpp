#pragma once
// Experiments: an id, parameter axes swept as a cartesian product, and a body
// that receives a `state` per point. Each experiment file registers itself:
//
//   namespace {
//   memlab::bench::registrar const reg{[] {
//     memlab::bench::experiment e;
//     e.id = "coalescing.offset";
//     e.description = "float copy at offsets 0..32 elements (Best Practices Guide 9.2.1)";
//     e.axes = {memlab::bench::int_axis("offset", range(0, 32), {0, 1, 8, 16})};
//     e.body = [](memlab::bench::state& s) { ... };
//     return e;
//   }()};
//   }
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace memlab::bench {

class state;

/// A mistake in what the user asked for (unknown id, bad axis value): exit code 2.
class usage_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using param_value = std::variant<std::int64_t, double, std::string>;
std::string to_string(param_value const& v);

enum class axis_kind { integer, floating, string };

struct axis {
  std::string name;
  axis_kind kind = axis_kind::integer;
  std::vector<param_value> values;        ///< the full sweep
  std::vector<param_value> quick_values;  ///< the --quick sweep (empty: same as values)
  std::optional<std::int64_t> min_value;  ///< integer axes: smallest value a user may give
  std::optional<std::int64_t> max_value;  ///< integer axes: largest value a user may give
  std::vector<param_value> allowed;       ///< if set, a user's values must be among these
                                          ///< (string axes: always among `values`)
  std::string description;
};

/// The axis named "variant" is special: its value becomes the row's `variant`, not a param.
inline constexpr char const* variant_axis_name = "variant";

axis int_axis(std::string name, std::vector<std::int64_t> values, std::vector<std::int64_t> quick = {});
/// Powers of two 2^lo .. 2^hi (the quick sweep 2^qlo .. 2^qhi, when given).
axis pow2_axis(std::string name, int lo, int hi, std::optional<int> qlo = {}, std::optional<int> qhi = {});
axis float_axis(std::string name, std::vector<double> values, std::vector<double> quick = {});
axis string_axis(std::string name, std::vector<std::string> values, std::vector<std::string> quick = {});
/// A string axis named "variant".
axis variant_axis(std::vector<std::string> values, std::vector<std::string> quick = {});
/// lo, lo+step, ..., <= hi
std::vector<std::int64_t> range(std::int64_t lo, std::int64_t hi, std::int64_t step = 1);

struct experiment {
  std::string id;           ///< "family.name"
  std::string description;  ///< one line for `memlab list`
  std::string seed_ref;     ///< where in the seed notes it comes from, e.g. "000 §9.2.1"
  std::vector<axis> axes;
  std::function<void(state&)> body;
  bool default_suite = true;   ///< part of `memlab run` with no argument
  bool needs_ceiling = false;  ///< rows are bandwidth rows: the run measures `ceilings` first
  bool listed = true;          ///< shown by `memlab list` (false: the harness's own self-tests)
  std::string family() const { return id.substr(0, id.find('.')); }
};

class registry {
 public:
  static registry& instance();
  /// Throws memlab::error on a duplicate or malformed id.
  void add(experiment e);
  std::vector<experiment> const& all() const { return experiments_; }
  experiment const* find(std::string const& id) const;
  /// Resolves ids and family names (in registry order, no duplicates). An empty list
  /// selects the default suite. Throws usage_error naming the first unknown name.
  std::vector<experiment const*> select(std::vector<std::string> const& names) const;

 private:
  std::vector<experiment> experiments_;
};

/// Registers an experiment at static-initialisation time.
struct registrar {
  explicit registrar(experiment e);
};

}  // namespace memlab::bench
