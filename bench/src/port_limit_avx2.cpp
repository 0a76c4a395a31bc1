// The port-limit microbenchmarks on AVX2 + FMA: compiled with -mavx2 -mfma (bench/CMakeLists.txt).
#include "port_limit_kernel.hpp"
#include "simd_avx2.hpp"

namespace dcs::bench {
using Vec = cpu_fast::avx2::Vec;
PortRates measure_port_rates_avx2(double seconds) { return measure_port_rates<Vec>(seconds); }
double measure_mix_pairs_avx2(double seconds) { return measure_mix_pairs<Vec>(seconds); }
double measure_model_mix_avx2(PairKind kind, bool points, double seconds) {
  return measure_model_mix<Vec>(kind, points, seconds);
}
}  // namespace dcs::bench
