// layout.aos_soa: seed 004's data layout. The same particle update over AoS, 16-byte-aligned
// AoS, SoA and AoSoA (tiles of 32). Bytes declared are the useful ones (7 floats read, 6
// written per particle), identical for every layout, so GB/s is the effective bandwidth and
// the differences are what each layout costs on top.
//
// Model (DRAM bytes actually moved per particle, 32-byte sectors, whole lines reused in L1/L2):
// aos 28 read + 28 written (the whole record passes through, m included: stores of the six
// updated fields leave m's bytes in partially written sectors that L2 must merge);
// aos_aligned 32 + 32 (q and m ride along); soa and aosoa 28 + 24.
#include <vector>

#include "bench/state.hpp"
#include "kernels/layout/particles.hpp"
#include "memlab/buffer.hpp"

namespace {

using namespace memlab;
using namespace memlab::bench;
using namespace memlab::layout;

/// Canonical host form: field-major x, y, z, vx, vy, vz, m (n each).
struct fields {
  std::size_t n;
  std::vector<float> v;  // 7 * n
  float& at(int f, std::size_t i) { return v[f * n + i]; }
  float at(int f, std::size_t i) const { return v[f * n + i]; }
};

std::vector<double> reference(fields const& in, step_params sp) {
  std::vector<double> out(6 * in.n);
  for (std::size_t i = 0; i < in.n; ++i) {
    double x = in.at(0, i), y = in.at(1, i), z = in.at(2, i), vx = in.at(3, i), vy = in.at(4, i),
           vz = in.at(5, i);
    step<double>(x, y, z, vx, vy, vz, in.at(6, i), sp);
    double const r[6] = {x, y, z, vx, vy, vz};
    for (int f = 0; f < 6; ++f) out[f * in.n + i] = r[f];
  }
  return out;
}

double model_bytes(std::string const& v) {
  if (v == "aos") return 56;
  if (v == "aos_aligned") return 64;
  return 52;
}

void aos_soa_body(state& s) {
  auto const n = static_cast<std::size_t>(s.get_int("particles"));
  auto const sn = static_cast<std::int64_t>(n);
  std::string const& v = s.variant();
  fields in{n, std::vector<float>(7 * n)};
  fill_random(in.v, s.seed());
  for (std::size_t i = 0; i < n; ++i) in.at(6, i) = 1.0f + 0.5f * in.at(6, i);  // mass in [0.5, 1.5)
  step_params const sp{};
  fields got{n, std::vector<float>(7 * n)};
  launcher launch;

  // Each layout: upload, one checked update, download into the canonical form.
  device_buffer<particle_aos> aos;
  device_buffer<particle_aligned> aligned;
  device_buffer<float> soa_mem;
  device_buffer<particle_tile> tiles;
  particles_soa soa{};
  if (v == "aos") {
    std::vector<particle_aos> h(n);
    for (std::size_t i = 0; i < n; ++i)
      h[i] = {in.at(0, i), in.at(1, i), in.at(2, i), in.at(3, i), in.at(4, i), in.at(5, i), in.at(6, i)};
    aos = device_buffer<particle_aos>(n);
    aos.upload(h);
    launch = [&](cudaStream_t st) { update(aos.data(), sn, sp, st); };
  } else if (v == "aos_aligned") {
    std::vector<particle_aligned> h(n);
    for (std::size_t i = 0; i < n; ++i)
      h[i] = {in.at(0, i), in.at(1, i), in.at(2, i), in.at(6, i), in.at(3, i), in.at(4, i), in.at(5, i), 0.f};
    aligned = device_buffer<particle_aligned>(n);
    aligned.upload(h);
    launch = [&](cudaStream_t st) { update(aligned.data(), sn, sp, st); };
  } else if (v == "soa") {
    soa_mem = device_buffer<float>(7 * n);
    soa_mem.upload(in.v);
    float* const base = soa_mem.data();
    soa = {base, base + n, base + 2 * n, base + 3 * n, base + 4 * n, base + 5 * n, base + 6 * n};
    launch = [&](cudaStream_t st) { update(soa, sn, sp, st); };
  } else {
    std::size_t const nt = (n + aosoa_width - 1) / aosoa_width;
    std::vector<particle_tile> h(nt);
    for (std::size_t i = 0; i < n; ++i) {
      particle_tile& t = h[i / aosoa_width];
      std::size_t const j = i % aosoa_width;
      t.x[j] = in.at(0, i), t.y[j] = in.at(1, i), t.z[j] = in.at(2, i);
      t.vx[j] = in.at(3, i), t.vy[j] = in.at(4, i), t.vz[j] = in.at(5, i), t.m[j] = in.at(6, i);
    }
    tiles = device_buffer<particle_tile>(nt);
    tiles.upload(h);
    launch = [&](cudaStream_t st) { update(tiles.data(), sn, sp, st); };
  }
  launch(s.stream());
  MEMLAB_CUDA_CHECK(cudaStreamSynchronize(s.stream()));
  if (v == "aos") {
    auto h = aos.download();
    for (std::size_t i = 0; i < n; ++i) {
      float const r[7] = {h[i].x, h[i].y, h[i].z, h[i].vx, h[i].vy, h[i].vz, h[i].m};
      for (int f = 0; f < 7; ++f) got.at(f, i) = r[f];
    }
  } else if (v == "aos_aligned") {
    auto h = aligned.download();
    for (std::size_t i = 0; i < n; ++i) {
      float const r[7] = {h[i].x, h[i].y, h[i].z, h[i].vx, h[i].vy, h[i].vz, h[i].m};
      for (int f = 0; f < 7; ++f) got.at(f, i) = r[f];
    }
  } else if (v == "soa") {
    got.v = soa_mem.download();
  } else {
    auto h = tiles.download();
    for (std::size_t i = 0; i < n; ++i) {
      particle_tile const& t = h[i / aosoa_width];
      std::size_t const j = i % aosoa_width;
      float const r[7] = {t.x[j], t.y[j], t.z[j], t.vx[j], t.vy[j], t.vz[j], t.m[j]};
      for (int f = 0; f < 7; ++f) got.at(f, i) = r[f];
    }
  }
  std::vector<float> updated(got.v.begin(), got.v.begin() + 6 * n);
  verification check = compare_close(updated, reference(in, sp), 1e-5, 1e-6);
  // The mass is read, never written: it must come back bit for bit.
  std::vector<float> mass_got(got.v.begin() + 6 * n, got.v.end()), mass_in(in.v.begin() + 6 * n, in.v.end());
  verification const mass = compare_exact(mass_got, mass_in);
  s.set_verification(mass.status == verdict::failed ? mass : check);

  s.add_reads<float>(7 * n);
  s.add_writes<float>(6 * n);
  // In place: every timed launch advances the simulation by one more step, which is the
  // workload (positions and velocities stay bounded: a stable oscillator under gravity).
  s.exec(launch);
  nlohmann::json p = {{"dram_bytes_per_particle", model_bytes(v)}, {"useful_fraction", 52.0 / model_bytes(v)}};
  if (auto c = s.ceiling_gbps()) p["effective_gbps"] = *c * 52.0 / model_bytes(v);
  s.set_predicted(p);
}

registrar const aos_soa_reg{[] {
  experiment e;
  e.id = "layout.aos_soa";
  e.description = "particle update over AoS, aligned AoS, SoA and AoSoA: effective bandwidth";
  e.seed_ref = "004 (AoS vs SoA, spatial locality)";
  e.axes = {variant_axis({"aos", "aos_aligned", "soa", "aosoa"}),
            int_axis("particles", {std::int64_t{1} << 22, std::int64_t{1} << 24}, {std::int64_t{1} << 20})};
  e.axes[1].min_value = 0;
  e.axes[1].max_value = std::int64_t{1} << 27;
  e.ceiling = ceiling_relation::peer;
  e.body = aos_soa_body;
  e.describe_axis("variant", "", "array of structures, aligned AoS, structure of arrays, AoSoA");
  e.describe_axis("particles", "particles", "particles updated", true);
  e.metrics = {metrics::time(), metrics::gbps(), metrics::vs_ceiling()};
  e.headline = best_row("What does the best layout gain over plain AoS?", {{"particles", {"max"}}}, "median_ms",
                        "baseline", {{"variant", {"aos"}}});
  e.prose = {"Array of structures against structure of arrays: a kernel that touches some fields of each particle "
             "wastes the bandwidth of the fields it skips when they are interleaved (AoS); SoA keeps each field "
             "contiguous and coalesced, and AoSoA keeps warp-sized blocks of each field together.",
             "The AoS bars against SoA and AoSoA; GB/s counts only the bytes the update needs.", ""};
  {
    plot_spec p = bar_plot("layout_aos_soa.png", "Particle update bandwidth by layout", "variant", "gbps", {"particles"});
    p.refs = {{"ceiling", "cudaMemcpy D2D", 0}};
    e.plots.push_back(p);
  }
  return e;
}()};

}  // namespace
