#pragma once
// Host references for the async kernels, written from the definitions in copy_compute.hpp
// and entanglement.hpp (not from the kernels): float arithmetic with std::fma, so the
// device's __fmaf_rn chain must match bit for bit. Split over host threads: the outputs
// are hundreds of MiB.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <thread>
#include <vector>

#include "kernels/async/copy_compute.hpp"
#include "memlab/detail/host_parallel.hpp"

namespace memlab::async::reference {

/// chain() of every quantized input code (65536 entries) for `fmas` multiply-adds.
inline std::vector<float> const& chain_table(int fmas) {
  static std::map<int, std::vector<float>> cache;  // called from one thread at a time
  auto it = cache.find(fmas);
  if (it != cache.end()) return it->second;
  std::vector<float> t(65536);
  for (std::uint32_t code = 0; code < 65536; ++code) {
    float x = quantized_value(code);
    for (int k = 0; k < fmas; ++k) x = std::fma(x, chain_a, chain_b);
    t[code] = x;
  }
  return cache.emplace(fmas, std::move(t)).first->second;
}

/// The floats copy_compute writes for `n` elements of `element_bytes`, batches of
/// `block_threads`, inputs fill_quantized(seed).
inline std::vector<float> copy_compute(std::size_t n, int element_bytes, int block_threads, int fmas,
                                       std::uint64_t seed) {
  std::size_t const comps = static_cast<std::size_t>(element_bytes) / 4;
  std::size_t const B = static_cast<std::size_t>(block_threads);
  std::vector<float> const& table = chain_table(fmas);
  std::vector<float> out(n * comps);
  memlab::detail::host_parallel_for(n, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) {
      std::size_t const base = i / B * B;
      std::size_t const count = std::min(B, n - base);
      std::size_t const partner = base + (count - 1 - (i - base));
      for (std::size_t c = 0; c < comps; ++c) {
        float const v = table[quantized_code(seed, i * comps + c)];
        float const w = quantized_value(quantized_code(seed, partner * comps + c));
        out[i * comps + c] = v + w;
      }
    }
  });
  return out;
}

/// The floats warp_entanglement writes for `n` float4 elements, inputs fill_quantized(seed).
inline std::vector<float> entanglement(std::size_t n, int fmas, std::uint64_t seed) {
  std::vector<float> const& table = chain_table(fmas);
  std::vector<float> out(4 * n);
  memlab::detail::host_parallel_for(4 * n, [&](std::size_t b, std::size_t e) {
    for (std::size_t f = b; f < e; ++f) out[f] = table[quantized_code(seed, f)];
  });
  return out;
}

}  // namespace memlab::async::reference
