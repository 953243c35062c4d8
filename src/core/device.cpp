#include "memlab/device.hpp"

#include <cuda_runtime_api.h>

#include "memlab/error.hpp"

namespace memlab {

int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return count;
}

int current_device_sm_count() {
  int dev = 0, sms = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

device_info query_device(int index) {
  int const count = device_count();
  if (count == 0) throw error("no CUDA device is present (cudaGetDeviceCount found none)", cudaErrorNoDevice);
  if (index < 0 || index >= count)
    throw error("device index " + std::to_string(index) + " is out of range: this machine has " +
                    std::to_string(count) + " CUDA device(s)",
                cudaErrorInvalidDevice);
  cudaDeviceProp p{};
  MEMLAB_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  device_info d;
  d.index = index;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.warp_size = p.warpSize;
  d.global_mem_bytes = p.totalGlobalMem;
  d.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.persisting_l2_max_bytes = static_cast<std::size_t>(p.persistingL2CacheMaxSize);
  d.smem_per_sm_bytes = p.sharedMemPerMultiprocessor;
  d.smem_per_block_bytes = p.sharedMemPerBlock;
  d.smem_per_block_optin_bytes = p.sharedMemPerBlockOptin;
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.regs_per_block = p.regsPerBlock;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  d.async_engine_count = p.asyncEngineCount;
  d.can_map_host_memory = p.canMapHostMemory != 0;
  d.unified_addressing = p.unifiedAddressing != 0;
  d.integrated = p.integrated != 0;
  d.concurrent_managed_access = p.concurrentManagedAccess != 0;
  d.pci_domain = p.pciDomainID;
  d.pci_bus = p.pciBusID;
  d.pci_device = p.pciDeviceID;
  // The clock fields left cudaDeviceProp in CUDA 13; the attributes remain.
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, index));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, index));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&d.mem_bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, index));
  return d;
}

}  // namespace memlab
