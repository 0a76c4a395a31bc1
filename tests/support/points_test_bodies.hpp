// The points tests (PotentialBackend::compute_points: --points, meshes, --at-atoms), written once
// like backend_test_bodies.hpp and run for every BackendCase of a test binary:
//   INSTANTIATE_TEST_SUITE_P(Name, PointsTest, ::testing::ValuesIn(cases), backend_case_name);
// Analytic single charges under every model, the skipped atom, a real molecule at its own atoms
// and around them against the float64 reference, far-from-origin precision, and the contract
// that a value depends only on its point, skip and block (never on how the list is split).
// Include after (or instead of) backend_test_bodies.hpp, in one file per test binary.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_test_bodies.hpp"

namespace dcs::test {

class PointsTest : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    const std::string why = GetParam().unavailable ? GetParam().unavailable() : std::string();
    if (!why.empty()) GTEST_SKIP() << GetParam().label << ": " << why;
    if (!GetParam().points) GTEST_SKIP() << GetParam().label << ": computes grids only";
    BackendOptions options;
    options.kernel = GetParam().kernel;
    options.debug_sync = true;
    backend_ = GetParam().create(options);
  }

  std::vector<float> compute(const System& system, const Physics& physics,
                             const std::vector<Vec3>& points,
                             const std::vector<std::uint32_t>& skip = {}) {
    backend_->prepare_points(system, physics);
    std::vector<float> out(points.size(), std::numeric_limits<float>::quiet_NaN());
    backend_->compute_points(points.data(), skip.empty() ? nullptr : skip.data(), points.size(),
                             out.data());
    return out;
  }

  /// The float64 reference (reference_potential leaves nothing out: skips are applied by
  /// subtracting nothing; points with a skip are checked against a system without that atom).
  static std::vector<double> reference(const System& system, const Physics& physics,
                                       const std::vector<Vec3>& points,
                                       const std::vector<std::uint32_t>& skip = {}) {
    std::vector<double> out(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!skip.empty() && skip[i] != kNoAtom) {
        System without = system;
        without.atoms.erase(without.atoms.begin() + skip[i]);
        reference_potential(without, physics, &points[i], 1, &out[i], 1);
      } else {
        reference_potential(system, physics, &points[i], 1, &out[i], 1);
      }
    }
    return out;
  }

  std::unique_ptr<PotentialBackend> backend_;
};

/// Points scattered in a box around `centre` (fixed seed), a few of them on atoms' positions.
inline std::vector<Vec3> scattered_points(std::size_t n, const Vec3& centre, double half,
                                          std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-half, half);
  std::vector<Vec3> points(n);
  for (Vec3& p : points) p = {centre[0] + u(rng), centre[1] + u(rng), centre[2] + u(rng)};
  return points;
}

TEST_P(PointsTest, OneChargeUnderEveryModelMatchesTheAnalyticForm) {
  const System system = make_system({make_atom(0.31, -0.17, 0.23, -1.5)});
  std::vector<Vec3> points = scattered_points(3000, {0.31, -0.17, 0.23}, 9.0, 11);
  points.push_back({0.31, -0.17, 0.23});  // on the atom: clamped at r_min
  points.push_back({0.36, -0.17, 0.23});  // inside r_min
  for (auto [label, physics] : model_physics()) {
    SCOPED_TRACE(label);
    const std::vector<float> got = compute(system, physics, points);
    const double lambda = debye_length(physics);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const Vec3& p = points[i];
      const double r =
          std::max(std::hypot(p[0] - 0.31, p[1] + 0.17, p[2] - 0.23), physics.min_distance);
      double g = 1.0 / r, condition = 1.0;
      if (physics.dielectric_model == DielectricModel::kDistance) {
        g = 1.0 / (r * r);
        condition = 2.0;
      } else if (physics.ionic_strength > 0.0) {
        g = std::exp(-r / lambda) / r;
        condition = 1.0 + r / lambda;
      }
      const double exact = -1.5 * coulomb_factor(physics) * g;
      ASSERT_LE(std::fabs(got[i] - exact),
                GetParam().point_tolerance * condition * std::fabs(exact))
          << "point " << i << " at r = " << r << ": " << got[i] << " vs " << exact;
    }
  }
}

TEST_P(PointsTest, TheSkippedAtomIsLeftOutAndOnlyIt) {
  // Two atoms; at each atom's own position with itself skipped, the value is the other's term;
  // unskipped, the point on the atom takes the clamped q/r_min as on the grid.
  const System system =
      make_system({make_atom(1.0, 2.0, 3.0, 0.8), make_atom(2.5, 2.0, 3.0, -0.6)});
  const Physics physics;
  const std::vector<Vec3> points = {{1.0, 2.0, 3.0}, {2.5, 2.0, 3.0}, {1.0, 2.0, 3.0}};
  const std::vector<std::uint32_t> skip = {0, 1, kNoAtom};
  const std::vector<float> got = compute(system, physics, points, skip);
  const double c = coulomb_factor(physics);
  EXPECT_NEAR(got[0], c * -0.6 / 1.5, 1e-6 * c);
  EXPECT_NEAR(got[1], c * 0.8 / 1.5, 1e-6 * c);
  EXPECT_NEAR(got[2], c * (0.8 / 0.1 - 0.6 / 1.5), 1e-5 * c);
}

TEST_P(PointsTest, MoleculeAtItsAtomsAndAroundMatchesReferenceUnderEveryModel) {
  // A real molecule (Debian apbs-data): --at-atoms (each atom skipped at its own position) and
  // points around it, some within tenths of an Å of atoms; far from the coordinate origin too.
  System system;
  if (!BackendTest::load_apbs("examples/hca-bind/hca.pqr", system))
    GTEST_SKIP() << "apbs-data not installed under " << apbs_data_dir();
  std::vector<Vec3> points;
  std::vector<std::uint32_t> skip;
  for (std::size_t a = 0; a < system.atoms.size(); a += 7) {  // every 7th atom, skipping itself
    points.push_back(system.atoms[a].position);
    skip.push_back(static_cast<std::uint32_t>(a));
  }
  std::mt19937 rng(5);
  std::normal_distribution<double> jitter(0.0, 0.4);
  for (std::size_t a = 3; a < system.atoms.size(); a += 11) {  // near atoms
    const Vec3& p = system.atoms[a].position;
    points.push_back({p[0] + jitter(rng), p[1] + jitter(rng), p[2] + jitter(rng)});
    skip.push_back(kNoAtom);
  }
  for (auto [label, physics] : model_physics()) {
    SCOPED_TRACE(label);
    const std::vector<float> got = compute(system, physics, points, skip);
    const std::vector<double> want = reference(system, physics, points, skip);
    double max_ref = 0.0, max_err = 0.0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i])) << "point " << i;
      max_ref = std::max(max_ref, std::fabs(want[i]));
      max_err = std::max(max_err, std::fabs(got[i] - want[i]));
    }
    std::printf("[ measured ] %s points %s: max error %.3g of max|V| %.4g = %.3g\n",
                GetParam().label.c_str(), label.c_str(), max_err, max_ref, max_err / max_ref);
    EXPECT_LE(max_err, GetParam().map_tolerance * max_ref);
  }
}

TEST_P(PointsTest, FarFromTheOriginNearAtomsStaysPrecise) {
  // A crystal-frame molecule 5000 Å out: points 0.2-1 Å from atoms need offsets formed without
  // large float operands.
  const System system = protein_like_system(600, 77, {5000.0, -4000.0, 3000.0});
  std::vector<Vec3> points;
  std::mt19937 rng(9);
  std::uniform_real_distribution<double> d(0.2, 1.0);
  for (std::size_t a = 0; a < system.atoms.size(); a += 3) {
    const Vec3& p = system.atoms[a].position;
    points.push_back({p[0] + d(rng), p[1] - d(rng), p[2] + d(rng)});
  }
  const Physics physics;
  const std::vector<float> got = compute(system, physics, points);
  const std::vector<double> want = reference(system, physics, points);
  double max_ref = 0.0, max_err = 0.0;
  for (std::size_t i = 0; i < points.size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(want[i]));
    max_err = std::max(max_err, std::fabs(got[i] - want[i]));
  }
  EXPECT_LE(max_err, GetParam().map_tolerance * max_ref) << max_err / max_ref;
}

TEST_P(PointsTest, ValuesDoNotDependOnHowTheListIsSplit) {
  // One call over the whole list, then the list's blocks in reverse order, one call per block
  // (as several devices or ranks would take them): the same bits.
  const System system = protein_like_system(5000, 3);  // two atom chunks
  std::vector<Vec3> points = scattered_points(7 * 1024 + 333, {0, 0, 0}, 20.0, 4);
  const Physics physics;
  const std::vector<float> whole = compute(system, physics, points);
  const std::size_t block = std::max<std::size_t>(1, backend_->points_hint().block);
  std::vector<float> split(points.size(), std::numeric_limits<float>::quiet_NaN());
  const std::size_t blocks = (points.size() + block - 1) / block;
  for (std::size_t b = blocks; b-- > 0;) {
    const std::size_t begin = b * block;
    const std::size_t count = std::min(block, points.size() - begin);
    backend_->compute_points(points.data() + begin, nullptr, count, split.data() + begin);
  }
  for (std::size_t i = 0; i < points.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint32_t>(whole[i]), std::bit_cast<std::uint32_t>(split[i]))
        << "point " << i << ": " << whole[i] << " vs " << split[i];
}

TEST_P(PointsTest, NanPointsGiveNanAndEmptyCallsDoNothing) {
  const System system = make_system({make_atom(0.0, 0.0, 0.0, 1.0)});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<float> got = compute(system, Physics{}, {{1.0, 0.0, 0.0}, {nan, 0.0, 0.0}});
  EXPECT_TRUE(std::isfinite(got[0]));
  EXPECT_TRUE(std::isnan(got[1]));
  backend_->compute_points(nullptr, nullptr, 0, nullptr);
}

TEST_P(PointsTest, ComputeBeforePrepareIsRefused) {
  const Vec3 p{0.0, 0.0, 0.0};
  float out = 0.0f;
  EXPECT_THROW(backend_->compute_points(&p, nullptr, 1, &out), UsageError);
}

}  // namespace dcs::test
