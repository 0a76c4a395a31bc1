// add_coulomb_terms_avx512: compiled with -mavx512f (tests/unit/CMakeLists.txt).
#include "coulomb_term_simd.hpp"
#include "dcs/physics.hpp"
#include "simd_avx512.hpp"

namespace dcs::test {

void add_coulomb_terms_avx512(const float* energy, const float* charge, const float* r2,
                              const float* min_r2, float* out, std::size_t n) {
  add_coulomb_terms<cpu_fast::avx512::Vec, NewtonRsqrt>(energy, charge, r2, min_r2, out, n);
}

}  // namespace dcs::test
