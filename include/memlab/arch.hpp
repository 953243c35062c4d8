#pragma once
// Which instructions a kernel can use is decided by the code the binary holds for the
// GPU, not by the GPU: a compute_80 PTX image JIT-compiled on an H100 has no
// cp.async.bulk, even though the card has. Every arch-dependent entry point asks here,
// with the kernel it is about to launch, before launching it.
//
//   memlab::require_arch(reinterpret_cast<void const*>(kernel), memlab::arch::bulk_copy, "cp.async.bulk");
#include <string>
#include <string_view>

namespace memlab {

/// The oldest architecture (compute capability x 10) each instruction family needs.
namespace arch {
inline constexpr int cp_async = 80;   ///< cp.async (LDGSTS), commit/wait groups, arrive-on
inline constexpr int mbarrier = 80;   ///< mbarrier.init / arrive / test_wait in shared memory
inline constexpr int bulk_copy = 90;  ///< cp.async.bulk, mbarrier expect_tx and try_wait
inline constexpr int cluster = 90;    ///< thread block clusters, distributed shared memory
inline constexpr int wgmma = 90;      ///< wgmma (sm_90a only: compiled_arch cannot tell 90 from 90a)
}  // namespace arch

/// The code the current device runs for a kernel: the virtual architecture its body was
/// compiled from (cudaFuncGetAttributes' ptxVersion: __CUDA_ARCH__ / 10 at the time, e.g.
/// 75, 80, 90) and the SASS architecture it runs as (binaryVersion).
struct kernel_image {
  int ptx_arch = 0;
  int binary_arch = 0;
  /// The driver compiled the PTX for this device: the binary has no SASS for it.
  bool jit() const noexcept { return binary_arch != ptx_arch; }
};

/// `kernel`'s image on the current device. Throws memlab::error when the binary has no
/// code the current device can run. Constant per (kernel, device): kept after the first query.
kernel_image image_of(void const* kernel);

/// True when this binary's code for the current device was compiled for sm_90a (wgmma,
/// setmaxnreg: compiled_arch says 90 for both sm_90 and sm_90a). Asked once per device, by a
/// one-thread probe kernel.
bool image_has_sm90a();

/// image_of(kernel).ptx_arch: the architecture `kernel`'s instructions were chosen for.
int compiled_arch(void const* kernel);

/// Empty when `kernel` on the current device can use `instruction`, which needs
/// `needed_arch`; otherwise one line saying why not: the device is older, or the binary's
/// code for it was compiled for an older architecture (or not at all).
std::string unavailable_reason(void const* kernel, int needed_arch, std::string_view instruction);

/// Throws memlab::error with unavailable_reason's line unless `instruction` is usable.
void require_arch(void const* kernel, int needed_arch, std::string_view instruction);

/// The formatting behind unavailable_reason, pure for testing: `image_arch` is the
/// kernel's compiled_arch, `device_cc` the current device's compute capability x 10,
/// `jit` true when the driver compiled the image's PTX for the device.
std::string format_unavailable(int needed_arch, std::string_view instruction, int image_arch, int device_cc,
                               bool jit);

}  // namespace memlab
