// add_coulomb_terms_avx2: compiled with -mavx2 -mfma (tests/unit/CMakeLists.txt).
#include "coulomb_term_simd.hpp"
#include "dcs/physics.hpp"
#include "simd_avx2.hpp"

namespace dcs::test {

void add_coulomb_terms_avx2(const float* energy, const float* charge, const float* r2,
                            const float* min_r2, float* out, std::size_t n) {
  add_coulomb_terms<cpu_fast::avx2::Vec, NewtonRsqrt>(energy, charge, r2, min_r2, out, n);
}

}  // namespace dcs::test
