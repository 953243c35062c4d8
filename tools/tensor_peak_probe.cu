// Tensor-core peak probe (docs/tc-gemm.md, "The tensor-core ceilings"): the same loops as
// kernels/ceilings/tensor_peak.cu in several forms, to find the form that reaches the highest
// rate before the library's ceiling kernel takes it. No verification: the library kernel has it.
// Build: nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I src -I include -o probe tools/tensor_peak_probe.cu
// Run:   ./probe   (prints one line per form: TFLOP/s, median of 15 launches)
#include <cuda_bf16.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/gemm/tc/tc_common.cuh"
#include "kernels/gemm/tc/wgmma_ops.cuh"

using namespace memlab::detail::gemm_tc;

// mma.sync m16n8k16: Chains accumulators; A per chain or shared; Pairs: two mma (two B) a chain back to back.
template <class In, int Chains, bool ADistinct, bool Pairs>
__global__ void __launch_bounds__(128) mma_probe(std::uint32_t const* in, float* out, int iterations) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  int const lane = threadIdx.x % 32;
  constexpr int NA = ADistinct ? Chains : 1, NB = Pairs ? 2 * Chains : Chains;
  std::uint32_t a[NA][4], b[NB][2];
#pragma unroll
  for (int c = 0; c < NA; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) a[c][i] = in[(c * 4 + i) * 32 + lane];
#pragma unroll
  for (int c = 0; c < NB; ++c) b[c][0] = in[(512 + c * 2) * 32 + lane], b[c][1] = in[(513 + c * 2) * 32 + lane];
  float acc[Chains][4] = {};
  for (int it = 0; it < iterations; ++it)
#pragma unroll
    for (int c = 0; c < Chains; ++c) {
      mma_sync_step<In>(acc[c], a[ADistinct ? c : 0], b[Pairs ? 2 * c : c][0], b[Pairs ? 2 * c : c][1]);
      if constexpr (Pairs) mma_sync_step<In>(acc[c], a[ADistinct ? c : 0], b[2 * c + 1][0], b[2 * c + 1][1]);
    }
  float s = 0.f;
#pragma unroll
  for (int c = 0; c < Chains; ++c) s += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[blockIdx.x * 128 + threadIdx.x] = s;
#endif
}

// wgmma m64nNk16 SS: WGs warpgroups, Accs independent accumulators a warpgroup (alternated per slice),
// Wait: groups left in flight.
template <int WGs, int N, int Accs, int Wait>
__global__ void __launch_bounds__(WGs * 128, 1) wgmma_probe(std::uint8_t const* src, float* out, int iterations) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(1024) std::uint8_t smem_raw[];
  std::uint8_t* smem = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~std::uintptr_t{1023});
  int const bytes = (64 + N) * 128;
  for (int i = threadIdx.x; i < bytes / 16; i += blockDim.x)
    reinterpret_cast<uint4*>(smem)[i] = reinterpret_cast<uint4 const*>(src)[i];
  fence_proxy_async_smem();
  __syncthreads();
  std::uint32_t const a_addr = smem_addr(smem), b_addr = a_addr + 64 * 128;
  float d[Accs][N / 2];
#pragma unroll
  for (int q = 0; q < Accs; ++q)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[q][i] = 0.f;
  for (int it = 0; it < iterations; ++it) {
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < 4; ++s) wgmma_slice<__nv_bfloat16, N>(d[s % Accs], smem_desc(a_addr + s * 32), smem_desc(b_addr + s * 32));
    wgmma_commit();
    wgmma_wait<Wait>();
  }
  wgmma_wait<0>();
#pragma unroll
  for (int q = 0; q < Accs; ++q) fence_regs(d[q]);
  float s = 0.f;
#pragma unroll
  for (int q = 0; q < Accs; ++q)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[q][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
#endif
}

template <class K>
double time_ms(K launch) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  launch();
  std::vector<float> ms;
  for (int r = 0; r < 15; ++r) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float t = 0;
    cudaEventElapsedTime(&t, e0, e1);
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int sms = 0;
std::uint32_t* d_in;
float* d_out;

template <class In, int Chains, bool ADistinct, bool Pairs>
void mma_row(char const* name, int warps_per_sm) {
  int const blocks = sms * warps_per_sm / 4, its = 4096 * 16 / warps_per_sm / (Pairs ? 2 : 1);
  double const ms = time_ms([&] { mma_probe<In, Chains, ADistinct, Pairs><<<blocks, 128>>>(d_in, d_out, its); });
  double const k = sizeof(In) == 1 ? 32 : 16;
  double const flops = 2.0 * 16 * 8 * k * Chains * (Pairs ? 2 : 1) * its * blocks * 4;
  std::printf("mma  %-34s warps/SM %2d  %8.3f ms  %7.1f TFLOP/s  %s\n", name, warps_per_sm, ms, flops / ms / 1e9,
              cudaGetErrorString(cudaGetLastError()));
}

template <int WGs, int N, int Accs, int Wait>
void wgmma_row(char const* name) {
  int const its = 1024 * 2 / WGs;
  std::size_t const smem = (64 + N) * 128 + 1024;
  cudaFuncSetAttribute(wgmma_probe<WGs, N, Accs, Wait>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  double const ms = time_ms([&] { wgmma_probe<WGs, N, Accs, Wait><<<sms, WGs * 128, smem>>>(reinterpret_cast<std::uint8_t*>(d_in), d_out, its); });
  double const flops = 2.0 * 64 * N * 64 * its * WGs * sms;
  std::printf("wgmma %-33s            %8.3f ms  %7.1f TFLOP/s  %s\n", name, ms, flops / ms / 1e9, cudaGetErrorString(cudaGetLastError()));
}

int main() {
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  std::vector<std::uint32_t> h(1 << 16);
  std::uint32_t x = 12345;
  for (auto& v : h) {  // random 16-bit values in [-1, 1): sign, exponent 0x3F00-0x3F7F region, random mantissa
    x = x * 1664525u + 1013904223u;
    std::uint32_t lo = 0x3800u | ((x >> 8) & 0x7FFu) | ((x >> 20) & 1u) << 15, hi = 0x3800u | ((x >> 12) & 0x7FFu);
    v = lo | hi << 16;
  }
  cudaMalloc(&d_in, h.size() * 4);
  cudaMalloc(&d_out, 1 << 24);
  cudaMemcpy(d_in, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  for (int w : {8, 16}) {
    mma_row<__nv_bfloat16, 8, false, false>("bf16 8 chains, one A (the library's)", w);
    mma_row<__nv_bfloat16, 8, true, false>("bf16 8 chains, A per chain", w);
    mma_row<__nv_bfloat16, 4, false, false>("bf16 4 chains", w);
    mma_row<__nv_bfloat16, 16, false, false>("bf16 16 chains", w);
    mma_row<__nv_bfloat16, 8, false, true>("bf16 8 chains, pairs", w);
    mma_row<__nv_bfloat16, 4, true, true>("bf16 4 chains, A per chain, pairs", w);
    mma_row<__half, 8, false, false>("f16 8 chains, one A", w);
    mma_row<__half, 8, false, true>("f16 8 chains, pairs", w);
    mma_row<__nv_fp8_e4m3, 8, false, false>("e4m3 8 chains, one A", w);
  }
  wgmma_row<2, 256, 1, 1>("2 WG m64n256, wait 1 (the library's)");
  wgmma_row<2, 256, 1, 0>("2 WG m64n256, wait 0");
  wgmma_row<3, 256, 1, 1>("3 WG m64n256, wait 1");
  wgmma_row<2, 128, 2, 1>("2 WG 2 x m64n128, wait 1");
  wgmma_row<4, 128, 1, 1>("4 WG m64n128, wait 1");
  wgmma_row<1, 256, 1, 1>("1 WG m64n256, wait 1");
  wgmma_row<2, 192, 1, 1>("2 WG m64n192, wait 1");
  return 0;
}
