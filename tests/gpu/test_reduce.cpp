// Correctness of every reduction ladder step and of memlab::reduce_sum at awkward lengths,
// misaligned starts, workspace reuse, int wrap-around and bad arguments.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/reduce/reduce_ladder.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"
#include "memlab/reduce.hpp"

using memlab::device_buffer;
using memlab::bench::fill_random;
namespace rd = memlab::kernels::reduce;

namespace {

std::vector<std::size_t> lengths() {
  std::vector<std::size_t> v = {1, 2, 3, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1000, 4097, 16411};
  if (!memlab::test::small_sizes()) {
    v.push_back(65537);
    v.push_back(262147);
    v.push_back((std::size_t{1} << 20) + 3);
    v.push_back(3 * (std::size_t{1} << 20) + 17);  // more than one full grid of the single-pass step
  }
  return v;
}

/// Small integers, stored as T: every partial sum is exact in float (|sum| < 2^24) and
/// double, so any order must give exactly the host's sum: one dropped or doubled element fails.
template <class T>
std::vector<T> small_integers(std::size_t n, std::uint64_t seed) {
  std::vector<int> ints(n);
  fill_random(ints, seed, -8, 8);
  return std::vector<T>(ints.begin(), ints.end());
}

template <class T>
T exact_sum(std::vector<T> const& v, std::size_t first, std::size_t n) {
  std::int64_t s = 0;
  for (std::size_t i = first; i < first + n; ++i) s += static_cast<std::int64_t>(v[i]);
  return static_cast<T>(s);
}

template <class T>
void check_step(rd::step st) {
  for (std::size_t n : lengths()) {
    // offset 0: aligned; 1 and 3: the vectorized steps peel a misaligned head.
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}, std::size_t{3}}) {
      auto host = small_integers<T>(n + offset, 1000 * n + offset);
      device_buffer<T> in(n + offset), out(1);
      in.upload(host);
      device_buffer<char> ws(rd::workspace_bytes<T>(st, n));
      ws.fill_bytes(0);
      out.fill_bytes(0xFF);
      rd::sum(st, in.data() + offset, n, out.data(), ws.data(), ws.size(), nullptr);
      MEMLAB_EXPECT_LAUNCH_OK();
      T const want = exact_sum(host, offset, n);
      ASSERT_EQ(out.download()[0], want) << rd::name(st) << " n=" << n << " offset=" << offset;
      if (st == rd::step::single_pass) {
        // The workspace is reusable: the ticket went back to zero.
        out.fill_bytes(0xFF);
        rd::sum(st, in.data() + offset, n, out.data(), ws.data(), ws.size(), nullptr);
        MEMLAB_EXPECT_LAUNCH_OK();
        ASSERT_EQ(out.download()[0], want) << "second call, n=" << n;
      }
    }
  }
}

}  // namespace

class ReduceLadder : public ::testing::TestWithParam<rd::step> {};

TEST_P(ReduceLadder, FloatSumsSmallIntegersExactly) {
  MEMLAB_REQUIRE_GPU();
  check_step<float>(GetParam());
}
TEST_P(ReduceLadder, DoubleSumsSmallIntegersExactly) {
  MEMLAB_REQUIRE_GPU();
  check_step<double>(GetParam());
}
TEST_P(ReduceLadder, IntSumIsExact) {
  MEMLAB_REQUIRE_GPU();
  check_step<int>(GetParam());
}
TEST_P(ReduceLadder, ZeroLengthWritesZero) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> out(1);
  device_buffer<char> ws(rd::workspace_bytes<float>(GetParam(), 0));
  ws.fill_bytes(0);
  out.fill_bytes(0xFF);
  rd::sum<float>(GetParam(), nullptr, 0, out.data(), ws.data(), ws.size(), nullptr);
  MEMLAB_EXPECT_LAUNCH_OK();
  EXPECT_EQ(out.download()[0], 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Reduce, ReduceLadder, ::testing::ValuesIn(rd::all_steps()),
                         [](auto const& info) { return std::string(rd::name(info.param)); });

TEST(ReduceSum, RandomFloatsWithinTheLengthScaledTolerance) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const n = memlab::test::small_sizes() ? 100003 : (std::size_t{1} << 22) + 5;
  std::vector<float> host(n);
  fill_random(host, 77);
  double ref = 0, sq = 0;
  for (float x : host) {
    ref += x;
    sq += double(x) * x;
  }
  device_buffer<float> in(n), out(1);
  in.upload(host);
  out.fill_bytes(0xFF);
  memlab::reduce_sum(in.data(), n, out.data());
  MEMLAB_EXPECT_LAUNCH_OK();
  double const tol = 4.0 * 0x1p-24 * std::sqrt(double(n - 1) * sq);
  float const got = out.download()[0];
  ASSERT_TRUE(std::isfinite(got));
  EXPECT_NEAR(got, ref, tol);
  // The bound is far inside the worst-case gamma_n * sum|x| a forward-error analysis allows.
  EXPECT_LT(tol, 1e-6 * 0.5 * double(n));
}

TEST(ReduceSum, AllTypesWithAndWithoutWorkspace) {
  MEMLAB_REQUIRE_GPU();
  std::size_t const ws_bytes = memlab::reduce_sum_workspace_bytes();
  device_buffer<char> ws(ws_bytes);
  ws.fill_bytes(0);
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1025}, std::size_t{100001}}) {
    auto const f = small_integers<float>(n, n + 1);
    auto const d = small_integers<double>(n, n + 2);
    auto const i = small_integers<int>(n, n + 3);
    device_buffer<float> fin(n), fout(1);
    device_buffer<double> din(n), dout(1);
    device_buffer<int> iin(n), iout(1);
    fin.upload(f);
    din.upload(d);
    iin.upload(i);
    for (int with_ws = 0; with_ws < 2; ++with_ws) {
      fout.fill_bytes(0xFF);
      dout.fill_bytes(0xFF);
      iout.fill_bytes(0xFF);
      if (with_ws) {
        memlab::reduce_sum(fin.data(), n, fout.data(), ws.data(), ws_bytes);
        memlab::reduce_sum(din.data(), n, dout.data(), ws.data(), ws_bytes);
        memlab::reduce_sum(iin.data(), n, iout.data(), ws.data(), ws_bytes);
      } else {
        memlab::reduce_sum(fin.data(), n, fout.data());
        memlab::reduce_sum(din.data(), n, dout.data());
        memlab::reduce_sum(iin.data(), n, iout.data());
      }
      MEMLAB_EXPECT_LAUNCH_OK();
      EXPECT_EQ(fout.download()[0], exact_sum(f, 0, n)) << "float n=" << n;
      EXPECT_EQ(dout.download()[0], exact_sum(d, 0, n)) << "double n=" << n;
      EXPECT_EQ(iout.download()[0], exact_sum(i, 0, n)) << "int n=" << n;
    }
  }
}

TEST(ReduceSum, IntWrapsModulo2To32) {
  MEMLAB_REQUIRE_GPU();
  std::vector<int> host(9, 1 << 30);  // 9 * 2^30 = 2^33 + 2^30 -> 2^30 modulo 2^32
  device_buffer<int> in(host.size()), out(1);
  in.upload(host);
  memlab::reduce_sum(in.data(), host.size(), out.data());
  MEMLAB_EXPECT_LAUNCH_OK();
  EXPECT_EQ(out.download()[0], 1 << 30);
}

TEST(ReduceSum, NaNPropagates) {
  MEMLAB_REQUIRE_GPU();
  std::vector<float> host(5000, 1.0f);
  host[4321] = std::nanf("");
  device_buffer<float> in(host.size()), out(1);
  in.upload(host);
  memlab::reduce_sum(in.data(), host.size(), out.data());
  MEMLAB_EXPECT_LAUNCH_OK();
  EXPECT_TRUE(std::isnan(out.download()[0]));
}

TEST(ReduceSum, BadArgumentsThrow) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> in(16), out(1);
  device_buffer<char> ws(memlab::reduce_sum_workspace_bytes());
  ws.fill_bytes(0);
  EXPECT_THROW(memlab::reduce_sum(in.data(), 16, static_cast<float*>(nullptr)), memlab::error);
  EXPECT_THROW(memlab::reduce_sum(static_cast<float const*>(nullptr), 16, out.data()), memlab::error);
  EXPECT_THROW(memlab::reduce_sum(in.data(), 16, out.data(), nullptr, memlab::reduce_sum_workspace_bytes()),
               memlab::error);
  EXPECT_THROW(memlab::reduce_sum(in.data(), 16, out.data(), ws.data(), memlab::reduce_sum_workspace_bytes() - 1),
               memlab::error);
  EXPECT_THROW(memlab::reduce_sum(in.data(), 16, out.data(), ws.data() + 8, 100000), memlab::error);
  auto const* misaligned = reinterpret_cast<float const*>(reinterpret_cast<char const*>(in.data()) + 2);
  EXPECT_THROW(memlab::reduce_sum(misaligned, 4, out.data()), memlab::error);
  try {
    memlab::reduce_sum(in.data(), 16, static_cast<float*>(nullptr));
  } catch (memlab::error const& e) {
    EXPECT_NE(std::string(e.what()).find("out"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaSuccess, cudaDeviceSynchronize());
}
