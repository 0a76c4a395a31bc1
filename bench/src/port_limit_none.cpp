// Non-x86 builds: no AVX kernels, so no AVX port limit to measure (isa_supported() is false):
// every measurement is 0.
#include "port_limit.hpp"

namespace dcs::bench {
namespace {
PortLimitProbe no_probe() {
  return {[](double) { return PortRates{}; }, [](double) { return 0.0; },
          [](PairKind, bool, double) { return 0.0; }};
}
}  // namespace

PortLimitProbe port_limit_probe_avx2() { return no_probe(); }
PortLimitProbe port_limit_probe_avx512() { return no_probe(); }

}  // namespace dcs::bench
