// The fast backend's AVX-512 kernel: row_kernel.hpp on 16 lanes, vrsqrt14ps (14 bits) refined
// by one Newton step (dcs::NewtonRsqrt), masked stores for the row's tail. Compiled with
// -mavx512f (libdcs/CMakeLists.txt); fast_backend.cpp calls it only where cpuid reports
// AVX-512F. 4 vectors (64 x-points) per block (measured best: bench/results/cpu_2026-11-21.md).
#include "points_kernel.hpp"
#include "simd_avx512.hpp"

namespace dcs::cpu_fast {

IsaKernels avx512_kernels() { return make_isa_kernels<avx512::Vec, 4, 4, NewtonRsqrt>(); }

}  // namespace dcs::cpu_fast
