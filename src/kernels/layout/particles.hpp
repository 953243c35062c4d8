#pragma once
// Data layout (seed 004): one particle update over four layouts of the same data.
//   aos         struct {x,y,z,vx,vy,vz,m} (28 bytes): a warp's load of one field is strided
//               by 28 bytes, so each load instruction touches 7x the sectors it uses and
//               relies on L1 to serve the other six fields.
//   aos_aligned struct {x,y,z,m | vx,vy,vz,q} (32 bytes, 16-byte aligned): two 16-byte loads
//               and stores per particle; the unused field q still crosses DRAM.
//   soa         seven arrays: every access is a unit-stride, fully coalesced stream.
//   aosoa       tiles of 32 particles, each tile a small SoA: coalesced like SoA with one
//               base pointer, the layout SIMD and GPU codes use to keep a particle's fields
//               within one page.
// The update (spring to the origin plus gravity, symplectic Euler) reads x,y,z,vx,vy,vz,m
// and writes x,y,z,vx,vy,vz in place.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace memlab::layout {

struct particle_aos {
  float x, y, z, vx, vy, vz, m;
};
static_assert(sizeof(particle_aos) == 28, "AoS record is 7 floats");

struct alignas(16) particle_aligned {
  float x, y, z, m;
  float vx, vy, vz, q;  // q: a field this update does not use
};
static_assert(sizeof(particle_aligned) == 32, "aligned AoS record is two 16-byte halves");

struct particles_soa {
  float *x, *y, *z, *vx, *vy, *vz, *m;
};

inline constexpr int aosoa_width = 32;
struct particle_tile {
  float x[aosoa_width], y[aosoa_width], z[aosoa_width], vx[aosoa_width], vy[aosoa_width], vz[aosoa_width],
      m[aosoa_width];
};

struct step_params {
  float dt = 1e-3f;
  float spring = 0.5f;
  float gravity = 9.81f;
};

/// The update of one particle, shared by the kernels and the host reference (in double).
template <class T>
__host__ __device__ inline void step(T& x, T& y, T& z, T& vx, T& vy, T& vz, T m, step_params p) {
  T const inv_m = T(1) / m;
  T const ax = -T(p.spring) * x * inv_m;
  T const ay = -T(p.spring) * y * inv_m - T(p.gravity);
  T const az = -T(p.spring) * z * inv_m;
  vx += ax * T(p.dt);
  vy += ay * T(p.dt);
  vz += az * T(p.dt);
  x += vx * T(p.dt);
  y += vy * T(p.dt);
  z += vz * T(p.dt);
}

inline constexpr int particle_block = 256;

void update(particle_aos* p, std::int64_t n, step_params sp, cudaStream_t stream);
void update(particle_aligned* p, std::int64_t n, step_params sp, cudaStream_t stream);
void update(particles_soa p, std::int64_t n, step_params sp, cudaStream_t stream);
/// `tiles` holds ceil(n / aosoa_width) tiles; slots past n in the last tile are left alone.
void update(particle_tile* tiles, std::int64_t n, step_params sp, cudaStream_t stream);

}  // namespace memlab::layout
