// transpose.*: seed 004's transpose (naive, through a shared tile, the [32][33] padding) and
// the steps after it (swizzled tile, several elements per thread, a wider tile), on square
// and non-square matrices including sizes that are not multiples of 32. The plain copy of
// the same bytes is the ceiling (variant `copy`, and the run's cudaMemcpy D2D); cuBLAS's
// cublasSgeam (C = A^T) is timed in the same run as the peer.
//
// Model: a transpose reads and writes rows*cols elements once each, the bytes of a copy.
// The naive kernel's stores scatter: each warp store touches 32 sectors for 128 useful
// bytes; the tiled kernels store whole rows. In the tile, the column reads of an unpadded
// 32-word-pitch tile are a 32-way bank conflict; padding or swizzling removes it.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/state.hpp"
#include "experiments/cublas.cuh"
#include "experiments/seeded_fill.cuh"
#include "kernels/transpose/transpose_ladder.hpp"
#include "memlab/buffer.hpp"
#include "memlab/detail/host_parallel.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
namespace tr = memlab::kernels::transpose;

/// Inputs are seeded_value<float>: generated on the device and regenerated on the host for
/// the reference, since a host fill of 2^26 elements per point would dominate the run.
float value_at(std::uint64_t seed, std::uint64_t i) { return memlab::experiments::seeded_value<float>(seed, i); }

/// The expected output, built on the host's cores: out[c*rows + r] = in[r*cols + c]
/// (for the copy step, out = in).
std::vector<float> reference(std::uint64_t seed, std::size_t rows, std::size_t cols, bool transposed) {
  std::vector<float> ref(rows * cols);
  std::size_t const out_rows = transposed ? cols : rows;
  memlab::detail::host_parallel_for(out_rows, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t orow = lo; orow < hi; ++orow) {
      if (transposed) {
        for (std::size_t r = 0; r < rows; ++r) ref[orow * rows + r] = value_at(seed, r * cols + orow);
      } else {
        for (std::size_t c = 0; c < cols; ++c) ref[orow * cols + c] = value_at(seed, orow * cols + c);
      }
    }
  }, 1);
  return ref;
}

void transpose_body(state& s, std::size_t rows, std::size_t cols) {
  tr::step const st = tr::step_from_name(s.variant());
  unsigned group = tr::default_raster_group;
  if (s.has_param("raster_group")) {
    group = static_cast<unsigned>(s.get_int("raster_group"));
    if (st != tr::step::grouped_tile && group != tr::default_raster_group)
      s.skip("raster_group applies to grouped_tile only");
  }
  std::size_t const n = rows * cols;
  device_buffer<float> in(n), out(n), peer_out(n);
  memlab::experiments::fill_seeded(in.data(), n, s.seed(), s.stream());
  out.fill_bytes(0xFF, s.stream());  // NaN everywhere: an element never written fails
  tr::run(st, in.data(), out.data(), rows, cols, cols, rows, s.stream(), group);
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  s.set_verification(compare_exact(out.download(), reference(s.seed(), rows, cols, st != tr::step::copy)));

  s.add_reads<float>(n);
  s.add_writes<float>(n);
  float const alpha = 1.0f, beta = 0.0f;
  // Row-major rows x cols is column-major cols x rows (lda = cols); C = A^T is column-major
  // rows x cols (ldc = rows), i.e. row-major cols x rows. B = C with beta 0 (in-place form).
  auto const sgeam = [&](cudaStream_t stream) {
    MEMLAB_CUBLAS_CHECK(cublasSetStream(memlab::experiments::cublas(), stream));
    cublasStatus_t const status = cublasSgeam(memlab::experiments::cublas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows),
                                              static_cast<int>(cols), &alpha, in.data(), static_cast<int>(cols), &beta,
                                              peer_out.data(), static_cast<int>(rows), peer_out.data(),
                                              static_cast<int>(rows));
    if (status != CUBLAS_STATUS_SUCCESS) throw memlab::error("cublasSgeam failed");
  };
  s.exec_paired([&](cudaStream_t stream) { tr::run(st, in.data(), out.data(), rows, cols, cols, rows, stream, group); },
                "cublasSgeam", sgeam);

  // The plain copy of the same bytes, timed once in this point for every step's row.
  device_buffer<float> copy_out(n);
  double const copy_ms = s.measure_once("copy step", [&](cudaStream_t stream) {
    tr::run(tr::step::copy, in.data(), copy_out.data(), rows, cols, cols, rows, stream);
  }).median;
  if (s.result().median_ms && *s.result().median_ms > 0)
    s.set_extra("ratio_to_copy_kernel", copy_ms / *s.result().median_ms);

  // A warp's 32 stores: the naive kernel touches 32 sectors (4 useful bytes each), the
  // tiled ones 4 (128 contiguous bytes). The tiled steps after 4 change only how many
  // bytes each thread keeps in flight and the order of the tiles, not the bytes.
  s.set_predicted({{"bank_conflict_ways", tr::predicted_conflict_ways(st)},
                   {"store_sectors_per_warp", st == tr::step::naive ? 32 : 4},
                   {"bytes_vs_copy", 1.0}});
}

std::vector<std::string> step_names() {
  std::vector<std::string> v;
  for (auto st : tr::all_steps()) v.push_back(tr::name(st));
  return v;
}

registrar const square_reg{[] {
  experiment e;
  e.id = "transpose.square";
  e.description = "float n x n transpose: naive, shared tile, padded, swizzled, multi-element, vector, grouped vs copy, cublasSgeam";
  e.seed_ref = "004 (transpose bank conflicts); 000 §9.2.3.3";
  e.axes = {variant_axis(step_names()), int_axis("n", {2048, 8191, 8192}, {1024}),
            int_axis("raster_group", {tr::default_raster_group}, {tr::default_raster_group})};
  e.axes[1].min_value = 1;
  e.axes[1].max_value = 32768;
  e.axes[1].description = "rows = cols";
  e.axes[2].min_value = 1;
  e.axes[2].max_value = 4096;
  e.axes[2].description = "grouped_tile: tile rows per raster band (other variants skip other values)";
  e.ceiling = ceiling_relation::peer;
  e.body = [](state& s) {
    auto const n = static_cast<std::size_t>(s.get_int("n"));
    transpose_body(s, n, n);
  };
  e.describe_axis("variant", "", "the ladder step; copy is the same bytes without transposing (the ceiling)");
  e.describe_axis("n", "elements", "rows = cols");
  e.describe_axis("raster_group", "tiles", "grouped_tile: tile rows per raster band (other variants skip other values)");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("cublasSgeam"), metrics::vs_ceiling()};
  e.headline = best_row("At the largest size, how does the best transposing kernel compare with cublasSgeam?",
                        {{"n", {"max"}}, {"variant", {"!copy"}}}, "median_ms", "ratio_to_peer");
  e.prose = {"Transpose reads rows and writes columns, so one side is always strided in a naive kernel. Staging a 32×32 "
             "tile in shared memory makes both global sides coalesced but reads the tile down a column (a 32-way bank "
             "conflict); padding to [32][33] or an XOR swizzle removes it. The plain copy of the same bytes is the "
             "ceiling and cublasSgeam the peer.",
             "The naive bar against the tiled ones, and the best transposing step against cublasSgeam and the copy.", ""};
  {
    plot_spec p = bar_plot("transpose_square.png", "Square transpose bandwidth per step and size", "variant", "gbps", {"n"});
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

registrar const rect_reg{[] {
  experiment e;
  e.id = "transpose.rect";
  e.description = "float rows x cols transpose, non-square and not multiples of 32, vs copy and cublasSgeam";
  e.seed_ref = "004 (transpose bank conflicts)";
  e.axes = {variant_axis(step_names()),
            string_axis("shape", {"4096x16384", "16384x4096", "3001x20011", "20011x3001", "256x262144"},
                        {"1000x3001"})};
  e.axes[1].description = "rows x cols of the input";
  e.ceiling = ceiling_relation::peer;
  e.body = [](state& s) {
    std::string const& shape = s.get_string("shape");
    auto const x = shape.find('x');
    transpose_body(s, std::stoull(shape.substr(0, x)), std::stoull(shape.substr(x + 1)));
  };
  e.describe_axis("variant", "", "the ladder step; copy is the same bytes without transposing (the ceiling)");
  e.describe_axis("shape", "", "rows x cols of the input");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("cublasSgeam"), metrics::vs_ceiling()};
  e.headline = best_row("On an awkward shape, how does the best transposing kernel compare with cublasSgeam?",
                        {{"shape", {"3001x20011"}}, {"variant", {"!copy"}}}, "median_ms", "ratio_to_peer");
  e.prose = {"Transpose reads rows and writes columns, so one side is always strided in a naive kernel. Staging a 32×32 "
             "tile in shared memory makes both global sides coalesced but reads the tile down a column (a 32-way bank "
             "conflict); padding to [32][33] or an XOR swizzle removes it. The plain copy of the same bytes is the "
             "ceiling and cublasSgeam the peer.",
             "The naive bar against the tiled ones, and the best transposing step against cublasSgeam and the copy.", ""};
  {
    plot_spec p = bar_plot("transpose_rect.png", "Rectangular transpose bandwidth per step and shape", "variant", "gbps", {"shape"});
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
