// coalescing.*: Best Practices Guide 9.2.1 (seed 000). How the addresses of a warp's
// 32 accesses map onto 32-byte sectors decides how many bytes cross the memory system.
//
// Model: a warp request for 32 consecutive 4-byte floats starting `offset` floats past
// a sector boundary touches 4 sectors when offset % 8 == 0, otherwise 5. With stride s
// the 32 floats span 128*s bytes: min(4*s, 32) sectors. The model's bandwidth is the
// measured copy ceiling times the useful fraction, 4 / sectors. (For offsets, the extra
// sector is the neighbouring warp's first one: L2 can serve it, so DRAM traffic and the
// measured bandwidth can stay near the aligned copy; docs/coalescing.md discusses it.)
#include <algorithm>
#include <cstring>

#include "bench/state.hpp"
#include "memlab/buffer.hpp"
#include "memlab/coalescing.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;

/// 32-byte sectors one warp request touches: 32 floats, `stride` floats apart, starting
/// `offset` floats into a sector.
int sectors_per_request(int offset, int stride) {
  int count = 0;
  std::int64_t last = -1;
  for (int lane = 0; lane < 32; ++lane) {
    std::int64_t const sector = (static_cast<std::int64_t>(offset) + static_cast<std::int64_t>(lane) * stride) * 4 / 32;
    if (sector != last) ++count;
    last = sector;
  }
  return count;
}

nlohmann::json model(state const& s, int sectors) {
  double const efficiency = 4.0 / sectors;
  nlohmann::json p = {{"sectors_per_request", sectors}, {"efficiency", efficiency}};
  if (auto c = s.ceiling_gbps()) p["gbps"] = *c * efficiency;
  return p;
}

std::size_t elements(state const& s) { return static_cast<std::size_t>(s.get_int("elements")); }

void offset_body(state& s) {
  int const offset = static_cast<int>(s.get_int("offset"));
  std::size_t const n = elements(s);
  std::size_t const len = n + 32;  // room for every offset in the sweep
  std::vector<float> host(len);
  fill_random(host, s.seed());
  device_buffer<float> in(len), out(len);
  in.upload(host);
  out.fill_bytes(0xFF);  // NaN: an element the kernel skips cannot pass
  offset_copy(out.data(), in.data(), n, offset, s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  auto got = out.download();
  std::vector<float> got_range(got.begin() + offset, got.begin() + offset + n);
  std::vector<float> ref_range(host.begin() + offset, host.begin() + offset + n);
  s.set_verification(compare_exact(got_range, ref_range));

  s.add_reads<float>(n);
  s.add_writes<float>(n);
  s.exec([&](cudaStream_t st) { offset_copy(out.data(), in.data(), n, offset, st); });
  s.set_predicted(model(s, sectors_per_request(offset, 1)));
}

void stride_body(state& s) {
  int const stride = static_cast<int>(s.get_int("stride"));
  std::size_t const n = elements(s);
  std::size_t const len = (n - 1) * stride + 1;
  device_buffer<float> in(len), out(len), compact(n);
  // Random data where the kernel reads, scattered (and later gathered) by the copy
  // engine's pitched copies: an independent path from the kernel under test.
  std::vector<float> useful(n);
  fill_random(useful, s.seed());
  compact.upload(useful);
  in.fill_bytes(0);
  MEMLAB_CUDA_CHECK(cudaMemcpy2D(in.data(), stride * sizeof(float), compact.data(), sizeof(float), sizeof(float), n,
                                 cudaMemcpyDeviceToDevice));
  out.fill_bytes(0xFF);
  stride_copy(out.data(), in.data(), n, stride, s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  compact.fill_bytes(0xFF);
  MEMLAB_CUDA_CHECK(cudaMemcpy2D(compact.data(), sizeof(float), out.data(), stride * sizeof(float), sizeof(float), n,
                                 cudaMemcpyDeviceToDevice));
  std::vector<float> got = compact.download();
  s.set_verification(compare_exact(got, useful));

  s.add_reads<float>(n);
  s.add_writes<float>(n);
  s.exec([&](cudaStream_t st) { stride_copy(out.data(), in.data(), n, stride, st); });
  s.set_predicted(model(s, sectors_per_request(0, stride)));
}

void vector_body(state& s) {
  int const access = static_cast<int>(s.get_int("access_bytes"));
  int const unroll = static_cast<int>(s.get_int("unroll"));
  std::size_t const bytes = static_cast<std::size_t>(s.get_int("mib")) << 20;
  std::size_t const n = bytes / sizeof(float);
  device_buffer<float> in(n), out(n);  // device first: an impossible size fails fast
  std::vector<float> host(n);
  fill_random(host, s.seed());
  in.upload(host);
  out.fill_bytes(0xFF);
  vector_copy(out.data(), in.data(), bytes, access, unroll, s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  s.set_verification(compare_exact(out.download(), host));

  s.add_reads<float>(n);
  s.add_writes<float>(n);
  s.exec([&](cudaStream_t st) { vector_copy(out.data(), in.data(), bytes, access, unroll, st); });
  // Every access is aligned and coalesced: 4 sectors per 128 bytes whatever the width;
  // wider accesses need fewer instructions per byte, and unrolling keeps more loads in flight.
  nlohmann::json p = model(s, 4);
  p["instructions_per_warp_128B"] = 2 * (16 / access);
  s.set_predicted(p);
}

registrar const offset_reg{[] {
  experiment e;
  e.id = "coalescing.offset";
  e.description = "float copy at offsets 0..32 elements: misaligned warp requests (Guide's offsetCopy)";
  e.seed_ref = "000 §9.2.1.3";
  e.axes = {int_axis("offset", range(0, 32), {0, 1, 8, 16}), pow2_axis("elements", 26, 26, 24, 24)};
  e.axes[0].min_value = 0;
  e.axes[0].max_value = 32;
  e.axes[1].min_value = 1;
  e.axes[1].max_value = std::int64_t{1} << 31;
  e.ceiling = ceiling_relation::peer;
  e.body = offset_body;
  e.describe_axis("offset", "elements", "first element read, in floats past a 128-byte boundary");
  e.describe_axis("elements", "elements", "floats copied", true);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling(),
               {"predicted.gbps", "GB/s", "the sector model: aligned bandwidth x 4 / sectors per request"}};
  e.headline = best_row("What does a misaligned warp request cost against an aligned one?", {{"offset", {"1"}}},
                        "gbps", "baseline", {{"offset", {"0"}}});
  e.seed_figures = {{"offsetCopy, aligned", 790, "GB/s", "Tesla V100", "000 §9.2.1.3", {{"offset", "0"}}}};
  e.prose = {"A warp's 32 loads are served in 32-byte sectors; when the warp's addresses start off a sector "
             "boundary, each request touches one more sector than it needs. The Guide's offsetCopy shifts a copy by "
             "0..32 floats: aligned offsets (multiples of 8 floats) need 4 sectors per request, the others 5, so the "
             "model predicts about 4/5 of the aligned bandwidth, and less than that loss where L2 absorbs the overlap.",
             "The dips between multiples of 8 and how deep they are against the dashed model.",
             "Seed 000 §9.2.1.3 (Best Practices Guide, Tesla V100): about **790 GB/s** with no offset or an offset "
             "that is a multiple of 8; misaligned offsets load 5 sectors per request instead of 4, about **4/5** of "
             "the aligned bandwidth."};
  {
    plot_spec p = line_plot("coalescing_offset.png", "Copy bandwidth against offset, with the sector model", "offset", "gbps");
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}, {"seed", "V100 (seed)", 0}};
    p.model = "predicted.gbps";
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const stride_reg{[] {
  experiment e;
  e.id = "coalescing.stride";
  e.description = "float copy with stride 1..32 elements: sectors wasted per request (Guide's strideCopy)";
  e.seed_ref = "000 §9.2.1.4";
  e.axes = {int_axis("stride", range(1, 32), {1, 2, 4, 8, 32}), pow2_axis("elements", 24, 24, 22, 22)};
  e.axes[0].min_value = 1;
  e.axes[0].max_value = 1024;
  e.axes[1].min_value = 1;
  e.axes[1].max_value = std::int64_t{1} << 28;
  e.ceiling = ceiling_relation::peer;
  e.body = stride_body;
  e.describe_axis("stride", "elements", "distance between the floats two neighbouring lanes read");
  e.describe_axis("elements", "elements", "floats copied", true);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling(),
               {"predicted.gbps", "GB/s", "the sector model: unit-stride bandwidth / sectors per request"}};
  e.headline = best_row("How much bandwidth does a stride of 2 lose against unit stride?", {{"stride", {"2"}}},
                        "gbps", "baseline", {{"stride", {"1"}}});
  e.prose = {"strideCopy reads every stride-th float, so a warp spreads its 32 loads over up to 32 sectors and uses "
             "only 4 bytes of each 32 fetched. Effective bandwidth falls roughly as 1/stride until every lane has its "
             "own sector (stride 8 and beyond), where it levels off.",
             "The 1/stride fall to stride 8, then the floor; the model dashed beside it.",
             "Seed 000 §9.2.1.4: stride 2 gives **50%** load/store efficiency on V100; bandwidth keeps falling until "
             "each of the 32 threads loads its own 32-byte segment."};
  e.seed_figures = {{"load/store efficiency at stride 2", 50, "%", "Tesla V100", "000 §9.2.1.4", {{"stride", "2"}}}};
  {
    plot_spec p = line_plot("coalescing_stride.png", "Copy bandwidth against stride, with the sector model", "stride", "gbps");
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    p.model = "predicted.gbps";
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const vector_reg{[] {
  experiment e;
  e.id = "coalescing.vector";
  e.description = "aligned copy with 4-, 8- and 16-byte accesses per thread, 1 or 4 loads in flight";
  e.seed_ref = "000 §9.2.1";
  e.axes = {int_axis("access_bytes", {4, 8, 16}), int_axis("unroll", {1, 4}, {1, 4}), int_axis("mib", {512}, {128})};
  e.axes[0].allowed = {std::int64_t{4}, std::int64_t{8}, std::int64_t{16}};
  e.axes[1].allowed = {std::int64_t{1}, std::int64_t{2}, std::int64_t{4}, std::int64_t{8}};
  e.axes[2].min_value = 1;
  e.axes[2].max_value = 1 << 20;
  e.ceiling = ceiling_relation::peer;
  e.body = vector_body;
  e.describe_axis("access_bytes", "bytes", "bytes each thread loads and stores per access");
  e.describe_axis("unroll", "accesses", "independent loads in flight per thread");
  e.describe_axis("mib", "MiB", "MiB copied");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling()};
  e.headline = best_row("Which access width reaches the copy ceiling?", {{"mib", {"max"}}}, "gbps", "ratio_to_ceiling");
  e.prose = {"The same copy with 4-, 8- and 16-byte elements per thread. Wider loads issue fewer instructions for the "
             "same bytes, which matters once the copy is bound by the load/store pipeline rather than by DRAM.",
             "Whether 4-byte accesses with one load in flight fall short of the ceiling that wider ones reach.", ""};
  {
    plot_spec p = bar_plot("coalescing_vector.png", "Copy bandwidth by access width and loads in flight", "access_bytes", "gbps", {"unroll"});
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
