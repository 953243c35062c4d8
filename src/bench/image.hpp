#pragma once
// Which code of this binary runs on the device: the SASS of one of the architectures it
// was built for, or PTX that the driver JIT-compiled at load time. The record carries it
// beside the build's architecture list, so a row says what it measured.
#include <nlohmann/json.hpp>
#include <string>

namespace memlab::bench {

struct image_info {
  std::string build_architectures;  ///< CMAKE_CUDA_ARCHITECTURES of this build, e.g. "75-virtual"
  int device_cc = 0;                ///< e.g. 90
  int binary_version = 0;           ///< SASS architecture of the loaded code (cudaFuncAttributes)
  int ptx_version = 0;              ///< virtual architecture it was compiled from
  bool jit = false;                 ///< PTX JIT-compiled by the driver (no matching SASS in the build)
  std::string description;          ///< "sm_90a SASS" or "compute_75 PTX, JIT-compiled for sm_90"
};

/// Pure: what the loader picked, from the build's list and the loaded kernel's versions.
image_info describe_image(std::string const& build_architectures, int device_cc, int binary_version, int ptx_version);

/// The image of this binary on the current device (loads a probe kernel: needs a context).
image_info running_image();

nlohmann::json to_json(image_info const& i);

}  // namespace memlab::bench
