// UnitCell: reduced-form vectors reproduce the lengths and angles, the reciprocal is the
// inverse, wrap lands in [0, 1), the minimum image is the shortest of all images (brute force),
// and unusable cells say why.
#include "dcs/unit_cell.hpp"

#include <cmath>
#include <numbers>
#include <random>

#include <gtest/gtest.h>

namespace dcs {
namespace {

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }
double angle_deg(const Vec3& a, const Vec3& b) {
  return std::acos(dot(a, b) / (norm(a) * norm(b))) * 180.0 / std::numbers::pi;
}

// AMBER's truncated octahedron (MDAnalysisTests' parm7 + NetCDF systems use one).
const double kOcta = std::acos(-1.0 / 3.0) * 180.0 / std::numbers::pi;  // 109.4712206...

TEST(UnitCell, DefaultAndZeroBoxAreInfinite) {
  EXPECT_FALSE(UnitCell().is_periodic());
  const UnitCell zero = UnitCell::from_lengths_angles({0, 0, 0}, {90, 90, 90});
  EXPECT_FALSE(zero.is_periodic());
  EXPECT_FALSE(zero.why_unusable());
  EXPECT_EQ(zero.describe(), "no cell");
}

TEST(UnitCell, OrthorhombicIsDiagonal) {
  const UnitCell cell = UnitCell::from_lengths_angles({10, 20, 30}, {90, 90, 90});
  ASSERT_EQ(cell.shape(), UnitCell::Shape::kOrthorhombic);
  EXPECT_EQ(cell.vectors()[1][0], 0.0);
  EXPECT_EQ(cell.vectors()[2][0], 0.0);
  EXPECT_EQ(cell.vectors()[2][1], 0.0);
  EXPECT_DOUBLE_EQ(cell.volume(), 6000.0);
  EXPECT_DOUBLE_EQ(cell.shortest_width(), 10.0);
}

TEST(UnitCell, TriclinicVectorsReproduceLengthsAnglesAndVolume) {
  for (const Vec3 angles : {Vec3{kOcta, kOcta, kOcta}, Vec3{60, 90, 60}, Vec3{80, 100, 115}}) {
    const Vec3 lengths{77.1, 70.3, 81.9};
    const UnitCell cell = UnitCell::from_lengths_angles(lengths, angles);
    ASSERT_EQ(cell.shape(), UnitCell::Shape::kTriclinic) << cell.describe();
    const Mat3& m = cell.vectors();
    EXPECT_EQ(m[0][1], 0.0);  // reduced form
    EXPECT_EQ(m[0][2], 0.0);
    EXPECT_EQ(m[1][2], 0.0);
    EXPECT_GT(m[2][2], 0.0);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(norm(m[i]), lengths[i], 1e-10);
    EXPECT_NEAR(angle_deg(m[1], m[2]), angles[0], 1e-9);
    EXPECT_NEAR(angle_deg(m[0], m[2]), angles[1], 1e-9);
    EXPECT_NEAR(angle_deg(m[0], m[1]), angles[2], 1e-9);
    const double ca = std::cos(angles[0] * std::numbers::pi / 180);
    const double cb = std::cos(angles[1] * std::numbers::pi / 180);
    const double cg = std::cos(angles[2] * std::numbers::pi / 180);
    const double volume = lengths[0] * lengths[1] * lengths[2] *
                          std::sqrt(1 - ca * ca - cb * cb - cg * cg + 2 * ca * cb * cg);
    EXPECT_NEAR(cell.volume(), volume, 1e-9 * volume);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        EXPECT_NEAR(dot(m[i], cell.reciprocal()[j]), i == j ? 1.0 : 0.0, 1e-14);
  }
}

TEST(UnitCell, TruncatedOctahedronWidthAndVolume) {
  // The parallelepiped of three lattice vectors of length a at 109.47° to each other: the
  // spacing of the (b, c) planes is V / |b × c| = a·√(2/3), the volume 4a³/(3√3).
  const double a = 77.1;
  const UnitCell cell = UnitCell::from_lengths_angles({a, a, a}, {kOcta, kOcta, kOcta});
  EXPECT_NEAR(cell.shortest_width(), a * std::sqrt(2.0 / 3.0), 1e-9);
  EXPECT_NEAR(cell.volume(), a * a * a * 4.0 / (3.0 * std::sqrt(3.0)), 1e-6);
}

TEST(UnitCell, WrapLandsInsideAndMovesByLatticeVectors) {
  const UnitCell cell = UnitCell::from_lengths_angles({30, 35, 40}, {70, 100, 115});
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> coordinate(-500.0, 500.0);
  for (int n = 0; n < 2000; ++n) {
    const Vec3 r{coordinate(random), coordinate(random), coordinate(random)};
    const Vec3 w = cell.wrap(r);
    const Vec3 s = cell.to_fractional(w);
    for (int i = 0; i < 3; ++i) {
      EXPECT_GE(s[i], 0.0);
      EXPECT_LT(s[i], 1.0);
    }
    const Vec3 shift = cell.to_fractional(Vec3{w[0] - r[0], w[1] - r[1], w[2] - r[2]});
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(shift[i], std::round(shift[i]), 1e-9);
  }
}

TEST(UnitCell, MinimumImageIsTheShortestImage) {
  for (const Vec3 angles : {Vec3{90, 90, 90}, Vec3{kOcta, kOcta, kOcta}, Vec3{60, 60, 90}}) {
    const UnitCell cell = UnitCell::from_lengths_angles({40, 40, 40}, angles);
    std::mt19937_64 random(11);
    std::uniform_real_distribution<double> coordinate(-150.0, 150.0);
    for (int n = 0; n < 500; ++n) {
      const Vec3 d{coordinate(random), coordinate(random), coordinate(random)};
      // Every image within 4 cells of the fractional rounding.
      const Vec3 s = cell.to_fractional(d);
      double best = 1e300;
      for (int i = -4; i <= 4; ++i)
        for (int j = -4; j <= 4; ++j)
          for (int k = -4; k <= 4; ++k) {
            const Vec3 lattice{i - std::round(s[0]), j - std::round(s[1]), k - std::round(s[2])};
            const Vec3 shift = cell.to_cartesian(lattice);
            best = std::min(best, norm(Vec3{d[0] + shift[0], d[1] + shift[1], d[2] + shift[2]}));
          }
      EXPECT_NEAR(norm(cell.minimum_image(d)), best, 1e-9) << cell.describe();
    }
  }
}

TEST(UnitCell, UnusableCellsSayWhy) {
  const UnitCell flat = UnitCell::from_lengths_angles({10, 10, 10}, {10, 10, 170});
  EXPECT_FALSE(flat.is_periodic());
  ASSERT_TRUE(flat.why_unusable());
  EXPECT_NE(flat.why_unusable()->find("positive volume"), std::string::npos);
  const UnitCell negative = UnitCell::from_lengths_angles({10, -1, 10}, {90, 90, 90});
  ASSERT_TRUE(negative.why_unusable());
  EXPECT_NE(negative.why_unusable()->find("not positive"), std::string::npos);
  const UnitCell nan = UnitCell::from_lengths_angles({10, NAN, 10}, {90, 90, 90});
  ASSERT_TRUE(nan.why_unusable());
  const UnitCell angle = UnitCell::from_lengths_angles({10, 10, 10}, {90, 180, 90});
  ASSERT_TRUE(angle.why_unusable());
}

}  // namespace
}  // namespace dcs
