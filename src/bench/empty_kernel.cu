// The launch floor: an empty kernel, timed with the same method as the rows, says how much
// of a microsecond-scale row is launch overhead rather than the kernel's work.
#include "bench/empty_kernel.hpp"

namespace memlab::bench {

namespace {
__global__ void empty_kernel() {}
}  // namespace

void launch_empty_kernel(cudaStream_t stream) { empty_kernel<<<1, 32, 0, stream>>>(); }

}  // namespace memlab::bench
