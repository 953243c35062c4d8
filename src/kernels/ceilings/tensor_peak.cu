// The tensor-core ceilings (tensor_peak.hpp). The instruction wrappers, the swizzle and the
// descriptors are the GEMM ladder's (kernels/gemm/tc), so the ceiling runs the same instructions
// the rungs run, minus every load from global memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cmath>
#include <cstring>
#include <algorithm>
#include <random>
#include <string>

#include "kernels/ceilings/tensor_peak.hpp"
#include "kernels/gemm/tc/tc_common.cuh"
#include "kernels/gemm/tc/wgmma_ops.cuh"
#include "memlab/detail/per_device.hpp"
#include "memlab/error.hpp"

namespace memlab::detail {

namespace {

/// Each warp: one A fragment, `mma_peak_chains` B fragments, as many independent accumulators,
/// `iterations` rounds of one mma.sync per chain. Writes out[((warp * 32 + lane) * chains + c) * 4 + q].
template <class In>
__global__ void __launch_bounds__(mma_peak_threads) mma_sync_peak_kernel(std::uint32_t const* a_frag,
                                                                         std::uint32_t const* b_frag, float* out,
                                                                         int iterations) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  int const lane = threadIdx.x % 32;
  std::int64_t const warp = static_cast<std::int64_t>(blockIdx.x) * (mma_peak_threads / 32) + threadIdx.x / 32;
  std::uint32_t a[4], b[mma_peak_chains][2];
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = a_frag[lane * 4 + i];
#pragma unroll
  for (int c = 0; c < mma_peak_chains; ++c) {
    b[c][0] = b_frag[(c * 32 + lane) * 2];
    b[c][1] = b_frag[(c * 32 + lane) * 2 + 1];
  }
  float acc[mma_peak_chains][4];
#pragma unroll
  for (int c = 0; c < mma_peak_chains; ++c)
#pragma unroll
    for (int q = 0; q < 4; ++q) acc[c][q] = 0.f;
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < mma_peak_chains; ++c) gemm_tc::mma_sync_step<In>(acc[c], a, b[c][0], b[c][1]);
  float* o = out + (warp * 32 + lane) * mma_peak_chains * 4;
#pragma unroll
  for (int c = 0; c < mma_peak_chains; ++c)
#pragma unroll
    for (int q = 0; q < 4; ++q) o[c * 4 + q] = acc[c][q];
#else
  __trap();  // BF16/FP16 mma.sync m16n8k16 needs sm_80 (FP8 sm_89): the host refuses first
#endif
}

/// Two warpgroups, each D (64 x 256, FP32) += A (64 x 128 bytes of K) B^T (256 x 128 bytes) per
/// iteration: four wgmma slices of 32 bytes, one commit group, waiting for the group before it.
/// A and B are copied once into the 128-byte swizzle the GEMM's TMA writes (chunk c of row r at
/// c ^ (r & 7)). Writes out[((block * 2 + wg) * 128 + t) * 128 + r].
template <class In>
__global__ void __launch_bounds__(wgmma_peak_threads, 1) wgmma_peak_kernel(std::uint8_t const* a, std::uint8_t const* b,
                                                                         float* out, int iterations) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int a_rows = 64, b_rows = wgmma_peak_n, row_bytes = 128;
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  // Dynamic shared memory is at least 16-byte aligned; the swizzle atoms need 1024.
  std::uint8_t* const smem = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  std::uint8_t* const sa = smem;
  std::uint8_t* const sb = smem + a_rows * row_bytes;
  for (int i = threadIdx.x; i < (a_rows + b_rows) * (row_bytes / 16); i += wgmma_peak_threads) {
    int const r = i / (row_bytes / 16), c = i % (row_bytes / 16);
    bool const is_a = r < a_rows;
    int const rr = is_a ? r : r - a_rows;
    uint4 const v = *reinterpret_cast<uint4 const*>((is_a ? a : b) + rr * row_bytes + c * 16);
    *reinterpret_cast<uint4*>((is_a ? sa : sb) + rr * row_bytes + ((c ^ (rr & 7)) * 16)) = v;
  }
  gemm_tc::fence_proxy_async_smem();  // the generic-proxy writes, before wgmma reads them
  __syncthreads();
  int const wg = threadIdx.x / 128, t = threadIdx.x % 128;
  std::uint32_t const a_addr = gemm_tc::smem_addr(sa), b_addr = gemm_tc::smem_addr(sb);
  float d[wgmma_peak_n / 2];
#pragma unroll
  for (int i = 0; i < wgmma_peak_n / 2; ++i) d[i] = 0.f;
  for (int it = 0; it < iterations; ++it) {
    gemm_tc::wgmma_fence();
#pragma unroll
    for (int s = 0; s < row_bytes / 32; ++s)
      gemm_tc::wgmma_slice<In, wgmma_peak_n>(d, gemm_tc::smem_desc(a_addr + s * 32), gemm_tc::smem_desc(b_addr + s * 32));
    gemm_tc::wgmma_commit();
    gemm_tc::wgmma_wait<1>();
  }
  gemm_tc::wgmma_wait<0>();
  gemm_tc::fence_regs(d);
  float* o = out + ((static_cast<std::int64_t>(blockIdx.x) * 2 + wg) * 128 + t) * (wgmma_peak_n / 2);
#pragma unroll
  for (int i = 0; i < wgmma_peak_n / 2; ++i) o[i] = d[i];
#else
  __trap();  // wgmma needs an sm_90a image: the host refuses first
#endif
}

constexpr std::size_t wgmma_smem_bytes = (64 + wgmma_peak_n) * 128 + 1024;  // + alignment slack

/// Raises the wgmma kernel's dynamic shared-memory limit, once per device (not on every launch:
/// the launch is timed).
template <class In>
void allow_wgmma_smem() {
  per_device([] {
    MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(wgmma_peak_kernel<In>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(wgmma_smem_bytes)));
    return true;
  });
}

int elem_bytes(gemm_tc_input in) { return in == gemm_tc_input::e4m3 ? 1 : 2; }

/// `v` rounded to the input type: its bits (little-endian, elem_bytes) and its value.
double round_to(gemm_tc_input in, float v, std::uint8_t* bits) {
  if (in == gemm_tc_input::e4m3) {
    __nv_fp8_e4m3 const x(v);
    std::memcpy(bits, &x, 1);
    return static_cast<double>(static_cast<float>(x));
  }
  if (in == gemm_tc_input::f16) {
    __half const x = __float2half_rn(v);
    std::memcpy(bits, &x, 2);
    return static_cast<double>(__half2float(x));
  }
  __nv_bfloat16 const x = __float2bfloat16_rn(v);
  std::memcpy(bits, &x, 2);
  return static_cast<double>(__bfloat162float(x));
}

template <class F>
auto by_input(gemm_tc_input in, F&& f) {
  switch (in) {
    case gemm_tc_input::f16: return f(__half{});
    case gemm_tc_input::e4m3: return f(__nv_fp8_e4m3{});
    default: return f(__nv_bfloat16{});
  }
}

}  // namespace

std::string tensor_peak_key(tensor_instruction ins, gemm_tc_input in) {
  char const* const type = in == gemm_tc_input::f16 ? "f16" : in == gemm_tc_input::e4m3 ? "e4m3" : "bf16";
  return std::string(ins == tensor_instruction::mma_sync ? "mma_sync." : "wgmma.") + type;
}

int tensor_peak_k(gemm_tc_input in) { return 32 / elem_bytes(in); }

double tensor_peak_flops_per_block_iteration(tensor_instruction ins, gemm_tc_input in) {
  double const k = tensor_peak_k(in);
  if (ins == tensor_instruction::mma_sync) return 2.0 * 16 * 8 * k * mma_peak_chains * (mma_peak_threads / 32);
  return 2.0 * 64 * wgmma_peak_n * (4 * k) * 2;  // two warpgroups, four slices
}

tensor_peak_operands make_tensor_peak_operands(tensor_instruction ins, gemm_tc_input in, std::uint64_t seed) {
  tensor_peak_operands ops;
  ops.ins = ins;
  ops.in = in;
  int const e = elem_bytes(in), k = tensor_peak_k(in);
  bool const mma = ins == tensor_instruction::mma_sync;
  ops.rows = mma ? 16 : 64;
  ops.cols = mma ? 8 : wgmma_peak_n;
  ops.k = mma ? k : 4 * k;
  ops.chains = mma ? mma_peak_chains : 1;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<std::uint8_t> a_elem(static_cast<std::size_t>(ops.rows) * ops.k * e),
      b_elem(static_cast<std::size_t>(ops.chains) * ops.cols * ops.k * e);
  ops.a.resize(static_cast<std::size_t>(ops.rows) * ops.k);
  ops.b.resize(static_cast<std::size_t>(ops.chains) * ops.cols * ops.k);
  for (std::size_t i = 0; i < ops.a.size(); ++i) ops.a[i] = round_to(in, u(gen), &a_elem[i * e]);
  for (std::size_t i = 0; i < ops.b.size(); ++i) ops.b[i] = round_to(in, u(gen), &b_elem[i * e]);
  if (!mma) {  // wgmma reads rows of K from shared memory: the kernel copies them as they are
    ops.a_bits = std::move(a_elem);
    ops.b_bits = std::move(b_elem);
    return ops;
  }
  // mma.sync fragments, per lane (g = lane / 4, t = lane % 4), each 32-bit register holding
  // E = 4 / e consecutive elements of K (the PTX ISA's m16n8k16 / m16n8k32 layouts):
  // A register i: row g + 8 (i % 2), k from E t + (K / 2)(i / 2); B register j: column g,
  // k from E t + (K / 2) j.
  int const per_reg = 4 / e;
  ops.a_bits.assign(32 * 4 * 4, 0);
  ops.b_bits.assign(static_cast<std::size_t>(ops.chains) * 32 * 2 * 4, 0);
  for (int lane = 0; lane < 32; ++lane) {
    int const g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      int const row = g + 8 * (i % 2), k0 = per_reg * t + (k / 2) * (i / 2);
      std::memcpy(&ops.a_bits[(lane * 4 + i) * 4], &a_elem[(static_cast<std::size_t>(row) * k + k0) * e], 4);
    }
    for (int c = 0; c < ops.chains; ++c)
      for (int j = 0; j < 2; ++j) {
        int const k0 = per_reg * t + (k / 2) * j;
        std::memcpy(&ops.b_bits[((c * 32 + lane) * 2 + j) * 4],
                    &b_elem[((static_cast<std::size_t>(c) * ops.cols + g) * k + k0) * e], 4);
      }
  }
  return ops;
}

std::size_t tensor_peak_out_floats(tensor_instruction ins, int blocks) {
  if (ins == tensor_instruction::mma_sync)
    return static_cast<std::size_t>(blocks) * mma_peak_threads * mma_peak_chains * 4;
  return static_cast<std::size_t>(blocks) * wgmma_peak_threads * (wgmma_peak_n / 2);
}

void tensor_peak_reference(tensor_peak_operands const& ops, int blocks, int iterations, std::vector<double>& want,
                           std::vector<double>& scale) {
  // One block's accumulators (every block computes the same), then repeated.
  std::size_t const per_block = tensor_peak_out_floats(ops.ins, 1);
  std::vector<double> w(per_block), s(per_block);
  auto dot = [&](int chain, int row, int col, double& sum, double& mag) {
    sum = mag = 0.0;
    for (int kk = 0; kk < ops.k; ++kk) {
      double const p = ops.a[static_cast<std::size_t>(row) * ops.k + kk] *
                       ops.b[(static_cast<std::size_t>(chain) * ops.cols + col) * ops.k + kk];
      sum += p;
      mag += std::fabs(p);
    }
  };
  if (ops.ins == tensor_instruction::mma_sync) {
    for (int warp = 0; warp < mma_peak_threads / 32; ++warp)
      for (int lane = 0; lane < 32; ++lane)
        for (int c = 0; c < ops.chains; ++c)
          for (int q = 0; q < 4; ++q) {
            std::size_t const i = ((static_cast<std::size_t>(warp) * 32 + lane) * ops.chains + c) * 4 + q;
            dot(c, lane / 4 + 8 * (q / 2), 2 * (lane % 4) + q % 2, w[i], s[i]);
          }
  } else {
    for (int wg = 0; wg < 2; ++wg)
      for (int t = 0; t < 128; ++t)
        for (int r = 0; r < wgmma_peak_n / 2; ++r) {
          std::size_t const i = (static_cast<std::size_t>(wg) * 128 + t) * (wgmma_peak_n / 2) + r;
          dot(0, gemm_tc::wgmma_acc_row(t, r), gemm_tc::wgmma_acc_col(t, r) + r % 2, w[i], s[i]);
        }
  }
  want.resize(per_block * blocks);
  scale.resize(per_block * blocks);
  for (int blk = 0; blk < blocks; ++blk)
    for (std::size_t i = 0; i < per_block; ++i) {
      want[blk * per_block + i] = w[i] * iterations;
      scale[blk * per_block + i] = s[i] * iterations;
    }
}

std::size_t tensor_peak_mismatches(tensor_peak_operands const& ops, std::vector<float> const& got, int blocks,
                                   int iterations, double rel, std::string* first) {
  std::vector<double> want, scale;
  tensor_peak_reference(ops, blocks, iterations, want, scale);
  std::size_t bad = got.size() == want.size() ? 0 : std::max(got.size(), want.size());
  for (std::size_t i = 0; i < got.size() && i < want.size(); ++i) {
    double const err = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (err <= rel * scale[i] + 1e-30) continue;  // NaN fails
    if (bad++ == 0 && first)
      *first = "accumulator " + std::to_string(i) + ": got " + std::to_string(got[i]) + ", want " + std::to_string(want[i]) +
               " after " + std::to_string(iterations) + " iterations";
  }
  return bad;
}

void const* tensor_peak_kernel(tensor_instruction ins, gemm_tc_input in) {
  return by_input(in, [&](auto v) -> void const* {
    using In = decltype(v);
    if (ins == tensor_instruction::mma_sync) return reinterpret_cast<void const*>(mma_sync_peak_kernel<In>);
    return reinterpret_cast<void const*>(wgmma_peak_kernel<In>);
  });
}

int tensor_peak_blocks_per_sm(tensor_instruction ins, gemm_tc_input in) {
  int blocks = 0;
  bool const mma = ins == tensor_instruction::mma_sync;
  if (!mma) by_input(in, [](auto v) { return allow_wgmma_smem<decltype(v)>(), 0; });
  MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tensor_peak_kernel(ins, in),
                                                                  mma ? mma_peak_threads : wgmma_peak_threads,
                                                                  mma ? 0 : wgmma_smem_bytes));
  return blocks;
}

void tensor_peak(tensor_instruction ins, gemm_tc_input in, void const* a, void const* b, float* out, int blocks,
                 int iterations, cudaStream_t stream) {
  MEMLAB_EXPECTS(a && b && out, "null operand or output");
  MEMLAB_EXPECTS(blocks > 0 && iterations >= 0, "blocks must be positive and iterations non-negative");
  by_input(in, [&](auto v) {
    using In = decltype(v);
    if (ins == tensor_instruction::mma_sync) {
      mma_sync_peak_kernel<In><<<blocks, mma_peak_threads, 0, stream>>>(static_cast<std::uint32_t const*>(a),
                                                                        static_cast<std::uint32_t const*>(b), out, iterations);
    } else {
      allow_wgmma_smem<In>();
      wgmma_peak_kernel<In><<<blocks, wgmma_peak_threads, wgmma_smem_bytes, stream>>>(
          static_cast<std::uint8_t const*>(a), static_cast<std::uint8_t const*>(b), out, iterations);
    }
    return 0;
  });
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::detail
