#pragma once
// Kernels that do nothing but tensor-core MMAs on operands already on chip: the measured ceiling
// of each instruction family the GEMM ladder uses (docs/tc-gemm.md, "The tensor-core ceilings").
//  - mma.sync (HMMA, rungs 1-2): m16n8k16 (BF16, FP16) or m16n8k32 (E4M3, sm_89+) from registers,
//    `mma_peak_chains` independent accumulators per warp;
//  - wgmma (rungs 3-6, sm_90a): m64n256k16 (k32 for E4M3), A and B from shared memory in the
//    128-byte swizzled K-major layout the GEMM's TMA writes, two warpgroups per CTA, each with one
//    group of four slices in flight behind the one it issues.
// Every accumulator is FP32. The host packs the operands (random values of the input type) and
// checks the result against the same products in double (tensor_peak_reference).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "memlab/gemm_tc.hpp"

namespace memlab::detail {

enum class tensor_instruction { mma_sync, wgmma };

inline constexpr int mma_peak_chains = 8;     ///< independent accumulators per warp
inline constexpr int mma_peak_threads = 128;  ///< 4 warps a block
inline constexpr int wgmma_peak_threads = 256;  ///< 2 warpgroups a CTA, one CTA per SM
inline constexpr int wgmma_peak_n = 256;        ///< m64n256 per warpgroup

/// The key a tensor-core ceiling is published under (state::set_tensor_peak_tflops) and a GEMM row
/// reads it by (state::compare_with_tensor_peak): "<instruction>.<input type>", e.g. "mma_sync.bf16",
/// "wgmma.e4m3".
std::string tensor_peak_key(tensor_instruction ins, gemm_tc_input in);

/// K of one instruction: 16 for BF16/FP16, 32 for E4M3 (mma.sync; wgmma slice), and the K that
/// one iteration of the wgmma kernel covers (4 slices: one 128-byte row).
int tensor_peak_k(gemm_tc_input in);
/// Flops one iteration of one block does.
double tensor_peak_flops_per_block_iteration(tensor_instruction ins, gemm_tc_input in);

/// The operands, host side: A is rows x k, B is (chains x) cols x k, both K-major, as the
/// instruction sees them (mma.sync: A 16 x K, B 8 x K per chain; wgmma: A 64 x 4K, B 256 x 4K),
/// values uniform in [-1, 1) rounded to the input type, stored as that type's bits.
struct tensor_peak_operands {
  tensor_instruction ins;
  gemm_tc_input in;
  int rows = 0, cols = 0, k = 0, chains = 1;
  std::vector<double> a, b;            ///< the values, rows x k and chains x cols x k
  std::vector<std::uint8_t> a_bits, b_bits;  ///< what the kernel reads (mma.sync: per-lane fragments)
};
tensor_peak_operands make_tensor_peak_operands(tensor_instruction ins, gemm_tc_input in, std::uint64_t seed);

/// Floats the kernel writes for `blocks` blocks (every accumulator of every warp).
std::size_t tensor_peak_out_floats(tensor_instruction ins, int blocks);
/// What out[i] must hold after `iterations` iterations: iterations x (A B) at that accumulator,
/// and the bound sum |a||b| x iterations of its terms (the tolerance's scale).
void tensor_peak_reference(tensor_peak_operands const& ops, int blocks, int iterations, std::vector<double>& want,
                           std::vector<double>& scale);

/// Accumulators in `got` (after `iterations`) farther than rel x sum |a||b| x iterations from the
/// reference, a NaN among them; `first`, if given, describes the first.
std::size_t tensor_peak_mismatches(tensor_peak_operands const& ops, std::vector<float> const& got, int blocks,
                                   int iterations, double rel, std::string* first = nullptr);

/// The kernel, for require_arch / occupancy queries.
void const* tensor_peak_kernel(tensor_instruction ins, gemm_tc_input in);
/// Blocks per SM the kernel holds (cudaOccupancyMaxActiveBlocksPerMultiprocessor).
int tensor_peak_blocks_per_sm(tensor_instruction ins, gemm_tc_input in);
/// a_bits / b_bits uploaded to a and b; out: tensor_peak_out_floats(ins, blocks).
void tensor_peak(tensor_instruction ins, gemm_tc_input in, void const* a, void const* b, float* out, int blocks,
                 int iterations, cudaStream_t stream);

}  // namespace memlab::detail
