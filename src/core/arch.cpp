#include "memlab/arch.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "memlab/error.hpp"

namespace memlab {
namespace {

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

int current_cc() {
  int dev = 0, major = 0, minor = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  return major * 10 + minor;
}

/// cudaFuncGetAttributes, with "no code for this device" kept apart from other failures
/// (false). A kernel's image on a device cannot change while the process runs, so answers
/// are kept per (kernel, device): library entry points ask on every call.
bool find_image(void const* kernel, kernel_image& out) {
  static std::mutex mutex;
  static std::map<std::pair<void const*, int>, kernel_image> known;
  int dev = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  std::lock_guard<std::mutex> lock(mutex);
  auto const key = std::make_pair(kernel, dev);
  if (auto it = known.find(key); it != known.end()) {
    out = it->second;
    return true;
  }
  cudaFuncAttributes a{};
  cudaError_t const rc = cudaFuncGetAttributes(&a, kernel);
  if (rc == cudaErrorNoKernelImageForDevice || rc == cudaErrorInvalidDeviceFunction) {
    (void)cudaGetLastError();
    return false;
  }
  MEMLAB_CUDA_CHECK(rc);
  out = kernel_image{a.ptxVersion, a.binaryVersion};
  known.emplace(key, out);
  return true;
}

}  // namespace

std::string format_unavailable(int needed_arch, std::string_view instruction, int image_arch, int device_cc,
                               bool jit) {
  std::string const need = std::string(instruction) + " needs sm_" + std::to_string(needed_arch);
  if (device_cc < needed_arch)
    return need + "; this device is sm_" + std::to_string(device_cc) + " (compute capability " + cc_text(device_cc) +
           ")";
  if (image_arch <= 0)
    return need + "; this binary has no code for this device (sm_" + std::to_string(device_cc) +
           "): rebuild with CMAKE_CUDA_ARCHITECTURES including " + std::to_string(device_cc);
  if (image_arch >= needed_arch) return {};
  std::string const image = jit ? "compute_" + std::to_string(image_arch) + " (PTX JIT)"
                                : "sm_" + std::to_string(image_arch);
  return need + "; this binary's code for the GPU was compiled for " + image +
         ": rebuild with CMAKE_CUDA_ARCHITECTURES including " + std::to_string(needed_arch);
}

kernel_image image_of(void const* kernel) {
  MEMLAB_EXPECTS(kernel != nullptr, "kernel is null");
  kernel_image img;
  if (!find_image(kernel, img))
    throw error("this binary has no code for the current device (sm_" + std::to_string(current_cc()) + ")",
                cudaErrorNoKernelImageForDevice);
  return img;
}

int compiled_arch(void const* kernel) { return image_of(kernel).ptx_arch; }

std::string unavailable_reason(void const* kernel, int needed_arch, std::string_view instruction) {
  MEMLAB_EXPECTS(kernel != nullptr, "kernel is null");
  int const cc = current_cc();
  kernel_image img;
  if (!find_image(kernel, img)) return format_unavailable(needed_arch, instruction, 0, cc, false);
  return format_unavailable(needed_arch, instruction, img.ptx_arch, cc, img.jit());
}

void require_arch(void const* kernel, int needed_arch, std::string_view instruction) {
  std::string reason = unavailable_reason(kernel, needed_arch, instruction);
  if (!reason.empty()) throw error(reason);
}

}  // namespace memlab
