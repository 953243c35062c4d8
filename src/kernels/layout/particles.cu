#include "kernels/layout/particles.hpp"
#include "memlab/error.hpp"

namespace memlab::layout {
namespace {

__device__ inline std::int64_t global_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__global__ void update_aos(particle_aos* __restrict__ p, std::int64_t n, step_params sp) {
  std::int64_t const i = global_index();
  if (i >= n) return;
  particle_aos q = p[i];
  step(q.x, q.y, q.z, q.vx, q.vy, q.vz, q.m, sp);
  p[i].x = q.x;
  p[i].y = q.y;
  p[i].z = q.z;
  p[i].vx = q.vx;
  p[i].vy = q.vy;
  p[i].vz = q.vz;
}

__global__ void update_aligned(particle_aligned* __restrict__ p, std::int64_t n, step_params sp) {
  std::int64_t const i = global_index();
  if (i >= n) return;
  // Two 16-byte loads and stores: the record's alignment lets the compiler vectorize.
  float4* const v = reinterpret_cast<float4*>(p + i);
  float4 a = v[0], b = v[1];
  step(a.x, a.y, a.z, b.x, b.y, b.z, a.w, sp);
  v[0] = a;
  v[1] = b;
}

__global__ void update_soa(particles_soa p, std::int64_t n, step_params sp) {
  std::int64_t const i = global_index();
  if (i >= n) return;
  float x = p.x[i], y = p.y[i], z = p.z[i], vx = p.vx[i], vy = p.vy[i], vz = p.vz[i];
  step(x, y, z, vx, vy, vz, p.m[i], sp);
  p.x[i] = x;
  p.y[i] = y;
  p.z[i] = z;
  p.vx[i] = vx;
  p.vy[i] = vy;
  p.vz[i] = vz;
}

__global__ void update_aosoa(particle_tile* __restrict__ tiles, std::int64_t n, step_params sp) {
  std::int64_t const i = global_index();
  if (i >= n) return;
  particle_tile& t = tiles[i / aosoa_width];
  int const j = static_cast<int>(i % aosoa_width);
  float x = t.x[j], y = t.y[j], z = t.z[j], vx = t.vx[j], vy = t.vy[j], vz = t.vz[j];
  step(x, y, z, vx, vy, vz, t.m[j], sp);
  t.x[j] = x;
  t.y[j] = y;
  t.z[j] = z;
  t.vx[j] = vx;
  t.vy[j] = vy;
  t.vz[j] = vz;
}

unsigned grid_for(std::int64_t n) {
  MEMLAB_EXPECTS(n >= 0, "n must be non-negative");
  MEMLAB_EXPECTS((n + particle_block - 1) / particle_block <= 0x7fffffff, "n too large for a 1D grid");
  return static_cast<unsigned>((n + particle_block - 1) / particle_block);
}

}  // namespace

void update(particle_aos* p, std::int64_t n, step_params sp, cudaStream_t stream) {
  unsigned const g = grid_for(n);
  if (n == 0) return;
  update_aos<<<g, particle_block, 0, stream>>>(p, n, sp);
  MEMLAB_CHECK_LAUNCH();
}
void update(particle_aligned* p, std::int64_t n, step_params sp, cudaStream_t stream) {
  unsigned const g = grid_for(n);
  if (n == 0) return;
  update_aligned<<<g, particle_block, 0, stream>>>(p, n, sp);
  MEMLAB_CHECK_LAUNCH();
}
void update(particles_soa p, std::int64_t n, step_params sp, cudaStream_t stream) {
  unsigned const g = grid_for(n);
  if (n == 0) return;
  update_soa<<<g, particle_block, 0, stream>>>(p, n, sp);
  MEMLAB_CHECK_LAUNCH();
}
void update(particle_tile* tiles, std::int64_t n, step_params sp, cudaStream_t stream) {
  unsigned const g = grid_for(n);
  if (n == 0) return;
  update_aosoa<<<g, particle_block, 0, stream>>>(tiles, n, sp);
  MEMLAB_CHECK_LAUNCH();
}

}  // namespace memlab::layout
