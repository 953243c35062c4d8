// reduce.*: seed 003's two shared-memory reductions (interleaved addressing with its bank
// conflicts, sequential addressing), then the rest of the ladder up to one launch for any
// length, with CUB's DeviceReduce::Sum timed in the same run as the peer.
//
// Model: a sum reads every element once, so the bytes are n * sizeof(T) (the partials are
// noise) and a good reduction runs at the DRAM read bandwidth; the ladder's early steps
// lose to barriers, idle threads, bank conflicts and extra launches, which the prediction
// counts (launches, the worst bank-conflict degree of the shared tree, barriers per block).
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "bench/state.hpp"
#include "experiments/seeded_fill.cuh"
#include "kernels/reduce/reduce_common.cuh"
#include "kernels/reduce/reduce_ladder.hpp"
#include "memlab/buffer.hpp"
#include "memlab/reduce.hpp"
#include "memlab/detail/host_parallel.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
namespace rd = memlab::kernels::reduce;

// ---- data: counter-based random values, generated on the device, regenerated on the host
// for the reference (a 2^28 host fill and upload would dominate the run's time).

using memlab::experiments::seeded_value;

struct host_sums {
  double sum = 0, sum_sq = 0;
  std::int64_t isum = 0;
};

/// The reference on the host, in double (int64 for ints), split over the host's cores.
template <class T>
host_sums reference(std::uint64_t seed, std::size_t n) {
  std::vector<host_sums> part(memlab::detail::host_workers());
  memlab::detail::host_parallel_for(n, [&](std::size_t lo, std::size_t hi, unsigned w) {
    host_sums h;
    for (std::size_t i = lo; i < hi; ++i) {
      T const x = seeded_value<T>(seed, i);
      if constexpr (std::is_same_v<T, int>) {
        h.isum += x;
      } else {
        h.sum += static_cast<double>(x);
        h.sum_sq += static_cast<double>(x) * static_cast<double>(x);
      }
    }
    part[w] = h;
  });
  host_sums total;
  for (auto const& h : part) {
    total.sum += h.sum;
    total.sum_sq += h.sum_sq;
    total.isum += h.isum;
  }
  return total;
}

/// Worst bank-conflict degree of a tree step's shared-memory adds (32 banks of 32-bit words):
/// per level and warp, the most distinct words the active lanes touch in one bank.
int tree_conflict_ways(rd::step s, int block) {
  if (s != rd::step::interleaved_divergent && s != rd::step::interleaved && s != rd::step::sequential &&
      s != rd::step::first_add && s != rd::step::warp_shuffle)
    return 1;  // no shared tree (one word per warp)
  int worst = 1;
  auto levels = [&](auto word_of) {
    for (int stride = 1; stride < block; stride *= 2) {
      for (int w = 0; w < block / 32; ++w) {
        for (int operand = 0; operand < 2; ++operand) {
          std::vector<std::vector<int>> words(32);
          for (int lane = 0; lane < 32; ++lane) {
            int const word = word_of(w * 32 + lane, stride, operand);
            if (word < 0) continue;
            auto& b = words[word % 32];
            if (std::find(b.begin(), b.end(), word) == b.end()) b.push_back(word);
          }
          for (auto const& b : words) worst = std::max(worst, static_cast<int>(b.size()));
        }
      }
    }
  };
  if (s == rd::step::interleaved_divergent) {
    levels([&](int tid, int stride, int op) { return tid % (2 * stride) == 0 ? tid + op * stride : -1; });
  } else if (s == rd::step::interleaved) {
    levels([&](int tid, int stride, int op) {
      int const index = 2 * stride * tid;
      return index < block ? index + op * stride : -1;
    });
  } else {
    // Sequential: lane tid touches tid and tid + stride: consecutive words.
    levels([&](int tid, int stride, int op) { return tid < stride ? tid + op * stride : -1; });
  }
  return worst;
}

int barriers_per_block(rd::step s, int block) {
  int const levels = static_cast<int>(std::log2(block));
  switch (s) {
    case rd::step::warp_shuffle: return 1 + levels - 6;  // load, then the levels above 64
    case rd::step::vectorized:
    case rd::step::single_pass: return 1;  // one barrier in the block sum
    default: return 1 + levels;
  }
}

template <class T>
void sum_body(state& s, rd::step st, std::size_t n) {
  device_buffer<T> in(n), out(1), peer_out(1);
  device_buffer<char> ws(rd::workspace_bytes<T>(st, n));
  ws.fill_bytes(0, s.stream());  // the single-pass ticket starts at zero
  memlab::experiments::fill_seeded(in.data(), n, s.seed(), s.stream());

  out.fill_bytes(0xFF, s.stream());  // NaN / -1: a kernel that writes nothing fails
  rd::sum(st, in.data(), n, out.data(), ws.data(), ws.size(), s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  T const got = out.download()[0];
  host_sums const ref = reference<T>(s.seed(), n);
  if constexpr (std::is_same_v<T, int>) {
    // Exact: the sum modulo 2^32 does not depend on the order.
    int const expect = static_cast<int>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(ref.isum)));
    s.set_verification(compare_exact(std::vector<int>{got}, std::vector<int>{expect}));
  } else {
    // Each addition rounds by at most u|partial|. With independent zero-mean inputs, any
    // partial's expected square is at most sum x^2, and there are n-1 additions, so the
    // error's standard deviation is at most u*sqrt((n-1)*sum x^2) whatever the order
    // (tree, strided, CUB's): hold it to 4 of those.
    double const u = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;
    double const tol = 4.0 * u * std::sqrt(static_cast<double>(n > 1 ? n - 1 : 1) * ref.sum_sq) + 1e-30;
    s.set_verification(compare_close(std::vector<T>{got}, std::vector<double>{ref.sum}, 0.0, tol));
  }

  s.add_reads<T>(n);
  s.add_writes<T>(1);
  std::size_t temp_bytes = 0;
  MEMLAB_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in.data(), peer_out.data(), n, s.stream()));
  device_buffer<char> temp(std::max<std::size_t>(temp_bytes, 1));
  s.exec_paired([&](cudaStream_t stream) { rd::sum(st, in.data(), n, out.data(), ws.data(), ws.size(), stream); }, "cub",
                [&](cudaStream_t stream) {
                  MEMLAB_CUDA_CHECK(cub::DeviceReduce::Sum(temp.data(), temp_bytes, in.data(), peer_out.data(), n, stream));
                });

  s.set_predicted({{"launches", rd::launches(st, n)},
                   {"max_bank_conflict_ways", tree_conflict_ways(st, rd::block_threads)},
                   {"barriers_per_block", barriers_per_block(st, rd::block_threads)}});
  s.set_extra("block_threads", rd::block_threads);
  if (st == rd::step::vectorized || st == rd::step::single_pass) s.set_extra("grid", rd::persistent_grid(n, sizeof(T)));
}

void body(state& s) {
  rd::step const st = rd::step_from_name(s.variant());
  std::size_t const n = static_cast<std::size_t>(s.get_int("elements"));
  std::string const& dtype = s.get_string("dtype");
  if (dtype == "float") return sum_body<float>(s, st, n);
  if (dtype == "int") return sum_body<int>(s, st, n);
  return sum_body<double>(s, st, n);
}

std::vector<std::string> step_names() {
  std::vector<std::string> v;
  for (auto st : rd::all_steps()) v.push_back(rd::name(st));
  return v;
}

registrar const sum_reg{[] {
  experiment e;
  e.id = "reduce.sum";
  e.description = "sum of 2^10..2^28 elements: seed 003's interleaved and sequential trees to one launch, vs CUB";
  e.seed_ref = "003 (reduction); 000 §9.2.3";
  std::vector<std::int64_t> sizes, quick = {std::int64_t{1} << 10, std::int64_t{1} << 20};
  for (int p = 10; p <= 28; p += 2) sizes.push_back(std::int64_t{1} << p);
  e.axes = {variant_axis(step_names()), string_axis("dtype", {"float", "int"}, {"float", "int"}),
            int_axis("elements", sizes, quick)};
  e.axes[2].min_value = 0;
  e.axes[2].max_value = std::int64_t{1} << 30;
  e.axes[2].description = "elements summed (any count; the default sweep is 2^10, 2^12, ..., 2^28)";
  e.ceiling = ceiling_relation::peer;
  e.body = body;
  e.describe_axis("variant", "", "seed 003's ladder step, from interleaved addressing to one launch");
  e.describe_axis("elements", "elements", "elements summed (any count; the default sweep is 2^10, 2^12, ..., 2^28)", true);
  e.describe_axis("dtype", "", "element type summed");
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_peer("CUB DeviceReduce"), metrics::vs_ceiling()};
  e.headline = best_row("At the largest size, how close does the best ladder step come to CUB?",
                        {{"elements", {"max"}}, {"dtype", {"float"}}}, "median_ms", "ratio_to_peer");
  e.prose = {"Parallel sum, seed 003's ladder: interleaved addressing (divergent warps and bank conflicts), sequential "
             "addressing, adding during the load, warp shuffles for the last 32 values, several elements per thread "
             "with 16-byte loads, and one launch for any length. A large sum is bandwidth-bound, so the target is the "
             "copy ceiling, with CUB DeviceReduce as the peer.",
             "Each step's bandwidth at the large sizes, where the sum is bound by memory; small sizes measure launches.", ""};
  {
    plot_spec p = line_plot("reduce_sum.png", "Sum bandwidth against length, per ladder step", "elements", "gbps", {"variant"});
    p.panels = "dtype";
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
