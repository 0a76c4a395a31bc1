// The port-limit microbenchmarks on AVX-512F: compiled with -mavx512f (bench/CMakeLists.txt).
#include "port_limit_kernel.hpp"
#include "simd_avx512.hpp"

namespace dcs::bench {
using Vec = cpu_fast::avx512::Vec;
PortRates measure_port_rates_avx512(double seconds) { return measure_port_rates<Vec>(seconds); }
double measure_mix_pairs_avx512(double seconds) { return measure_mix_pairs<Vec>(seconds); }
double measure_model_mix_avx512(PairKind kind, bool points, double seconds) {
  return measure_model_mix<Vec>(kind, points, seconds);
}
}  // namespace dcs::bench
