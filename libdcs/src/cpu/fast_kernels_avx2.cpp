// The fast backend's AVX2 + FMA kernel: row_kernel.hpp on 8 lanes, vrsqrtps (12 bits) refined
// by one Newton step (dcs::NewtonRsqrt). Compiled with -mavx2 -mfma (libdcs/CMakeLists.txt);
// fast_backend.cpp calls it only where cpuid reports AVX2 and FMA. 4 vectors (32 x-points) per
// block: enough independent sums to hide the FMA latency, few enough that short rows waste
// little.
#include "points_kernel.hpp"
#include "simd_avx2.hpp"

namespace dcs::cpu_fast {

IsaKernels avx2_kernels() { return make_isa_kernels<avx2::Vec, 4, 4, NewtonRsqrt>(); }

}  // namespace dcs::cpu_fast
