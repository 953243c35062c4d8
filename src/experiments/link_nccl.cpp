// link.nccl and link.allreduce (docs/link.md): NCCL's collectives on every visible GPU of
// this process (ncclCommInitAll, one stream per GPU), with nccl-tests' algorithm and bus
// bandwidth, each result checked against a host reference; and memlab::peer_allreduce
// (include/memlab/allreduce.hpp) against NCCL's all_reduce in the same point.
//
// Timing of a multi-GPU operation: one event pair on GPU 0's stream around the operation on
// every GPU's stream, joined by cross-stream event waits (link_common.cuh's multi_timer), so
// the time is from the moment GPU 0's stream could start until the last GPU finished: the max
// over GPUs on one clock. link.nccl times 20 operations back to back per sample at every size
// (nccl-tests' iterations) and reports per operation; its rows also carry a peer measured as
// nccl-tests does: the host clock around 20 operations issued back to back and a
// synchronisation of every stream. link.allreduce gates both (the GPUs' time alone).
#include <atomic>
#include <chrono>
#include <functional>
#include <cstring>
#include <string>
#include <vector>

#include "bench/state.hpp"
#include "experiments/link_common.cuh"
#include "kernels/link/link_kernels.hpp"
#include "kernels/link/partition.hpp"
#include "memlab/allreduce.hpp"
#include "memlab/detail/host_parallel.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
using namespace memlab::link_exp;

using link::collective;

void nccl_body(state& s) {
  std::string const why = nccl_missing();
  if (!why.empty()) s.skip(why);
#if MEMLAB_HAVE_NCCL
  collective const kind = collective_of(s.variant());
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 4 == 0 && bytes >= 4, "bytes must be a positive multiple of 4 (floats)");
  device_guard guard;
  nccl_world& w = nccl_all();
  int const n = static_cast<int>(w.comms.size());
  link::collective_shape const sh = link::shape_of(kind, bytes / sizeof(float), n);
  if (sh.part == 0)
    s.skip(std::to_string(bytes) + " bytes over " + std::to_string(n) + " ranks is less than one float per rank");
  std::vector<buffer_at<float>> send, recv;
  std::vector<lane> lanes;
  for (int r = 0; r < n; ++r) {
    send.push_back(buffer_on<float>(r, sh.send));
    recv.push_back(buffer_on<float>(r, sh.recv));
    MEMLAB_CUDA_CHECK(cudaSetDevice(r));
    link::fill_seeded(send[r].data(), sh.send, s.seed(), r, 0, true, w.streams[r].get());
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(recv[r].data(), 0xFF, sh.recv * sizeof(float), w.streams[r].get()));
    lanes.push_back({r, w.streams[r].get()});
  }
  auto issue = [&] {
    MEMLAB_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < n; ++r) issue_collective(kind, send[r].data(), recv[r].data(), sh, n, w.comms[r], w.streams[r].get());
    MEMLAB_NCCL_CHECK(ncclGroupEnd());
  };
  multi_timer timer(lanes);
  (void)timer.time(issue);  // the checked run (after the fills on the same streams)
  std::size_t bad = 0, checked = 0;
  for (int r = 0; r < n; ++r) {
    if (!output_defined(kind, r)) continue;
    bad += check_rank(kind, r, recv[r].data(), sh, n, s.seed());
    checked += sh.recv;
  }
  s.set_verification(collective_verification(bad, checked));
  describe_collective_row(s, kind, sh, n, nccl_version_text());
  // nccl-tests' definition of an operation's time is the throughput of 20 issued back to back
  // (one host thread issuing, ungated: where issuing is slower than the GPUs, that is the
  // time). The row times the same 20 per sample with events, at every size. Its peer is the
  // nccl-tests loop itself: 5 warm-up operations, then per sample 20 back to back on the host
  // clock until every stream is done, sampled alternately with the row's samples.
  constexpr int iters = 20;
  auto sync_all = [&] {
    for (int r = 0; r < n; ++r) {
      MEMLAB_CUDA_CHECK(cudaSetDevice(r));
      MEMLAB_CUDA_CHECK(cudaStreamSynchronize(w.streams[r].get()));
    }
  };
  for (int i = 0; i < 5; ++i) issue();
  sync_all();
  auto loop_once = [&] {
    auto const t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) issue();
    sync_all();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / iters;
  };
  double const loop_ms = time_lanes(s, timer, issue, nullptr, iters, loop_once);
  record_bus_gbps(s, kind, n);
  s.set_peer("nccl-tests-style loop (host clock, 20 ops)", loop_ms);
#endif
}

void allreduce_body(state& s) {
  require_gpus(s, 2, "an all-reduce across GPUs");
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  MEMLAB_EXPECTS(bytes % 16 == 0 && bytes >= 16, "bytes must be a positive multiple of 16");
  std::string const v = s.variant();
  allreduce_algorithm const algo = v == "one_shot"      ? allreduce_algorithm::one_shot
                                   : v == "two_shot"    ? allreduce_algorithm::two_shot
                                   : v == "low_latency" ? allreduce_algorithm::low_latency
                                                        : allreduce_algorithm::automatic;
  int const n = gpus();
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b && !can_access(a, b))
        s.skip("GPUs " + std::to_string(a) + " and " + std::to_string(b) + " cannot reach each other's memory");
  device_guard guard;
#if MEMLAB_HAVE_NCCL
  nccl_world& w = nccl_all();  // first: if NCCL enables peer access, peer_allreduce leaves it on
#endif
  std::vector<int> devs;
  for (int r = 0; r < n; ++r) devs.push_back(r);
  peer_allreduce ar(devs);
  std::size_t const count = bytes / sizeof(float);
  std::vector<buffer_at<float>> in, out;
  std::vector<memlab::stream> own;
  std::vector<lane> lanes;
  for (int r = 0; r < n; ++r) {
    in.push_back(buffer_on<float>(r, count));
    out.push_back(buffer_on<float>(r, count));
    own.push_back(stream_on(r));
    MEMLAB_CUDA_CHECK(cudaSetDevice(r));
    link::fill_seeded(in[r].data(), count, s.seed(), r, 0, false, own[r].get());
    MEMLAB_CUDA_CHECK(cudaMemsetAsync(out[r].data(), 0xFF, bytes, own[r].get()));
    lanes.push_back({r, own[r].get()});
  }
  std::vector<float const*> ins;
  std::vector<float*> outs;
  std::vector<cudaStream_t> sts;
  for (int r = 0; r < n; ++r) {
    ins.push_back(in[r].data());
    outs.push_back(out[r].data());
    sts.push_back(own[r].get());
  }
  auto issue = [&] { ar.sum(ins.data(), outs.data(), count, sts.data(), algo); };
  multi_timer timer(lanes);
  // Checked twice: equal to the host's rank-order float sum bit for bit on every GPU, both runs.
  std::vector<float> ref(count);
  memlab::detail::host_parallel_for(count, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      float acc = link::seeded_unit(s.seed(), 0, i);
      for (int k = 1; k < n; ++k) acc += link::seeded_unit(s.seed(), k, i);
      ref[i] = acc;
    }
  });
  std::size_t bad = 0;
  std::vector<float> got(count);
  for (int run = 0; run < 2; ++run) {
    (void)timer.time(issue);
    for (int r = 0; r < n; ++r) {
      MEMLAB_CUDA_CHECK(cudaMemcpy(got.data(), outs[r], bytes, cudaMemcpyDefault));
      for (std::size_t i = 0; i < count; ++i) bad += std::memcmp(&got[i], &ref[i], 4) != 0;
      MEMLAB_CUDA_CHECK(cudaSetDevice(r));
      MEMLAB_CUDA_CHECK(cudaMemset(outs[r], 0xFF, bytes));
      MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    }
  }
  verification ver;
  ver.metric = "elements not bit-identical to the host's rank-order sum (every GPU, two runs)";
  ver.tolerance = 0;
  ver.error = static_cast<double>(bad);
  ver.status = bad ? verdict::failed : verdict::passed;
  s.set_verification(ver);

  s.add_bytes_read(static_cast<double>(bytes));
  s.set_extra("bytes_counted", "the message (nccl-tests' size); gbps is the algorithm bandwidth");
  double const factor = link::bus_factor(collective::all_reduce, n);
  s.set_extra("ranks", n);
  allreduce_algorithm const used = algo == allreduce_algorithm::automatic ? ar.choose(std::min(bytes, allreduce_options{}.max_bytes)) : algo;
  s.set_extra("algorithm", allreduce_algorithm_name(used));
  s.set_extra("blocks_max", ar.blocks());
  // Ours and NCCL's both gated: the GPUs' time for back-to-back operations, not one host
  // thread's issue rate (which bounds both at small sizes; the auto rows record it too).
  timer.set_gated(true);
  std::function<double()> nccl_sample;  // one sample of the peer (ms per operation); none without NCCL
#if MEMLAB_HAVE_NCCL
  std::vector<lane> nlanes;
  for (int r = 0; r < n; ++r) nlanes.push_back({r, w.streams[r].get()});
  multi_timer ntimer(nlanes);
  auto nccl_issue = [&] {
    MEMLAB_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < n; ++r)
      MEMLAB_NCCL_CHECK(ncclAllReduce(ins[r], outs[r], count, ncclFloat, ncclSum, w.comms[r], w.streams[r].get()));
    MEMLAB_NCCL_CHECK(ncclGroupEnd());
  };
  ntimer.set_gated(true);
  // NCCL warmed up as nccl-tests does (5 operations), then its batch sized like ours; its
  // samples alternate with ours, so a slow phase of the machine falls on both.
  for (int i = 0; i < 5; ++i) (void)ntimer.time(nccl_issue);
  int const nbatch = s.timing().profile ? 1 : bench::batch_size_for(ntimer.time(nccl_issue));
  nccl_sample = [&] {
    return ntimer.time([&] {
             for (int i = 0; i < nbatch; ++i) nccl_issue();
           }) /
           nbatch;
  };
#endif
  double const nccl_ms = time_lanes(s, timer, issue, nullptr, 0, nccl_sample);
  if (auto m = s.result().median_ms) s.set_extra("bus_gbps", factor * bytes / (*m * 1e-3) / 1e9);
#if MEMLAB_HAVE_NCCL
  s.set_peer("NCCL all_reduce", nccl_ms);
  if (algo == allreduce_algorithm::automatic) {
    timer.set_gated(false);
    ntimer.set_gated(false);
    double const ours_host = median_lanes(s, timer, issue, 0.3), nccl_host = median_lanes(s, ntimer, nccl_issue, 0.3);
    s.set_extra("issued_by_host", {{"ours_ms", ours_host},
                                   {"nccl_ms", nccl_host},
                                   {"ratio", nccl_host / ours_host},
                                   {"what", "ungated: back-to-back operations as one host thread issues them"}});
  }
  s.set_extra("nccl_bus_gbps", factor * bytes / (nccl_ms * 1e-3) / 1e9);
  s.set_extra("nccl_version", nccl_version_text());
#else
  (void)nccl_ms;
  s.set_extra("peer_note", nccl_missing());
#endif
}

registrar const reg_nccl{[] {
  experiment e = collective_declaration(nccl_sizes(), {8, std::int64_t{1} << 20, std::int64_t{64} << 20},
                                        collective_names());
  e.id = "link.nccl";
  e.description = "NCCL all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall on every GPU: algorithm and "
                  "bus bandwidth (nccl-tests' definitions), checked against the host";
  e.body = nccl_body;
  e.prose = {"The collectives a multi-GPU program calls, in one process over every visible GPU. Bus bandwidth "
             "(nccl-tests: all_reduce x 2(n-1)/n, all_gather, reduce_scatter and alltoall x (n-1)/n, broadcast and "
             "reduce x 1) compares them with the links' own rate. The peer is the same operation timed the way "
             "nccl-tests times it.",
             "Bus bandwidth rising with size toward the link rate (link.peer); ratio_to_peer near 1.", ""};
  e.plots.push_back(line_plot("link_nccl.png", "NCCL bus bandwidth against size", "bytes", "extra.bus_gbps", {"variant"}));
  return e;
}()};

registrar const reg_allreduce{[] {
  experiment e;
  e.id = "link.allreduce";
  e.description = "memlab::peer_allreduce (low-latency / one-shot / two-shot through peer memory) against NCCL all_reduce";
  e.seed_ref = "";
  e.axes = {int_axis("bytes",
                     {std::int64_t{8} << 10, std::int64_t{32} << 10, std::int64_t{64} << 10, std::int64_t{128} << 10,
                      std::int64_t{256} << 10, std::int64_t{512} << 10, std::int64_t{1} << 20, std::int64_t{4} << 20,
                      std::int64_t{16} << 20, std::int64_t{64} << 20},
                     {std::int64_t{64} << 10, std::int64_t{1} << 20}),
            variant_axis({"auto", "low_latency", "one_shot", "two_shot"}, {"auto"})};
  e.axes[0].min_value = 16;
  e.body = allreduce_body;
  e.describe_axis("bytes", "bytes", "message size (floats x 4)", true);
  e.describe_axis("variant", "", "memlab::peer_allreduce's choice (low_latency up to 1 MiB, then one-shot; "
                                 "two-shot above 256 KiB from 3 ranks), or one algorithm forced");
  e.metrics = {metrics::time(), {"gbps", "GB/s", "algorithm bandwidth"},
               {"extra.bus_gbps", "GB/s", "bus bandwidth: alg x 2(n-1)/n"}, metrics::vs_peer("NCCL all_reduce")};
  e.headline = best_row("Does a peer-memory all-reduce beat NCCL for small messages?", {{"variant", {"auto"}}},
                        "ratio_to_peer", "ratio_to_peer");
  e.headline.higher_is_better = true;
  e.prose = {"Our own single-host all-reduce through peer pointers. Low-latency pushes each 8 bytes of input "
             "with the call's epoch in one 16-byte store and the receiver polls for it (no barrier); one-shot "
             "pushes the input into every GPU's scratch, meets the others at a flag barrier and sums locally; "
             "two-shot is a "
             "reduce-scatter then an all-gather through peer memory (two rounds, 2(n-1)/n of the message over "
             "the links per GPU instead of (n-1)). Sums run in rank order, so results are bit-identical everywhere.",
             "ratio_to_peer (NCCL's time / ours) above 1.3 for small messages, the advantage shrinking with size.", ""};
  {
    plot_spec p = line_plot("link_allreduce.png", "Own all-reduce against NCCL", "bytes", "ratio_to_peer", {"variant"});
    p.refs = {{"value", "NCCL", 1.0}};
    e.plots.push_back(p);
  }
  {
    plot_spec p = line_plot("link_allreduce_bus.png", "All-reduce bus bandwidth", "bytes", "extra.bus_gbps", {"variant"});
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
