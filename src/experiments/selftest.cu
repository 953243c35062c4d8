// selftest.*: the harness's own checks, not memory experiments: a slow experiment to
// interrupt (selftest.delay), kernels that break their CUDA context on purpose and a worker
// that dies (selftest.fault), and a small verified kernel to run after them (selftest.healthy).
// Experiments run in id order, so these names put them in that order. Not in the default
// suite and not listed; the tests run them by id (tests/cpu/test_isolation.cpp).
#include <chrono>
#include <cstdlib>
#include <thread>

#include "bench/state.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"

namespace {

using namespace memlab::bench;

// A store to an address no allocation covers: cudaErrorIllegalAddress, a sticky error.
__global__ void illegal_address_kernel(int* p) { p[threadIdx.x] = 1; }
// A trap: "unspecified launch failure", also sticky (what a kernel compiled out for the
// wrong architecture does when launched).
__global__ void trap_kernel() { __trap(); }

void fault_body(state& s) {
  std::string const& v = s.variant();
  if (v == "abort") std::abort();  // the worker process dies
  if (v == "illegal_address") {
    illegal_address_kernel<<<1, 32, 0, s.stream()>>>(reinterpret_cast<int*>(0x10));
  } else {
    trap_kernel<<<1, 1, 0, s.stream()>>>();
  }
  MEMLAB_CHECK_LAUNCH();
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  s.skip("the fault did not happen");  // not reached on a working GPU
}

memlab::bench::registrar const delay{[] {
  experiment e;
  e.id = "selftest.delay";
  e.description = "harness self-test: 100 ms of host time per point, to interrupt";
  e.axes = {int_axis("step", range(1, 50))};
  e.body = [](state& s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s.set_samples({100.0});
    s.set_verification(verification::not_verified("a self-test: it only sleeps"));
  };
  e.default_suite = false;
  e.listed = false;
  return e;
}()};

memlab::bench::registrar const fault{[] {
  experiment e;
  e.id = "selftest.fault";
  e.description = "harness self-test: a kernel or process that fails on purpose";
  e.axes = {variant_axis({"illegal_address", "trap", "abort"})};
  e.body = fault_body;
  e.default_suite = false;
  e.listed = false;
  return e;
}()};

// out[i] = 3 i + 1: a kernel that works, checked exactly.
__global__ void healthy_kernel(std::uint32_t* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<std::uint32_t>(3 * i + 1);
}

memlab::bench::registrar const healthy{[] {
  experiment e;
  e.id = "selftest.healthy";
  e.description = "harness self-test: a small kernel that works, checked exactly";
  e.axes = {int_axis("elements", {1 << 20})};
  e.body = [](state& s) {
    auto const n = static_cast<std::size_t>(s.get_int("elements"));
    memlab::device_buffer<std::uint32_t> out(n);
    out.fill_bytes(0xFF, s.stream());
    healthy_kernel<<<256, 256, 0, s.stream()>>>(out.data(), n);
    MEMLAB_CHECK_LAUNCH();
    std::vector<std::uint32_t> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = static_cast<std::uint32_t>(3 * i + 1);
    s.set_verification(compare_exact(out.download(), want));
    s.add_writes<std::uint32_t>(n);
    s.exec([&](cudaStream_t st) { healthy_kernel<<<256, 256, 0, st>>>(out.data(), n); });
  };
  e.default_suite = false;
  e.listed = false;
  return e;
}()};

}  // namespace
