// link.host, link.host_latency, link.staged: the host <-> device link of every GPU
// (docs/link.md). Copy engines (cudaMemcpyAsync, pinned memory) against SM copy kernels
// over mapped pinned memory, one way and both ways at once, per GPU and all GPUs at once
// (the host's share of the links); the latency of a 4-byte copy and of a dependent load
// over PCIe; and memlab::staged_transform against the duplex copy of the same bytes.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/state.hpp"
#include "experiments/link_common.cuh"
#include "kernels/link/link_kernels.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/detail/host_parallel.hpp"
#include "memlab/staged_transform.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
using namespace memlab::link_exp;

std::vector<std::string> gpu_values() { return {"0", "1", "2", "3", "4", "5", "6", "7", "all"}; }

/// 8-byte words of host memory `p` that differ from transfer's pattern for `seed`.
std::size_t host_mismatches(void const* p, std::size_t bytes, std::uint64_t seed) {
  std::atomic<std::size_t> bad{0};
  auto const* w = static_cast<std::uint64_t const*>(p);
  memlab::detail::host_parallel_for(bytes / 8, [&](std::size_t lo, std::size_t hi) {
    std::size_t b = 0;
    for (std::size_t i = lo; i < hi; ++i) b += w[i] != transfer::pattern_word(i, seed);
    bad += b;
  });
  return bad;
}

/// One GPU's end of the host link: pinned mapped host buffers and device buffers.
struct host_end {
  int gpu;
  pinned_buffer<char> h_src, h_dst;
  buffer_at<char> d_src, d_dst;
  void* h_src_dev = nullptr;  ///< h_src as this GPU's kernels address it
  void* h_dst_dev = nullptr;
  memlab::stream up, down;    ///< H2D and D2H streams
  host_end(int g, std::size_t bytes)
      : gpu(g),
        h_src(bytes, cudaHostAllocPortable | cudaHostAllocMapped),
        h_dst(bytes, cudaHostAllocPortable | cudaHostAllocMapped),
        d_src(buffer_on<char>(g, bytes)),
        d_dst(buffer_on<char>(g, bytes)),
        up(stream_on(g)),
        down(stream_on(g)) {
    device_guard guard;
    MEMLAB_CUDA_CHECK(cudaSetDevice(g));
    MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(&h_src_dev, h_src.data(), 0));
    MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(&h_dst_dev, h_dst.data(), 0));
  }
};

void host_body(state& s) {
  std::string const which = s.get_string("gpu");
  std::string const dir = s.get_string("direction");
  bool const sm = s.variant() == "sm";
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 16 == 0 && bytes > 0, "bytes must be a positive multiple of 16");
  std::vector<int> devs;
  if (which == "all") {
    require_gpus(s, 2, "all GPUs at once");
    for (int g = 0; g < gpus(); ++g) devs.push_back(g);
  } else {
    int const g = std::stoi(which);
    require_gpus(s, g + 1, "gpu=" + which);
    devs.push_back(g);
  }
  device_guard guard;
  bool const up = dir != "d2h", down = dir != "h2d";

  std::vector<std::unique_ptr<host_end>> ends;
  for (int g : devs) ends.push_back(std::make_unique<host_end>(g, bytes));
  std::uint64_t const seed_up = s.seed(), seed_down = s.seed() ^ 0x5bd1e995ull;
  for (auto& e : ends) {
    transfer::fill_pattern_host(e->h_src.data(), bytes, seed_up + e->gpu);
    std::memset(e->h_dst.data(), 0xFF, bytes);
    MEMLAB_CUDA_CHECK(cudaSetDevice(e->gpu));
    transfer::fill_pattern_device(e->d_src.data(), bytes, seed_down + e->gpu, e->down.get());
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(e->d_dst.data(), 0xFF, bytes, e->up.get()));
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  std::vector<lane> lanes;
  for (auto& e : ends) {
    if (up) lanes.push_back({e->gpu, e->up.get()});
    if (down) lanes.push_back({e->gpu, e->down.get()});
  }
  auto issue = [&](bool use_sm) {
    for (auto& e : ends) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(e->gpu));
      if (use_sm) {
        // Both ways: each kernel gets half the SMs' CTAs, or the first would hold every SM.
        int const blocks = up && down ? std::max(1, link::sm_copy_default_blocks() / 2) : 0;
        if (up) link::sm_copy(e->d_dst.data(), e->h_src_dev, bytes, blocks, e->up.get());
        if (down) link::sm_copy(e->h_dst_dev, e->d_src.data(), bytes, blocks, e->down.get());
      } else {
        if (up) MEMLAB_CUDA_CHECK(cudaMemcpyAsync(e->d_dst.data(), e->h_src.data(), bytes, cudaMemcpyHostToDevice, e->up.get()));
        if (down)
          MEMLAB_CUDA_CHECK(cudaMemcpyAsync(e->h_dst.data(), e->d_src.data(), bytes, cudaMemcpyDeviceToHost, e->down.get()));
      }
    }
  };
  multi_timer timer(lanes);
  (void)timer.time([&] { issue(sm); });  // the checked run

  std::size_t bad = 0;
  for (auto& e : ends) {
    if (up) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(e->gpu));
      bad += transfer::count_pattern_mismatches(e->d_dst.data(), bytes, seed_up + e->gpu, e->up.get());
    }
    if (down) bad += host_mismatches(e->h_dst.data(), bytes, seed_down + e->gpu);
  }
  s.set_verification(zero_mismatches("mismatched 8-byte words", bad));

  double const per_gpu = (up ? 1.0 : 0.0) + (down ? 1.0 : 0.0);
  s.add_bytes_read(per_gpu * static_cast<double>(bytes) * static_cast<double>(devs.size()));
  s.set_extra("bytes_counted", "bytes crossing the host links: per GPU, " + std::string(up && down ? "H2D + D2H" : dir) +
                                   ", summed over the GPUs of the row");
  s.set_extra("gpus", devs.size());
  time_lanes(s, timer, [&] { issue(sm); });
  if (sm) {
    s.set_peer("cudaMemcpyAsync (copy engines)", median_lanes(s, timer, [&] { issue(false); }));
    s.set_extra("sm_copy", "16-byte loads/stores of mapped pinned host memory, " +
                               std::to_string(link::sm_copy_default_blocks()) + " CTAs of 512 threads");
  }
  if (auto m = s.result().median_ms) s.set_extra("gbps_per_gpu", per_gpu * bytes / (*m * 1e-3) / 1e9 / 1.0);
  s.set_predicted({{"gbps", 63.0 * per_gpu * static_cast<double>(devs.size())},
                   {"basis", "PCIe Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 = 63 GB/s per direction per GPU "
                             "(theoretical; TLP headers leave ~53-57 usable); both directions at once: x2"}});
}

/// A random cycle over `slots` slots `stride_words` apart, written into `next` (index -> index).
std::uint32_t build_cycle(std::uint32_t* next, std::size_t slots, std::size_t stride_words, std::uint64_t seed,
                          std::size_t steps) {
  std::vector<std::uint32_t> order(slots);
  for (std::size_t i = 0; i < slots; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin() + 1, order.end(), rng);  // slot 0 first: the chase starts there
  for (std::size_t i = 0; i < slots; ++i)
    next[order[i] * stride_words] = static_cast<std::uint32_t>(order[(i + 1) % slots] * stride_words);
  // Where `steps` steps from 0 end, by the same rule on the host.
  std::size_t const pos = steps % slots;
  return static_cast<std::uint32_t>(order[pos] * stride_words);
}

void host_latency_body(state& s) {
  int const g = gpu_of(s, "gpu");
  std::string const v = s.variant();
  device_guard guard;
  MEMLAB_CUDA_CHECK(cudaSetDevice(g));
  memlab::stream st(cudaStreamNonBlocking);
  multi_timer timer({{g, st.get()}});
  if (v == "sm_chase_host") {
    // A dependent chain of 4-byte loads from mapped pinned host memory: each waits a full
    // PCIe round trip. 4 MiB of host memory, slots 256 bytes apart, in random order.
    std::size_t const words = std::size_t{1} << 20, stride = 64, slots = words / stride, steps = 2000;
    pinned_buffer<std::uint32_t> chain(words, cudaHostAllocPortable | cudaHostAllocMapped);
    std::memset(chain.data(), 0, words * 4);
    std::uint32_t const want = build_cycle(chain.data(), slots, stride, s.seed(), steps);
    std::uint32_t* dev_chain = nullptr;
    MEMLAB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_chain), chain.data(), 0));
    device_buffer<std::uint32_t> last(1);
    link::chase(dev_chain, steps, last.data(), st.get());
    std::uint32_t got = 0;
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(&got, last.data(), 4, cudaMemcpyDeviceToHost, st.get()));
    st.synchronize();
    verification ver;
    ver.metric = "end of the chain";
    ver.tolerance = 0;
    ver.error = got == want ? 0 : 1;
    ver.status = got == want ? verdict::passed : verdict::failed;
    if (got != want) ver.detail = "ended at " + std::to_string(got) + ", expected " + std::to_string(want);
    s.set_verification(ver);
    time_lanes(s, timer, [&] { link::chase(dev_chain, steps, last.data(), st.get()); });
    if (auto m = s.result().median_ms) s.set_extra("latency_us", *m * 1e3 / steps);
    s.set_extra("what", "one thread, " + std::to_string(steps) + " dependent 4-byte loads from mapped host memory; "
                        "latency = time / steps (one launch's overhead spread over them)");
    return;
  }
  bool const h2d = v == "ce_h2d";
  pinned_buffer<std::uint32_t> h(1);
  device_buffer<std::uint32_t> d(1);
  std::uint32_t const value = static_cast<std::uint32_t>(s.seed());
  h.data()[0] = value;
  if (h2d) {
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), 4, cudaMemcpyHostToDevice, st.get()));
    st.synchronize();  // the copy has read h before it is cleared
    h.data()[0] = 0;
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.data(), 4, cudaMemcpyDeviceToHost, st.get()));
  } else {
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), 4, cudaMemcpyHostToDevice, st.get()));
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.data(), 4, cudaMemcpyDeviceToHost, st.get()));
  }
  st.synchronize();
  verification ver;
  ver.metric = "word after the round trip";
  ver.tolerance = 0;
  ver.error = h.data()[0] == value ? 0 : 1;
  ver.status = h.data()[0] == value ? verdict::passed : verdict::failed;
  s.set_verification(ver);
  timer.set_gated(true);  // the copies' own time, not the host's cost of issuing them
  time_lanes(s, timer, [&] {
    if (h2d) MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), 4, cudaMemcpyHostToDevice, st.get()));
    else MEMLAB_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.data(), 4, cudaMemcpyDeviceToHost, st.get()));
  });
  if (auto m = s.result().median_ms) s.set_extra("latency_us", *m * 1e3);
  s.set_extra("what", "4-byte cudaMemcpyAsync on one stream, back to back behind a gate: time per copy on the "
                      "GPU (the copy engine's round trip and scheduling, without the host's issue cost)");
}

void staged_body(state& s) {
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  auto const chunk = static_cast<std::size_t>(s.get_int("chunk_bytes"));
  int const nstreams = static_cast<int>(s.get_int("streams"));
  MEMLAB_EXPECTS(bytes % 4 == 0 && bytes > 0, "bytes must be a positive multiple of 4");
  std::size_t const n = bytes / sizeof(float);
  int const g = s.device().index;
  device_guard guard;
  pinned_buffer<float> h_in(n), h_out(n);
  transfer::fill_random_floats(h_in.data(), n, s.seed());
  std::memset(h_out.data(), 0xFF, bytes);
  staged_pipeline<float, float> pipe(staged_options{chunk, nstreams});
  constexpr float a = 2.0f, b = 0.5f;  // 2x is exact, so a*x+b rounds once with or without FMA
  auto launch = [](float const* din, float* dout, std::size_t count, cudaStream_t st) {
    transfer::affine(din, dout, count, a, b, st);
  };
  pipe.run(h_in.data(), h_out.data(), n, launch);
  std::atomic<std::size_t> bad{0};
  memlab::detail::host_parallel_for(n, [&](std::size_t lo, std::size_t hi) {
    std::size_t k = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      float const want = a * h_in.data()[i] + b;
      k += std::memcmp(&want, h_out.data() + i, 4) != 0;
    }
    bad += k;
  });
  verification v;
  v.metric = "elements differing from 2x+0.5";
  v.tolerance = 0;
  v.error = static_cast<double>(bad);
  v.status = bad ? verdict::failed : verdict::passed;
  s.set_verification(v);

  s.add_bytes_read(2.0 * static_cast<double>(bytes));
  s.set_extra("bytes_counted", "H2D + D2H, once each");
  auto policy = capped(s.timing(), 1.0);
  s.set_samples(sample_until_stable(
                    [&] {
                      auto const t0 = std::chrono::steady_clock::now();
                      pipe.run(h_in.data(), h_out.data(), n, launch);
                      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
                    },
                    policy),
                "host");
  // The bound: the same bytes H2D and D2H at once on two streams of this GPU (copy engines).
  device_buffer<float> d_in(n), d_out(n);
  memlab::stream s_up(cudaStreamNonBlocking), s_down(cudaStreamNonBlocking);
  multi_timer timer({{g, s_up.get()}, {g, s_down.get()}});
  double const duplex = median_lanes(
      s, timer,
      [&] {
        MEMLAB_CUDA_CHECK(cudaMemcpyAsync(d_in.data(), h_in.data(), bytes, cudaMemcpyHostToDevice, s_up.get()));
        MEMLAB_CUDA_CHECK(cudaMemcpyAsync(h_out.data(), d_out.data(), bytes, cudaMemcpyDeviceToHost, s_down.get()));
      },
      1.0);
  s.set_peer("duplex copy (H2D + D2H of the same bytes at once)", duplex);
  s.set_predicted({{"ms", duplex}, {"basis", "the measured duplex copy: the pipeline cannot beat the shared link"}});
  s.set_extra("duplex_gbps", 2.0 * bytes / (duplex * 1e-3) / 1e9);
  s.set_extra("chunks", pipe.chunks_for(n));
  s.set_extra("timed_with", "host wall clock around the synchronous staged_pipeline::run; the duplex bound with events");
}

registrar const reg_host{[] {
  experiment e;
  e.id = "link.host";
  e.description = "host<->device bandwidth per GPU and all GPUs at once: copy engines vs SM copies over mapped pinned memory";
  e.seed_ref = "000 §9.1";
  e.axes = {string_axis("gpu", gpu_values(), {"0", "all"}),
            string_axis("direction", {"h2d", "d2h", "both"}),
            link_bytes_axis(), variant_axis({"ce", "sm"})};
  e.body = host_body;
  e.describe_axis("gpu", "", "the GPU (0..7; a GPU the machine lacks is a skipped row) or all GPUs at once");
  e.describe_axis("direction", "", "host to device, device to host, or both at once");
  e.describe_axis("bytes", "bytes", "bytes per direction per GPU");
  e.describe_axis("variant", "", "ce: cudaMemcpyAsync on copy engines; sm: a copy kernel over mapped pinned memory");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("cudaMemcpyAsync"),
               {"extra.gbps_per_gpu", "GB/s", "bytes per GPU / time"}};
  e.headline = best_row("How much do the host links give, one GPU and all GPUs at once, both directions?",
                        {{"direction", {"both"}}}, "gbps", "");
  e.headline.higher_is_better = true;
  e.prose = {"Each GPU's host link (PCIe) measured the two ways a program can move data: the copy engines "
             "(cudaMemcpyAsync from pinned memory) and the SMs (a copy kernel reading or writing mapped pinned "
             "memory). Both directions at once show whether the link is really full duplex; all GPUs at once show "
             "how much of the host's memory and root complex each GPU gets.",
             "GB/s per direction near the PCIe generation's rate; 'both' near twice it; 'all' against the sum of "
             "the single-GPU rows.",
             ""};
  {
    plot_spec p = bar_plot("link_host.png", "Host <-> device bandwidth per GPU", "gpu", "gbps", {"variant"});
    p.panels = "direction";
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const reg_latency{[] {
  experiment e;
  e.id = "link.host_latency";
  e.description = "host<->device latency: a 4-byte cudaMemcpyAsync each way and a dependent load chain over PCIe";
  e.seed_ref = "000 §9.1";
  e.axes = {int_axis("gpu", range(0, 7), {0}), variant_axis({"ce_h2d", "ce_d2h", "sm_chase_host"})};
  e.body = host_latency_body;
  e.describe_axis("gpu", "", "the GPU (a GPU the machine lacks is a skipped row)");
  e.describe_axis("variant", "", "4-byte copy H2D, D2H, or one thread's dependent 4-byte loads from host memory");
  e.metrics = {metrics::time(), {"extra.latency_us", "µs", "time per copy or per dependent load"}};
  e.headline = best_row("How long does the smallest transfer take?", {{"variant", {"ce_h2d"}}}, "median_ms");
  e.prose = {"The fixed cost of crossing the host link: a 4-byte copy on a copy engine, and a dependent load "
             "from mapped host memory (a PCIe read round trip).",
             "A few µs per copy; about 1 µs per dependent load.", ""};
  {
    plot_spec p = bar_plot("link_host_latency.png", "Host <-> device latency", "variant", "extra.latency_us", {"gpu"});
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const reg_staged{[] {
  experiment e;
  e.id = "link.staged";
  e.description = "memlab::staged_transform against the measured duplex copy of the same bytes (its honest bound)";
  e.seed_ref = "000 §9.1.2";
  e.axes = {int_axis("bytes", {std::int64_t{256} << 20}, {std::int64_t{32} << 20}),
            int_axis("chunk_bytes", {std::int64_t{2} << 20, std::int64_t{4} << 20, std::int64_t{8} << 20, std::int64_t{16} << 20}, {std::int64_t{4} << 20}),
            int_axis("streams", {4}),
            variant_axis({"staged_transform"})};
  e.axes[0].min_value = 4;
  e.axes[1].min_value = 4;
  e.axes[2].min_value = 1;
  e.axes[2].max_value = 64;
  e.body = staged_body;
  e.describe_axis("bytes", "bytes", "bytes each way");
  e.describe_axis("chunk_bytes", "bytes", "the pipeline's chunk");
  e.describe_axis("streams", "streams", "chunks in flight (kernel streams and device buffer pairs)");
  e.describe_axis("variant", "", "the library on pinned buffers with a copy-bound kernel (2x + 0.5)");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("the duplex copy")};
  e.headline = best_row("How close does the staged pipeline come to the link's duplex rate?", {}, "median_ms",
                        "ratio_to_peer");
  e.prose = {"A copy-bound staged transform can go no faster than the host link moving the same bytes both ways at "
             "once; that duplex copy, measured in the same point, is its bound (transfer.overlap's bound assumed "
             "each direction alone).",
             "ratio_to_peer near 1 (target >= 0.95).", ""};
  {
    plot_spec p = bar_plot("link_staged.png", "staged_transform against the duplex copy", "chunk_bytes", "ratio_to_peer");
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
