// The Coulomb term's edge cases (tests/support/coulomb_term_cases.hpp) for every host
// evaluation of dcs::add_coulomb_term(): the reference's double, the portable kernel's float
// and scalar vector, the FMA-pipe rsqrt's arithmetic on the host, and the AVX2 and AVX-512
// types of the fast backend (skipped where the CPU lacks them). The GPU runs the same cases in
// tests/cuda/potential/coulomb_term_test.cu.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "coulomb_term_cases.hpp"
#include "coulomb_term_simd.hpp"
#include "dcs/physics.hpp"
#include "fast_kernels.hpp"
#include "simd_scalar.hpp"

namespace dcs::test {
namespace {

template <class Real, class Rsqrt>
struct HostEvaluator {
  static std::string name() {
    return std::string(sizeof(Real) == 8 ? "double" : "float") +
           (std::is_same_v<Rsqrt, FmaPipeRsqrt> ? " FmaPipeRsqrt" : " HardwareRsqrt");
  }
  /// Correctly rounded 1/sqrt: a few ulp of float; the FMA-pipe cubic: 1.1e-6 measured.
  static double tolerance() {
    if constexpr (sizeof(Real) == 8) return 1e-15;
    return std::is_same_v<Rsqrt, FmaPipeRsqrt> ? 2e-6 : 4e-7;
  }
  static std::string unavailable() { return {}; }
  static std::vector<double> evaluate(const std::vector<CoulombTermCase>& cases) {
    std::vector<double> out;
    for (const CoulombTermCase& c : cases)
      out.push_back(static_cast<double>(add_coulomb_term(
          static_cast<Real>(c.energy), static_cast<Real>(c.charge) * Real(Rsqrt::kChargeScale),
          static_cast<Real>(c.r2), static_cast<Real>(c.min_r2), Rsqrt{})));
    return out;
  }
};

struct ScalarVecEvaluator {
  static std::string name() { return "cpu_fast::scalar::Vec HardwareRsqrt"; }
  static double tolerance() { return 4e-7; }
  static std::string unavailable() { return {}; }
  static std::vector<double> evaluate(const std::vector<CoulombTermCase>& cases) {
    using cpu_fast::scalar::Vec;
    const FloatCases f(cases);
    std::vector<double> out;
    for (std::size_t n = 0; n < cases.size(); ++n)
      out.push_back(add_coulomb_term(Vec{f.energy[n]}, Vec{f.charge[n]}, Vec{f.r2[n]},
                                     Vec{f.min_r2[n]}, HardwareRsqrt{})
                        .v);
    return out;
  }
};

/// The SIMD types with the fast backend's policy, dcs::NewtonRsqrt (estimate + one Newton
/// step: a few ulp).
template <cpu_fast::Isa kIsa>
struct SimdEvaluator {
  static std::string name() { return std::string(cpu_fast::isa_name(kIsa)) + " NewtonRsqrt"; }
  static double tolerance() { return 6e-7; }
  static std::string unavailable() {
    return cpu_fast::isa_supported(kIsa) ? std::string() : "this CPU lacks the instruction set";
  }
  static std::vector<double> evaluate(const std::vector<CoulombTermCase>& cases) {
    const FloatCases f(cases, NewtonRsqrt::kChargeScale);
    std::vector<float> out(cases.size());
    auto* terms =
        kIsa == cpu_fast::Isa::Avx512 ? &add_coulomb_terms_avx512 : &add_coulomb_terms_avx2;
    terms(f.energy.data(), f.charge.data(), f.r2.data(), f.min_r2.data(), out.data(), out.size());
    return {out.begin(), out.end()};
  }
};

#if defined(__x86_64__) || defined(__i386__)
using HostEvaluators =
    ::testing::Types<HostEvaluator<double, HardwareRsqrt>, HostEvaluator<float, HardwareRsqrt>,
                     HostEvaluator<float, FmaPipeRsqrt>, ScalarVecEvaluator,
                     SimdEvaluator<cpu_fast::Isa::Avx2>, SimdEvaluator<cpu_fast::Isa::Avx512>>;
#else
using HostEvaluators =
    ::testing::Types<HostEvaluator<double, HardwareRsqrt>, HostEvaluator<float, HardwareRsqrt>,
                     HostEvaluator<float, FmaPipeRsqrt>, ScalarVecEvaluator>;
#endif
INSTANTIATE_TYPED_TEST_SUITE_P(Host, CoulombTermTest, HostEvaluators);

}  // namespace
}  // namespace dcs::test
