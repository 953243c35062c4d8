// Distributed shared memory (sm_90 thread-block clusters): the latency of a dependent load
// from another block's shared memory (ld.shared::cluster after mapa) and the bandwidth of
// every block reading its neighbour's. Below sm_90 the bodies trap; callers ask
// dsmem_kernel() for the kernel and check its image first (memlab/arch.hpp).
#include <cooperative_groups.h>

#include "kernels/hierarchy/block_sum.cuh"
#include "kernels/hierarchy/hierarchy.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace memlab::hierarchy {

namespace {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define MEMLAB_HAS_CLUSTERS 1
#else
#define MEMLAB_HAS_CLUSTERS 0
#endif

/// The cluster-window address of shared address `local` in block `rank` of this cluster.
[[maybe_unused]] __device__ __forceinline__ std::uint32_t map_to_rank(std::uint32_t local, std::uint32_t rank) {
#if MEMLAB_HAS_CLUSTERS
  std::uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
#else
  __trap();
  return 0;
#endif
}

/// Every block writes its chain as cluster-window addresses of its own slots; block 0's
/// thread 0 then chases the chain that lives in block `target`.
__global__ void dsmem_chase_kernel(std::uint32_t const* next, int slots, int target, std::uint64_t loads,
                                   std::uint64_t* out) {
#if MEMLAB_HAS_CLUSTERS
  extern __shared__ std::uint32_t chain[];
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  auto const me = static_cast<std::uint32_t>(cluster.block_rank());
  auto const base = static_cast<std::uint32_t>(__cvta_generic_to_shared(chain));
  for (int i = threadIdx.x; i < slots; i += blockDim.x) chain[i] = map_to_rank(base + 4 * next[i], me);
  cluster.sync();
  if (me == 0 && threadIdx.x == 0) {
    std::uint32_t j = map_to_rank(base, static_cast<std::uint32_t>(target));  // slot 0 of the target
    for (int i = 0; i < slots; ++i) asm volatile("ld.shared::cluster.u32 %0, [%0];" : "+r"(j));
    std::uint64_t n0, n1;
    std::uint64_t const c0 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(n0));
    for (std::uint64_t i = 0; i < loads; ++i) asm volatile("ld.shared::cluster.u32 %0, [%0];" : "+r"(j));
    std::uint64_t const c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(n1));
    out[0] = c1 - c0;
    out[2] = n1 - n0;
    out[1] = j - map_to_rank(base, static_cast<std::uint32_t>(target));  // byte offset of the last slot
  }
  cluster.sync();  // no block leaves while its shared memory may still be read
#else
  __trap();
#endif
}

/// Every block reads `words` 32-bit words of block (rank + distance) % size, 16 bytes a
/// load, `reps` times; distance 0 reads its own shared memory through the same path.
__global__ void dsmem_stream_kernel(int words, int distance, int reps, std::uint32_t* block_sums) {
#if MEMLAB_HAS_CLUSTERS
  extern __shared__ uint4 data[];
  namespace cg = cooperative_groups;
  cg::cluster_group cluster = cg::this_cluster();
  auto const me = static_cast<std::uint32_t>(cluster.block_rank());
  int const vecs = words / 4;
  for (int i = threadIdx.x; i < vecs; i += blockDim.x) {
    std::uint32_t const w = static_cast<std::uint32_t>(4 * i) + 1000u * me;
    data[i] = make_uint4(w, w + 1, w + 2, w + 3);
  }
  cluster.sync();
  auto const target = (me + static_cast<std::uint32_t>(distance)) % cluster.num_blocks();
  std::uint32_t const remote = map_to_rank(static_cast<std::uint32_t>(__cvta_generic_to_shared(data)), target);
  std::uint32_t sum = 0;
  for (int r = 0; r < reps; ++r) {
    for (int i = threadIdx.x; i < vecs; i += blockDim.x) {
      std::uint32_t a, b, c, d;
      asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                   : "r"(remote + 16u * static_cast<std::uint32_t>(i)));
      sum += a + b + c + d;
    }
  }
  detail::store_block_sum<dsmem_threads>(sum, block_sums);  // launched with dsmem_threads threads
  cluster.sync();
#else
  __trap();
#endif
}

cudaLaunchConfig_t cluster_config(int blocks, int threads, std::size_t smem, int cluster, cudaStream_t stream,
                                  cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = static_cast<unsigned>(cluster);
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

void allow_cluster(void const* kernel, int cluster, std::size_t smem) {
  MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  if (cluster > 8) MEMLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

}  // namespace

void const* dsmem_kernel(bool stream) {
  return stream ? reinterpret_cast<void const*>(dsmem_stream_kernel) : reinterpret_cast<void const*>(dsmem_chase_kernel);
}

int dsmem_max_clusters(bool stream, int cluster, std::size_t smem, int threads) {
  void const* k = dsmem_kernel(stream);
  allow_cluster(k, cluster, smem);
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t cfg = cluster_config(cluster, threads, smem, cluster, nullptr, &attr);
  int n = 0;
  cudaError_t const e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;  // this cluster size cannot be launched here
  }
  return n;
}

dsmem_chase_result dsmem_chase(int cluster, int target, int slots, std::uint64_t loads, std::uint64_t seed,
                               cudaStream_t stream) {
  MEMLAB_EXPECTS(cluster >= 1 && target >= 0 && target < cluster, "target must be a rank of the cluster");
  MEMLAB_EXPECTS(slots >= 2 && loads >= 1, "slots >= 2 and loads >= 1");
  auto const next = random_cycle(static_cast<std::size_t>(slots), seed);
  device_buffer<std::uint32_t> d_next(next.size());
  device_buffer<std::uint64_t> out(3);
  d_next.upload(next);
  std::size_t const smem = static_cast<std::size_t>(slots) * 4;
  allow_cluster(dsmem_kernel(false), cluster, smem);
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t cfg = cluster_config(cluster, 32, smem, cluster, stream, &attr);
  MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, dsmem_chase_kernel, static_cast<std::uint32_t const*>(d_next.data()),
                                       slots, target, loads, out.data()));
  std::uint64_t h[3];
  MEMLAB_CUDA_CHECK(cudaMemcpyAsync(h, out.data(), sizeof h, cudaMemcpyDeviceToHost, stream));
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(stream));
  dsmem_chase_result r;
  r.cycles_per_load = static_cast<double>(h[0]) / static_cast<double>(loads);
  r.ns_per_load = static_cast<double>(h[2]) / static_cast<double>(loads);
  r.last_slot = static_cast<std::uint32_t>(h[1] / 4);
  r.expected_slot = follow(next, 0, static_cast<std::uint64_t>(slots) + loads);
  return r;
}

void dsmem_stream(int cluster, int clusters, int words, int distance, int reps, std::uint32_t* block_sums,
                  cudaStream_t stream) {
  MEMLAB_EXPECTS(words >= 4 && words % 4 == 0, "words must be a positive multiple of 4");
  std::size_t const smem = static_cast<std::size_t>(words) * 4;
  allow_cluster(dsmem_kernel(true), cluster, smem);
  cudaLaunchAttribute attr;
  cudaLaunchConfig_t cfg = cluster_config(cluster * clusters, dsmem_threads, smem, cluster, stream, &attr);
  MEMLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, dsmem_stream_kernel, words, distance, reps, block_sums));
}

std::uint32_t dsmem_stream_reference(int cluster, int clusters, int words, int distance, int reps) {
  std::uint32_t total = 0;
  for (int b = 0; b < cluster * clusters; ++b) {
    int const target = (b % cluster + distance) % cluster;
    std::uint32_t block = 0;
    for (int i = 0; i < words; ++i) block += static_cast<std::uint32_t>(i) + 1000u * static_cast<std::uint32_t>(target);
    total += block * static_cast<std::uint32_t>(reps);
  }
  return total;
}

}  // namespace memlab::hierarchy
