// selftest.*: the harness's own checks, not memory experiments: kernels that break their
// CUDA context on purpose, a worker process that dies, and a slow experiment to interrupt.
// Not in the default suite and not listed; the tests run them by id (tests/cpu/test_isolation.cpp).
// Registered slow first: experiments run in registry order, and the signal tests interrupt
// selftest.slow with selftest.fault queued behind it.
#include <chrono>
#include <cstdlib>
#include <thread>

#include "bench/state.hpp"
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

memlab::bench::registrar const slow{[] {
  experiment e;
  e.id = "selftest.slow";
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

}  // namespace
