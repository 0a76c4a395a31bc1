// The port-limit microbenchmarks on AVX2 + FMA: compiled with -mavx2 -mfma (bench/CMakeLists.txt).
#include "port_limit_kernel.hpp"
#include "simd_avx2.hpp"

namespace dcs::bench {

PortRates measure_port_rates_avx2(double seconds) {
  return measure_port_rates<cpu_fast::avx2::Vec>(seconds);
}

double measure_mix_pairs_avx2(double seconds) {
  return mix_rate<cpu_fast::avx2::Vec, kMixChainsOf<cpu_fast::avx2::Vec>>(seconds);
}

}  // namespace dcs::bench
