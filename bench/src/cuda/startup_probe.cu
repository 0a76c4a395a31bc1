// What a CUDA process pays before its first kernel and after its last: driver start, context,
// stream, page-locked allocation and release, and (measured by the caller) the exit's teardown.
// Usage: dcs_cuda_startup_probe [MiB] [quick]   ("quick": leave with _Exit, skipping the teardown).
// Prints one line per step in milliseconds since main() began.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
const auto kStart = std::chrono::steady_clock::now();
void stamp(const char* what) {
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - kStart).count();
  std::printf("%8.1f ms  %s\n", ms, what);
  std::fflush(stdout);
}
}  // namespace

int main(int argc, char** argv) {
  const std::size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const bool quick = argc > 2 && std::strcmp(argv[2], "quick") == 0;
  stamp("main");
  int count = 0;
  cudaGetDeviceCount(&count);
  stamp("cudaGetDeviceCount (driver start)");
  cudaSetDevice(0);
  cudaFree(nullptr);
  stamp("context on device 0");
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  stamp("stream");
  void* pinned = nullptr;
  cudaHostAlloc(&pinned, mib << 20, cudaHostAllocPortable);
  stamp("cudaHostAlloc");
  void* device = nullptr;
  cudaMalloc(&device, mib << 20);
  cudaMemset(device, 0, mib << 20);
  cudaDeviceSynchronize();
  stamp("cudaMalloc + memset");
  cudaMemcpy(pinned, device, mib << 20, cudaMemcpyDeviceToHost);
  stamp("download to page-locked");
  void* plain = std::malloc(mib << 20);
  cudaMemcpy(plain, device, mib << 20, cudaMemcpyDeviceToHost);
  stamp("download to plain memory (first touch)");
  cudaMemcpy(plain, device, mib << 20, cudaMemcpyDeviceToHost);
  stamp("download to plain memory (again)");
  cudaFreeHost(pinned);
  stamp("cudaFreeHost");
  cudaFree(device);
  cudaStreamDestroy(stream);
  std::free(plain);
  stamp("released; returning");
  if (quick) std::_Exit(0);
  return 0;
}
