// The port-limit microbenchmarks on AVX-512F: compiled with -mavx512f (bench/CMakeLists.txt).
#include "port_limit_kernel.hpp"
#include "simd_avx512.hpp"

namespace dcs::bench {

PortRates measure_port_rates_avx512(double seconds) {
  return measure_port_rates<cpu_fast::avx512::Vec>(seconds);
}

double measure_mix_pairs_avx512(double seconds) {
  return mix_rate<cpu_fast::avx512::Vec, kMixChainsOf<cpu_fast::avx512::Vec>>(seconds);
}

}  // namespace dcs::bench
