// smem.*: shared memory (seed 003). Array reverse through static, dynamic and carved dynamic
// shared memory; bank conflicts of strided, wide, broadcast and multicast warp accesses.
//
// Model (kernels/smem/bank_stride.hpp): a warp request needs as many wavefronts as the
// largest number of distinct 4-byte words any bank must deliver (128-bit requests: summed
// over the two half-warps). For 32-bit
// words this is seed 003's gcd rule, degree = gcd(stride, 32). When the kernel is bound by
// the shared-memory pipe, time per warp request is proportional to wavefronts, so the
// predicted slowdown against stride 1 is wavefronts(s) / wavefronts(1).
#include <algorithm>
#include <vector>

#include "bench/state.hpp"
#include "kernels/smem/bank_stride.hpp"
#include "kernels/smem/reverse.hpp"
#include "memlab/buffer.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

// ---------------------------------------------------------------- smem.reverse

template <class T>
std::vector<T> reversed(std::vector<T> const& v) {
  return std::vector<T>(v.rbegin(), v.rend());
}

// The first failure wins; otherwise the last pass.
void merge_into(verification& all, verification const& one) {
  if (all.status == verdict::not_verified || one.status == verdict::failed) all = one;
}

void reverse_body(state& s) {
  auto const n = static_cast<std::size_t>(s.get_int("elements"));
  std::string const& v = s.variant();
  int const block = 256;
  auto const nn = static_cast<std::int64_t>(n);
  if (v == "static" || v == "dynamic") {
    std::vector<int> host(n);
    fill_random(host, s.seed(), -1e9, 1e9);
    device_buffer<int> in(n), out(n);
    in.upload(host);
    out.fill_bytes(0xFF);
    auto launch = [&](cudaStream_t st) {
      if (v == "static") smem::reverse_static(in.data(), out.data(), nn, st);
      else smem::reverse_dynamic(in.data(), out.data(), nn, block, st);
    };
    launch(s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    s.set_verification(compare_exact(out.download(), reversed(host)));
    s.add_reads<int>(n);
    s.add_writes<int>(n);
    s.exec(launch);
  } else {  // carved: a char, an int and a float array through one allocation
    std::vector<std::int8_t> hc(n);  // char data (int8_t: what fill_random provides)
    std::vector<int> hi(n);
    std::vector<float> hf(n);
    fill_random(hc, s.seed(), -128, 127);
    fill_random(hi, s.seed() + 1, -1e9, 1e9);
    fill_random(hf, s.seed() + 2);
    device_buffer<std::int8_t> ic(n), oc(n);
    device_buffer<int> ii(n), oi(n);
    device_buffer<float> iff(n), of(n);
    ic.upload(hc);
    ii.upload(hi);
    iff.upload(hf);
    oc.fill_bytes(0xFF);
    oi.fill_bytes(0xFF);
    of.fill_bytes(0xFF);
    auto launch = [&](cudaStream_t st) {
      smem::reverse_carved(reinterpret_cast<char const*>(ic.data()), ii.data(), iff.data(),
                           reinterpret_cast<char*>(oc.data()), oi.data(), of.data(), nn, block, st);
    };
    launch(s.stream());
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
    verification all;
    merge_into(all, compare_exact(oc.download(), reversed(hc)));
    merge_into(all, compare_exact(oi.download(), reversed(hi)));
    merge_into(all, compare_exact(of.download(), reversed(hf)));
    s.set_verification(all);
    s.add_reads<char>(n);
    s.add_reads<int>(n);
    s.add_reads<float>(n);
    s.add_writes<char>(n);
    s.add_writes<int>(n);
    s.add_writes<float>(n);
    s.set_extra("carve_bytes_per_block", smem::carve_char_int_float(block).bytes);
    s.exec(launch);
  }
  s.set_extra("block", v == "static" ? smem::reverse_static_block : block);
  s.set_extra("elements_per_thread", v == "carved" ? 1 : smem::reverse_items);
}

registrar const reverse_reg{[] {
  experiment e;
  e.id = "smem.reverse";
  e.description = "array reverse through static, dynamic and carved (char+int+float) dynamic shared memory";
  e.seed_ref = "003 (staticReverse, dynamicReverse, several arrays in one allocation)";
  e.axes = {variant_axis({"static", "dynamic", "carved"}), int_axis("elements", {std::int64_t{1} << 24, std::int64_t{1} << 26}, {std::int64_t{1} << 20})};
  e.axes[1].min_value = 0;
  e.axes[1].max_value = std::int64_t{1} << 30;
  e.ceiling = ceiling_relation::peer;
  e.body = reverse_body;
  e.describe_axis("variant", "", "static, dynamic, or one dynamic allocation carved into char, int and float arrays");
  e.describe_axis("elements", "elements", "ints reversed", true);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling()};
  e.headline = best_row("Does the way shared memory is declared change the reverse's bandwidth?",
                        {{"elements", {"max"}}}, "gbps", "ratio_to_ceiling");
  e.prose = {"Seed 003's first example: each block reverses its slice of an array through shared memory, declared "
             "statically (size known at compile time) or dynamically (the third launch parameter). One dynamic "
             "allocation can also be carved into arrays of int, float and char, provided each piece starts at an "
             "offset aligned for its type.",
             "The three bars should match: the declaration costs nothing at run time.", ""};
  {
    plot_spec p = bar_plot("smem_reverse.png", "Reverse through shared memory: bandwidth by declaration", "variant", "gbps", {"elements"});
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

// ---------------------------------------------------------------- bank conflicts

int iterations(state const& s) { return s.quick() ? 128 : 1024; }

struct bank_setup {
  int grid = 0;
  std::vector<unsigned> fill;
  device_buffer<unsigned> fill_dev, out;
};

/// The stride-1 baseline of this element width, timed in this point (a row never depends on
/// which other points ran), so every row carries its slowdown against stride 1.
double baseline_ms(state& s, bank_setup& b, int elem_bytes, int iters) {
  return s.measure([&](cudaStream_t st) {
              smem::bank_stride_loads(b.fill_dev.data(), b.out.data(), elem_bytes, 1, 1, iters, b.grid, st);
            })
      .median;
}

void bank_point(state& s, int elem_bytes, int stride, int group) {
  if (smem::bank_footprint(elem_bytes, stride, group) > smem::bank_smem_bytes)
    s.skip("pattern reaches past the " + std::to_string(smem::bank_smem_bytes) + "-byte tile");
  int const iters = iterations(s);
  bank_setup b;
  b.grid = smem::bank_grid(s.device().sm_count);
  b.fill.resize(smem::bank_smem_bytes / 4);
  fill_random(b.fill, s.seed(), 0, 0xFFFFFFFFu);
  b.fill_dev = device_buffer<unsigned>(b.fill.size());
  b.fill_dev.upload(b.fill);
  std::size_t const threads = static_cast<std::size_t>(b.grid) * smem::bank_block;
  b.out = device_buffer<unsigned>(threads);
  b.out.fill_bytes(0xFF);

  auto launch = [&](cudaStream_t st) {
    smem::bank_stride_loads(b.fill_dev.data(), b.out.data(), elem_bytes, stride, group, iters, b.grid, st);
  };
  launch(s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  auto const* bytes = reinterpret_cast<unsigned char const*>(b.fill.data());
  std::vector<unsigned> ref(threads);
  unsigned lane_ref[32];
  for (int l = 0; l < 32; ++l) lane_ref[l] = smem::bank_stride_reference(bytes, l, elem_bytes, stride, group, iters);
  for (std::size_t t = 0; t < threads; ++t) ref[t] = lane_ref[t % 32];
  s.set_verification(compare_exact(b.out.download(), ref));

  s.exec(launch);
  double const base = baseline_ms(s, b, elem_bytes, iters);
  int const wavefronts = smem::bank_wavefronts(elem_bytes, stride, group);
  int const base_wavefronts = smem::bank_wavefronts(elem_bytes, 1, 1);
  // n-way conflict: wavefronts against the stride-1 request of this width (a wide broadcast
  // needs fewer than stride 1, which is no conflict: degree 1, slowdown below 1).
  nlohmann::json p = {{"wavefronts", wavefronts},
                      {"conflict_degree", std::max(1.0, static_cast<double>(wavefronts) / base_wavefronts)},
                      {"slowdown_vs_stride1", static_cast<double>(wavefronts) / base_wavefronts}};
  if (elem_bytes == 4 && group == 1) p["gcd_rule_degree"] = smem::gcd_rule_degree(stride);
  s.set_predicted(p);

  double const median = *s.result().median_ms;
  double const warp_requests_per_sm =
      static_cast<double>(threads / 32) * iters * smem::bank_unroll / s.device().sm_count;
  double const ns_per_request = median * 1e6 / warp_requests_per_sm;
  double const measured_slowdown = median / base;
  double const predicted_slowdown = static_cast<double>(wavefronts) / base_wavefronts;
  s.set_extra("ns_per_warp_request_per_sm", ns_per_request);
  // At the reported (maximum) SM clock; the lent GPU may run slower under load.
  s.set_extra("clk_per_warp_request_at_max_clock", ns_per_request * s.device().sm_clock_khz * 1e-6);
  s.set_extra("stride1_median_ms", base);
  s.set_extra("measured_slowdown_vs_stride1", measured_slowdown);
  s.set_extra("slowdown_error", measured_slowdown / predicted_slowdown - 1.0);
  s.set_extra("warp_requests_per_sm", warp_requests_per_sm);
}

void bank_stride_body(state& s) {
  int const bits = static_cast<int>(s.get_int("elem_bits"));
  bank_point(s, bits / 8, static_cast<int>(s.get_int("stride")), 1);
}

void bank_multicast_body(state& s) {
  bank_point(s, 4, static_cast<int>(s.get_int("stride")), static_cast<int>(s.get_int("lanes_per_word")));
}

registrar const bank_stride_reg{[] {
  experiment e;
  e.id = "smem.bank_stride";
  e.description = "warp shared loads at stride 0 (broadcast)..64 elements of 8..128 bits: time vs predicted conflicts";
  e.seed_ref = "003 (bank mapping, stride-s conflicts, 8/16-bit accesses, broadcast)";
  e.axes = {int_axis("elem_bits", {32, 8, 16, 64, 128}, {32}), int_axis("stride", range(0, 64), {0, 1, 2, 3, 4, 8, 32})};
  e.axes[0].min_value = 8;
  e.axes[0].max_value = 128;
  e.axes[1].min_value = 0;
  e.axes[1].max_value = smem::bank_max_stride;
  e.body = bank_stride_body;
  e.describe_axis("elem_bits", "bits", "width of each lane's shared-memory element");
  e.describe_axis("stride", "elements", "distance between neighbouring lanes' elements (0: all lanes one word)");
  e.metrics = {metrics::time(), {"predicted.wavefronts", "passes", "passes the bank model predicts per request"}};
  e.headline = best_row("What does a 32-way bank conflict cost against unit stride?",
                        {{"elem_bits", {"32"}}, {"stride", {"32"}}}, "median_ms", "baseline", {{"stride", {"1"}}});
  e.prose = {"Shared memory is 32 banks of 4 bytes; a warp's request is served in one pass unless two lanes hit "
             "different words of the same bank, which serializes it into as many passes as the worst bank has words "
             "(stride s gives gcd(s, 32)-way conflicts, so odd strides are free). Lanes reading the same word are "
             "served by one broadcast.",
             "The peaks at even strides (highest at multiples of 32) and flat odd strides, per element width.", ""};
  {
    // One panel per width: five interleaved sawtooths on one axis cannot be told apart.
    plot_spec p = line_plot("smem_bank_stride.png", "Shared loads: time against stride, per element width", "stride", "median_ms");
    p.panels = "elem_bits";
    p.log_y = true;
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const bank_multicast_reg{[] {
  experiment e;
  e.id = "smem.bank_multicast";
  e.description = "32-bit shared loads where groups of lanes share a word (multicast) at strides 1..32";
  e.seed_ref = "003 (broadcast and multicast)";
  e.axes = {int_axis("lanes_per_word", {1, 2, 4, 8, 16, 32}, {2, 32}), int_axis("stride", {1, 2, 4, 8, 16, 32}, {32})};
  e.axes[0].min_value = 1;
  e.axes[0].max_value = 32;
  e.axes[1].min_value = 0;
  e.axes[1].max_value = smem::bank_max_stride;
  e.body = bank_multicast_body;
  e.describe_axis("lanes_per_word", "lanes", "lanes sharing each 32-bit word", true);
  e.describe_axis("stride", "words", "distance between the groups' words", true);
  e.metrics = {metrics::time()};
  e.headline = best_row("Do lanes sharing a word avoid the conflict a stride of 32 makes?",
                        {{"stride", {"32"}}, {"lanes_per_word", {"max"}}}, "median_ms", "baseline",
                        {{"lanes_per_word", {"1"}}});
  e.prose = {"Several lanes reading the same 32-bit word are served together (a broadcast for the whole warp, a "
             "multicast for groups), so lanes sharing words do not conflict; only distinct words in one bank cost "
             "extra passes.",
             "At stride 32, time falling as more lanes share each word.", ""};
  {
    plot_spec p = line_plot("smem_bank_multicast.png", "Shared loads with lanes sharing words: time against stride", "stride", "median_ms", {"lanes_per_word"});
    p.log_y = true;
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
