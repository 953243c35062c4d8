// transfer.batching: Best Practices Guide §9.1 (seed 000 §9.1): "batching many small
// transfers into one larger transfer performs significantly better than making each
// transfer separately, even if doing so requires packing non-contiguous regions of memory
// into a contiguous buffer and then unpacking after the transfer."
//
// Setup: N pieces, contiguous in pinned host memory, scattered on the device (stride =
// 2 x piece, so they are not contiguous there). `separate` issues N cudaMemcpyAsync calls;
// `packed` issues one copy plus a device kernel that scatters (h2d) or gathers (d2h) the
// pieces, both inside the timed region. Model: separate ~ t(1) + (N - 1) x t_call with
// t_call = t(2) - t(1) (fixed cost per call + piece / BW); packed ~ t(1) + N x piece / BW
// + t_kernel, so the fixed cost per call is paid once.
#include <algorithm>
#include <cstring>
#include <string>

#include "bench/state.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/buffer.hpp"
#include "transfer_noise.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

void batching_body(state& s) {
  std::string const dir = s.get_string("direction");
  bool const packed = s.variant() == "packed";
  auto const n = static_cast<std::size_t>(s.get_int("pieces"));
  auto const piece = static_cast<std::size_t>(s.get_int("piece_bytes"));
  MEMLAB_EXPECTS(piece % 8 == 0, "piece_bytes must be a multiple of 8");
  std::size_t const stride = 2 * piece;
  std::size_t const total = n * piece;

  // At least two pieces: the per-call model times one and two separate copies in every point.
  std::size_t const pieces_allocated = std::max<std::size_t>(n, 2);
  pinned_buffer<char> host(pieces_allocated * piece);
  device_buffer<char> scattered(pieces_allocated * stride), staging(total);
  cudaStream_t const st0 = s.stream();

  // The first `count` pieces, one cudaMemcpyAsync each.
  auto issue_separate = [&](std::size_t count, cudaStream_t st) {
    for (std::size_t k = 0; k < count; ++k) {
      if (dir == "h2d")
        MEMLAB_CUDA_CHECK(cudaMemcpyAsync(scattered.data() + k * stride, host.data() + k * piece, piece,
                                          cudaMemcpyHostToDevice, st));
      else
        MEMLAB_CUDA_CHECK(cudaMemcpyAsync(host.data() + k * piece, scattered.data() + k * stride, piece,
                                          cudaMemcpyDeviceToHost, st));
    }
  };
  auto issue_as = [&](bool as_packed, cudaStream_t st) {
    if (!as_packed) {
      issue_separate(n, st);
    } else if (dir == "h2d") {
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(staging.data(), host.data(), total, cudaMemcpyHostToDevice, st));
      transfer::scatter_pieces(staging.data(), scattered.data(), stride, piece, n, st);
    } else {
      transfer::gather_pieces(scattered.data(), stride, staging.data(), piece, n, st);
      MEMLAB_CUDA_CHECK(cudaMemcpyAsync(host.data(), staging.data(), total, cudaMemcpyDeviceToHost, st));
    }
  };
  auto issue = [&](cudaStream_t st) { issue_as(packed, st); };

  // ---- checked run. The reference is the pattern, generated on the host for the whole
  // strided layout; the device side is checked with a plain cudaMemcpy of everything.
  std::vector<char> pattern(n * stride);
  transfer::fill_pattern_host(pattern.data(), pattern.size(), s.seed());
  std::size_t bad = 0;
  if (dir == "h2d") {
    for (std::size_t k = 0; k < n; ++k) std::memcpy(host.data() + k * piece, pattern.data() + k * stride, piece);
    scattered.fill_bytes(0xFF);  // the gaps must stay 0xFF, the pieces must arrive
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    issue(st0);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st0));
    std::vector<char> got = scattered.download();
    for (std::size_t k = 0; k < n; ++k) {
      bad += std::memcmp(got.data() + k * stride, pattern.data() + k * stride, piece) != 0;
      for (std::size_t g = piece; g < stride; ++g) bad += static_cast<unsigned char>(got[k * stride + g]) != 0xFF;
    }
  } else {
    transfer::fill_pattern_device(scattered.data(), n * stride, s.seed(), st0);
    std::memset(host.data(), 0xFF, total);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st0));
    issue(st0);
    MEMLAB_CUDA_CHECK(cudaStreamSynchronize(st0));
    for (std::size_t k = 0; k < n; ++k)
      bad += std::memcmp(host.data() + k * piece, pattern.data() + k * stride, piece) != 0;
  }
  verification v;
  v.metric = "bad pieces (h2d: and clobbered gap bytes)";
  v.tolerance = 0;
  v.error = static_cast<double>(bad);
  v.status = bad == 0 ? verdict::passed : verdict::failed;
  if (bad) v.detail = std::to_string(bad) + " bad pieces or gap bytes of " + std::to_string(n) + " pieces";
  s.set_verification(v);

  s.add_bytes_read(static_cast<double>(total));
  s.set_extra("bytes_counted", "bytes moved across PCIe, once (the pack/unpack kernel's device traffic is not counted)");
  s.set_extra("layout", "host contiguous (pinned), device pieces at stride 2 x piece_bytes");
  s.set_extra("copy_calls", packed ? 1 : static_cast<std::int64_t>(n));
  s.exec(issue);
  set_host_noise_floor(s, host_crossing::pcie);

  if (!packed) {
    // Linear in N, fitted on one and two separate copies timed in this point (a row never
    // depends on which other points ran): t(1) carries the one-off cost of a timed launch,
    // t(2) - t(1) is what each further cudaMemcpyAsync adds.
    double const t1 = s.measure_once("one_copy", [&](cudaStream_t st) { issue_separate(1, st); }).median;
    double const t2 = s.measure_once("two_copies", [&](cudaStream_t st) { issue_separate(2, st); }).median;
    s.set_predicted({{"ms", t1 + static_cast<double>(n - 1) * (t2 - t1)},
                     {"per_call_ms", t2 - t1},
                     {"basis", "t(1) + (N - 1) x (t(2) - t(1)), t(1) and t(2) timed in the same point"}});
  } else {
    // The peer is the same N pieces copied separately, timed in this point: a row must not
    // depend on which other points ran (`-a variant=packed` alone keeps its peer).
    s.exec_peer("separate", [&](cudaStream_t st) { issue_as(false, st); });
  }
}

memlab::bench::registrar const reg{[] {
  experiment e;
  e.id = "transfer.batching";
  e.description = "N small pinned copies against one packed copy plus a device pack/unpack kernel, N = 1..4096";
  e.seed_ref = "000 §9.1";
  e.axes = {string_axis("direction", {"h2d", "d2h"}),
            int_axis("piece_bytes", {4096}),
            pow2_axis("pieces", 0, 12, 0, 12),
            variant_axis({"separate", "packed"})};
  e.axes[0].description = "h2d: unpack (scatter) on the device after the copy; d2h: pack (gather) before it";
  e.axes[1].min_value = 8;
  e.axes[2].min_value = 1;
  e.axes[2].max_value = 1 << 20;
  e.axes[2].quick_values = {std::int64_t{1}, std::int64_t{64}, std::int64_t{4096}};
  e.body = batching_body;
  e.describe_axis("direction", "", "h2d: unpack (scatter) on the device after the copy; d2h: pack (gather) before it");
  e.describe_axis("piece_bytes", "bytes", "bytes per small transfer");
  e.describe_axis("pieces", "transfers", "small transfers moved", true);
  e.describe_axis("variant", "", "one cudaMemcpy per piece, or one packed copy with the device pack/unpack counted");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("separate copies"),
               {"predicted.ms", "ms", "calls x per-call cost + bytes / link rate"}};
  e.headline = best_row("At the most pieces, what does one packed copy gain over separate copies?",
                        {{"direction", {"h2d"}}, {"pieces", {"max"}}, {"variant", {"packed"}}}, "median_ms",
                        "ratio_to_peer");
  e.prose = {"Each cudaMemcpy has a fixed cost of microseconds, so many small transfers waste the link. Packing them "
             "into one buffer (with the pack and unpack kernels counted) trades that per-call latency for one large copy.",
             "The separate line climbing with the pieces while the packed one stays near one copy's time.", ""};
  {
    plot_spec p = line_plot("transfer_batching.png", "N small transfers against one packed transfer", "pieces", "median_ms", {"variant"});
    p.panels = "direction";
    p.log_y = true;
    p.model = "predicted.ms";
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
