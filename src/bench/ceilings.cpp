#include "bench/ceilings.hpp"

namespace memlab::bench {

void measured_ceilings::merge(measured_ceilings const& later) {
  if (later.d2d_copy_gbps) d2d_copy_gbps = later.d2d_copy_gbps;
  if (later.fp32_peak_tflops) fp32_peak_tflops = later.fp32_peak_tflops;
  for (auto const& [key, tflops] : later.tensor_peak_tflops) tensor_peak_tflops[key] = tflops;
}

std::optional<double> measured_ceilings::tensor_peak(std::string const& key) const {
  auto const it = tensor_peak_tflops.find(key);
  if (it == tensor_peak_tflops.end()) return std::nullopt;
  return it->second;
}

nlohmann::json to_json(measured_ceilings const& c) {
  auto opt = [](std::optional<double> v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  nlohmann::json tensor = nlohmann::json::object();
  for (auto const& [key, tflops] : c.tensor_peak_tflops) tensor[key] = tflops;
  return {{"d2d_copy_gbps", opt(c.d2d_copy_gbps)},
          {"fp32_peak_tflops", opt(c.fp32_peak_tflops)},
          {"tensor_peak_tflops", std::move(tensor)}};
}

measured_ceilings ceilings_from_json(nlohmann::json const& j) {
  measured_ceilings c;
  if (!j.is_object()) return c;
  auto get = [&](char const* key) -> std::optional<double> {
    auto const it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
  };
  c.d2d_copy_gbps = get("d2d_copy_gbps");
  c.fp32_peak_tflops = get("fp32_peak_tflops");
  if (auto const it = j.find("tensor_peak_tflops"); it != j.end() && it->is_object())
    for (auto const& [key, v] : it->items())
      if (v.is_number()) c.tensor_peak_tflops[key] = v.get<double>();
  return c;
}

}  // namespace memlab::bench
