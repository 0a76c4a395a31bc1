// kernel_probe.hpp on AVX-512: compiled with -mavx512f -mfma (bench/CMakeLists.txt).
#include "kernel_probe.hpp"
#include "simd_avx512.hpp"

namespace dcs::bench {

std::vector<ProbeResult> probe_kernels_avx512(const ProbeAtoms& atoms, std::int64_t nx, double seconds,
                                             bool tail) {
  using Vec = cpu_fast::avx512::Vec;
  std::vector<ProbeResult> results{
      probe_row<Vec, 2>(atoms, nx, seconds), probe_row<Vec, 4>(atoms, nx, seconds),
      probe_row<Vec, 6>(atoms, nx, seconds), probe_row<Vec, 8>(atoms, nx, seconds)};
  if (tail) results.push_back(probe_tail<Vec>(atoms, seconds));
  return results;
}

}  // namespace dcs::bench
