// link_probe: the measurements behind two choices of the link family (docs/link.md,
// "Tuning notes"), outside the harness so that many configurations run in a few seconds.
//   1. The SM peer copy (link::sm_copy) against cudaMemcpyPeerAsync, GPU 0 -> GPU 1, one way
//      and both ways: vectors in flight per thread x CTAs per SM x threads, and a bulk-copy
//      (TMA, sm_90) variant that stages through shared memory.
//   2. The staged pipeline's schedule against the duplex copy of the same bytes on GPU 0:
//      where do the 8% between memlab::staged_transform and H2D + D2H at once go?
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -o link_probe tools/link_probe.cu
// Run:   ./link_probe [peer|staged|all]      (one line per configuration, medians of 15 runs)
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                                       \
  do {                                                                                              \
    cudaError_t e_ = (x);                                                                           \
    if (e_ != cudaSuccess) {                                                                        \
      std::fprintf(stderr, "link_probe: %s: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                                 \
    }                                                                                               \
  } while (0)

namespace {

template <int U>
__global__ void push_kernel(uint4* __restrict__ dst, uint4 const* __restrict__ src, std::size_t vecs) {
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < vecs; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) __stcg(dst + i + u * stride, v[u]);
  }
  for (; i < vecs; i += stride) __stcg(dst + i, __ldcg(src + i));
}

/// Pull with the L2 prefetch-size hint: each load asks L2 for the 256-byte block around it,
/// so a read crossing the link can move 256 bytes per request instead of 32-128.
template <int U>
__global__ void pull256_kernel(uint4* __restrict__ dst, uint4 const* __restrict__ src, std::size_t vecs) {
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + (U - 1) * stride < vecs; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      asm volatile("ld.global.cg.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                   : "=r"(v[u].x), "=r"(v[u].y), "=r"(v[u].z), "=r"(v[u].w)
                   : "l"(src + i + u * stride));
#pragma unroll
    for (int u = 0; u < U; ++u) __stcg(dst + i + u * stride, v[u]);
  }
  for (; i < vecs; i += stride) __stcg(dst + i, __ldcg(src + i));
}

/// Each CTA copies contiguous chunks of `chunk` bytes through a ring of `stages` shared buffers:
/// one thread issues a bulk load (global -> shared, mbarrier) and, once it landed, a bulk store
/// (shared -> global, possibly peer memory).
__global__ void bulk_kernel(char* dst, char const* src, std::size_t bytes, unsigned chunk, int stages) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ __align__(128) char ring[];
  __shared__ __align__(8) unsigned long long bar[8];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < stages; ++s)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(&bar[s]))));
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  std::size_t const chunks = bytes / chunk;
  unsigned phase[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t k = 0;
  for (std::size_t c = blockIdx.x; c < chunks; c += gridDim.x, ++k) {
    int const s = static_cast<int>(k % stages);
    char* buf = ring + static_cast<std::size_t>(s) * chunk;
    unsigned const sb = static_cast<unsigned>(__cvta_generic_to_shared(buf));
    unsigned const bb = static_cast<unsigned>(__cvta_generic_to_shared(&bar[s]));
    // The stage is free once the store issued `stages` chunks ago has read it.
    if (k >= static_cast<std::size_t>(stages)) {
      switch (stages) {  // wait_group.read takes an immediate
        case 2: asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory"); break;
        case 4: asm volatile("cp.async.bulk.wait_group.read 3;" ::: "memory"); break;
        default: asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); break;
      }
    }
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bb), "r"(chunk) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(sb),
                 "l"(src + c * chunk), "r"(chunk), "r"(bb)
                 : "memory");
    unsigned done = 0;
    do {
      asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                   : "=r"(done)
                   : "r"(bb), "r"(phase[s])
                   : "memory");
    } while (!done);
    phase[s] ^= 1u;
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + c * chunk), "r"(sb), "r"(chunk)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}

__global__ void affine_kernel(float const* in, float* out, std::size_t n) {
  std::size_t const stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = 2.0f * in[i] + 0.5f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double spread(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return (v[v.size() * 3 / 4] - v[v.size() / 4]) / v[v.size() / 2];
}

/// Median ms over `reps` of `work` issued on `streams` (each on its device), timed by one event
/// pair on the first stream joined to the others.
double time_streams(std::vector<std::pair<int, cudaStream_t>> const& streams, std::function<void()> const& work,
                    int reps = 15, double* noise = nullptr) {
  std::vector<double> ms;
  cudaEvent_t a, b;
  CK(cudaSetDevice(streams[0].first));
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<cudaEvent_t> join(streams.size()), fork(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) {
    CK(cudaSetDevice(streams[i].first));
    CK(cudaEventCreateWithFlags(&join[i], cudaEventDisableTiming));
  }
  for (int r = 0; r < reps + 2; ++r) {
    CK(cudaSetDevice(streams[0].first));
    CK(cudaEventRecord(a, streams[0].second));
    for (std::size_t i = 1; i < streams.size(); ++i) CK(cudaStreamWaitEvent(streams[i].second, a, 0));
    work();
    for (std::size_t i = 1; i < streams.size(); ++i) {
      CK(cudaSetDevice(streams[i].first));
      CK(cudaEventRecord(join[i], streams[i].second));
      CK(cudaSetDevice(streams[0].first));
      CK(cudaStreamWaitEvent(streams[0].second, join[i], 0));
    }
    CK(cudaSetDevice(streams[0].first));
    CK(cudaEventRecord(b, streams[0].second));
    CK(cudaEventSynchronize(b));
    float t = 0;
    CK(cudaEventElapsedTime(&t, a, b));
    if (r >= 2) ms.push_back(t);
  }
  if (noise) *noise = spread(ms);
  return median(ms);
}

void peer_probe() {
  int n = 0;
  CK(cudaGetDeviceCount(&n));
  if (n < 2) {
    std::printf("peer: needs 2 GPUs, this machine has %d\n", n);
    return;
  }
  std::size_t const bytes = std::size_t{256} << 20;
  char* buf[2][2];  // [gpu][src, dst]
  cudaStream_t st[2];
  int sms[2];
  for (int g = 0; g < 2; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaDeviceEnablePeerAccess(1 - g, 0));
    CK(cudaMalloc(&buf[g][0], bytes));
    CK(cudaMalloc(&buf[g][1], bytes));
    CK(cudaMemset(buf[g][0], 0x11 * (g + 1), bytes));
    CK(cudaStreamCreateWithFlags(&st[g], cudaStreamNonBlocking));
    CK(cudaDeviceGetAttribute(&sms[g], cudaDevAttrMultiProcessorCount, g));
  }
  for (int g = 0; g < 2; ++g) {
    CK(cudaSetDevice(g));
    CK(cudaFuncSetAttribute(bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  }
  std::vector<std::pair<int, cudaStream_t>> one = {{0, st[0]}}, both = {{0, st[0]}, {1, st[1]}};
  auto gbps = [&](double ms, int dirs) { return dirs * bytes / (ms * 1e-3) / 1e9; };
  // Each direction: GPU g pushes its src into the other GPU's dst.
  using launcher = std::function<void(int g)>;
  auto run = [&](char const* name, launcher const& l, double ce_uni, double ce_bi) {
    double nu = 0, nb = 0;
    double const u = time_streams(one, [&] { l(0); }, 15, &nu);
    double const b = time_streams(both, [&] { l(0); l(1); }, 15, &nb);
    std::printf("%-34s uni %7.1f GB/s (%.3f of ce, iqr %.3f)   bi %7.1f GB/s (%.3f of ce, iqr %.3f)\n", name, gbps(u, 1),
                ce_uni > 0 ? gbps(u, 1) / ce_uni : 1.0, nu, gbps(b, 2), ce_bi > 0 ? gbps(b, 2) / ce_bi : 1.0, nb);
    return std::make_pair(gbps(u, 1), gbps(b, 2));
  };
  auto ce = [&](int g) {
    CK(cudaSetDevice(g));
    CK(cudaMemcpyPeerAsync(buf[1 - g][1], 1 - g, buf[g][0], g, bytes, st[g]));
  };
  auto const ref = run("ce (cudaMemcpyPeerAsync)", ce, 0, 0);
  auto push = [&](auto kernel, int per_sm, int threads) {
    return [=, &buf, &st, &sms](int g) {
      CK(cudaSetDevice(g));
      kernel<<<per_sm * sms[g], threads, 0, st[g]>>>(reinterpret_cast<uint4*>(buf[1 - g][1]),
                                                     reinterpret_cast<uint4 const*>(buf[g][0]), bytes / 16);
      CK(cudaGetLastError());
    };
  };
  char name[64];
  for (int threads : {256, 512, 1024})
    for (int per_sm : {1, 2, 4}) {
      if (threads * per_sm > 2048) continue;
      std::snprintf(name, sizeof name, "push u4  %d x %4d per SM", per_sm, threads);
      run(name, push(push_kernel<4>, per_sm, threads), ref.first, ref.second);
      std::snprintf(name, sizeof name, "push u8  %d x %4d per SM", per_sm, threads);
      run(name, push(push_kernel<8>, per_sm, threads), ref.first, ref.second);
      std::snprintf(name, sizeof name, "push u12 %d x %4d per SM", per_sm, threads);
      run(name, push(push_kernel<12>, per_sm, threads), ref.first, ref.second);
    }
  // Pull: the kernel on the destination loads from the peer (plain, with the 256-byte L2
  // prefetch hint, and bulk copies from the peer through shared memory).
  auto pull_row = [&](char const* nm, std::function<void(int src_gpu)> const& l) {
    double nu = 0, nb = 0;
    double const u = time_streams(both, [&] { l(0); }, 15, &nu);
    double const b = time_streams(both, [&] { l(0); l(1); }, 15, &nb);
    std::printf("%-34s uni %7.1f GB/s (%.3f of ce, iqr %.3f)   bi %7.1f GB/s (%.3f of ce, iqr %.3f)\n", nm, gbps(u, 1),
                gbps(u, 1) / ref.first, nu, gbps(b, 2), gbps(b, 2) / ref.second, nb);
  };
  for (int per_sm : {1, 2, 4}) {
    std::snprintf(name, sizeof name, "pull u8  %d x  512 per SM", per_sm);
    pull_row(name, [&, per_sm](int g) {
      int const d = 1 - g;
      CK(cudaSetDevice(d));
      push_kernel<8><<<per_sm * sms[d], 512, 0, st[d]>>>(reinterpret_cast<uint4*>(buf[d][1]),
                                                         reinterpret_cast<uint4 const*>(buf[g][0]), bytes / 16);
      CK(cudaGetLastError());
    });
    std::snprintf(name, sizeof name, "pull L2::256B u8 %d x 512 per SM", per_sm);
    pull_row(name, [&, per_sm](int g) {
      int const d = 1 - g;
      CK(cudaSetDevice(d));
      pull256_kernel<8><<<per_sm * sms[d], 512, 0, st[d]>>>(reinterpret_cast<uint4*>(buf[d][1]),
                                                            reinterpret_cast<uint4 const*>(buf[g][0]), bytes / 16);
      CK(cudaGetLastError());
    });
  }
  for (unsigned chunk : {16384u, 32768u})
    for (int per_sm : {1, 2}) {
      int const stages = 4;
      std::size_t const smem = static_cast<std::size_t>(chunk) * stages;
      if (smem * per_sm > 220 * 1024) continue;
      std::snprintf(name, sizeof name, "bulk pull %2u KiB x 4, %d per SM", chunk / 1024, per_sm);
      pull_row(name, [&, chunk, per_sm, smem](int g) {
        int const d = 1 - g;
        CK(cudaSetDevice(d));
        bulk_kernel<<<per_sm * sms[d], 32, smem, st[d]>>>(buf[d][1], buf[g][0], bytes, chunk, stages);
        CK(cudaGetLastError());
      });
    }
  for (unsigned chunk : {16384u, 32768u})
    for (int stages : {2, 4})
      for (int per_sm : {1, 2}) {
        std::size_t const smem = static_cast<std::size_t>(chunk) * stages;
        if (smem * per_sm > 220 * 1024) continue;
        std::snprintf(name, sizeof name, "bulk %2u KiB x %d stages, %d per SM", chunk / 1024, stages, per_sm);
        run(name,
            [=, &buf, &st, &sms](int g) {
              CK(cudaSetDevice(g));
              bulk_kernel<<<per_sm * sms[g], 32, smem, st[g]>>>(buf[1 - g][1], buf[g][0], bytes, chunk, stages);
              CK(cudaGetLastError());
            },
            ref.first, ref.second);
      }
  // Check the last copy landed (bulk push, both ways): every byte of GPU 1's dst is GPU 0's pattern.
  std::vector<unsigned char> h(bytes);
  CK(cudaSetDevice(1));
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), buf[1][1], bytes, cudaMemcpyDeviceToHost));
  std::size_t bad = 0;
  for (unsigned char c : h) bad += c != 0x11;
  std::printf("peer check: %zu bytes differ\n", bad);
}

void staged_probe() {
  std::size_t const bytes = std::size_t{256} << 20, n = bytes / 4;
  CK(cudaSetDevice(0));
  float *h_in, *h_out, *d_in, *d_out;
  CK(cudaHostAlloc(&h_in, bytes, cudaHostAllocDefault));
  CK(cudaHostAlloc(&h_out, bytes, cudaHostAllocDefault));
  CK(cudaMalloc(&d_in, bytes));
  CK(cudaMalloc(&d_out, bytes));
  for (std::size_t i = 0; i < n; ++i) h_in[i] = static_cast<float>(i % 1000);
  std::vector<cudaStream_t> st(16);
  for (auto& s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  auto host_ms = [&](std::function<void()> const& work) {
    std::vector<double> v;
    for (int r = 0; r < 12; ++r) {
      auto const t0 = std::chrono::steady_clock::now();
      work();
      for (auto s : st) CK(cudaStreamSynchronize(s));
      if (r >= 2) v.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return std::make_pair(median(v), spread(v));
  };
  auto const duplex = host_ms([&] {
    CK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, st[0]));
    CK(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, st[1]));
  });
  auto const h2d = host_ms([&] { CK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, st[0])); });
  std::printf("staged: H2D alone %.3f ms (%.1f GB/s); duplex H2D+D2H %.3f ms (%.1f GB/s a way, iqr %.3f)\n", h2d.first,
              bytes / (h2d.first * 1e-3) / 1e9, duplex.first, bytes / (duplex.first * 1e-3) / 1e9, duplex.second);
  auto report = [&](char const* name, std::pair<double, double> t) {
    std::printf("%-58s %.3f ms  %.3f of duplex (iqr %.3f)\n", name, t.first, duplex.first / t.first, t.second);
  };
  char name[96];
  for (std::size_t chunk : {std::size_t{4} << 20, std::size_t{16} << 20}) {
    std::size_t const cn = chunk / 4, chunks = bytes / chunk;
    // Chopped duplex: all H2D on one stream, all D2H on another, no kernel, no dependencies.
    std::snprintf(name, sizeof name, "chopped duplex, 2 streams, %zu MiB", chunk >> 20);
    report(name, host_ms([&] {
             for (std::size_t c = 0; c < chunks; ++c) {
               CK(cudaMemcpyAsync(d_in + c * cn, h_in + c * cn, chunk, cudaMemcpyHostToDevice, st[0]));
               CK(cudaMemcpyAsync(h_out + c * cn, d_out + c * cn, chunk, cudaMemcpyDeviceToHost, st[1]));
             }
           }));
    for (int S : {2, 4, 8}) {
      // Round robin, copies only: stream c%S does H2D(c) then D2H(c) (of other buffers).
      std::snprintf(name, sizeof name, "round robin copies only, %d streams, %zu MiB", S, chunk >> 20);
      report(name, host_ms([&] {
               for (std::size_t c = 0; c < chunks; ++c) {
                 CK(cudaMemcpyAsync(d_in + c * cn, h_in + c * cn, chunk, cudaMemcpyHostToDevice, st[c % S]));
                 CK(cudaMemcpyAsync(h_out + c * cn, d_out + c * cn, chunk, cudaMemcpyDeviceToHost, st[c % S]));
               }
             }));
      // The staged pipeline as memlab runs it: H2D, kernel, D2H of chunk c on stream c%S.
      std::snprintf(name, sizeof name, "round robin pipeline, %d streams, %zu MiB", S, chunk >> 20);
      report(name, host_ms([&] {
               for (std::size_t c = 0; c < chunks; ++c) {
                 cudaStream_t const s = st[c % S];
                 CK(cudaMemcpyAsync(d_in + c * cn, h_in + c * cn, chunk, cudaMemcpyHostToDevice, s));
                 affine_kernel<<<528, 512, 0, s>>>(d_in + c * cn, d_out + c * cn, cn);
                 CK(cudaMemcpyAsync(h_out + c * cn, d_out + c * cn, chunk, cudaMemcpyDeviceToHost, s));
               }
             }));
    }
    // Engine queues: every H2D on one stream, kernels on a second, every D2H on a third, ordered
    // by events (buffers are not reused here: the whole buffer is on the device).
    std::vector<cudaEvent_t> up(chunks), ker(chunks);
    for (std::size_t c = 0; c < chunks; ++c) {
      CK(cudaEventCreateWithFlags(&up[c], cudaEventDisableTiming));
      CK(cudaEventCreateWithFlags(&ker[c], cudaEventDisableTiming));
    }
    std::snprintf(name, sizeof name, "engine queues (3 streams + events), %zu MiB", chunk >> 20);
    report(name, host_ms([&] {
             for (std::size_t c = 0; c < chunks; ++c) {
               CK(cudaMemcpyAsync(d_in + c * cn, h_in + c * cn, chunk, cudaMemcpyHostToDevice, st[0]));
               CK(cudaEventRecord(up[c], st[0]));
               CK(cudaStreamWaitEvent(st[1], up[c], 0));
               affine_kernel<<<528, 512, 0, st[1]>>>(d_in + c * cn, d_out + c * cn, cn);
               CK(cudaEventRecord(ker[c], st[1]));
               CK(cudaStreamWaitEvent(st[2], ker[c], 0));
               CK(cudaMemcpyAsync(h_out + c * cn, d_out + c * cn, chunk, cudaMemcpyDeviceToHost, st[2]));
             }
           }));
    // Round robin with each direction's copies chained in issue order across streams.
    for (int S : {4}) {
      std::vector<cudaEvent_t> hd(S), dh(S);
      for (int i = 0; i < S; ++i) {
        CK(cudaEventCreateWithFlags(&hd[i], cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&dh[i], cudaEventDisableTiming));
      }
      std::snprintf(name, sizeof name, "round robin, copies chained, %d streams, %zu MiB", S, chunk >> 20);
      report(name, host_ms([&] {
               for (std::size_t c = 0; c < chunks; ++c) {
                 cudaStream_t const s = st[c % S];
                 if (c) CK(cudaStreamWaitEvent(s, hd[(c - 1) % S], 0));
                 CK(cudaMemcpyAsync(d_in + c * cn, h_in + c * cn, chunk, cudaMemcpyHostToDevice, s));
                 CK(cudaEventRecord(hd[c % S], s));
                 affine_kernel<<<528, 512, 0, s>>>(d_in + c * cn, d_out + c * cn, cn);
                 if (c) CK(cudaStreamWaitEvent(s, dh[(c - 1) % S], 0));
                 CK(cudaMemcpyAsync(h_out + c * cn, d_out + c * cn, chunk, cudaMemcpyDeviceToHost, s));
                 CK(cudaEventRecord(dh[c % S], s));
               }
             }));
    }
  }
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) bad += h_out[i] != 2.0f * h_in[i] + 0.5f;
  std::printf("staged check: %zu elements differ\n", bad);
}

}  // namespace

int main(int argc, char** argv) {
  std::string const what = argc > 1 ? argv[1] : "all";
  if (what != "peer" && what != "staged" && what != "all") {
    std::fprintf(stderr, "link_probe: unknown part '%s' (peer, staged or all)\n", what.c_str());
    return 2;
  }
  cudaDeviceProp p{};
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("GPU 0: %s\n", p.name);
  if (what != "staged") peer_probe();
  if (what != "peer") staged_probe();
  return 0;
}
