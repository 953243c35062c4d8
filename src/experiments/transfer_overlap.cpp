// transfer.overlap: Best Practices Guide §9.1.2 (seed 000 §9.1.2), staged concurrent
// copy and execute, and memlab::staged_transform (include/memlab/staged_transform.hpp).
//
// Work: `bytes` of floats, host-to-device, a kernel (fma_chain, cost set by its iteration
// count so that tE / tT is the axis value, tT = tH2D + tD2H measured alone), device-to-host.
// Variants:
//   guide_staged               the Guide's loop: the buffer split in `streams` chunks, chunk
//                              i's H2D, kernel and D2H on non-default stream i (pinned memory).
//                              Peer: sequential (cudaMemcpy, kernel, cudaMemcpy on the default stream).
//   staged_transform           the library, pinned host buffers, 4 MiB chunks over `streams`.
//   staged_transform_pageable  the library from pageable (malloc) buffers via pinned staging.
//                              Peer of both: the slowest stage measured alone (the bound).
// Model (Guide): sequential tE + tT; staged tE + tT/n if tE >= tT, else tT + tE/n. With two
// or more copy engines H2D and D2H are separate pipeline stages, and n equal chunks through
// stages of total times t1..t3 take tmax + (tsum - tmax)/n (a flow shop; for two stages it
// is the Guide's formula). Both are recorded; `ms` is the engine-aware one.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "bench/state.hpp"
#include "kernels/transfer/host_timing.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/buffer.hpp"
#include "memlab/staged_transform.hpp"
#include "transfer_noise.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

constexpr int max_streams = 64;
constexpr std::size_t library_chunk_bytes = std::size_t{4} << 20;

/// Buffers shared by the points of one size (allocated once: pinning 2 x 128 MiB per
/// point would dominate the experiment's time), plus per-ratio calibration.
struct workspace {
  std::size_t n = 0;
  pinned_buffer<float> h_in, h_out;
  float* p_in = nullptr;   ///< pageable (malloc) copies for the pageable variant
  float* p_out = nullptr;
  device_buffer<float> d_in, d_out;
  std::vector<memlab::stream> streams;
  transfer::fork_join_timer fj{max_streams};

  struct stage_times {
    int iters = 0;
    double h2d = 0, kernel = 0, d2h = 0;
    double both = 0;  ///< H2D and D2H of the whole buffer at once (the link is shared when both run)
    sample_summary sequential;
    double host_in = 0, host_out = 0;     ///< pageable -> pinned staging memcpy and back (lazy)
    double pageable_sequential = -1;      ///< cudaMemcpy from pageable, kernel, back (lazy)
  };
  std::map<double, stage_times> by_ratio;

  explicit workspace(std::size_t count) : n(count), h_in(count), h_out(count), d_in(count), d_out(count) {
    transfer::fill_random_floats(h_in.data(), n, 1);  // defined data for the calibration runs
    for (int i = 0; i < 16; ++i) streams.emplace_back(cudaStreamNonBlocking);
  }
  workspace(workspace const&) = delete;
  workspace& operator=(workspace const&) = delete;
  ~workspace() {
    std::free(p_in);
    std::free(p_out);
  }
  void ensure_pageable() {
    if (p_in) return;
    p_in = static_cast<float*>(std::malloc(n * sizeof(float)));
    p_out = static_cast<float*>(std::malloc(n * sizeof(float)));
    if (!p_in || !p_out) throw memlab::error("malloc of the pageable buffers failed");
    std::memset(p_in, 0, n * sizeof(float));  // touch the pages before anything is timed
    std::memset(p_out, 0, n * sizeof(float));
  }
};

workspace& workspace_for(std::size_t n) {
  // Deliberately never freed at exit: static destructors run after the CUDA runtime has
  // shut down, where cudaFreeHost would fail; the process exit releases the memory.
  static workspace* w = nullptr;
  if (!w || w->n != n) {
    delete w;
    w = nullptr;
    w = new workspace(n);
  }
  return *w;
}

double host_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// Calibrates the kernel so tE ~ ratio x (tH2D + tD2H), and measures each stage alone.
workspace::stage_times& stages_for(state& s, workspace& w, double ratio) {
  if (auto it = w.by_ratio.find(ratio); it != w.by_ratio.end()) return it->second;
  workspace::stage_times t;
  std::size_t const bytes = w.n * sizeof(float);
  t.h2d = s.measure([&](cudaStream_t st) {
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(w.d_in.data(), w.h_in.data(), bytes, cudaMemcpyHostToDevice, st));
  }).median;
  t.d2h = s.measure([&](cudaStream_t st) {
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(w.h_out.data(), w.d_out.data(), bytes, cudaMemcpyDeviceToHost, st));
  }).median;
  // Cost is linear in the iteration count: two points give the intercept and slope.
  auto kernel_ms = [&](int iters) {
    return s.measure([&](cudaStream_t st) { transfer::fma_chain(w.d_in.data(), w.d_out.data(), w.n, iters, st); }).median;
  };
  double const k1 = kernel_ms(64), k2 = kernel_ms(1024);
  double const slope = std::max((k2 - k1) / 960.0, 1e-9);
  double const target = ratio * (t.h2d + t.d2h);
  t.iters = static_cast<int>(std::clamp(std::lround((target - (k1 - 64 * slope)) / slope), 1L, 1L << 22));
  t.kernel = kernel_ms(t.iters);
  // Both copies at once, on two streams: PCIe is full duplex, but not at twice the rate.
  std::vector<cudaStream_t> const two = {w.streams[0].get(), w.streams[1].get()};
  t.both = median(bench::sample_until_stable(
      [&] {
        return w.fj.time(two, [&] {
          MEMLAB_CUDA_CHECK(cudaMemcpyAsync(w.d_in.data(), w.h_in.data(), bytes, cudaMemcpyHostToDevice, two[0]));
          MEMLAB_CUDA_CHECK(cudaMemcpyAsync(w.h_out.data(), w.d_out.data(), bytes, cudaMemcpyDeviceToHost, two[1]));
        });
      },
      bench::capped(s.timing(), 0.3)));

  // Sequential: cudaMemcpy and the kernel on the legacy default stream.
  memlab::event start, stop;
  auto policy = s.timing();
  t.sequential = summarize(bench::sample_until_stable(
      [&] {
        start.record(cudaStreamLegacy);
        MEMLAB_CUDA_CHECK(cudaMemcpy(w.d_in.data(), w.h_in.data(), bytes, cudaMemcpyHostToDevice));
        transfer::fma_chain(w.d_in.data(), w.d_out.data(), w.n, t.iters, cudaStreamLegacy);
        MEMLAB_CUDA_CHECK(cudaMemcpy(w.h_out.data(), w.d_out.data(), bytes, cudaMemcpyDeviceToHost));
        stop.record(cudaStreamLegacy);
        stop.synchronize();
        return static_cast<double>(stop.elapsed_since(start));
      },
      policy));
  return w.by_ratio.emplace(ratio, t).first->second;
}

/// The pageable variant's extra stages: the host copies into and out of pinned staging
/// (each alone, on one thread, as the library does each), and the plain pageable baseline.
void pageable_stages(state& s, workspace& w, workspace::stage_times& t) {
  if (t.pageable_sequential >= 0) return;
  w.ensure_pageable();
  std::size_t const bytes = w.n * sizeof(float);
  auto policy = s.timing();
  policy.min_samples = std::min(policy.min_samples, 5);
  t.host_in = median(bench::sample_until_stable(
      [&] {
        auto const t0 = std::chrono::steady_clock::now();
        std::memcpy(w.h_in.data(), w.p_in, bytes);
        return host_ms(t0);
      },
      policy));
  t.host_out = median(bench::sample_until_stable(
      [&] {
        auto const t0 = std::chrono::steady_clock::now();
        std::memcpy(w.p_out, w.h_out.data(), bytes);
        return host_ms(t0);
      },
      policy));
  memlab::event start, stop;
  t.pageable_sequential = median(bench::sample_until_stable(
      [&] {
        start.record(cudaStreamLegacy);
        MEMLAB_CUDA_CHECK(cudaMemcpy(w.d_in.data(), w.p_in, bytes, cudaMemcpyHostToDevice));
        transfer::fma_chain(w.d_in.data(), w.d_out.data(), w.n, t.iters, cudaStreamLegacy);
        MEMLAB_CUDA_CHECK(cudaMemcpy(w.p_out, w.d_out.data(), bytes, cudaMemcpyDeviceToHost));
        stop.record(cudaStreamLegacy);
        stop.synchronize();
        return static_cast<double>(stop.elapsed_since(start));
      },
      policy));
}

/// Checks out[i] against the closed form of the chain for in[i]; NaN never passes.
verification check_chain(float const* in, float const* out, std::size_t n, int iters) {
  double const ak = std::pow(static_cast<double>(transfer::chain_a), iters);
  double const c = transfer::chain_b * (1.0 - ak) / (1.0 - transfer::chain_a);
  double const tol = transfer::fma_chain_tolerance(iters);
  verification v;
  v.metric = "max_abs_err";
  v.tolerance = tol;
  double worst = 0;
  std::size_t bad = 0, first = n;
  std::mutex m;
  memlab::detail::host_parallel_for(n, [&](std::size_t lo, std::size_t hi) {
    double w_local = 0;
    std::size_t bad_local = 0, first_local = n;
    for (std::size_t i = lo; i < hi; ++i) {
      double const ref = static_cast<double>(in[i]) * (1.0 + ak) + c;
      double const err = std::fabs(static_cast<double>(out[i]) - ref);
      if (!(err <= tol)) {  // NaN fails here
        if (bad_local++ == 0) first_local = i;
      }
      if (std::isnan(err)) w_local = INFINITY;
      else if (err > w_local) w_local = err;
    }
    std::lock_guard<std::mutex> lk(m);
    worst = std::max(worst, w_local);
    bad += bad_local;
    first = std::min(first, first_local);
  });
  v.error = worst;
  v.status = bad == 0 ? verdict::passed : verdict::failed;
  if (bad)
    v.detail = std::to_string(bad) + " of " + std::to_string(n) + " outside tolerance; first at " + std::to_string(first) +
               ": got " + std::to_string(out[first]);
  return v;
}

/// The Guide's staged loop: chunk i of `nstreams` on stream i.
void issue_guide(workspace& w, int nstreams, int iters, std::vector<memlab::event>* marks = nullptr) {
  std::size_t const chunk = (w.n + nstreams - 1) / nstreams;
  for (int i = 0; i < nstreams; ++i) {
    std::size_t const off = i * chunk;
    if (off >= w.n) break;
    std::size_t const len = std::min(chunk, w.n - off);
    cudaStream_t const st = w.streams[i].get();
    if (marks) (*marks)[4 * i + 0].record(st);
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(w.d_in.data() + off, w.h_in.data() + off, len * sizeof(float),
                                      cudaMemcpyHostToDevice, st));
    if (marks) (*marks)[4 * i + 1].record(st);
    transfer::fma_chain(w.d_in.data() + off, w.d_out.data() + off, len, iters, st);
    if (marks) (*marks)[4 * i + 2].record(st);
    MEMLAB_CUDA_CHECK(cudaMemcpyAsync(w.h_out.data() + off, w.d_out.data() + off, len * sizeof(float),
                                      cudaMemcpyDeviceToHost, st));
    if (marks) (*marks)[4 * i + 3].record(st);
  }
}

/// One recorded run of the Guide's loop: per chunk, when each op's stream reached it
/// (`ready`), when it ended, and `start` = max(ready, the previous end of an op of the
/// same kind): copies of one direction share one copy engine, kernels fill the GPU.
nlohmann::json timeline(workspace& w, int nstreams, int iters) {
  std::vector<memlab::event> marks(4 * nstreams);
  std::vector<cudaStream_t> sts;
  for (int i = 0; i < nstreams; ++i) sts.push_back(w.streams[i].get());
  (void)w.fj.time(sts, [&] { issue_guide(w, nstreams, iters, &marks); });
  struct op {
    int stream;
    char const* kind;
    double ready, end;
  };
  std::vector<op> ops;
  char const* kinds[3] = {"h2d", "kernel", "d2h"};
  for (int i = 0; i < nstreams; ++i)
    for (int k = 0; k < 3; ++k)
      ops.push_back({i, kinds[k], marks[4 * i + k].elapsed_since(w.fj.start_event()),
                     marks[4 * i + k + 1].elapsed_since(w.fj.start_event())});
  std::stable_sort(ops.begin(), ops.end(), [](op const& a, op const& b) { return a.end < b.end; });
  std::map<std::string, double> engine_free;
  nlohmann::json out = nlohmann::json::array();
  for (auto const& o : ops) {
    double const start = std::max(o.ready, engine_free[o.kind]);
    engine_free[o.kind] = o.end;
    out.push_back({{"stream", o.stream}, {"op", o.kind}, {"ready_ms", o.ready}, {"start_ms", std::min(start, o.end)},
                   {"end_ms", o.end}});
  }
  return out;
}

void overlap_body(state& s) {
  std::string const variant = s.variant();
  double const ratio = s.get_float("te_over_tt");
  int const nstreams = static_cast<int>(s.get_int("streams"));
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % sizeof(float) == 0 && bytes > 0, "bytes must be a positive multiple of 4");
  MEMLAB_EXPECTS(nstreams >= 1 && nstreams <= 16, "streams must be in 1..16");
  workspace& w = workspace_for(bytes / sizeof(float));
  workspace::stage_times& t = stages_for(s, w, ratio);
  bool const pageable = variant == "staged_transform_pageable";
  if (pageable) pageable_stages(s, w, t);

  // Fresh input for this point in both the pinned and (if used) the pageable buffers.
  transfer::fill_random_floats(w.h_in.data(), w.n, s.seed());
  if (pageable) std::memcpy(w.p_in, w.h_in.data(), bytes);
  float const* in_host = pageable ? w.p_in : w.h_in.data();
  float* out_host = pageable ? w.p_out : w.h_out.data();

  int const iters = t.iters;
  auto chain = [iters](float const* d_in, float* d_out, std::size_t count, cudaStream_t st) {
    transfer::fma_chain(d_in, d_out, count, iters, st);
  };
  std::vector<cudaStream_t> sts;
  for (int i = 0; i < nstreams; ++i) sts.push_back(w.streams[i].get());
  std::optional<staged_pipeline<float, float>> pipe;
  if (variant != "guide_staged") pipe.emplace(staged_options{library_chunk_bytes, nstreams});

  auto run_once = [&]() -> double {
    if (variant == "guide_staged") return w.fj.time(sts, [&] { issue_guide(w, nstreams, iters); });
    auto const t0 = std::chrono::steady_clock::now();
    pipe->run(in_host, out_host, w.n, chain);
    return host_ms(t0);
  };

  // Checked run into a poisoned output. The reference is the chain's closed form.
  std::memset(out_host, 0xFF, bytes);
  (void)run_once();
  s.set_verification(check_chain(in_host, out_host, w.n, iters));

  s.add_bytes_read(2.0 * static_cast<double>(bytes));
  s.add_flops(2.0 * static_cast<double>(w.n) * iters);
  s.set_extra("bytes_counted", "bytes moved across PCIe: H2D + D2H, once each");
  auto policy = s.timing();
  if (variant != "guide_staged") {
    // The library's host-side timing is noisier (host copies, thread wake-ups): cap its budget.
    policy = bench::capped(policy, pageable ? 0.4 : 0.5);
    s.set_extra("sampling", "capped: at most 0.4-0.5 s, at least 5 samples");
  }
  s.set_samples(bench::sample_until_stable(run_once, policy), variant == "guide_staged" ? "events" : "host");
  bench::set_host_noise_floor(s, pageable ? bench::host_crossing::host : bench::host_crossing::pcie);

  double const tT = t.h2d + t.d2h, tE = t.kernel;
  double const tsum = t.h2d + t.kernel + t.d2h;
  double const tmax = std::max({t.h2d, t.kernel, t.d2h});
  int const engines = s.device().async_engine_count;
  // The copy stage's time when both directions are busy: with two engines they share the
  // link (t.both, measured), with one they are serial.
  double const copy_busy = engines >= 2 ? t.both : tT;
  nlohmann::json stages = {{"h2d_ms", t.h2d},       {"kernel_ms", t.kernel}, {"d2h_ms", t.d2h},
                           {"both_copies_at_once_ms", t.both},
                           {"tT_ms", tT},           {"tE_ms", tE},           {"te_over_tt_measured", tE / tT},
                           {"iters", iters},        {"async_engine_count", engines}};
  s.set_extra("stages_alone", stages);

  if (variant == "guide_staged") {
    double const n = nstreams;
    double const guide = tE >= tT ? tE + tT / n : tT + tE / n;
    // One copy engine: H2D and D2H share it, the Guide's two-stage pipeline is exact.
    double const flow = engines >= 2 ? tmax + (tsum - tmax) / n : std::max(tT, tE) + std::min(tT, tE) / n;
    // The same flow shop, with the steady state's copies at the rate both directions get together.
    double const duplex = tsum / n + (n - 1) / n * std::max(tE, copy_busy);
    s.set_predicted({{"ms", duplex},
                     {"flow_alone_ms", flow},
                     {"guide_ms", guide},
                     {"sequential_ms", tE + tT},
                     {"basis", "tsum/n + (n-1)/n x max(tE, both copies at once); flow_alone: stage times alone; "
                               "guide: the Guide's max(tE,tT) + min(tE,tT)/n"}});
    s.set_peer("sequential (default stream)", t.sequential.median);
    s.set_extra("sequential_noise", t.sequential.noise);
    if (auto m = s.result().median_ms) {
      s.set_extra("measured_over_model", *m / duplex);
      s.set_extra("measured_over_flow_alone_model", *m / flow);
      s.set_extra("measured_over_guide_model", *m / guide);
    }
    s.set_extra("timed_with", "events: start on stream 0, every stream joined back before stop");
    if (nstreams == 4 && std::fabs(ratio - 1.0) < 1e-9) s.set_extra("timeline", timeline(w, nstreams, iters));
  } else {
    double const k = static_cast<double>(pipe->chunks_for(w.n));
    double bound = tmax;
    nlohmann::json peer_basis = "max(H2D, kernel, D2H), each measured alone on the whole buffer";
    if (pageable) {
      // The calling thread copies into staging and a second thread copies out of it: each is a stage.
      bound = std::max({bound, t.host_in, t.host_out});
      peer_basis = "max(H2D, kernel, D2H, host copy into staging, host copy out of staging), each measured alone";
      s.set_extra("host_staging_ms", {{"in", t.host_in}, {"out", t.host_out}});
      s.set_extra("pageable_sequential_ms", t.pageable_sequential);
    }
    // K chunks through the stages; in steady state a chunk costs the busiest resource's share
    // (kernel, both copies sharing the link, or the host thread's staging copies), and with S
    // streams each holding one chunk's device buffers, at least tsum/S (1 stream: all serial).
    double const host = pageable ? std::max(t.host_in, t.host_out) : 0.0;
    double const sum_all = tsum + (pageable ? t.host_in + t.host_out : 0.0);
    // The host copies run on their own threads, so the stream limit covers the device stages only.
    double const busy = std::max({tE, copy_busy, host, tsum / nstreams});
    double const model = sum_all / k + (k - 1) / k * busy;
    double const duplex_bound = std::max({tE, copy_busy, host});
    s.set_predicted({{"ms", model}, {"bound_ms", bound}, {"duplex_bound_ms", duplex_bound}, {"chunks", k},
                     {"basis", "sum/K + (K-1)/K x max(tE, both copies at once, each host staging copy, device tsum/S)"}});
    s.set_peer("slowest_stage_bound", bound);  // ratio_to_peer = bound / time = fraction of the bound reached
    if (auto m = s.result().median_ms) {
      s.set_extra("fraction_of_duplex_bound", duplex_bound / *m);
      s.set_extra("measured_over_model", *m / model);
    }
    s.set_extra("peer_basis", peer_basis);
    s.set_extra("chunk_bytes", library_chunk_bytes);
    s.set_extra("timed_with", "host wall clock around the synchronous staged_pipeline::run");
  }
}

memlab::bench::registrar const reg{[] {
  experiment e;
  e.id = "transfer.overlap";
  e.description = "staged concurrent copy and execute over 1..16 streams vs sequential, and staged_transform, tE/tT 0.25..4";
  e.seed_ref = "000 §9.1.2";
  e.axes = {int_axis("bytes", {std::int64_t{1} << 27}, {std::int64_t{1} << 25}),
            float_axis("te_over_tt", {0.25, 0.5, 1.0, 2.0, 4.0}, {1.0}),
            int_axis("streams", {1, 2, 4, 8, 16}, {4}),
            variant_axis({"guide_staged", "staged_transform", "staged_transform_pageable"})};
  e.axes[0].min_value = 4;
  e.axes[2].min_value = 1;
  e.axes[2].max_value = 16;
  e.body = overlap_body;
  e.describe_axis("bytes", "bytes", "bytes copied each way");
  e.describe_axis("te_over_tt", "x", "kernel time / copy time (tE / tT)");
  e.describe_axis("streams", "streams", "nStreams: chunks in flight", true);
  e.describe_axis("variant", "", "the Guide's staged loop, memlab::staged_transform, staged_transform from pageable memory");
  e.metrics = {metrics::time(), {"predicted.ms", "ms", "the slowest-stage bound on the staged time"}};
  e.headline = best_row("How much of the sequential time does staging over streams save when tE = tT?",
                        {{"variant", {"guide_staged"}}, {"te_over_tt", {"1"}}}, "median_ms", "baseline",
                        {{"streams", {"1"}}});
  e.prose = {"Staged concurrent copy and execute: the data is split into nStreams chunks, and each stream copies its "
             "chunk in, runs the kernel on it and copies it out, so copies of one chunk overlap the kernel of another. "
             "The Guide's model gives tE + tT/nStreams when the kernel time tE dominates and tT + tE/nStreams "
             "otherwise; the copy engines (asyncEngineCount) bound how much can overlap.",
             "Time falling with nStreams toward the dashed bound, most where tE = tT.",
             "Seed 000 §9.1.3: staged copy/execute with the model tE + tT/nStreams (tE ≥ tT)."};
  {
    plot_spec p = line_plot("transfer_overlap.png", "Staged copy/execute time against nStreams, with the bound", "streams", "median_ms", {"te_over_tt"});
    p.panels = "variant";
    p.model = "predicted.ms";
    e.plots.push_back(p);
  }
  {
    plot_spec p = line_plot("transfer_timeline.png", "One staged run: copies and kernels per stream", "streams", "extra.timeline");
    p.kind = "timeline";
    p.where = {{"variant", {"guide_staged"}}, {"te_over_tt", {"1"}}, {"streams", {"4"}}};
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
