#include "kernels/registers/row_normalize.hpp"
#include "memlab/error.hpp"

namespace memlab::registers {
namespace {

__device__ __forceinline__ void row_normalize_body(float const* __restrict__ in, float* __restrict__ out,
                                                   std::int64_t rows) {
  std::int64_t const r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float x[row_length];
#pragma unroll
  for (int k = 0; k < row_length; ++k) x[k] = in[k * rows + r];
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < row_length; ++k) sum += x[k];
  float const mean = sum * (1.f / row_length);
  float sq = 0.f;
#pragma unroll
  for (int k = 0; k < row_length; ++k) sq = fmaf(x[k] - mean, x[k] - mean, sq);
  float const inv = rsqrtf(sq * (1.f / row_length) + row_eps);
#pragma unroll
  for (int k = 0; k < row_length; ++k) out[k * rows + r] = (x[k] - mean) * inv;
}

using kernel_fn = void (*)(float const*, float*, std::int64_t);

// The same body under each budget. __launch_bounds__(256, m) caps registers at
// 65536 / (256 * m); __maxnreg__(n) caps them at n directly (the per-kernel form of
// -maxrregcount, CUDA 12.4+).
#define MEMLAB_ROW_KERNEL(name, attr) \
  __global__ void attr name(float const* __restrict__ in, float* __restrict__ out, std::int64_t rows) { \
    row_normalize_body(in, out, rows);                                                                   \
  }
MEMLAB_ROW_KERNEL(row_default, )
MEMLAB_ROW_KERNEL(row_lb256, __launch_bounds__(256))
MEMLAB_ROW_KERNEL(row_lb256_2, __launch_bounds__(256, 2))
MEMLAB_ROW_KERNEL(row_lb256_3, __launch_bounds__(256, 3))
MEMLAB_ROW_KERNEL(row_lb256_4, __launch_bounds__(256, 4))
MEMLAB_ROW_KERNEL(row_lb256_6, __launch_bounds__(256, 6))
MEMLAB_ROW_KERNEL(row_lb256_8, __launch_bounds__(256, 8))
MEMLAB_ROW_KERNEL(row_maxnreg_32, __maxnreg__(32))
MEMLAB_ROW_KERNEL(row_maxnreg_48, __maxnreg__(48))
MEMLAB_ROW_KERNEL(row_maxnreg_64, __maxnreg__(64))
MEMLAB_ROW_KERNEL(row_maxnreg_96, __maxnreg__(96))
MEMLAB_ROW_KERNEL(row_maxnreg_128, __maxnreg__(128))
#undef MEMLAB_ROW_KERNEL

struct entry {
  build b;
  kernel_fn fn;
};
std::vector<entry> const& table() {
  static std::vector<entry> const t = {
      {{"default", "none"}, row_default},
      {{"lb256", "__launch_bounds__(256)"}, row_lb256},
      {{"lb256_2", "__launch_bounds__(256, 2)"}, row_lb256_2},
      {{"lb256_3", "__launch_bounds__(256, 3)"}, row_lb256_3},
      {{"lb256_4", "__launch_bounds__(256, 4)"}, row_lb256_4},
      {{"lb256_6", "__launch_bounds__(256, 6)"}, row_lb256_6},
      {{"lb256_8", "__launch_bounds__(256, 8)"}, row_lb256_8},
      {{"maxnreg_32", "__maxnreg__(32)"}, row_maxnreg_32},
      {{"maxnreg_48", "__maxnreg__(48)"}, row_maxnreg_48},
      {{"maxnreg_64", "__maxnreg__(64)"}, row_maxnreg_64},
      {{"maxnreg_96", "__maxnreg__(96)"}, row_maxnreg_96},
      {{"maxnreg_128", "__maxnreg__(128)"}, row_maxnreg_128},
  };
  return t;
}

kernel_fn find(std::string const& name) {
  for (auto const& e : table())
    if (name == e.b.name) return e.fn;
  MEMLAB_EXPECTS(false, "unknown register build '" + name + "'");
  return nullptr;
}

}  // namespace

std::vector<build> const& builds() {
  static std::vector<build> const b = [] {
    std::vector<build> v;
    for (auto const& e : table()) v.push_back(e.b);
    return v;
  }();
  return b;
}

build_info query(std::string const& name) {
  kernel_fn const fn = find(name);
  cudaFuncAttributes a{};
  MEMLAB_CUDA_CHECK(cudaFuncGetAttributes(&a, fn));
  build_info info;
  info.num_regs = a.numRegs;
  info.local_bytes = a.localSizeBytes;
  info.max_threads = a.maxThreadsPerBlock;
  MEMLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&info.blocks_per_sm, fn, row_block, 0));
  return info;
}

void row_normalize(std::string const& name, float const* in, float* out, std::int64_t rows, cudaStream_t stream) {
  kernel_fn const fn = find(name);
  MEMLAB_EXPECTS(rows >= 0, "rows must be non-negative");
  MEMLAB_EXPECTS(rows <= (std::int64_t{1} << 40) / row_length, "rows too large");
  if (rows == 0) return;
  auto const grid = static_cast<unsigned>((rows + row_block - 1) / row_block);
  fn<<<grid, row_block, 0, stream>>>(in, out, rows);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::registers
