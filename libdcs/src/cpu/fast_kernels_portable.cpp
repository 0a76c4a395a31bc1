// The fast backend's portable kernel: row_kernel.hpp on one float lane with the correctly
// rounded 1/sqrt of dcs::HardwareRsqrt, compiled for the baseline instruction set. 16 x-points
// per block keep 16 independent sums in flight (the compiler may vectorise across them).
#include "points_kernel.hpp"
#include "simd_scalar.hpp"

namespace dcs::cpu_fast {

IsaKernels portable_kernels() { return make_isa_kernels<scalar::Vec, 16, 4, HardwareRsqrt>(); }

}  // namespace dcs::cpu_fast
