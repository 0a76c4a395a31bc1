// The port-limit microbenchmarks on AVX-512F: compiled with -mavx512f (bench/CMakeLists.txt).
#include "port_limit_kernel.hpp"
#include "simd_avx512.hpp"

namespace dcs::bench {
PortLimitProbe port_limit_probe_avx512() { return probe_of<cpu_fast::avx512::Vec>(); }
}  // namespace dcs::bench
