#include "bench/state.hpp"

#include <cmath>

#include "bench/runner.hpp"
#include "memlab/arch.hpp"
#include "memlab/error.hpp"

namespace memlab::bench {

namespace {
// FNV-1a: a seed per point that is the same on every machine for the same run seed.
std::uint64_t fnv1a(std::string const& text, std::uint64_t h) {
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

nlohmann::json param_json(param_value const& v) {
  if (auto const* i = std::get_if<std::int64_t>(&v)) return *i;
  if (auto const* d = std::get_if<double>(&v)) return *d;
  return std::get<std::string>(v);
}

template <class T>
nlohmann::json opt(std::optional<T> const& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
template <class T>
std::optional<T> get_opt(nlohmann::json const& j, char const* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}
}  // namespace

state::state(run_context& ctx, experiment const& exp, std::map<std::string, param_value> point)
    : ctx_(&ctx), exp_(&exp), point_(std::move(point)) {
  row_.experiment = exp.id;
  row_.cold = ctx.timing().cold;
  row_.nvml = ctx.gpu().status();
  std::string key = exp.id;
  row_.repro = "memlab run " + exp.id;
  for (auto const& [name, value] : point_) {
    key += "|" + name + "=" + to_string(value);
    if (name == variant_axis_name) {
      row_.variant = std::get<std::string>(value);
    } else {
      row_.params[name] = param_json(value);
    }
    row_.repro += " -a " + name + "=" + to_string(value);
  }
  seed_ = fnv1a(key, 1469598103934665603ull ^ ctx.seed());
}

std::int64_t state::get_int(std::string const& axis) const {
  auto it = point_.find(axis);
  if (it == point_.end()) throw error("experiment " + exp_->id + " has no axis '" + axis + "'");
  if (auto const* i = std::get_if<std::int64_t>(&it->second)) return *i;
  throw error("axis '" + axis + "' of " + exp_->id + " is not an integer axis");
}

double state::get_float(std::string const& axis) const {
  auto it = point_.find(axis);
  if (it == point_.end()) throw error("experiment " + exp_->id + " has no axis '" + axis + "'");
  if (auto const* d = std::get_if<double>(&it->second)) return *d;
  if (auto const* i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
  throw error("axis '" + axis + "' of " + exp_->id + " is not a numeric axis");
}

std::string const& state::get_string(std::string const& axis) const {
  auto it = point_.find(axis);
  if (it == point_.end()) throw error("experiment " + exp_->id + " has no axis '" + axis + "'");
  if (auto const* s = std::get_if<std::string>(&it->second)) return *s;
  throw error("axis '" + axis + "' of " + exp_->id + " is not a string axis");
}

device_info const& state::device() const noexcept { return ctx_->device(); }
bool state::quick() const noexcept { return ctx_->quick(); }
bool state::profile() const noexcept { return ctx_->timing().profile; }
cudaStream_t state::stream() const noexcept { return ctx_->stream(); }
timing_options const& state::timing() const noexcept { return ctx_->timing(); }

void state::take(measurement const& m) {
  sample_summary const& s = m.summary;
  if (s.samples == 0) return;
  row_.median_ms = s.median;
  row_.noise = m.noise.noise;
  row_.min_ms = s.min;
  row_.max_ms = s.max;
  row_.samples = s.samples;
  row_.timing = m.timing_json();
  if (m.batch > 1 && !batch_cache_.empty()) row_.timing["cache"] = batch_cache_;
  apply_noise_floor();
  // Batched launches run back to back: only the first of a batch found L2 flushed, and the
  // slope cancels it, so the row is warm whatever --hot/--cold asked (timing.cache says so).
  if (m.batch > 1) row_.cold = false;
  if (!m.gpu.gpu.is_null()) {
    row_.gpu = m.gpu.gpu;
    row_.throttled = m.gpu.throttled;
    row_.throttle_reasons = m.gpu.throttle_reasons;
  }
}

namespace {
/// `take()` once, then again while --discard-throttled asks and NVML saw the clocks held down:
/// samples taken then time the cooling, not the kernel. Retakes a few times (the GPU may have
/// recovered), then keeps the last, flagged; `retakes` says how many.
template <class Take, class Throttled>
auto retaken_while_throttled(run_context& ctx, Take const& take, Throttled const& throttled, int& retakes) {
  auto m = take();
  retakes = 0;
  while (ctx.timing().discard_throttled && throttled(m) && retakes < max_throttle_retakes) {
    m = take();
    ++retakes;
  }
  return m;
}
}  // namespace

void state::exec(launcher const& launch) {
  int retakes = 0;
  measurement const m = retaken_while_throttled(
      *ctx_, [&] { return ctx_->measure(launch); }, [](measurement const& x) { return x.gpu.throttled; }, retakes);
  take(m);
  row_.retakes = retakes;
}

std::string state::point_key(std::string const& name) const {
  return exp_->id + "|" + name + "|" + row_.params.dump() + (row_.cold ? "|cold" : "|hot");
}

measurement const& state::measured_in_point(std::string const& name, launcher const& launch) {
  // One measurement per point (the variant axis aside): every variant's row sees the same.
  std::string const key = point_key(name);
  auto it = ctx_->peer_cache.find(key);
  if (it == ctx_->peer_cache.end()) it = ctx_->peer_cache.emplace(key, ctx_->measure(launch)).first;
  return it->second;
}

void state::exec_paired(launcher const& launch, std::string const& peer_name, launcher const& peer_launch) {
  int retakes = 0;
  auto const m = retaken_while_throttled(
      *ctx_, [&] { return ctx_->measure_paired(launch, peer_launch, exp_->paired_in_blocks); },
      [](std::pair<measurement, measurement> const& x) { return x.first.gpu.throttled; }, retakes);
  take(m.first);
  row_.retakes = retakes;
  set_peer(peer_name, m.second.summary.median);
  row_.extra["peer_noise"] = m.second.noise.noise;
  row_.extra["peer_timing"] = {{"method", m.second.method}, {"batch", m.second.batch}, {"samples", m.second.summary.samples}};
}

void state::exec_peer(std::string const& name, launcher const& launch) {
  measurement const& m = measured_in_point(name, launch);
  set_peer(name, m.summary.median);
  row_.extra["peer_noise"] = m.noise.noise;
  row_.extra["peer_timing"] = {{"method", m.method}, {"batch", m.batch}};
}

sample_summary state::measure(launcher const& launch) { return ctx_->measure(launch).summary; }

sample_summary state::measure_once(std::string const& name, launcher const& launch) {
  return measured_in_point(name, launch).summary;
}

std::pair<sample_summary, sample_summary> state::measure_paired_once(std::string const& name, launcher const& a,
                                                                     launcher const& b) {
  std::string const key = point_key(name);
  auto ia = ctx_->peer_cache.find(key + "|a"), ib = ctx_->peer_cache.find(key + "|b");
  if (ia == ctx_->peer_cache.end() || ib == ctx_->peer_cache.end()) {
    auto m = ctx_->measure_paired(a, b, exp_->paired_in_blocks);
    ia = ctx_->peer_cache.insert_or_assign(key + "|a", std::move(m.first)).first;
    ib = ctx_->peer_cache.insert_or_assign(key + "|b", std::move(m.second)).first;
  }
  return {ia->second.summary, ib->second.summary};
}

void state::set_samples(std::vector<double> const& ms, std::string const& method) {
  measurement m;
  m.summary = summarize(ms);
  if (m.summary.samples == 0) return;
  m.noise = estimate_noise(ms);
  m.method = method;
  m.gpu = ctx_->gpu_since_last_reading();
  take(m);
}

void state::set_noise_floor(double floor, std::string why) {
  MEMLAB_EXPECTS(floor >= 0.0 && floor < 1.0, "a noise floor is a fraction in [0, 1)");
  noise_floor_ = floor;
  noise_floor_why_ = std::move(why);
  apply_noise_floor();
}

void state::apply_noise_floor() {
  if (noise_floor_ <= 0.0 || !row_.noise || !row_.timing.is_object()) return;
  if (noise_floor_ <= row_.timing.value("noise_floor", 0.0)) return;
  row_.timing["noise_floor"] = noise_floor_;
  row_.timing["noise_floor_why"] = noise_floor_why_;
  if (*row_.noise < noise_floor_) {
    row_.noise = noise_floor_;
    row_.timing["noise_method"] = "floor";
  }
}

void state::set_peer(std::string const& name, double peer_median_ms) {
  row_.peer = name;
  row_.peer_median_ms = peer_median_ms;
}

void state::set_ceiling_gbps(double gbps) { ctx_->ceilings.d2d_copy_gbps = gbps; }
void state::set_fp32_peak_tflops(double tflops) { ctx_->ceilings.fp32_peak_tflops = tflops; }
void state::set_tensor_peak_tflops(std::string const& key, double tflops) { ctx_->ceilings.tensor_peak_tflops[key] = tflops; }
std::optional<double> state::ceiling_gbps() const { return ctx_->ceilings.d2d_copy_gbps; }
std::optional<double> state::fp32_peak_tflops() const { return ctx_->ceilings.fp32_peak_tflops; }
std::optional<double> state::tensor_peak_tflops(std::string const& key) const { return ctx_->ceilings.tensor_peak(key); }

void state::skip(std::string reason) { throw skip_exception{std::move(reason)}; }

void state::require_arch(void const* kernel, int arch, std::string const& instruction) {
  std::string reason = unavailable_reason(kernel, arch, instruction);
  if (!reason.empty()) skip(std::move(reason));
}

row state::finish() {
  row r = row_;
  // The experiment declares whether the copy ceiling is its rows' peer (experiment::ceiling).
  bool const ceiling_peer = exp_ && exp_->ceiling == ceiling_relation::peer;
  if (r.median_ms && *r.median_ms > 0) {
    double const seconds = *r.median_ms * 1e-3;
    if (r.bytes > 0) r.gbps = r.bytes / seconds / 1e9;
    if (r.flops > 0) r.tflops = r.flops / seconds / 1e12;
    if (auto const c = ctx_->ceilings.d2d_copy_gbps; r.gbps && c && *c > 0) r.ratio_to_ceiling = *r.gbps / *c;
    if (r.peer_median_ms) {
      r.ratio_to_peer = *r.peer_median_ms / *r.median_ms;
    } else if (ceiling_peer && r.ratio_to_ceiling) {
      r.peer = "cudaMemcpy D2D";
      r.ratio_to_peer = r.ratio_to_ceiling;
    }
  }
  if (auto const peak = ctx_->ceilings.tensor_peak(tensor_peak_key_); r.tflops && peak && *peak > 0) {
    r.extra["pct_of_tensor_peak"] = 100.0 * *r.tflops / *peak;
    r.extra["tensor_peak"] = tensor_peak_key_;
  }
  return r;
}

nlohmann::json to_json(row const& r) {
  nlohmann::json j;
  j["experiment"] = r.experiment;
  j["variant"] = r.variant;
  j["params"] = r.params;
  j["median_ms"] = opt(r.median_ms);
  j["noise"] = opt(r.noise);
  j["min_ms"] = opt(r.min_ms);
  j["max_ms"] = opt(r.max_ms);
  j["samples"] = r.samples;
  j["bytes"] = r.bytes;
  j["flops"] = r.flops;
  j["gbps"] = opt(r.gbps);
  j["tflops"] = opt(r.tflops);
  j["verified"] = to_string(r.check.status);
  j["verification"] = {{"error", r.check.error < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.check.error)},
                       {"tolerance", r.check.tolerance < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.check.tolerance)},
                       {"metric", r.check.metric},
                       {"detail", r.check.detail}};
  j["peer"] = opt(r.peer);
  j["peer_median_ms"] = opt(r.peer_median_ms);
  j["ratio_to_peer"] = opt(r.ratio_to_peer);
  j["ratio_to_ceiling"] = opt(r.ratio_to_ceiling);
  j["predicted"] = r.predicted;
  j["extra"] = r.extra;
  j["skipped"] = opt(r.skipped);
  j["error"] = opt(r.error);
  j["cold"] = r.cold;
  j["repro"] = r.repro;
  j["timing"] = r.timing;
  j["nvml"] = r.nvml;
  j["gpu"] = r.gpu;
  j["throttled"] = opt(r.throttled);
  j["throttle_reasons"] = r.throttle_reasons;
  j["retakes"] = r.retakes;
  // JSON has no Inf/NaN: an infinite error (a NaN in the output) is written as a string.
  if (r.check.error == INFINITY) j["verification"]["error"] = "inf";
  return j;
}

row row_from_json(nlohmann::json const& j) {
  row r;
  r.experiment = j.value("experiment", "");
  r.variant = j.value("variant", "");
  r.params = j.value("params", nlohmann::json::object());
  r.median_ms = get_opt<double>(j, "median_ms");
  r.noise = get_opt<double>(j, "noise");
  r.min_ms = get_opt<double>(j, "min_ms");
  r.max_ms = get_opt<double>(j, "max_ms");
  r.samples = j.value("samples", 0);
  r.bytes = j.value("bytes", 0.0);
  r.flops = j.value("flops", 0.0);
  r.gbps = get_opt<double>(j, "gbps");
  r.tflops = get_opt<double>(j, "tflops");
  std::string const v = j.value("verified", "not_verified");
  r.check.status = v == "passed" ? verdict::passed : v == "failed" ? verdict::failed : verdict::not_verified;
  if (auto it = j.find("verification"); it != j.end() && it->is_object()) {
    auto const& e = (*it)["error"];
    r.check.error = e.is_number() ? e.get<double>() : e.is_string() ? INFINITY : -1.0;
    r.check.tolerance = it->value("tolerance", nlohmann::json(-1.0)).is_number() ? (*it)["tolerance"].get<double>() : -1.0;
    r.check.metric = it->value("metric", "");
    r.check.detail = it->value("detail", "");
  }
  r.peer = get_opt<std::string>(j, "peer");
  r.peer_median_ms = get_opt<double>(j, "peer_median_ms");
  r.ratio_to_peer = get_opt<double>(j, "ratio_to_peer");
  r.ratio_to_ceiling = get_opt<double>(j, "ratio_to_ceiling");
  r.predicted = j.value("predicted", nlohmann::json());
  r.extra = j.value("extra", nlohmann::json::object());
  r.skipped = get_opt<std::string>(j, "skipped");
  r.error = get_opt<std::string>(j, "error");
  r.cold = j.value("cold", true);
  r.repro = j.value("repro", "");
  r.timing = j.value("timing", nlohmann::json());
  r.nvml = j.value("nvml", "");
  r.gpu = j.value("gpu", nlohmann::json());
  r.throttled = get_opt<bool>(j, "throttled");
  r.throttle_reasons = j.value("throttle_reasons", std::vector<std::string>{});
  r.retakes = j.value("retakes", 0);
  return r;
}

}  // namespace memlab::bench
