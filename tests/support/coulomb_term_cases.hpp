// The edge cases of the Coulomb term, written once and run for every way a
// backend evaluates dcs::add_coulomb_term(): double and float on the host (the reference and
// the portable kernel), the FMA-pipe rsqrt's host arithmetic, the CPU SIMD types (AVX2,
// AVX-512) and, on a GPU, MUFU and the FMA-pipe rsqrt in device code
// (tests/unit/coulomb_term_test.cpp, tests/cuda/potential/coulomb_term_test.cu).
//
// An evaluator is a type with
//   static std::string name();
//   static double tolerance();                   relative, against the float64 definition
//   static std::string unavailable();            why it cannot run here; empty when it can
//   static std::vector<double> evaluate(cases);  energy + q/max(r, r_min) for each case, as
//                                                add_coulomb_term computes it (charges passed
//                                                times the policy's kChargeScale)
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace dcs::test {

struct CoulombTermCase {
  const char* what;
  double energy;  ///< added to
  double charge;
  double r2;
  double min_r2;
  double expected;  ///< NaN: the result must be NaN
};

inline const std::vector<CoulombTermCase>& coulomb_term_cases() {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  static const std::vector<CoulombTermCase> cases{
      {"q / r outside r_min", 0.0, 2.0, 4.0, 0.01, 1.0},
      {"adds to the energy", 0.25, 2.0, 4.0, 0.01, 1.25},
      {"odd in q", 0.0, -2.0, 4.0, 0.01, -1.0},
      {"on the atom: q / r_min", 0.0, 2.0, 0.0, 0.01, 20.0},
      {"inside r_min: q / r_min", 0.0, 2.0, 0.0049, 0.01, 20.0},
      {"on r_min", 0.0, -3.0, 0.01, 0.01, -30.0},
      {"just outside r_min", 0.0, 1.0, 0.0101, 0.01, 1.0 / std::sqrt(0.0101)},
      {"negative zero r2 clamps", 0.0, 1.0, -0.0, 0.25, 2.0},
      {"smallest accepted r_min (1e-6 A) on the atom", 0.0, 1.0, 0.0, 1e-12, 1e6},
      {"largest r2 within the limits (1.3e14 A^2)", 0.0, 1.0, 1.3e14, 0.01,
       1.0 / std::sqrt(1.3e14)},
      {"largest accepted charge and potential bound", 0.0, 1e6, 1e-12, 1e-12, 1e12},
      {"r2 in grid units far from 1", -7.5, 0.8, 12345.678, 0.04,
       -7.5 + 0.8 / std::sqrt(12345.678)},
      {"NaN r2 gives NaN, not q / r_min", 0.0, 1.0, nan, 0.01, nan},
      {"NaN r2 below r_min's bits gives NaN", 0.0, -1.0, -nan, 0.01, nan},
      {"NaN charge gives NaN", 0.0, nan, 4.0, 0.01, nan},
      {"NaN energy stays NaN", nan, 1.0, 4.0, 0.01, nan},
  };
  return cases;
}

template <class Evaluator>
class CoulombTermTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string why = Evaluator::unavailable();
    if (!why.empty()) GTEST_SKIP() << Evaluator::name() << ": " << why;
  }
};

TYPED_TEST_SUITE_P(CoulombTermTest);

TYPED_TEST_P(CoulombTermTest, EveryEdgeCaseMatchesTheDefinition) {
  const std::vector<CoulombTermCase>& cases = coulomb_term_cases();
  const std::vector<double> got = TypeParam::evaluate(cases);
  ASSERT_EQ(got.size(), cases.size());
  for (std::size_t n = 0; n < cases.size(); ++n) {
    const CoulombTermCase& c = cases[n];
    SCOPED_TRACE(TypeParam::name() + ": " + c.what);
    if (std::isnan(c.expected)) {
      EXPECT_TRUE(std::isnan(got[n])) << "got " << got[n];
      continue;
    }
    ASSERT_TRUE(std::isfinite(got[n])) << "got " << got[n];
    EXPECT_NEAR(got[n], c.expected, TypeParam::tolerance() * std::fabs(c.expected))
        << "relative error " << std::fabs(got[n] - c.expected) / std::fabs(c.expected);
  }
}

REGISTER_TYPED_TEST_SUITE_P(CoulombTermTest, EveryEdgeCaseMatchesTheDefinition);

/// Cases as float arrays for the float evaluators (charges times `charge_scale`).
struct FloatCases {
  std::vector<float> energy, charge, r2, min_r2;
  explicit FloatCases(const std::vector<CoulombTermCase>& cases, float charge_scale = 1.0f) {
    for (const CoulombTermCase& c : cases) {
      energy.push_back(static_cast<float>(c.energy));
      charge.push_back(static_cast<float>(c.charge) * charge_scale);
      r2.push_back(static_cast<float>(c.r2));
      min_r2.push_back(static_cast<float>(c.min_r2));
    }
  }
};

}  // namespace dcs::test
