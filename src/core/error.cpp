#include "memlab/error.hpp"

#include <cstdio>
#include <cstring>

namespace memlab::detail {

namespace {
char const* base_name(char const* path) {
  char const* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}
}  // namespace

void throw_cuda_error(cudaError_t code, char const* call, char const* file, int line) {
  std::string message = code == cudaErrorMemoryAllocation ? "out of device memory: " : "CUDA error: ";
  message += cudaGetErrorName(code);
  message += " (";
  message += cudaGetErrorString(code);
  message += ") at ";
  message += base_name(file);
  message += ":" + std::to_string(line) + " in " + call;
  throw error(message, code);
}

void report_cuda_error(cudaError_t code, char const* call, char const* file, int line) noexcept {
  std::fprintf(stderr, "memlab: CUDA error %s at %s:%d in %s (ignored in a destructor)\n",
               cudaGetErrorName(code), base_name(file), line, call);
}

void throw_invalid_argument(char const* function, std::string const& message) {
  throw error(std::string("memlab::") + function + ": " + message);
}

}  // namespace memlab::detail
