// The port-limit microbenchmarks on AVX2 + FMA: compiled with -mavx2 -mfma (bench/CMakeLists.txt).
#include "port_limit_kernel.hpp"
#include "simd_avx2.hpp"

namespace dcs::bench {
PortLimitProbe port_limit_probe_avx2() { return probe_of<cpu_fast::avx2::Vec>(); }
}  // namespace dcs::bench
