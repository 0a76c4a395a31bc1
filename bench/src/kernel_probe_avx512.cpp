// kernel_probe.hpp on AVX-512: compiled with -mavx512f -mfma (bench/CMakeLists.txt).
#include "kernel_probe.hpp"
#include "simd_avx512.hpp"

namespace dcs::bench {
ProbeResults probe_kernels_avx512(const ProbeAtoms& atoms, std::int64_t nx, double s, bool tail) {
  return probe_kernels<cpu_fast::avx512::Vec, 2, 4, 6, 8>(atoms, nx, s, tail);
}
}  // namespace dcs::bench
