// Lane-wise dcs::add_coulomb_term over arrays with the fast backend's SIMD types, for the
// edge-case test (coulomb_term_test.cpp). Each function is defined in a translation unit
// compiled for its instruction set (coulomb_term_avx2.cpp, coulomb_term_avx512.cpp) that holds
// nothing else, so no code built for AVX-512 can stand in for baseline code; call them only
// where dcs::cpu_fast::isa_supported() says so. n may be any count (tails padded).
#pragma once

#include <cstddef>

namespace dcs::test {

void add_coulomb_terms_avx2(const float* energy, const float* charge, const float* r2,
                            const float* min_r2, float* out, std::size_t n);
void add_coulomb_terms_avx512(const float* energy, const float* charge, const float* r2,
                              const float* min_r2, float* out, std::size_t n);

/// The body both use: Vec lanes at a time, the tail through a padded copy.
template <class Vec, class Rsqrt>
void add_coulomb_terms(const float* energy, const float* charge, const float* r2,
                       const float* min_r2, float* out, std::size_t n) {
  constexpr std::size_t kLanes = Vec::kLanes;
  for (std::size_t begin = 0; begin < n; begin += kLanes) {
    float e[kLanes], q[kLanes], x[kLanes], m[kLanes], result[kLanes];
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      const std::size_t i = begin + lane < n ? begin + lane : n - 1;
      e[lane] = energy[i];
      q[lane] = charge[i];
      x[lane] = r2[i];
      m[lane] = min_r2[i];
    }
    Vec ve = Vec::load(e), vq = Vec::load(q), vx = Vec::load(x), vm = Vec::load(m);
    Vec::store(result, add_coulomb_term(ve, vq, vx, vm, Rsqrt{}));
    for (std::size_t lane = 0; lane < kLanes && begin + lane < n; ++lane)
      out[begin + lane] = result[lane];
  }
}

}  // namespace dcs::test
