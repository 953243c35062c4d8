// GPU tests of the transfer family: staged_transform against the unchunked result, the
// pack/unpack kernels, the tunable chain kernel, the zero-copy kernels, the patterns.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/transfer/transfer_kernels.hpp"
#include "memlab/buffer.hpp"
#include "memlab/staged_transform.hpp"

namespace {

using namespace memlab;
namespace tr = memlab::transfer;

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  bench::fill_random(v, seed);
  return v;
}

/// The unchunked result: the whole input through one kernel launch.
std::vector<float> unchunked_chain(std::vector<float> const& in, int iters) {
  device_buffer<float> d_in(in.size()), d_out(in.size());
  d_in.upload(in);
  d_out.fill_bytes(0xFF);
  tr::fma_chain(d_in.data(), d_out.data(), in.size(), iters, nullptr);
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
  return d_out.download();
}

struct host_kind {
  bool pinned_in, pinned_out;
};

// Runs staged_transform over host buffers of the given kinds and compares bit for bit
// with the unchunked launch (same kernel per element, so results must be identical).
void check_staged(std::size_t n, std::size_t chunk_elems, int streams, host_kind kind, int iters, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " chunk=" + std::to_string(chunk_elems) + " streams=" +
               std::to_string(streams) + " pinned_in=" + std::to_string(kind.pinned_in) +
               " pinned_out=" + std::to_string(kind.pinned_out));
  std::vector<float> const in = random_floats(n, seed);
  std::vector<float> const ref = unchunked_chain(in, iters);

  pinned_buffer<float> pin_in(kind.pinned_in ? n : 0), pin_out(kind.pinned_out ? n : 0);
  std::vector<float> pg_in, pg_out;
  float* src;
  float* dst;
  if (kind.pinned_in) {
    std::copy(in.begin(), in.end(), pin_in.data());
    src = pin_in.data();
  } else {
    pg_in = in;
    src = pg_in.data();
  }
  if (kind.pinned_out) {
    std::memset(pin_out.data(), 0xFF, n * sizeof(float));
    dst = pin_out.data();
  } else {
    pg_out.assign(n, std::nanf(""));
    dst = pg_out.data();
  }
  staged_pipeline<float, float> pipe(staged_options{chunk_elems * sizeof(float), streams});
  EXPECT_EQ(pipe.chunk_elements(), chunk_elems);
  EXPECT_EQ(pipe.chunks_for(n), (n + chunk_elems - 1) / chunk_elems);
  auto launch = [iters](float const* d_in, float* d_out, std::size_t count, cudaStream_t st) {
    tr::fma_chain(d_in, d_out, count, iters, st);
  };
  pipe.run(src, dst, n, launch);
  std::vector<float> got(dst, dst + n);
  auto const v = bench::compare_exact(got, ref);
  EXPECT_EQ(v.status, bench::verdict::passed) << v.detail;
  // Run again through the same pipeline (slots and events reused): same answer.
  std::fill(dst, dst + n, std::nanf(""));
  pipe.run(src, dst, n, launch);
  std::vector<float> again(dst, dst + n);
  EXPECT_EQ(bench::compare_exact(again, ref).status, bench::verdict::passed);
}

TEST(TransferStagedTransform, PinnedAnyLength) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const chunk = 1000;  // not a power of two
  for (std::size_t n : {std::size_t{1}, chunk - 1, chunk, chunk + 1, 3 * chunk + 7, 17 * chunk + 999})
    check_staged(n, chunk, 4, {true, true}, 37, 100 + n);
}

TEST(TransferStagedTransform, PageableAndMixedHostMemory) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const chunk = 777;
  // More chunks than slots (2 x streams), so staging slots are reused and retired in order.
  std::size_t const n = memlab::test::small_sizes() ? 20 * chunk + 5 : 300 * chunk + 5;
  for (host_kind k : {host_kind{false, false}, host_kind{true, false}, host_kind{false, true}})
    for (int streams : {1, 3})
      check_staged(n, chunk, streams, k, 5, 7 + streams);
  check_staged(5, chunk, 2, {false, false}, 5, 3);  // shorter than one chunk
}

TEST(TransferStagedTransform, LargeDefaultOptions) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const n = memlab::test::small_sizes() ? (1u << 16) + 3 : (std::size_t{1} << 24) + 12345;
  std::vector<float> const in = random_floats(n, 42);
  std::vector<float> const ref = unchunked_chain(in, 16);
  std::vector<float> out(n, std::nanf(""));
  memlab::staged_transform(in.data(), out.data(), n, [](float const* a, float* b, std::size_t c, cudaStream_t st) {
    tr::fma_chain(a, b, c, 16, st);
  });
  EXPECT_EQ(bench::compare_exact(out, ref).status, bench::verdict::passed);
}

__global__ void int_to_double_half(int const* in, double* out, std::size_t n) {
  std::size_t const i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = 0.5 * in[i];
}

TEST(TransferStagedTransform, DifferentElementTypesAndInPlace) {
  MEMLAB_REQUIRE_GPU();
  // int (4 bytes) -> double (8 bytes): output offsets scale with the output element size.
  std::size_t const n = 10007;
  std::vector<int> in(n);
  for (std::size_t i = 0; i < n; ++i) in[i] = static_cast<int>(i * 2654435761u % 100003) - 50000;
  std::vector<double> out(n, std::nan(""));
  staged_pipeline<int, double> pipe(staged_options{4096, 3});  // 1024 ints per chunk
  pipe.run(in.data(), out.data(), n, [](int const* a, double* b, std::size_t c, cudaStream_t st) {
    int_to_double_half<<<static_cast<unsigned>((c + 255) / 256), 256, 0, st>>>(a, b, c);
  });
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 0.5 * in[i]) << "at " << i;

  // In place: the output overwrites the input chunk by chunk.
  std::vector<float> data = random_floats(5003, 9);
  std::vector<float> const ref = unchunked_chain(data, 3);
  staged_pipeline<float> inplace(staged_options{256 * sizeof(float), 2});
  inplace.run(data.data(), data.data(), data.size(), [](float const* a, float* b, std::size_t c, cudaStream_t st) {
    tr::fma_chain(a, b, c, 3, st);
  });
  EXPECT_EQ(bench::compare_exact(data, ref).status, bench::verdict::passed);
}

TEST(TransferStagedTransform, RejectsBadArguments) {
  MEMLAB_REQUIRE_GPU();
  auto noop = [](float const*, float*, std::size_t, cudaStream_t) {};
  EXPECT_THROW((staged_pipeline<float>(staged_options{1024, 0})), memlab::error);
  EXPECT_THROW((staged_pipeline<float>(staged_options{1024, 65})), memlab::error);
  EXPECT_THROW((staged_pipeline<float>(staged_options{2, 2})), memlab::error);  // < one element
  staged_pipeline<float> pipe(staged_options{1024, 2});
  std::vector<float> host(100, 1.0f);
  EXPECT_THROW(pipe.run(nullptr, host.data(), 100, noop), memlab::error);
  EXPECT_THROW(pipe.run(host.data(), nullptr, 100, noop), memlab::error);
  EXPECT_THROW(pipe.run(host.data(), host.data() + 10, 50, noop), memlab::error);  // partial overlap
  device_buffer<float> dev(100);
  EXPECT_THROW(pipe.run(dev.data(), host.data(), 100, noop), memlab::error);  // device memory
  EXPECT_NO_THROW(pipe.run(nullptr, nullptr, 0, noop));                      // nothing to do
  // A launcher that throws: the error surfaces, and the pipeline stays usable.
  EXPECT_THROW(pipe.run(host.data(), host.data(), 100,
                        [](float const*, float*, std::size_t, cudaStream_t) { throw std::runtime_error("user"); }),
               std::runtime_error);
  std::vector<float> out(100, 0.f);
  pipe.run(host.data(), out.data(), 100, [](float const* a, float* b, std::size_t c, cudaStream_t st) {
    tr::affine(a, b, c, 2.0f, 0.0f, st);
  });
  for (float x : out) ASSERT_EQ(x, 2.0f);
  EXPECT_EQ(classify_host_pointer(host.data()), host_memory_kind::pageable);
  pinned_buffer<float> pin(4);
  EXPECT_EQ(classify_host_pointer(pin.data() + 1), host_memory_kind::pinned);
  EXPECT_THROW(classify_host_pointer(nullptr), memlab::error);
}

TEST(TransferStagedTransform, LauncherFailureMidwayWithPageableOutput) {
  MEMLAB_REQUIRE_GPU();
  // Many chunks, pageable in and out (the helper thread is running): a launcher that throws
  // on its 6th chunk must surface its exception, leave no thread behind, and the pipeline
  // must then still produce the right answer.
  std::size_t const chunk = 300, n = 40 * chunk + 11;
  std::vector<float> in = random_floats(n, 21), out(n, 0.f);
  staged_pipeline<float> pipe(staged_options{chunk * sizeof(float), 2});
  int calls = 0;
  auto failing = [&calls](float const* a, float* b, std::size_t c, cudaStream_t st) {
    if (++calls == 6) throw std::runtime_error("launcher failed");
    tr::fma_chain(a, b, c, 2, st);
  };
  EXPECT_THROW(pipe.run(in.data(), out.data(), n, failing), std::runtime_error);
  EXPECT_EQ(calls, 6);
  // Chunks issued before the failure were copied out in full.
  std::vector<float> const ref = unchunked_chain(in, 2);
  for (std::size_t i = 0; i < 5 * chunk; ++i) ASSERT_EQ(out[i], ref[i]) << "at " << i;
  std::fill(out.begin(), out.end(), std::nanf(""));
  pipe.run(in.data(), out.data(), n, [](float const* a, float* b, std::size_t c, cudaStream_t st) {
    tr::fma_chain(a, b, c, 2, st);
  });
  EXPECT_EQ(bench::compare_exact(out, ref).status, bench::verdict::passed);
}

TEST(TransferKernels, GatherScatterPieces) {
  MEMLAB_REQUIRE_GPU();
  // 16-byte path (4096, 48) and the byte path (24: not a multiple of 16; odd stride).
  struct shape {
    std::size_t piece, stride, n;
  };
  for (shape sh : {shape{4096, 8192, 37}, shape{48, 96, 300}, shape{24, 40, 129}, shape{8, 8, 1}}) {
    SCOPED_TRACE("piece=" + std::to_string(sh.piece) + " n=" + std::to_string(sh.n));
    std::vector<char> scat(sh.n * sh.stride);
    tr::fill_pattern_host(scat.data(), scat.size() / 8 * 8, 11);
    device_buffer<char> d_scat(scat.size()), d_packed(sh.n * sh.piece);
    d_scat.upload(scat);
    d_packed.fill_bytes(0xAB);
    tr::gather_pieces(d_scat.data(), sh.stride, d_packed.data(), sh.piece, sh.n, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    std::vector<char> packed = d_packed.download();
    for (std::size_t k = 0; k < sh.n; ++k)
      ASSERT_EQ(0, std::memcmp(packed.data() + k * sh.piece, scat.data() + k * sh.stride, sh.piece)) << "piece " << k;
    // Scatter back into a poisoned buffer: pieces land, gaps stay poisoned.
    d_scat.fill_bytes(0xCD);
    tr::scatter_pieces(d_packed.data(), d_scat.data(), sh.stride, sh.piece, sh.n, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    std::vector<char> back = d_scat.download();
    for (std::size_t k = 0; k < sh.n; ++k) {
      ASSERT_EQ(0, std::memcmp(back.data() + k * sh.stride, scat.data() + k * sh.stride, sh.piece));
      for (std::size_t g = sh.piece; g < sh.stride; ++g) ASSERT_EQ(static_cast<unsigned char>(back[k * sh.stride + g]), 0xCD);
    }
  }
  device_buffer<char> a(64), b(64);
  EXPECT_THROW(tr::gather_pieces(a.data(), 8, b.data(), 16, 2, nullptr), memlab::error);  // stride < piece
  EXPECT_THROW(tr::gather_pieces(nullptr, 16, b.data(), 16, 2, nullptr), memlab::error);
}

TEST(TransferKernels, FmaChainMatchesClosedForm) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const n = memlab::test::small_sizes() ? 4099 : 1000003;
  std::vector<float> in = random_floats(n, 5);
  device_buffer<float> d_in(n), d_out(n);
  d_in.upload(in);
  for (int iters : {0, 1, 100, 5000}) {
    d_out.fill_bytes(0xFF);
    tr::fma_chain(d_in.data(), d_out.data(), n, iters, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    std::vector<float> got = d_out.download();
    std::vector<double> ref(n);
    for (std::size_t i = 0; i < n; ++i) ref[i] = tr::fma_chain_reference(in[i], iters);
    auto const v = bench::compare_close(got, ref, 0.0, tr::fma_chain_tolerance(iters));
    EXPECT_EQ(v.status, bench::verdict::passed) << "iters=" << iters << ": " << v.detail;
  }
  // The tolerance is tight enough to notice an output from the wrong element.
  EXPECT_LT(tr::fma_chain_tolerance(5000), 1e-3);
  EXPECT_THROW(tr::fma_chain(d_in.data(), d_out.data(), n, -1, nullptr), memlab::error);
}

TEST(TransferKernels, AffineVectorAndScalarPaths) {
  MEMLAB_REQUIRE_GPU();
  for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{1024}, std::size_t{4099}}) {
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {  // 1: misaligned, scalar path
      std::vector<float> in = random_floats(n + 1, n);
      device_buffer<float> d_in(n + 1), d_out(n + 1);
      d_in.upload(in);
      d_out.fill_bytes(0xFF);
      tr::affine(d_in.data() + offset, d_out.data() + offset, n, 1.5f, 0.25f, nullptr);
      tr::affine_accumulate(d_in.data() + offset, d_out.data() + offset, n, -0.75f, nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      std::vector<float> got = d_out.download();
      std::vector<float> g(got.begin() + offset, got.begin() + offset + n);
      std::vector<double> ref(n);
      for (std::size_t i = 0; i < n; ++i) ref[i] = 1.5 * in[i + offset] + 0.25 - 0.75 * in[i + offset];
      auto const v = bench::compare_close(g, ref, 1e-6, 1e-6);
      EXPECT_EQ(v.status, bench::verdict::passed) << "n=" << n << " offset=" << offset << ": " << v.detail;
    }
  }
}

TEST(TransferKernels, ZeroCopyReadsMappedHostMemory) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const n = 4096 + 4;
  pinned_buffer<float> h_in(n, cudaHostAllocMapped), h_out(n, cudaHostAllocMapped);
  std::vector<float> in = random_floats(n, 77);
  std::copy(in.begin(), in.end(), h_in.data());
  std::memset(h_out.data(), 0xFF, n * sizeof(float));
  float *m_in = nullptr, *m_out = nullptr;
  ASSERT_EQ(cudaSuccess, cudaHostGetDevicePointer(reinterpret_cast<void**>(&m_in), h_in.data(), 0));
  ASSERT_EQ(cudaSuccess, cudaHostGetDevicePointer(reinterpret_cast<void**>(&m_out), h_out.data(), 0));
  tr::affine(m_in, m_out, n, 2.0f, 1.0f, nullptr);  // read and write host memory from the kernel
  MEMLAB_EXPECT_LAUNCH_OK();
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(h_out[i], 2.0f * in[i] + 1.0f) << "at " << i;
}

TEST(TransferKernels, PatternsAgreeAndDetectChanges) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const bytes = memlab::test::small_sizes() ? 8 * 1001 : 8 * 1000003;
  device_buffer<char> d(bytes);
  tr::fill_pattern_device(d.data(), bytes, 1234, nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  std::vector<char> host(bytes);
  tr::fill_pattern_host(host.data(), bytes, 1234);
  EXPECT_EQ(d.download(), host);
  EXPECT_EQ(tr::count_pattern_mismatches(d.data(), bytes, 1234, nullptr), 0u);
  EXPECT_EQ(tr::count_pattern_mismatches(d.data(), bytes, 1235, nullptr), bytes / 8);  // another seed
  char const flip = static_cast<char>(host[bytes / 2] ^ 1);
  ASSERT_EQ(cudaSuccess, cudaMemcpy(d.data() + bytes / 2, &flip, 1, cudaMemcpyHostToDevice));
  EXPECT_EQ(tr::count_pattern_mismatches(d.data(), bytes, 1234, nullptr), 1u);
  EXPECT_THROW(tr::fill_pattern_host(host.data(), 12, 1), memlab::error);
}

}  // namespace
