// 06: 16-byte global loads (LDG.128) and A transposed into shared memory so that a
// thread's 8 values of A for one k are contiguous: LDS.128 for both operands.
#include "kernels/gemm/vectorized.cuh"

namespace memlab::detail::gemm {
void launch_vectorized(problem const& p, cudaStream_t s) { launch_vectorized_impl<false>(p, s); }
cudaFuncAttributes attributes_vectorized(bool) { return func_attributes(vectorized_kernel<false>); }
}  // namespace memlab::detail::gemm
