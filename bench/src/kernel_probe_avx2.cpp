// kernel_probe.hpp on AVX2 + FMA: compiled with -mavx2 -mfma (bench/CMakeLists.txt).
#include "kernel_probe.hpp"
#include "simd_avx2.hpp"

namespace dcs::bench {

std::vector<ProbeResult> probe_kernels_avx2(const ProbeAtoms& atoms, std::int64_t nx, double seconds,
                                           bool tail) {
  using Vec = cpu_fast::avx2::Vec;
  std::vector<ProbeResult> results{
      probe_row<Vec, 2>(atoms, nx, seconds), probe_row<Vec, 3>(atoms, nx, seconds),
      probe_row<Vec, 4>(atoms, nx, seconds), probe_row<Vec, 6>(atoms, nx, seconds),
      probe_row<Vec, 8>(atoms, nx, seconds)};
  if (tail) results.push_back(probe_tail<Vec>(atoms, seconds));
  return results;
}

}  // namespace dcs::bench
