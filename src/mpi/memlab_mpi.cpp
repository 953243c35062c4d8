// memlab-mpi (docs/link.md, "Beyond one host"): link.nccl's collectives with one process per
// GPU, so the same rows run across nodes under mpirun. Each rank takes a GPU of its host (its
// rank among the host's ranks, MPI_Comm_split_type SHARED, modulo the visible GPUs); rank 0
// creates NCCL's unique id and MPI_Bcasts it; ncclCommInitRank. The collectives, their host
// reference and bus bandwidth are link.nccl's (experiments/link_collectives.hpp).
//
// Timing as nccl-tests does it across processes: each sample is a barrier, then one event pair
// on every rank's stream around 20 operations (nccl-tests' iterations); the sample is the max over ranks
// (MPI_Allreduce MAX). Rank 0 runs the harness's sampling policy and tells the others with a
// broadcast whether another sample follows, so every rank takes the same number of samples
// whatever its own clock says. Rank 0 writes the memlab record (format 2) row by row.
//
// Anything a rank cannot do (bad arguments, no GPU, NCCL or CUDA failing) ends the whole job
// with MPI_Abort and a one-line message: never one rank waiting forever for another.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "bench/image.hpp"
#include "bench/record.hpp"
#include "bench/runner.hpp"
#include "bench/state.hpp"
#include "experiments/link_collectives.hpp"
#include "memlab/buffer.hpp"
#include "memlab/device.hpp"
#include "memlab/error.hpp"
#include "mpi/job_record.hpp"
#include "mpi/options.hpp"

namespace {

using namespace memlab;
using link::collective;

struct world {
  int rank = 0, size = 1;
  int local_rank = 0, local_size = 1;
  std::string host;
};

/// Prints on rank 0 (stdout, flushed: mpirun forwards it as it comes).
void say(world const& w, std::string const& line) {
  if (w.rank != 0) return;
  std::fputs(line.c_str(), stdout);
  std::fflush(stdout);
}

/// Ends the job from this rank with `code` after one line on stderr.
[[noreturn]] void abort_from_here(world const& w, std::string const& msg, int code) {
  std::fprintf(stderr, "memlab-mpi: rank %d on %s: %s\n", w.rank, w.host.c_str(), msg.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

/// Collective: when any rank has an error, rank 0 prints the first one (with how many ranks had
/// one) and aborts the job with `code`; otherwise returns on every rank.
void agree_or_abort(world const& w, std::string const& err, int code) {
  int mine = err.empty() ? 0 : 1, count = 0;
  MPI_Allreduce(&mine, &count, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (count == 0) return;
  constexpr int len = 512;
  std::array<char, len> buf{};
  std::snprintf(buf.data(), len, "%s", err.c_str());
  std::vector<char> all(w.rank == 0 ? static_cast<std::size_t>(len) * w.size : 1);
  MPI_Gather(buf.data(), len, MPI_CHAR, all.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (w.rank == 0) {
    std::vector<std::string> msgs;
    for (int r = 0; r < w.size; ++r) {
      char const* m = all.data() + static_cast<std::size_t>(r) * len;
      if (m[0] != '\0') msgs.emplace_back(m);
    }
    bool const same = std::all_of(msgs.begin(), msgs.end(), [&](std::string const& m) { return m == msgs[0]; });
    std::string const more = same ? "" : " (" + std::to_string(msgs.size()) + " ranks report errors)";
    std::fprintf(stderr, "memlab-mpi: %s%s\n", msgs[0].c_str(), more.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
  }
  MPI_Barrier(MPI_COMM_WORLD);  // never completes: rank 0 aborts the job
  std::_Exit(code);
}

/// Samples (ms per operation, max over ranks) under `p`, rank 0 deciding when to stop.
std::vector<double> sample_ranks(world const& w, bench::timing_options const& p, int batch,
                                 std::function<double()> const& one_sample) {
  if (w.rank == 0) {
    auto const samples = bench::sample_until_stable(
        [&] {
          int go = 1;
          MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
          return one_sample();
        },
        p, batch);
    int stop = 0;
    MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return samples;
  }
  for (;;) {
    int go = 0;
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!go) return {};
    (void)one_sample();
  }
}

/// What a rank's points share; created once the rank's GPU is current (the events are its).
struct rank_context {
  world w;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  memlab::event start, stop;
};

/// One point on every rank: fill, one checked operation, the host reference on every rank
/// (mismatches summed over ranks), then the timing. Throws state's skip for sizes under one
/// float per rank (the same on every rank).
void run_point(bench::state& s, rank_context& rc) {
  world const& w = rc.w;
  collective const kind = link_exp::collective_of(s.variant());
  auto const bytes = static_cast<std::size_t>(s.get_int("bytes"));
  int const n = w.size;
  link::collective_shape const sh = link::shape_of(kind, bytes / sizeof(float), n);
  if (sh.part == 0)
    s.skip(std::to_string(bytes) + " bytes over " + std::to_string(n) + " ranks is less than one float per rank");
  cudaStream_t const st = rc.stream;
  device_buffer<float> send(sh.send), recv(sh.recv);
  link::fill_seeded(send.data(), sh.send, s.seed(), w.rank, 0, true, st);
  MEMLAB_CUDA_CHECK(cudaMemsetAsync(recv.data(), 0xFF, sh.recv * sizeof(float), st));
  auto issue = [&] { link_exp::issue_collective(kind, send.data(), recv.data(), sh, n, rc.comm, st); };

  issue();  // the checked run
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
  unsigned long long mine[2] = {0, 0}, all[2] = {0, 0};
  if (link_exp::output_defined(kind, w.rank)) {
    mine[0] = link_exp::check_rank(kind, w.rank, recv.data(), sh, n, s.seed());
    mine[1] = sh.recv;
  }
  MPI_Allreduce(mine, all, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  s.set_verification(link_exp::collective_verification(all[0], all[1]));
  link_exp::describe_collective_row(s, kind, sh, n, link_exp::nccl_version_text());

  auto timed = [&](int count) {
    MPI_Barrier(MPI_COMM_WORLD);
    rc.start.record(st);
    for (int i = 0; i < count; ++i) issue();
    rc.stop.record(st);
    rc.stop.synchronize();
    double const ms = static_cast<double>(rc.stop.elapsed_since(rc.start)) / count;
    double slowest = 0;
    MPI_Allreduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
  };
  bench::timing_options const& p = s.timing();
  // nccl-tests' definition: the throughput of 20 operations issued back to back, at every size
  // (where one host thread issues slower than the GPUs run, that is the time).
  constexpr int iters = 20;
  // The peer, nccl-tests' own loop: 5 warm-up operations, then per sample a barrier and 20
  // back to back on the host clock until this rank's stream is done, the slowest rank's time.
  // It is sampled after each of the row's samples (alternating: both see the same machine).
  for (int i = 0; i < 5; ++i) issue();
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
  auto loop_once = [&] {
    MPI_Barrier(MPI_COMM_WORLD);
    auto const t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) issue();
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st));
    double const ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / iters;
    double slowest = 0;
    MPI_Allreduce(&ms, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return slowest;
  };
  int const batch = p.profile ? 1 : iters;
  std::vector<double> loop;
  auto const samples = sample_ranks(w, p, batch, [&] {
    double const ms = timed(batch);
    loop.push_back(loop_once());
    return ms;
  });
  if (w.rank != 0) return;
  s.set_peer("nccl-tests-style loop (host clock, 20 ops, slowest rank)", bench::summarize(loop).median);
  s.set_samples(samples, "events");
  s.result().cold = false;  // the links are measured, not DRAM: no L2 flush between samples
  s.result().timing["batch"] = batch;
  s.result().timing["method"] = batch > 1 ? "mpi_events_max_over_ranks_batch" : "mpi_events_max_over_ranks";
  s.set_extra("timed_with", "per sample an MPI_Barrier, then one event pair on each of " + std::to_string(n) +
                                " ranks' streams" +
                                (batch > 1 ? " around " + std::to_string(batch) + " operations back to back" : "") +
                                "; the slowest rank's time");
  link_exp::record_bus_gbps(s, kind, n);
}

int run(int argc, char** argv, world& w) {
  // ---- arguments: the same on every rank, so every rank reaches the same verdict
  std::vector<std::string> args(argv + 1, argv + argc);
  mpi::options o;
  std::string err;
  try {
    o = mpi::parse_options(args);
  } catch (std::exception const& e) {
    err = e.what();
  }
  agree_or_abort(w, err, mpi::exit_usage);
  if (o.help) {
    say(w, mpi::usage_text());
    return 0;
  }
  if (o.bytes.empty()) o.bytes = link_exp::nccl_sizes();

  // ---- one GPU per rank
  int visible = 0;
  cudaError_t const count_rc = cudaGetDeviceCount(&visible);
  if (count_rc != cudaSuccess) {
    (void)cudaGetLastError();
    visible = 0;
  }
  mpi::gpu_choice const g = mpi::gpu_for_rank(w.local_rank, w.local_size, visible, o.allow_shared_gpu);
  agree_or_abort(w,
                 g.error.empty() ? std::string()
                                 : "rank " + std::to_string(w.rank) + " on " + w.host + ": " + g.error +
                                       (count_rc != cudaSuccess ? std::string(" (cudaGetDeviceCount: ") +
                                                                      cudaGetErrorName(count_rc) + ")"
                                                                : std::string()),
                 mpi::exit_no_gpu);

  std::vector<mpi::rank_info> ranks;
  std::string library;
  bench::experiment const e = mpi::declaration(o);
  bench::run_record record;
  bool failed = false;
  try {
    MEMLAB_CUDA_CHECK(cudaSetDevice(g.device));
    device_info const dev = query_device(g.device);
    bench::timing_options timing;
    timing.cold = false;  // no L2 flush buffer: rows time links, and run warm like link.nccl's
    bench::run_context ctx(dev, timing, false, o.seed);
    memlab::stream stream(cudaStreamNonBlocking);
    rank_context rc;
    rc.w = w;
    rc.stream = stream.get();

    mpi::rank_info me{};
    std::snprintf(me.host, sizeof me.host, "%s", w.host.c_str());
    std::snprintf(me.gpu_name, sizeof me.gpu_name, "%s", dev.name.c_str());
    std::snprintf(me.pci_bus_id, sizeof me.pci_bus_id, "%s", bench::pci_bus_id(dev).c_str());
    me.local_rank = w.local_rank;
    me.local_size = w.local_size;
    me.device = g.device;
    me.visible_gpus = visible;
    me.shared = g.shared ? 1 : 0;
    ranks.resize(w.rank == 0 ? static_cast<std::size_t>(w.size) : 0);
    MPI_Gather(&me, sizeof me, MPI_BYTE, ranks.data(), sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    int lib_len = 0;
    MPI_Get_library_version(lib, &lib_len);
    library = std::string(lib, std::find(lib, lib + lib_len, '\n'));

    // ---- NCCL: rank 0's unique id to everyone
    ncclUniqueId id{};
    if (w.rank == 0) MEMLAB_NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    MEMLAB_NCCL_CHECK(ncclCommInitRank(&rc.comm, w.size, id, w.rank));

    std::string const prefix = w.rank == 0 ? mpi::mpirun_prefix(ranks) : "";
    if (w.rank == 0) {
      record = bench::run_record((std::filesystem::path(o.output_dir) / "run.json").string());
      std::vector<std::string> words(argv, argv + argc);
      std::string command = prefix;
      for (auto const& a : words) command += " " + a;
      mpi::job_header h;
      h.device = bench::to_json(dev);
      h.image = bench::to_json(bench::running_image());
      h.mpi = mpi::mpi_json(ranks, library, link_exp::nccl_version_text());
      h.nvml = ctx.gpu().status();
      h.command_line = command;
      h.timing = timing;
      h.seed = o.seed;
      mpi::start_record(record, e, h);
      say(w, "memlab-mpi: " + std::to_string(w.size) + " ranks on " + std::to_string(h.mpi["hosts"].get<int>()) +
                 " host(s), NCCL " + link_exp::nccl_version_text() + ", " + library + "\n");
      say(w, "collective        bytes         ms    alg GB/s   bus GB/s  verified\n");
    }

    for (auto const& point : bench::expand_points(e, false, {})) {
      bench::state s(ctx, e, point);
      try {
        run_point(s, rc);
      } catch (bench::skip_exception const& k) {
        s.result().skipped = k.reason;
      }
      if (w.rank != 0) continue;
      bench::row r = s.finish();
      r.repro = mpi::row_repro(prefix, r, o.seed);
      failed = failed || r.check.status == bench::verdict::failed;
      char buf[256];
      if (r.skipped) {
        std::snprintf(buf, sizeof buf, "%-14s %12s  skipped: %s\n", r.variant.c_str(), r.params["bytes"].dump().c_str(),
                      r.skipped->c_str());
      } else {
        std::snprintf(buf, sizeof buf, "%-14s %12s %10.4f %11.2f %10.2f  %s\n", r.variant.c_str(),
                      r.params["bytes"].dump().c_str(), r.median_ms.value_or(0), r.gbps.value_or(0),
                      r.extra.value("bus_gbps", 0.0), bench::to_string(r.check.status));
      }
      say(w, buf);
      record.rows.push_back(std::move(r));
      record.flush();  // a job that dies later keeps the rows so far
    }
    int f = failed ? 1 : 0;
    MPI_Bcast(&f, 1, MPI_INT, 0, MPI_COMM_WORLD);
    failed = f != 0;
    if (w.rank == 0) {
      mpi::end_record(record, failed);
      say(w, "memlab-mpi: " + std::string(failed ? "a row FAILED verification" : "every row verified") + "; wrote " +
                 record.path() + " (memlab report " + record.path() + ")\n");
    }
    MEMLAB_NCCL_CHECK(ncclCommDestroy(rc.comm));
    rc.comm = nullptr;
  } catch (std::exception const& ex) {
    abort_from_here(w, ex.what(), mpi::exit_failed);
  }
  return failed ? mpi::exit_failed : 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  world w;
  MPI_Comm_rank(MPI_COMM_WORLD, &w.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &w.size);
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int name_len = 0;
  MPI_Get_processor_name(name, &name_len);
  w.host.assign(name, static_cast<std::size_t>(name_len));
  int const rc = run(argc, argv, w);
  MPI_Comm_free(&local);
  MPI_Finalize();
  return rc;
}
