// 07: 06 with bank-conflict-free shared layouts: A's transposed rows padded by 4 floats
// (conflict-free transposing stores) and each thread's 8 columns split 4 + 4 sixty-four
// apart (conflict-free LDS.128 of B).
#include "kernels/gemm/vectorized.cuh"

namespace memlab::detail::gemm {
void launch_smem_padded(problem const& p, cudaStream_t s) { launch_vectorized_impl<true>(p, s); }
cudaFuncAttributes attributes_smem_padded(bool) { return func_attributes(vectorized_kernel<true>); }
}  // namespace memlab::detail::gemm
