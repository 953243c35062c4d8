// link.peer, link.peer_latency, link.fanout: GPU <-> GPU (docs/link.md). Every ordered pair of
// GPUs, one way and both ways at once, copy engines (cudaMemcpyPeerAsync, with and without
// peer access) against our SM copy kernel pushing (running on the source, storing through
// peer pointers) or pulling (running on the destination, loading through them); latency as a
// flag ping-pong and a pointer chase in peer memory; one GPU to all others and all to one.
// Rows naming a GPU the machine lacks are skipped with the reason.
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/state.hpp"
#include "experiments/link_common.cuh"
#include "kernels/link/link_kernels.hpp"
#include "kernels/transfer/transfer_kernels.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
using namespace memlab::link_exp;

std::vector<std::int64_t> gpu_ids() { return range(0, 7); }

verification mismatch_verdict(std::size_t bad) {
  return zero_mismatches("mismatched 8-byte words", bad);
}

std::size_t mismatches_on(int dev, void const* p, std::size_t bytes, std::uint64_t seed) {
  device_guard g;
  MEMLAB_CUDA_CHECK(cudaSetDevice(dev));
  memlab::stream st(cudaStreamNonBlocking);
  return transfer::count_pattern_mismatches(p, bytes, seed, st.get());
}

void fill_on(int dev, void* p, std::size_t bytes, std::uint64_t seed) {
  device_guard g;
  MEMLAB_CUDA_CHECK(cudaSetDevice(dev));
  transfer::fill_pattern_device(p, bytes, seed, nullptr);
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}

void set_on(int dev, void* p, std::size_t bytes, int value) {
  device_guard g;
  MEMLAB_CUDA_CHECK(cudaSetDevice(dev));
  MEMLAB_CUDA_CHECK(cudaMemset(p, value, bytes));
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
}
void poison_on(int dev, void* p, std::size_t bytes) { set_on(dev, p, bytes, 0xFF); }
void zero_on(int dev, void* p, std::size_t bytes) { set_on(dev, p, bytes, 0); }

/// One direction of a copy: from (device, pointer) to (device, pointer).
struct leg {
  int from, to;
  void const* src;
  void* dst;
  cudaStream_t from_stream, to_stream;
};

/// Issues one leg: "ce" cudaMemcpyPeerAsync on the source's stream; "sm_push" our kernel on the
/// source; "sm_pull" our kernel on the destination. `blocks` 0: the default grid.
void issue_leg(leg const& l, std::string const& how, std::size_t bytes, int blocks = 0) {
  if (how == "ce") {
    MEMLAB_CUDA_CHECK(cudaSetDevice(l.from));
    MEMLAB_CUDA_CHECK(cudaMemcpyPeerAsync(l.dst, l.to, l.src, l.from, bytes, l.from_stream));
  } else if (how == "sm_push") {
    MEMLAB_CUDA_CHECK(cudaSetDevice(l.from));
    link::sm_copy(l.dst, l.src, bytes, blocks, l.from_stream);
  } else {
    MEMLAB_CUDA_CHECK(cudaSetDevice(l.to));
    link::sm_copy(l.dst, l.src, bytes, blocks, l.to_stream);
  }
}

void peer_body(state& s) {
  int const src = gpu_of(s, "src"), dst = gpu_of(s, "dst");
  if (src == dst) s.skip("src = dst: a copy within one GPU (the run's ceilings row measures it)");
  std::string const v = s.variant();
  bool const bi = s.get_string("direction") == "bi";
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 16 == 0 && bytes > 0, "bytes must be a positive multiple of 16");
  bool const access = v != "ce_no_access";
  bool const can = can_access(src, dst) && can_access(dst, src);
  s.set_extra("can_access_peer", can);
  if (access && !can)
    s.skip("cudaDeviceCanAccessPeer: GPUs " + std::to_string(src) + " and " + std::to_string(dst) +
           " cannot reach each other's memory (no NVLink or PCIe P2P)");
  device_guard guard;
  peer_access pa;
  if (can) {
    bool const changed = pa.set(src, dst, access) | pa.set(dst, src, access);
    if (!access && changed) s.set_extra("peer_access_note", "peer access was on (enabled earlier in this process); "
                                                            "turned off for this row and back on after it");
  }
  s.set_extra("path", access ? "direct: peer access on (NVLink or PCIe P2P)"
                             : "peer access off: the driver stages the copy through host memory");
  auto a_src = buffer_on<char>(src, bytes), a_dst = buffer_on<char>(src, bi ? bytes : 0);
  auto b_src = buffer_on<char>(dst, bi ? bytes : 0), b_dst = buffer_on<char>(dst, bytes);
  memlab::stream sa = stream_on(src), sb = stream_on(dst);
  std::uint64_t const seed_ab = s.seed(), seed_ba = s.seed() ^ 0xA5A5A5A5ull;
  fill_on(src, a_src.data(), bytes, seed_ab);
  poison_on(dst, b_dst.data(), bytes);
  if (bi) {
    fill_on(dst, b_src.data(), bytes, seed_ba);
    poison_on(src, a_dst.data(), bytes);
  }
  std::vector<leg> legs = {{src, dst, a_src.data(), b_dst.data(), sa.get(), sb.get()}};
  if (bi) legs.push_back({dst, src, b_src.data(), a_dst.data(), sb.get(), sa.get()});
  std::string const how = v == "ce_no_access" ? "ce" : v;
  auto issue = [&](std::string const& h) {
    for (auto const& l : legs) issue_leg(l, h, bytes);
  };
  multi_timer timer({{src, sa.get()}, {dst, sb.get()}});
  (void)timer.time([&] { issue(how); });
  std::size_t bad = mismatches_on(dst, b_dst.data(), bytes, seed_ab);
  if (bi) bad += mismatches_on(src, a_dst.data(), bytes, seed_ba);
  s.set_verification(mismatch_verdict(bad));

  s.add_bytes_read(static_cast<double>(bytes) * (bi ? 2.0 : 1.0));
  s.set_extra("bytes_counted", bi ? "bytes each way, both directions summed" : "bytes copied src -> dst");
  time_lanes(s, timer, [&] { issue(how); });
  if (how != "ce") {
    s.set_peer("cudaMemcpyPeerAsync", median_lanes(s, timer, [&] { issue("ce"); }));
    s.set_extra("sm_copy", std::string(how == "sm_push" ? "on the source GPU, storing" : "on the destination GPU, loading") +
                               " 16-byte vectors through peer pointers, 4 in flight per thread, " +
                               std::to_string(link::sm_copy_default_blocks()) + " CTAs of 512 threads");
  }
  s.set_predicted({{"gbps", (bi ? 2.0 : 1.0) * 450.0},
                   {"basis", "NVLink4 (H100/H200 SXM): 18 links x 25 GB/s = 450 GB/s per direction, theoretical; "
                             "without NVLink, PCIe (Gen5 x16: 63 GB/s per direction)"}});
}

void peer_latency_body(state& s) {
  int const src = gpu_of(s, "src"), dst = gpu_of(s, "dst");
  std::string const v = s.variant();
  if (src == dst && v != "chase_local") s.skip("src = dst: not a link (chase_local is the same-GPU baseline)");
  if (src != dst && v == "chase_local") s.skip("chase_local is the baseline in src's own memory: measured on the diagonal");
  if (v != "chase_local" && !(can_access(src, dst) && can_access(dst, src)))
    s.skip("cudaDeviceCanAccessPeer: GPUs " + std::to_string(src) + " and " + std::to_string(dst) +
           " cannot reach each other's memory");
  device_guard guard;
  peer_access pa;
  if (v != "chase_local") pa.set_pair(src, dst, true);
  memlab::stream sa = stream_on(src), sb = stream_on(dst);
  if (v == "pingpong") {
    constexpr int rounds = 2000;
    auto fa = buffer_on<std::uint32_t>(src, 1), fb = buffer_on<std::uint32_t>(dst, 1);
    zero_on(src, fa.data(), 4);
    zero_on(dst, fb.data(), 4);
    std::uint32_t base = 0;
    auto issue = [&] {
      // The responder first: its kernel is running by the time the first ping lands.
      MEMLAB_CUDA_CHECK(cudaSetDevice(dst));
      link::pingpong(fb.data(), fa.data(), rounds, base, false, sb.get());
      MEMLAB_CUDA_CHECK(cudaSetDevice(src));
      link::pingpong(fa.data(), fb.data(), rounds, base, true, sa.get());
      base += 2u * rounds;
    };
    multi_timer timer({{src, sa.get()}, {dst, sb.get()}});
    (void)timer.time(issue);
    std::uint32_t got_a = 0, got_b = 0;
    MEMLAB_CUDA_CHECK(cudaMemcpy(&got_a, fa.data(), 4, cudaMemcpyDefault));
    MEMLAB_CUDA_CHECK(cudaMemcpy(&got_b, fb.data(), 4, cudaMemcpyDefault));
    verification ver;
    ver.metric = "final flag values";
    ver.tolerance = 0;
    bool const ok = got_a == 2u * rounds && got_b == 2u * rounds - 1u;
    ver.error = ok ? 0 : 1;
    ver.status = ok ? verdict::passed : verdict::failed;
    if (!ok) ver.detail = "flags " + std::to_string(got_a) + ", " + std::to_string(got_b);
    s.set_verification(ver);
    time_lanes(s, timer, issue);
    if (auto m = s.result().median_ms) s.set_extra("latency_us", *m * 1e3 / rounds / 2.0);
    s.set_extra("what", std::to_string(rounds) + " round trips of a flag written into the other GPU's memory and "
                        "polled in one's own (relaxed system-scope loads and stores); latency = one way = time / 2 rounds");
    return;
  }
  // Pointer chase: one thread on src follows a random cycle of 4-byte indices, 256 bytes apart
  // over 64 MiB (beyond L2) of dst's memory (or src's own for the baseline).
  int const home = v == "chase_local" ? src : dst;
  constexpr std::size_t words = std::size_t{16} << 20, stride = 64, slots = words / stride, steps = 5000;
  std::vector<std::uint32_t> host(words, 0);
  // The same cycle as link.host_latency's: slot 0 first, the rest shuffled.
  std::vector<std::uint32_t> order(slots);
  for (std::size_t i = 0; i < slots; ++i) order[i] = static_cast<std::uint32_t>(i);
  std::mt19937_64 rng(s.seed());
  std::shuffle(order.begin() + 1, order.end(), rng);
  for (std::size_t i = 0; i < slots; ++i) host[order[i] * stride] = static_cast<std::uint32_t>(order[(i + 1) % slots] * stride);
  std::uint32_t const want = static_cast<std::uint32_t>(order[steps % slots] * stride);
  auto chain = buffer_on<std::uint32_t>(home, words);
  MEMLAB_CUDA_CHECK(cudaMemcpy(chain.data(), host.data(), words * 4, cudaMemcpyDefault));
  auto last = buffer_on<std::uint32_t>(src, 1);
  auto issue = [&] {
    MEMLAB_CUDA_CHECK(cudaSetDevice(src));
    link::chase(chain.data(), steps, last.data(), sa.get());
  };
  multi_timer timer({{src, sa.get()}});
  (void)timer.time(issue);
  std::uint32_t got = 0;
  MEMLAB_CUDA_CHECK(cudaMemcpy(&got, last.data(), 4, cudaMemcpyDefault));
  verification ver;
  ver.metric = "end of the chain";
  ver.tolerance = 0;
  ver.error = got == want ? 0 : 1;
  ver.status = got == want ? verdict::passed : verdict::failed;
  s.set_verification(ver);
  time_lanes(s, timer, issue);
  if (auto m = s.result().median_ms) s.set_extra("latency_us", *m * 1e3 / steps);
  s.set_extra("what", std::to_string(steps) + " dependent 4-byte loads (L1 bypassed) by one thread on GPU " +
                          std::to_string(src) + " from GPU " + std::to_string(home) + "'s memory; latency = time / steps");
}

void fanout_body(state& s) {
  require_gpus(s, 2, "one-to-all and all-to-one");
  int const root = gpu_of(s, "root");
  std::string const v = s.variant();
  std::string const engine = s.get_string("engine");
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 16 == 0 && bytes > 0, "bytes must be a positive multiple of 16");
  int const n = gpus();
  bool const out = v == "one_to_all";
  for (int g = 0; g < n; ++g)
    if (g != root && !(can_access(root, g) && can_access(g, root)))
      s.skip("GPUs " + std::to_string(root) + " and " + std::to_string(g) + " cannot reach each other's memory");
  device_guard guard;
  peer_access pa;
  for (int g = 0; g < n; ++g) pa.set_pair(root, g, true);
  std::vector<buffer_at<char>> srcs, dsts;
  std::vector<memlab::stream> streams;
  std::vector<leg> legs;
  std::vector<lane> lanes;
  std::vector<std::uint64_t> seeds;
  // one_to_all: root's streams (one per destination) copy one source to every other GPU;
  // all_to_one: every other GPU copies its own source into its slice at the root.
  for (int g = 0; g < n; ++g) {
    if (g == root) continue;
    int const from = out ? root : g, to = out ? g : root;
    srcs.push_back(buffer_on<char>(from, bytes));
    dsts.push_back(buffer_on<char>(to, bytes));
    streams.push_back(stream_on(from));
    seeds.push_back(s.seed() + static_cast<std::uint64_t>(g));
    fill_on(from, srcs.back().data(), bytes, seeds.back());
    poison_on(to, dsts.back().data(), bytes);
    legs.push_back({from, to, srcs.back().data(), dsts.back().data(), streams.back().get(), streams.back().get()});
    lanes.push_back({from, streams.back().get()});
  }
  // SM pushes share the sender's SMs when one GPU sends to all.
  int const blocks = out ? std::max(1, link::sm_copy_default_blocks() / (n - 1)) : 0;
  auto issue = [&](std::string const& how) {
    for (auto const& l : legs) issue_leg(l, how, bytes, how == "ce" ? 0 : blocks);
  };
  std::string const how = engine == "ce" ? "ce" : "sm_push";
  multi_timer timer(lanes);
  (void)timer.time([&] { issue(how); });
  std::size_t bad = 0;
  for (std::size_t i = 0; i < legs.size(); ++i) bad += mismatches_on(legs[i].to, legs[i].dst, bytes, seeds[i]);
  s.set_verification(mismatch_verdict(bad));
  s.add_bytes_read(static_cast<double>(bytes) * (n - 1));
  s.set_extra("bytes_counted", "bytes per peer x (GPUs - 1)");
  s.set_extra("gpus", n);
  time_lanes(s, timer, [&] { issue(how); });
  if (how != "ce") s.set_peer("cudaMemcpyPeerAsync", median_lanes(s, timer, [&] { issue("ce"); }));
}

registrar const reg_peer{[] {
  experiment e;
  e.id = "link.peer";
  e.description = "GPU<->GPU bandwidth matrix: every ordered pair, one way and both ways, copy engine (with and without "
                  "peer access) vs SM push/pull kernels";
  e.seed_ref = "000 §9.1.4";
  e.axes = {int_axis("src", gpu_ids(), {0, 1}), int_axis("dst", gpu_ids(), {0, 1}),
            string_axis("direction", {"uni", "bi"}),
            link_bytes_axis(), variant_axis({"ce", "ce_no_access", "sm_push", "sm_pull"}, {"ce", "sm_push"})};
  e.axes[0].min_value = 0;
  e.axes[1].min_value = 0;
  e.body = peer_body;
  e.describe_axis("src", "", "the GPU the data comes from");
  e.describe_axis("dst", "", "the GPU the data goes to");
  e.describe_axis("direction", "", "uni: src -> dst; bi: src -> dst and dst -> src at once (GB/s of both)");
  e.describe_axis("bytes", "bytes", "bytes per direction");
  e.describe_axis("variant", "", "ce: cudaMemcpyPeerAsync with peer access; ce_no_access: without (staged through the "
                                 "host); sm_push / sm_pull: our copy kernel on the source / destination");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("cudaMemcpyPeerAsync")};
  e.headline = best_row("What does the GPU-to-GPU link give, and does our SM copy match the copy engines?",
                        {{"variant", {"sm_push", "sm_pull"}}, {"direction", {"uni"}}}, "gbps", "ratio_to_peer");
  e.headline.higher_is_better = true;
  e.prose = {"The matrix p2pBandwidthLatencyTest and nvbandwidth print: bandwidth from every GPU to every other, one "
             "way and both ways at once, through the copy engines and through SM loads/stores on peer pointers. "
             "Without peer access cudaMemcpyPeer stages through host memory, which the ce_no_access column shows.",
             "A uniform matrix on NVSwitch machines; pairs over PCIe or fewer NVLinks stand out. sm rows near 1x of "
             "the copy engine.",
             ""};
  for (std::string const dir : {"uni", "bi"}) {
    plot_spec p = line_plot("link_peer_" + dir + ".png", "GPU -> GPU bandwidth (" + dir + "), GB/s", "dst", "gbps", {"src"});
    p.kind = "heatmap";
    p.panels = "variant";
    p.where = {{"direction", {dir}}};
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const reg_latency{[] {
  experiment e;
  e.id = "link.peer_latency";
  e.description = "GPU<->GPU latency: a flag ping-pong through peer memory and a pointer chase in peer memory";
  e.seed_ref = "000 §9.1.4";
  e.axes = {int_axis("src", gpu_ids(), {0, 1}), int_axis("dst", gpu_ids(), {0, 1}),
            variant_axis({"pingpong", "chase_peer", "chase_local"})};
  e.body = peer_latency_body;
  e.describe_axis("src", "", "the GPU that starts the ping-pong or runs the chase");
  e.describe_axis("dst", "", "the GPU that answers or holds the chain");
  e.describe_axis("variant", "", "flag ping-pong (one way), dependent loads from the peer, or from src's own memory");
  e.metrics = {metrics::time(), {"extra.latency_us", "µs", "one-way flag latency or time per dependent load"}};
  e.headline = best_row("How long does one access to another GPU's memory take?", {{"variant", {"chase_peer"}}},
                        "median_ms");
  e.prose = {"Latency across the link: a flag written into the other GPU's memory and answered (one way = half the "
             "round trip), and a chain of dependent loads from peer memory against the same chain in local memory.",
             "chase_peer minus chase_local is what the link adds to a load.", ""};
  {
    plot_spec p = line_plot("link_peer_latency.png", "GPU -> GPU latency (µs)", "dst", "extra.latency_us", {"src"});
    p.kind = "heatmap";
    p.panels = "variant";
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const reg_fanout{[] {
  experiment e;
  e.id = "link.fanout";
  e.description = "one GPU to all others and all to one at once: copy engines vs SM push kernels";
  e.seed_ref = "000 §9.1.4";
  e.axes = {int_axis("root", gpu_ids(), {0}), string_axis("engine", {"ce", "sm"}),
            link_bytes_axis(), variant_axis({"one_to_all", "all_to_one"})};
  e.axes[0].values = {std::int64_t{0}};
  e.axes[0].min_value = 0;
  e.axes[0].max_value = 7;
  e.body = fanout_body;
  e.describe_axis("root", "", "the GPU that sends to all or receives from all");
  e.describe_axis("engine", "", "ce: cudaMemcpyPeerAsync per peer; sm: our copy kernel pushing from each sender");
  e.describe_axis("bytes", "bytes", "bytes per peer");
  e.describe_axis("variant", "", "root sends to every other GPU, or every other GPU sends to root, all at once");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("cudaMemcpyPeerAsync")};
  e.headline = best_row("How much can one GPU send to (or take from) all the others at once?", {}, "gbps");
  e.headline.higher_is_better = true;
  e.prose = {"Fan-out and fan-in: the aggregate rate one GPU reaches over all its links at once. On NVSwitch it is "
             "bounded by the GPU's own NVLink bandwidth, not the number of peers.",
             "GB/s against the single-pair rows of link.peer.", ""};
  {
    plot_spec p = bar_plot("link_fanout.png", "One to all and all to one", "variant", "gbps", {"engine"});
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
