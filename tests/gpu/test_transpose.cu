// Correctness of every transpose ladder step and of memlab::transpose at awkward shapes,
// with leading dimensions, grids taller than 65535 tiles, and bad arguments.
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/transpose/02_tiled.cuh"
#include "kernels/transpose/transpose_ladder.hpp"
#include "memlab/buffer.hpp"
#include "memlab/error.hpp"
#include "memlab/transpose.hpp"

using memlab::device_buffer;
using memlab::bench::fill_random;
namespace tr = memlab::kernels::transpose;

namespace {

std::vector<std::pair<std::size_t, std::size_t>> shapes() {
  std::vector<std::pair<std::size_t, std::size_t>> v = {{1, 1},   {1, 37},    {37, 1},    {31, 33},  {32, 32},
                                                        {33, 31}, {64, 64},   {65, 129},  {100, 1000}, {77, 300}};
  if (!memlab::test::small_sizes()) {
    v.push_back({1025, 513});
    v.push_back({3000, 77});
    v.push_back({2049, 4099});
  }
  return v;
}

template <class T>
bool all_ones(T const& x) {
  unsigned char b[sizeof(T)];
  std::memcpy(b, &x, sizeof(T));
  for (auto c : b)
    if (c != 0xFF) return false;
  return true;
}

/// Checks out (cols x rows, leading dimension ld_out) = in^T, and that the padding
/// columns of out kept their 0xFF poison.
template <class T>
void expect_transposed(std::vector<T> const& in, std::vector<T> const& out, std::size_t rows, std::size_t cols,
                       std::size_t ld_in, std::size_t ld_out, std::string const& what) {
  for (std::size_t c = 0; c < cols; ++c) {
    for (std::size_t r = 0; r < ld_out; ++r) {
      T const got = out[c * ld_out + r];
      if (r < rows) {
        ASSERT_EQ(got, in[r * ld_in + c]) << what << " out(" << c << "," << r << ")";
      } else {
        ASSERT_TRUE(all_ones(got)) << what << " wrote padding at out(" << c << "," << r << ")";
      }
    }
  }
}

template <class T>
void check_step(tr::step st) {
  for (auto [rows, cols] : shapes()) {
    std::size_t const n = rows * cols;
    std::vector<T> host(n);
    fill_random(host, rows * 7919 + cols);
    device_buffer<T> in(n), out(n);
    in.upload(host);
    out.fill_bytes(0xFF);
    tr::run(st, in.data(), out.data(), rows, cols, cols, rows, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const got = out.download();
    std::string const what = std::string(tr::name(st)) + " " + std::to_string(rows) + "x" + std::to_string(cols);
    if (st == tr::step::copy) {
      ASSERT_EQ(got, host) << what;
    } else {
      expect_transposed(host, got, rows, cols, cols, rows, what);
    }
  }
}

/// Every transposing step with leading dimensions larger than the rows: padding untouched.
template <class T>
void check_step_leading_dims(tr::step st, unsigned group) {
  struct shape {
    std::size_t rows, cols, ld_in, ld_out;
  };
  for (auto [rows, cols, ld_in, ld_out] : {shape{37, 50, 64, 41}, shape{129, 257, 260, 131}, shape{96, 64, 68, 100}}) {
    std::vector<T> host((rows - 1) * ld_in + cols);
    fill_random(host, rows * 3 + cols);
    device_buffer<T> in(host.size()), out(cols * ld_out);
    in.upload(host);
    out.fill_bytes(0xFF);
    tr::run(st, in.data(), out.data(), rows, cols, ld_in, ld_out, nullptr, group);
    MEMLAB_EXPECT_LAUNCH_OK();
    expect_transposed(host, out.download(), rows, cols, ld_in, ld_out,
                      std::string(tr::name(st)) + " ld " + std::to_string(rows) + "x" + std::to_string(cols));
  }
}

}  // namespace

class TransposeLadder : public ::testing::TestWithParam<tr::step> {};

TEST_P(TransposeLadder, FloatAwkwardShapes) {
  MEMLAB_REQUIRE_GPU();
  check_step<float>(GetParam());
}
TEST_P(TransposeLadder, DoubleAwkwardShapes) {
  MEMLAB_REQUIRE_GPU();
  check_step<double>(GetParam());
}
TEST_P(TransposeLadder, LeadingDimensions) {
  MEMLAB_REQUIRE_GPU();
  if (GetParam() == tr::step::copy) GTEST_SKIP() << "the copy is not a transpose";
  check_step_leading_dims<float>(GetParam(), tr::default_raster_group);
  check_step_leading_dims<double>(GetParam(), tr::default_raster_group);
}

INSTANTIATE_TEST_SUITE_P(Transpose, TransposeLadder, ::testing::ValuesIn(tr::all_steps()),
                         [](auto const& info) { return std::string(tr::name(info.param)); });

template <class T>
void check_library_leading_dims() {
  struct c {
    std::size_t rows, cols, ld_in, ld_out;
  };
  for (auto [rows, cols, ld_in, ld_out] : {c{37, 50, 64, 41}, c{1, 1, 3, 2}, c{300, 7, 7, 333}, c{129, 257, 300, 129},
                                           c{64, 96, 96, 64}}) {
    std::vector<T> host((rows - 1) * ld_in + cols);
    fill_random(host, rows + 31 * cols);
    std::size_t const out_len = cols * ld_out;  // includes the padding after the last row
    device_buffer<T> in(host.size()), out(out_len);
    in.upload(host);
    out.fill_bytes(0xFF);
    memlab::transpose(in.data(), out.data(), rows, cols, ld_in, ld_out);
    MEMLAB_EXPECT_LAUNCH_OK();
    expect_transposed(host, out.download(), rows, cols, ld_in, ld_out,
                      "library " + std::to_string(rows) + "x" + std::to_string(cols));
  }
}

TEST(Transpose, LibraryLeadingDimensionsFloat) {
  MEMLAB_REQUIRE_GPU();
  check_library_leading_dims<float>();
}
// 16-bit overloads move the bits: every pattern (NaNs and negative zeros among them) arrives. Even
// sizes and pitches take the kernel that moves pairs as 32-bit words (whole tiles, partial tiles in
// either direction), the others the element kernel.
TEST(Transpose, LibrarySixteenBitMovesTheBits) {
  MEMLAB_REQUIRE_GPU();
  struct c {
    std::size_t rows, cols, ld_in, ld_out;
  };
  for (auto [rows, cols, ld_in, ld_out] : {c{37, 50, 51, 41}, c{1, 1, 3, 2}, c{300, 7, 7, 333}, c{129, 257, 260, 130},
                                           c{64, 128, 128, 64}, c{130, 200, 202, 132}, c{1000, 66, 70, 1002}, c{2, 2, 2, 2},
                                           c{66, 130, 131, 66}}) {
    std::vector<std::uint16_t> host((rows - 1) * ld_in + cols);
    std::uint32_t x = static_cast<std::uint32_t>(rows * 7919 + cols);
    for (auto& h : host) h = static_cast<std::uint16_t>((x = x * 1664525u + 1013904223u) >> 16);
    device_buffer<std::uint16_t> in(host.size()), out(cols * ld_out);
    in.upload(host);
    out.fill_bytes(0xA5);
    memlab::transpose(reinterpret_cast<__nv_bfloat16 const*>(in.data()), reinterpret_cast<__nv_bfloat16*>(out.data()), rows, cols,
                      ld_in, ld_out);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto got = out.download();
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t col = 0; col < cols; ++col)
        ASSERT_EQ(got[col * ld_out + r], host[r * ld_in + col]) << rows << "x" << cols << " at (" << r << ", " << col << ")";
    for (std::size_t col = 0; col < cols; ++col)  // padding after each output row untouched
      for (std::size_t r = rows; r < ld_out; ++r) ASSERT_EQ(got[col * ld_out + r], 0xA5A5u);
    out.fill_bytes(0xA5);
    memlab::transpose(reinterpret_cast<__half const*>(in.data()), reinterpret_cast<__half*>(out.data()), rows, cols, ld_in, ld_out);
    MEMLAB_EXPECT_LAUNCH_OK();
    got = out.download();
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t col = 0; col < cols; ++col) ASSERT_EQ(got[col * ld_out + r], host[r * ld_in + col]);
  }
}

TEST(Transpose, LibraryLeadingDimensionsDouble) {
  MEMLAB_REQUIRE_GPU();
  check_library_leading_dims<double>();
}

TEST(Transpose, GroupedRasterCoversEveryTileOnce) {
  MEMLAB_REQUIRE_GPU();
  // Bands of 1, 3 (a short last band) and more rows than the matrix has tiles.
  for (unsigned group : {1u, 3u, 5u, 1000u}) {
    for (auto [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{{100, 1000}, {250, 70}, {33, 31}}) {
      std::vector<float> host(rows * cols);
      fill_random(host, group + rows);
      device_buffer<float> in(host.size()), out(host.size());
      in.upload(host);
      out.fill_bytes(0xFF);
      tr::run(tr::step::grouped_tile, in.data(), out.data(), rows, cols, cols, rows, nullptr, group);
      MEMLAB_EXPECT_LAUNCH_OK();
      expect_transposed(host, out.download(), rows, cols, cols, rows, "group " + std::to_string(group));
    }
    check_step_leading_dims<float>(tr::step::grouped_tile, group);
  }
  EXPECT_THROW(tr::run(tr::step::grouped_tile, static_cast<float const*>(nullptr) + 16, static_cast<float*>(nullptr) + 64,
                       4, 4, 4, 4, nullptr, 0u),
               memlab::error);
}

TEST(Transpose, GroupedTileIndexIsABijection) {
  // Host check of the raster arithmetic: every (tile_row, tile_col) exactly once.
  for (std::size_t group : {1u, 2u, 7u, 32u, 100u}) {
    std::size_t const row_tiles = 45, col_tiles = 13;
    std::vector<int> seen(row_tiles * col_tiles, 0);
    for (std::size_t b = 0; b < row_tiles * col_tiles; ++b) {
      std::size_t r = 0, c = 0;
      memlab::kernels::transpose::grouped_tile(b, row_tiles, col_tiles, group, r, c);
      ASSERT_LT(r, row_tiles);
      ASSERT_LT(c, col_tiles);
      ++seen[r * col_tiles + c];
    }
    for (int v : seen) ASSERT_EQ(v, 1) << "group " << group;
  }
}

TEST(Transpose, MoreRowTilesThanTheGridLimit) {
  MEMLAB_REQUIRE_GPU();
  // 65535 row tiles of 32 is the grid.y limit; the kernel strides over the rest.
  if (memlab::test::small_sizes()) GTEST_SKIP() << "2M elements: too slow under racecheck; covered by the normal run";
  std::size_t const rows = 65535 * 32 + 45, cols = 2;
  std::vector<float> host(rows * cols);
  fill_random(host, 5);
  device_buffer<float> in(host.size()), out(host.size());
  in.upload(host);
  out.fill_bytes(0xFF);
  memlab::transpose(in.data(), out.data(), rows, cols);
  MEMLAB_EXPECT_LAUNCH_OK();
  expect_transposed(host, out.download(), rows, cols, cols, rows, "tall");
}

TEST(Transpose, EmptyIsANoOp) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> out(4);
  out.fill_bytes(0xFF);
  memlab::transpose(static_cast<float const*>(nullptr), out.data(), 0, 4, 4, 0);
  memlab::transpose(static_cast<float const*>(nullptr), out.data(), 4, 0, 0, 4);
  MEMLAB_EXPECT_LAUNCH_OK();
  for (float x : out.download()) EXPECT_TRUE(all_ones(x));
}

TEST(Transpose, BadArgumentsThrow) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<float> a(64 * 64), b(64 * 64);
  EXPECT_THROW(memlab::transpose(a.data(), b.data(), 64, 64, 63, 64), memlab::error);  // ld_in < cols
  EXPECT_THROW(memlab::transpose(a.data(), b.data(), 64, 64, 64, 63), memlab::error);  // ld_out < rows
  EXPECT_THROW(memlab::transpose(static_cast<float const*>(nullptr), b.data(), 8, 8), memlab::error);
  EXPECT_THROW(memlab::transpose(a.data(), static_cast<float*>(nullptr), 8, 8), memlab::error);
  EXPECT_THROW(memlab::transpose(a.data(), a.data(), 8, 8), memlab::error);        // in place
  EXPECT_THROW(memlab::transpose(a.data(), a.data() + 60, 8, 8), memlab::error);   // overlapping
  EXPECT_NO_THROW(memlab::transpose(a.data(), a.data() + 64, 8, 8));              // adjacent, disjoint
  EXPECT_THROW(memlab::transpose(a.data(), b.data(), std::size_t{1} << 62, 64, 64, std::size_t{1} << 62),
               memlab::error);  // overflows
  try {
    memlab::transpose(a.data(), b.data(), 64, 64, 63, 64);
  } catch (memlab::error const& e) {
    EXPECT_NE(std::string(e.what()).find("ld_in"), std::string::npos) << e.what();
  }
  MEMLAB_EXPECT_LAUNCH_OK();
}
