#pragma once
// memlab's one error type and the CUDA error-checking macros.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace memlab {

/// Every failure memlab reports: a CUDA call that failed, or an invalid argument.
/// `what()` is one line naming the problem (and, for CUDA calls, file:line and the call).
class error : public std::runtime_error {
 public:
  explicit error(std::string const& message, cudaError_t code = cudaSuccess)
      : std::runtime_error(message), code_(code) {}
  /// The CUDA error behind this exception, or cudaSuccess for argument errors.
  cudaError_t code() const noexcept { return code_; }
  bool out_of_memory() const noexcept { return code_ == cudaErrorMemoryAllocation; }

 private:
  cudaError_t code_;
};

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t code, char const* call, char const* file, int line);
void report_cuda_error(cudaError_t code, char const* call, char const* file, int line) noexcept;
[[noreturn]] void throw_invalid_argument(char const* function, std::string const& message);
}  // namespace detail

}  // namespace memlab

/// Checks a CUDA runtime call; on failure clears the (non-sticky) error and throws
/// memlab::error carrying the error name, file, line and the call text.
#define MEMLAB_CUDA_CHECK(call)                                                   \
  do {                                                                            \
    cudaError_t const memlab_status_ = (call);                                    \
    if (memlab_status_ != cudaSuccess) {                                          \
      (void)cudaGetLastError();                                                   \
      ::memlab::detail::throw_cuda_error(memlab_status_, #call, __FILE__, __LINE__); \
    }                                                                             \
  } while (0)

/// The no-throw variant for destructors: prints one line to stderr instead.
#define MEMLAB_CUDA_CHECK_NOTHROW(call)                                            \
  do {                                                                             \
    cudaError_t const memlab_status_ = (call);                                     \
    if (memlab_status_ != cudaSuccess) {                                           \
      (void)cudaGetLastError();                                                    \
      ::memlab::detail::report_cuda_error(memlab_status_, #call, __FILE__, __LINE__); \
    }                                                                              \
  } while (0)

/// Checks the launch just issued (configuration errors surface here).
#define MEMLAB_CHECK_LAUNCH() MEMLAB_CUDA_CHECK(cudaGetLastError())

/// Argument validation for public functions: throws memlab::error("function: message").
#define MEMLAB_EXPECTS(condition, message)                                 \
  do {                                                                     \
    if (!(condition)) ::memlab::detail::throw_invalid_argument(__func__, (message)); \
  } while (0)
