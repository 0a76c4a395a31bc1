// kernel_probe.hpp on AVX2 + FMA: compiled with -mavx2 -mfma (bench/CMakeLists.txt).
#include "kernel_probe.hpp"
#include "simd_avx2.hpp"

namespace dcs::bench {
ProbeResults probe_kernels_avx2(const ProbeAtoms& atoms, std::int64_t nx, double s, bool tail) {
  return probe_kernels<cpu_fast::avx2::Vec, 2, 3, 4, 6, 8>(atoms, nx, s, tail);
}
}  // namespace dcs::bench
