// kernel_probe.hpp on AVX-512: compiled with -mavx512f -mfma (bench/CMakeLists.txt).
#include "kernel_probe.hpp"
#include "simd_avx512.hpp"

namespace dcs::bench {

std::vector<ProbeResult> probe_kernels_avx512(const ProbeAtoms& atoms, std::int64_t nx, double seconds) {
  using Vec = cpu_fast::avx512::Vec;
  return {probe_row<Vec, 2>(atoms, nx, seconds), probe_row<Vec, 4>(atoms, nx, seconds),
          probe_row<Vec, 6>(atoms, nx, seconds), probe_row<Vec, 8>(atoms, nx, seconds),
          probe_tail<Vec>(atoms, seconds)};
}

}  // namespace dcs::bench
