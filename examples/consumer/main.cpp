// Calls memlab from another project: copies with the 16-byte vector copy when a GPU is
// present, and says so plainly when not.
#include <cstdio>
#include <vector>

#include <memlab/buffer.hpp>
#include <memlab/coalescing.hpp>
#include <memlab/device.hpp>
#include <memlab/version.hpp>

int main() {
  std::printf("memlab %s (kernels for CUDA architectures %s)\n", MEMLAB_VERSION, MEMLAB_CUDA_ARCHITECTURES);
  if (memlab::device_count() == 0) {
    std::printf("no CUDA device: nothing to run\n");
    return 0;
  }
  try {
    std::vector<float> host(1 << 20, 1.5f);
    memlab::device_buffer<float> in(host.size()), out(host.size());
    in.upload(host);
    memlab::vector_copy(out.data(), in.data(), in.bytes(), 16, 4);
    bool const ok = out.download() == host;
    std::printf("vector_copy on %s: %s\n", memlab::query_device(0).name.c_str(), ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
  } catch (memlab::error const& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
