// Correctness of the particle update in every layout at awkward counts (AoSoA with a
// partial last tile, whose unused slots must stay untouched).
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench/verify.hpp"
#include "gpu_test.hpp"
#include "kernels/layout/particles.hpp"
#include "memlab/buffer.hpp"

using memlab::device_buffer;
using namespace memlab::layout;

namespace {

struct data {
  std::size_t n;
  std::vector<float> f;  // field-major x, y, z, vx, vy, vz, m
  float& at(int k, std::size_t i) { return f[k * n + i]; }
};

data make(std::size_t n, std::uint64_t seed) {
  data d{n, std::vector<float>(7 * n)};
  memlab::bench::fill_random(d.f, seed);
  for (std::size_t i = 0; i < n; ++i) d.at(6, i) = 1.0f + 0.5f * d.at(6, i);
  return d;
}

std::vector<double> reference(data d, step_params sp) {
  std::vector<double> out(6 * d.n);
  for (std::size_t i = 0; i < d.n; ++i) {
    double x = d.at(0, i), y = d.at(1, i), z = d.at(2, i), vx = d.at(3, i), vy = d.at(4, i), vz = d.at(5, i);
    step<double>(x, y, z, vx, vy, vz, d.at(6, i), sp);
    double const r[6] = {x, y, z, vx, vy, vz};
    for (int k = 0; k < 6; ++k) out[k * d.n + i] = r[k];
  }
  return out;
}

std::vector<std::size_t> sizes() {
  if (memlab::test::small_sizes()) return {1, 31, 33, 1000};
  return {1, 31, 33, 1000, 4099, 300007};
}

void expect_close(std::vector<float> const& got, std::vector<double> const& ref, std::size_t n) {
  auto const v = memlab::bench::compare_close(got, ref, 1e-5, 1e-6);
  ASSERT_EQ(v.status, memlab::bench::verdict::passed) << "n=" << n << ": " << v.detail;
}

}  // namespace

TEST(LayoutUpdate, AosMatchesReference) {
  MEMLAB_REQUIRE_GPU();
  step_params const sp{};
  for (std::size_t n : sizes()) {
    data d = make(n, 51 + n);
    std::vector<particle_aos> h(n);
    for (std::size_t i = 0; i < n; ++i) h[i] = {d.at(0, i), d.at(1, i), d.at(2, i), d.at(3, i), d.at(4, i), d.at(5, i), d.at(6, i)};
    device_buffer<particle_aos> b(n);
    b.upload(h);
    update(b.data(), static_cast<std::int64_t>(n), sp, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const g = b.download();
    std::vector<float> got(6 * n);
    for (std::size_t i = 0; i < n; ++i) {
      float const r[6] = {g[i].x, g[i].y, g[i].z, g[i].vx, g[i].vy, g[i].vz};
      for (int k = 0; k < 6; ++k) got[k * n + i] = r[k];
      ASSERT_EQ(g[i].m, h[i].m);
    }
    expect_close(got, reference(d, sp), n);
  }
}

TEST(LayoutUpdate, AlignedAosMatchesReferenceAndKeepsTheUnusedField) {
  MEMLAB_REQUIRE_GPU();
  step_params const sp{};
  for (std::size_t n : sizes()) {
    data d = make(n, 52 + n);
    std::vector<particle_aligned> h(n);
    for (std::size_t i = 0; i < n; ++i)
      h[i] = {d.at(0, i), d.at(1, i), d.at(2, i), d.at(6, i), d.at(3, i), d.at(4, i), d.at(5, i), float(i)};
    device_buffer<particle_aligned> b(n);
    b.upload(h);
    update(b.data(), static_cast<std::int64_t>(n), sp, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const g = b.download();
    std::vector<float> got(6 * n);
    for (std::size_t i = 0; i < n; ++i) {
      float const r[6] = {g[i].x, g[i].y, g[i].z, g[i].vx, g[i].vy, g[i].vz};
      for (int k = 0; k < 6; ++k) got[k * n + i] = r[k];
      ASSERT_EQ(g[i].m, h[i].m);
      ASSERT_EQ(g[i].q, float(i));
    }
    expect_close(got, reference(d, sp), n);
  }
}

TEST(LayoutUpdate, SoaMatchesReference) {
  MEMLAB_REQUIRE_GPU();
  step_params const sp{};
  for (std::size_t n : sizes()) {
    data d = make(n, 53 + n);
    device_buffer<float> b(7 * n);
    b.upload(d.f);
    float* p = b.data();
    update(particles_soa{p, p + n, p + 2 * n, p + 3 * n, p + 4 * n, p + 5 * n, p + 6 * n},
           static_cast<std::int64_t>(n), sp, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const g = b.download();
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(g[6 * n + i], d.at(6, i));
    expect_close(std::vector<float>(g.begin(), g.begin() + 6 * n), reference(d, sp), n);
  }
}

TEST(LayoutUpdate, AosoaMatchesReferenceAndLeavesTheTailAlone) {
  MEMLAB_REQUIRE_GPU();
  step_params const sp{};
  for (std::size_t n : sizes()) {
    data d = make(n, 54 + n);
    std::size_t const nt = (n + aosoa_width - 1) / aosoa_width;
    std::vector<particle_tile> h(nt);
    std::memset(h.data(), 0x7F, nt * sizeof(particle_tile));  // a marker in the unused slots
    for (std::size_t i = 0; i < n; ++i) {
      auto& t = h[i / aosoa_width];
      std::size_t const j = i % aosoa_width;
      t.x[j] = d.at(0, i), t.y[j] = d.at(1, i), t.z[j] = d.at(2, i);
      t.vx[j] = d.at(3, i), t.vy[j] = d.at(4, i), t.vz[j] = d.at(5, i), t.m[j] = d.at(6, i);
    }
    device_buffer<particle_tile> b(nt);
    b.upload(h);
    update(b.data(), static_cast<std::int64_t>(n), sp, nullptr);
    MEMLAB_EXPECT_LAUNCH_OK();
    auto const g = b.download();
    std::vector<float> got(6 * n);
    for (std::size_t i = 0; i < n; ++i) {
      auto const& t = g[i / aosoa_width];
      std::size_t const j = i % aosoa_width;
      float const r[6] = {t.x[j], t.y[j], t.z[j], t.vx[j], t.vy[j], t.vz[j]};
      for (int k = 0; k < 6; ++k) got[k * n + i] = r[k];
    }
    expect_close(got, reference(d, sp), n);
    for (std::size_t j = n % aosoa_width; n % aosoa_width != 0 && j < aosoa_width; ++j)
      ASSERT_EQ(std::memcmp(&g[nt - 1].x[j], &h[nt - 1].x[j], sizeof(float)), 0) << "tail slot " << j << " written";
  }
}

TEST(LayoutUpdate, RejectsNegativeCount) {
  MEMLAB_REQUIRE_GPU();
  device_buffer<particle_aos> b(1);
  EXPECT_THROW(update(b.data(), -1, step_params{}, nullptr), memlab::error);
  EXPECT_NO_THROW(update(b.data(), 0, step_params{}, nullptr));
}
