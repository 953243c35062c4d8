// async.*: asynchronous copies into shared memory (seed 002) on the copy-and-compute
// pattern, and the warp entanglement of commit and arrive-on (seed 002 §6).
//
// Model: a batch loop is bound by the larger of its DRAM time (bytes / measured copy
// ceiling) and its FMA time (flops / measured FP32 peak) when copy and compute overlap,
// and by their sum when they do not. A single-stage variant overlaps only across the
// blocks an SM holds; multi-stage pipelines also overlap within a block.
#include <algorithm>
#include <string>
#include <vector>

#include "bench/state.hpp"
#include "kernels/async/copy_compute.hpp"
#include "kernels/async/entanglement.hpp"
#include "kernels/async/reference.hpp"
#include "memlab/arch.hpp"
#include "memlab/buffer.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
using memlab::async::copy_method;

std::vector<std::string> const copy_variants = {
    "plain",           "cg_memcpy_async", "cuda_barrier", "pipeline_1stage", "pipeline_2stage",
    "pipeline_3stage", "pipeline_4stage", "bulk_copy",    "bulk_copy_4stage"};

/// Overlap and serial predictions from the run's measured ceilings, when it has them.
nlohmann::json roofline(state const& s, double bytes, double flops) {
  nlohmann::json p = nlohmann::json::object();
  auto bw = s.ceiling_gbps();
  auto peak = s.fp32_peak_tflops();
  if (!bw) return nullptr;
  double const copy_ms = bytes / (*bw * 1e9) * 1e3;
  p["copy_ms"] = copy_ms;
  if (peak && flops > 0) {
    double const compute_ms = flops / (*peak * 1e12) * 1e3;
    p["compute_ms"] = compute_ms;
    p["overlap_ms"] = std::max(copy_ms, compute_ms);
    p["serial_ms"] = copy_ms + compute_ms;
  }
  return p;
}

/// What nvcc 13.0 emits for the image's architecture `arch` (read from the PTX; docs/async.md
/// has the table): below sm_80 libcu++ and cooperative groups copy synchronously; from sm_80
/// each thread issues cp.async; on sm_90 CCCL's cuda::memcpy_async on a block-scoped
/// cuda::barrier becomes one cp.async.bulk once 16-byte alignment is known at compile time,
/// by the hint or by the element type.
std::string copy_instruction(async::copy_compute_config const& cfg, int arch) {
  bool const wide = cfg.aligned_hint || cfg.element_bytes == 16;
  std::string const per_thread = wide ? "cp.async.cg 16 B" : "cp.async.ca " + std::to_string(cfg.element_bytes) + " B";
  std::string const sync = "synchronous copy (no cp.async below sm_80)";
  switch (cfg.method) {
    case copy_method::plain: return "ld.global + st.shared";
    case copy_method::cg_memcpy_async: return arch < 80 ? sync : per_thread + ", wait_group";
    case copy_method::cuda_barrier:
      if (arch < 80) return sync;
      return wide && arch >= 90 ? "cp.async.bulk, mbarrier tx" : per_thread + ", mbarrier arrive-on";
    case copy_method::pipeline: return arch < 80 ? sync : per_thread + ", mbarrier arrive-on per stage";
    case copy_method::bulk_copy: return "cp.async.bulk, mbarrier tx";
  }
  return "";
}

void copy_compute_body(state& s) {
  async::copy_compute_config cfg;
  async::parse_variant(s.variant(), cfg.method, cfg.stages);
  cfg.element_bytes = static_cast<int>(s.get_int("element_bytes"));
  cfg.aligned_hint = s.get_int("aligned") != 0;
  cfg.fmas = static_cast<int>(s.get_int("fmas"));
  cfg.block_threads = 256;
  // The plain copy goes through registers and has no hint: copy_compute runs it whatever
  // `aligned` says (it is the baseline); copy_alignment skips the duplicate row.
  if (cfg.method == copy_method::plain && cfg.aligned_hint && s.exp().id == "async.copy_alignment")
    s.skip("plain copies through registers: there is no alignment hint to give");
  if (cfg.method == copy_method::bulk_copy && !cfg.aligned_hint)
    s.skip("cp.async.bulk always needs 16-byte alignment: no unhinted form");
  // Decided from the kernel this point launches: its image, not the card, has the instruction.
  void const* const kernel = async::copy_compute_kernel(cfg);
  char const* instruction = "";
  if (int const need = async::copy_compute_needed_arch(cfg.method, &instruction); need > 0)
    s.require_arch(kernel, need, instruction);

  int const want_per_sm = static_cast<int>(s.get_int("blocks_per_sm"));
  int const fit_per_sm = async::copy_compute_max_blocks_per_sm(cfg);
  if (fit_per_sm < 1)
    s.skip(std::to_string(async::copy_compute_smem_bytes(cfg)) +
           " bytes of shared memory per block do not fit on an SM of this device");
  int const per_sm = std::min(want_per_sm, fit_per_sm);
  cfg.grid_blocks = per_sm * s.device().sm_count;

  std::size_t const bytes = static_cast<std::size_t>(s.get_int("mib")) << 20;
  std::size_t const n = bytes / cfg.element_bytes;
  std::size_t const floats = n * cfg.element_bytes / 4;
  device_buffer<float> in(floats), out(floats);
  async::fill_quantized(in.data(), floats, s.seed(), s.stream());
  out.fill_bytes(0xFF, s.stream());  // NaN: an element never written cannot pass
  async::copy_compute(cfg, out.data(), in.data(), n, s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  s.set_verification(
      compare_exact(out.download(), async::reference::copy_compute(n, cfg.element_bytes, cfg.block_threads, cfg.fmas,
                                                                   s.seed())));

  s.add_reads<float>(floats);
  s.add_writes<float>(floats);
  s.add_flops(static_cast<double>(floats) * (2.0 * cfg.fmas + 1.0));
  s.exec([&](cudaStream_t st) { async::copy_compute(cfg, out.data(), in.data(), n, st); });
  s.set_predicted(roofline(s, static_cast<double>(2 * bytes), static_cast<double>(floats) * (2.0 * cfg.fmas + 1.0)));
  s.set_extra("blocks_per_sm", per_sm);
  s.set_extra("max_blocks_per_sm", fit_per_sm);
  s.set_extra("grid_blocks", cfg.grid_blocks);
  s.set_extra("smem_bytes_per_block", async::copy_compute_smem_bytes(cfg));
  s.set_extra("stages", cfg.stages);
  int const image_arch = compiled_arch(kernel);
  s.set_extra("image_arch", image_arch);
  s.set_extra("copy_instruction", copy_instruction(cfg, image_arch));
}

void entanglement_body(state& s) {
  async::entanglement_config cfg;
  std::string const& v = s.variant();
  cfg.op = v.rfind("arrive_on", 0) == 0 ? async::entangled_op::arrive_on : async::entangled_op::commit_wait;
  cfg.reconverge = v.size() > 9 && v.compare(v.size() - 9, 9, "_syncwarp") == 0;
  char const* instruction = "";
  int const need = async::warp_entanglement_needed_arch(cfg.op, &instruction);
  s.require_arch(async::warp_entanglement_kernel(cfg.op), need, instruction);
  cfg.split = static_cast<int>(s.get_int("split"));
  cfg.fmas = static_cast<int>(s.get_int("fmas"));
  cfg.block_threads = 256;
  cfg.grid_blocks = static_cast<int>(s.get_int("blocks_per_sm")) * s.device().sm_count;

  std::size_t const bytes = static_cast<std::size_t>(s.get_int("mib")) << 20;
  std::size_t const n = bytes / 16;
  device_buffer<float> in(4 * n), out(4 * n);
  async::fill_quantized(in.data(), 4 * n, s.seed(), s.stream());
  out.fill_bytes(0xFF, s.stream());
  async::warp_entanglement(cfg, out.data(), in.data(), n, s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  s.set_verification(compare_exact(out.download(), async::reference::entanglement(n, cfg.fmas, s.seed())));

  s.add_reads<float>(4 * n);
  s.add_writes<float>(4 * n);
  s.add_flops(4.0 * n * 2.0 * cfg.fmas);
  s.exec([&](cudaStream_t st) { async::warp_entanglement(cfg, out.data(), in.data(), n, st); });
  // The seed's model: a warp split into `split` groups adds `split` batches to its shared
  // sequence per step (and applies `split` arrive-on updates), so wait_group(S-1) leaves
  // only the newest S-1 warp batches pending: floor((S-1)/split) of the worst lane's own
  // steps stay in flight, none once split >= S.
  nlohmann::json p = nlohmann::json::object();
  int const groups = cfg.reconverge ? 1 : cfg.split;  // reconverged: one commit per warp
  if (cfg.op == async::entangled_op::commit_wait)
    p["steps_in_flight_worst_lane"] = (async::commit_wait_stages - 1) / groups;
  else
    p["barrier_updates_per_warp_per_step"] = groups;
  s.set_predicted(p);
  s.set_extra("grid_blocks", cfg.grid_blocks);
}

/// The axes copy_compute and copy_alignment share, described once.
void describe_copy_axes(experiment& e) {
  e.describe_axis("variant", "", "how a batch reaches shared memory: registers, cg::memcpy_async, cuda::barrier, cuda::pipeline (1-4 stages), bulk copy");
  e.describe_axis("fmas", "FMAs", "FMAs per element after the copy (the compute)");
  e.describe_axis("blocks_per_sm", "blocks", "resident blocks per SM");
  e.describe_axis("element_bytes", "bytes", "bytes per copied element");
  e.describe_axis("aligned", "", "1: cuda::aligned_size_t<16> promises 16-byte alignment");
  e.describe_axis("mib", "MiB", "MiB copied");
}

registrar const copy_compute_reg{[] {
  experiment e;
  e.id = "async.copy_compute";
  e.description = "copy-and-compute through shared memory: register copy vs memcpy_async/barrier/pipeline/bulk, "
                  "FMAs per float swept";
  e.seed_ref = "002 §2-5";
  e.axes = {variant_axis(copy_variants, {"plain", "cuda_barrier", "pipeline_2stage", "bulk_copy_4stage"}),
            int_axis("fmas", {0, 16, 32, 64, 128, 256}, {0, 64}),
            int_axis("blocks_per_sm", {2, 8}, {2}),
            int_axis("element_bytes", {16}),
            int_axis("aligned", {1}),
            int_axis("mib", {128}, {16})};
  e.axes[1].min_value = 0;
  e.axes[1].max_value = 4096;
  e.axes[2].min_value = 1;
  e.axes[2].max_value = 32;
  e.axes[3].allowed = {std::int64_t{4}, std::int64_t{8}, std::int64_t{16}};
  e.axes[4].allowed = {std::int64_t{0}, std::int64_t{1}};
  e.axes[5].min_value = 1;
  e.axes[5].max_value = 4096;
  e.ceiling = ceiling_relation::peer;
  e.body = copy_compute_body;
  describe_copy_axes(e);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling()};
  e.headline = best_row("When copy and compute cost about the same, what does the best asynchronous copy gain?",
                        {{"fmas", {"64"}}, {"blocks_per_sm", {"2"}}, {"variant", {"!plain"}}}, "median_ms", "baseline",
                        {{"variant", {"plain"}}});
  e.prose = {"Copy a batch to shared memory, then compute on it. The plain version stalls each thread on its loads; "
             "memcpy_async (cooperative groups, cuda::barrier, cuda::pipeline, and Hopper's bulk copy completing on an "
             "mbarrier) lets the copy of the next batch run under the compute of this one, which pays when copy and "
             "compute cost about the same.",
             "The gap between plain and the pipelines in the middle of the fmas sweep.", ""};
  {
    plot_spec p = line_plot("async_copy_compute.png", "Copy-and-compute time against compute per element", "fmas", "median_ms", {"variant"});
    p.panels = "blocks_per_sm";
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const alignment_reg{[] {
  experiment e;
  e.id = "async.copy_alignment";
  e.description = "copy-and-compute with 4/8/16-byte elements, with and without cuda::aligned_size_t<16>, no compute";
  e.seed_ref = "002 §6.1";
  e.axes = {variant_axis(copy_variants, {"cg_memcpy_async", "cuda_barrier", "pipeline_2stage"}),
            int_axis("element_bytes", {4, 8, 16}, {4, 16}),
            int_axis("aligned", {0, 1}),
            int_axis("fmas", {0}),
            int_axis("blocks_per_sm", {2, 8}, {8}),
            int_axis("mib", {128}, {16})};
  e.axes[1].allowed = {std::int64_t{4}, std::int64_t{8}, std::int64_t{16}};
  e.axes[2].allowed = {std::int64_t{0}, std::int64_t{1}};
  e.axes[3].min_value = 0;
  e.axes[3].max_value = 4096;
  e.axes[4].min_value = 1;
  e.axes[4].max_value = 32;
  e.axes[5].min_value = 1;
  e.axes[5].max_value = 4096;
  e.ceiling = ceiling_relation::peer;
  e.body = copy_compute_body;
  describe_copy_axes(e);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling()};
  e.headline = best_row("Does promising 16-byte alignment speed up a 4-byte-element asynchronous copy?",
                        {{"variant", {"pipeline_2stage"}}, {"element_bytes", {"4"}}, {"aligned", {"1"}},
                         {"blocks_per_sm", {"8"}}},
                        "median_ms", "baseline", {{"aligned", {"0"}}});
  e.prose = {"Seed 002 notes that the asynchronous copy can use its hardware path only for suitably aligned chunks: 4-, "
             "8- and 16-byte elements, with and without cuda::aligned_size_t<16> telling the compiler the alignment. "
             "Without the promise the copy may fall back to element-wise loads and stores.",
             "aligned=1 against aligned=0 at 4 and 8 bytes.", ""};
  {
    plot_spec p = bar_plot("async_copy_alignment.png", "Asynchronous copy bandwidth by element size and alignment", "variant", "gbps", {"element_bytes", "aligned"});
    p.where = {{"blocks_per_sm", {"8"}}};
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const entanglement_reg{[] {
  experiment e;
  e.id = "async.warp_entanglement";
  e.description = "cp.async commit / arrive-on from converged warps vs lanes split into 2..32 divergent groups";
  e.seed_ref = "002 §6.3-6.6";
  e.axes = {variant_axis({"commit_wait", "commit_wait_syncwarp", "arrive_on", "arrive_on_syncwarp"},
                         {"commit_wait", "commit_wait_syncwarp"}),
            int_axis("split", {1, 2, 4, 8, 16, 32}, {1, 32}),
            int_axis("fmas", {16}),
            int_axis("blocks_per_sm", {2}),
            int_axis("mib", {64}, {16})};
  e.axes[1].min_value = 1;
  e.axes[1].max_value = 32;
  e.axes[2].min_value = 0;
  e.axes[2].max_value = 4096;
  e.axes[3].min_value = 1;
  e.axes[3].max_value = 32;
  e.axes[4].min_value = 1;
  e.axes[4].max_value = 4096;
  e.ceiling = ceiling_relation::peer;
  e.body = entanglement_body;
  e.describe_axis("variant", "", "cp.async commit/wait or arrive-on, with or without __syncwarp first");
  e.describe_axis("split", "groups", "divergent groups a warp's lanes are split into", true);
  e.describe_axis("fmas", "FMAs", "FMAs per element");
  e.describe_axis("blocks_per_sm", "blocks", "resident blocks per SM");
  e.describe_axis("mib", "MiB", "MiB copied");
  e.metrics = {metrics::time(), metrics::gbps()};
  e.headline = best_row("What does a warp split into 32 groups cost arrive-on against a converged warp?",
                        {{"variant", {"arrive_on"}}, {"split", {"max"}}}, "median_ms", "baseline", {{"split", {"1"}}});
  e.prose = {"Seed 002 §6: commit and arrive-on are warp-collective in effect; when a diverged warp issues them lane by "
             "lane, the pipeline sees several batches where a converged warp would make one, and waits longer.",
             "The lines without __syncwarp rising with the split; those with it staying flat.", ""};
  {
    plot_spec p = line_plot("async_warp_entanglement.png", "Diverged warps: time against the number of groups", "split", "median_ms", {"variant"});
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
