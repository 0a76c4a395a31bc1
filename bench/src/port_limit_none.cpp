// Non-x86 builds: no AVX kernels, so no AVX port limit to measure (isa_supported() is false).
#include "port_limit.hpp"

namespace dcs::bench {

PortRates measure_port_rates_avx2(double) { return {}; }
PortRates measure_port_rates_avx512(double) { return {}; }
double measure_mix_pairs_avx2(double) { return 0.0; }
double measure_mix_pairs_avx512(double) { return 0.0; }
double measure_model_mix_avx2(PairKind, bool, double) { return 0.0; }
double measure_model_mix_avx512(PairKind, bool, double) { return 0.0; }

}  // namespace dcs::bench
