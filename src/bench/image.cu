#include "bench/image.hpp"

#include <cuda_runtime.h>

#include <sstream>

#include "memlab/arch.hpp"
#include "memlab/error.hpp"
#include "memlab/version.hpp"

namespace memlab::bench {

namespace {
__global__ void image_probe_kernel(int* out) {
  if (out) *out = 0;
}

/// "90a-real" -> {"90a", real}, "80-virtual" -> {"80", virtual}, "75" -> both.
struct arch_entry {
  std::string name;
  int number = 0;
  bool real = true;
};
std::vector<arch_entry> parse_architectures(std::string const& list) {
  std::vector<arch_entry> out;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ';')) {
    if (item.empty()) continue;
    arch_entry e;
    auto const dash = item.find('-');
    e.name = item.substr(0, dash);
    if (dash != std::string::npos) e.real = item.substr(dash + 1) == "real";
    try {
      e.number = std::stoi(e.name);
    } catch (...) {
      continue;  // "native", "all": resolved by CMake, not a number
    }
    out.push_back(e);
  }
  return out;
}
}  // namespace

image_info describe_image(std::string const& build_architectures, int device_cc, int binary_version, int ptx_version) {
  image_info i;
  i.build_architectures = build_architectures;
  i.device_cc = device_cc;
  i.binary_version = binary_version;
  i.ptx_version = ptx_version;
  std::string sass;
  for (auto const& e : parse_architectures(build_architectures))
    if (e.real && e.number == binary_version) sass = e.name;
  i.jit = sass.empty();
  if (!i.jit) {
    i.description = "sm_" + sass + " SASS";
  } else {
    i.description = "compute_" + std::to_string(ptx_version) + " PTX, JIT-compiled for sm_" + std::to_string(binary_version);
  }
  return i;
}

image_info running_image() {
  int dev = 0, major = 0, minor = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  kernel_image const img = image_of(reinterpret_cast<void const*>(image_probe_kernel));
  return describe_image(MEMLAB_CUDA_ARCHITECTURES, major * 10 + minor, img.binary_arch, img.ptx_arch);
}

nlohmann::json to_json(image_info const& i) {
  return {{"build_architectures", i.build_architectures},
          {"device_cc", i.device_cc},
          {"binary_version", i.binary_version},
          {"ptx_version", i.ptx_version},
          {"jit", i.jit},
          {"description", i.description}};
}

}  // namespace memlab::bench
