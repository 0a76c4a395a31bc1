// Least-squares superposition (dcs/superpose.hpp) against known answers, and noisy fits against
// an SVD-free optimality certificate.
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/superpose.hpp"

namespace {

using dcs::RigidFit;
using dcs::Vec3;
using Mat3 = std::array<std::array<double, 3>, 3>;

Mat3 multiply(const Mat3& a, const Mat3& b) {
  Mat3 c{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}

Mat3 transpose(const Mat3& a) {
  Mat3 t{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) t[i][j] = a[j][i];
  return t;
}

double det(const Mat3& a) {
  return a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
         a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
         a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
}

// Rotation by `angle` about the unit vector along `axis` (Rodrigues).
Mat3 axis_angle(Vec3 axis, double angle) {
  const double n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  for (double& a : axis) a /= n;
  const double c = std::cos(angle), s = std::sin(angle), t = 1 - c;
  const double x = axis[0], y = axis[1], z = axis[2];
  return {{{t * x * x + c, t * x * y - s * z, t * x * z + s * y},
           {t * x * y + s * z, t * y * y + c, t * y * z - s * x},
           {t * x * z - s * y, t * y * z + s * x, t * z * z + c}}};
}

Vec3 apply(const Mat3& r, const Vec3& x, const Vec3& shift) {
  Vec3 y{};
  for (int i = 0; i < 3; ++i) y[i] = r[i][0] * x[0] + r[i][1] * x[1] + r[i][2] * x[2] + shift[i];
  return y;
}

std::vector<Vec3> random_cloud(std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-15.0, 15.0);
  std::vector<Vec3> points(n);
  for (Vec3& p : points) p = {u(rng), u(rng), u(rng)};
  return points;
}

void expect_proper_rotation(const RigidFit& fit, double tol = 1e-12) {
  const Mat3 rtr = multiply(transpose(fit.rotation), fit.rotation);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(rtr[i][j], i == j ? 1.0 : 0.0, tol);
  EXPECT_NEAR(det(fit.rotation), 1.0, tol);
  for (const auto& row : fit.rotation)
    for (double v : row) EXPECT_TRUE(std::isfinite(v));
  EXPECT_TRUE(std::isfinite(fit.rmsd));
}

TEST(LeastSquaresFit, RecoversARotationAndTranslationOfARandomCloud) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const std::vector<Vec3> mobile = random_cloud(50, seed);
    const Mat3 r = axis_angle({0.3 * seed, -1.0, 0.5}, 0.3 * seed);  // angles up to 6 rad
    const Vec3 shift{3.0, -7.5, 12.25};
    std::vector<Vec3> reference;
    for (const Vec3& p : mobile) reference.push_back(apply(r, p, shift));
    const RigidFit fit = dcs::least_squares_fit(mobile, reference);
    expect_proper_rotation(fit);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(fit.rotation[i][j], r[i][j], 1e-12) << seed;
    EXPECT_LT(fit.rmsd, 1e-12);
    for (std::size_t k = 0; k < mobile.size(); ++k)
      for (int a = 0; a < 3; ++a) EXPECT_NEAR(fit.apply(mobile[k])[a], reference[k][a], 1e-11);
  }
}

TEST(LeastSquaresFit, HalfTurnsAreRecovered) {
  // 180 degrees: the quaternion's scalar part is 0, where naive formulas lose precision.
  const std::vector<Vec3> mobile = random_cloud(30, 99);
  for (const Vec3& axis : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}, Vec3{1, 1, 1}}) {
    const Mat3 r = axis_angle(axis, M_PI);
    std::vector<Vec3> reference;
    for (const Vec3& p : mobile) reference.push_back(apply(r, p, {0, 0, 0}));
    const RigidFit fit = dcs::least_squares_fit(mobile, reference);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(fit.rotation[i][j], r[i][j], 1e-12);
  }
}

TEST(LeastSquaresFit, AMirrorImageGetsAProperRotationNotAReflection) {
  const std::vector<Vec3> mobile = random_cloud(40, 7);
  std::vector<Vec3> reference;
  for (const Vec3& p : mobile) reference.push_back({-p[0], p[1], p[2]});
  const RigidFit fit = dcs::least_squares_fit(mobile, reference);
  expect_proper_rotation(fit);
  EXPECT_GT(fit.rmsd, 1.0);  // a reflection would fit exactly
}

TEST(LeastSquaresFit, OnePointIsATranslation) {
  const RigidFit fit = dcs::least_squares_fit({{1, 2, 3}}, {{-4, 5, 0.5}});
  expect_proper_rotation(fit);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(fit.rotation[i][j], i == j ? 1.0 : 0.0);
  EXPECT_EQ(fit.rmsd, 0.0);
  const Vec3 moved = fit.apply({2, 2, 3});
  EXPECT_DOUBLE_EQ(moved[0], -3.0);
  EXPECT_DOUBLE_EQ(moved[1], 5.0);
  EXPECT_DOUBLE_EQ(moved[2], 0.5);
}

TEST(LeastSquaresFit, CollinearAndCoincidentPointsGiveAFiniteExactFit) {
  // Two points, and five on a line, rotated: any rotation about the line fits, one is chosen.
  const Mat3 r = axis_angle({1, 2, 3}, 1.1);
  for (std::size_t n : {2u, 5u}) {
    std::vector<Vec3> mobile, reference;
    for (std::size_t k = 0; k < n; ++k) {
      const double t = static_cast<double>(k) * 1.5 - 2.0;
      mobile.push_back({t, 2 * t + 1, -t});
      reference.push_back(apply(r, mobile.back(), {1, 1, 1}));
    }
    const RigidFit fit = dcs::least_squares_fit(mobile, reference);
    expect_proper_rotation(fit);
    EXPECT_LT(fit.rmsd, 1e-12) << n;
  }
  // The same line on both sides: the identity is chosen.
  const std::vector<Vec3> line = {{0, 0, 0}, {1, 0, 0}, {3, 0, 0}};
  const RigidFit same = dcs::least_squares_fit(line, line);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_EQ(same.rotation[i][j], i == j ? 1.0 : 0.0);
  // All points coincident.
  const RigidFit point = dcs::least_squares_fit({{1, 1, 1}, {1, 1, 1}}, {{2, 2, 2}, {2, 2, 2}});
  expect_proper_rotation(point);
  EXPECT_EQ(point.rmsd, 0.0);
}

// The optimality certificate of a rotation R for centred points x -> y, free of SVD: with
// C = sum y x^T, R is the global least-squares optimum iff R^T C is symmetric positive
// semidefinite (proper-rotation case, non-degenerate data: positive definite). Checked with
// Sylvester's criterion. Plus: no small rotation applied after R lowers the RMSD.
TEST(LeastSquaresFit, NoisyFitsPassAnIndependentOptimalityCheck) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    const std::vector<Vec3> mobile = random_cloud(60, seed + 100);
    const Mat3 r = axis_angle({1.0, 0.2 * seed, -0.7}, 0.5 * seed);
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0.0, 0.8);
    std::vector<Vec3> reference;
    for (const Vec3& p : mobile) {
      Vec3 y = apply(r, p, {-2, 4, 1});
      for (double& c : y) c += noise(rng);
      reference.push_back(y);
    }
    const RigidFit fit = dcs::least_squares_fit(mobile, reference);
    expect_proper_rotation(fit);
    Mat3 c{};
    for (std::size_t k = 0; k < mobile.size(); ++k)
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          c[i][j] += (reference[k][i] - fit.to_centre[i]) * (mobile[k][j] - fit.from_centre[j]);
    const Mat3 a = multiply(transpose(fit.rotation), c);
    const double scale = std::fabs(a[0][0]) + std::fabs(a[1][1]) + std::fabs(a[2][2]);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) EXPECT_NEAR(a[i][j], a[j][i], 1e-12 * scale) << seed;
    EXPECT_GT(a[0][0], 0.0);
    EXPECT_GT(a[0][0] * a[1][1] - a[0][1] * a[1][0], 0.0);
    EXPECT_GT(det(a), 0.0);

    auto rmsd_with = [&](const Mat3& rot) {
      double sum = 0.0;
      for (std::size_t k = 0; k < mobile.size(); ++k) {
        Vec3 d{};
        for (int i = 0; i < 3; ++i) d[i] = mobile[k][i] - fit.from_centre[i];
        const Vec3 y = apply(rot, d, fit.to_centre);
        for (int i = 0; i < 3; ++i) sum += (y[i] - reference[k][i]) * (y[i] - reference[k][i]);
      }
      return std::sqrt(sum / static_cast<double>(mobile.size()));
    };
    EXPECT_NEAR(rmsd_with(fit.rotation), fit.rmsd, 1e-12);
    for (const Vec3& axis : {Vec3{1, 0, 0}, Vec3{0, 1, 0}, Vec3{0, 0, 1}, Vec3{1, -1, 2}})
      for (double angle : {-1e-3, 1e-3})
        EXPECT_GT(rmsd_with(multiply(axis_angle(axis, angle), fit.rotation)), fit.rmsd);
    EXPECT_GT(fit.rmsd, 0.5);
    EXPECT_LT(fit.rmsd, 2.0);
  }
}

TEST(LeastSquaresFit, RefusesEmptyUnequalAndNonFiniteSets) {
  EXPECT_THROW(dcs::least_squares_fit({}, {}), dcs::UsageError);
  EXPECT_THROW(dcs::least_squares_fit({{0, 0, 0}}, {{0, 0, 0}, {1, 1, 1}}), dcs::UsageError);
  EXPECT_THROW(dcs::least_squares_fit({{NAN, 0, 0}}, {{0, 0, 0}}), dcs::UsageError);
}

TEST(PrincipalSpreads, AreTheRmsExtentsAlongThePrincipalAxes) {
  // Points at +-a along one axis, +-b along another, rotated and shifted: RMS a/sqrt(2), ...
  const Mat3 r = axis_angle({1, -2, 0.5}, 0.7);
  std::vector<Vec3> points;
  for (const Vec3& p : {Vec3{3, 0, 0}, Vec3{-3, 0, 0}, Vec3{0, 1, 0}, Vec3{0, -1, 0}})
    points.push_back(apply(r, p, {10, -20, 30}));
  const std::array<double, 3> s = dcs::principal_spreads(points);
  EXPECT_NEAR(s[0], std::sqrt(18.0 / 4), 1e-12);
  EXPECT_NEAR(s[1], std::sqrt(2.0 / 4), 1e-12);
  EXPECT_NEAR(s[2], 0.0, 1e-7);
  EXPECT_EQ(dcs::principal_spreads({}), (std::array<double, 3>{0, 0, 0}));
}

TEST(OnOneLine, CollinearAndCoincidentPointsAreRecognisedBentOnesAreNot) {
  const Mat3 r = axis_angle({0.3, 1, -1}, 2.0);
  const auto three = [&](double offset, double scale) {
    std::vector<Vec3> points;
    for (const Vec3& p : {Vec3{-1.5, 0, 0}, Vec3{0, offset, 0}, Vec3{1.5, 0, 0}})
      points.push_back(apply(r, {p[0] * scale, p[1] * scale, 0}, {40, 50, -60}));
    return points;
  };
  EXPECT_TRUE(dcs::on_one_line(three(0.0, 1.0)));  // the case: exactly collinear
  EXPECT_TRUE(dcs::on_one_line(three(1e-4, 1.0)));
  EXPECT_TRUE(dcs::on_one_line(three(0.01, 1.0)));   // 0.0047 Å off the line: < 0.01 Å
  EXPECT_FALSE(dcs::on_one_line(three(0.03, 1.0)));  // 0.014 Å off, bent 2.3 degrees
  EXPECT_FALSE(dcs::on_one_line(three(0.5, 1.0)));   // a water-like bend
  EXPECT_TRUE(dcs::on_one_line(three(0.002, 100)));  // 0.09 Å off, < 1/1000 of 122 Å spread
  EXPECT_FALSE(dcs::on_one_line(three(0.03, 100)));  // 1.4 Å off it
  EXPECT_TRUE(dcs::on_one_line({{1, 2, 3}, {1, 2, 3}, {1, 2, 3}}));  // coincident
  EXPECT_TRUE(dcs::on_one_line({{1, 2, 3}, {4, 5, 6}}));             // two points
  EXPECT_FALSE(dcs::on_one_line(random_cloud(10, 3)));
  // Planar sets fix the rotation: not refused.
  EXPECT_FALSE(dcs::on_one_line({{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}));
}

}  // namespace
