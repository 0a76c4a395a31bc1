// --profile (dcs/profile.hpp) on fields with known plane means: a linear field along x, y or z,
// planes of constant fractional c on a triclinic cell's grid, a field periodic across the
// planes (mean 0); the axes that are not planes of the grid are refused; the CSV's layout.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/profile.hpp"

namespace dcs {
namespace {

GridSpec box_grid() {
  GridSpec grid;
  grid.counts = {5, 6, 7};
  grid.origin = {-2.0, 1.0, 3.0};
  grid.spacing = {0.5, 1.5, 2.0};
  return grid;
}

/// The values of f at every point of `grid`, x fastest, read back in slabs as a store would.
PlaneReader field(const GridSpec& grid, double (*f)(const Vec3&), std::vector<float>& values) {
  values.clear();
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i)
        values.push_back(static_cast<float>(f(grid.point(i, j, k))));
  return [&grid, &values](const Slab& slab, float* out) {
    const std::size_t plane = grid.plane_points();
    std::copy_n(values.data() + static_cast<std::size_t>(slab.z_begin) * plane,
                static_cast<std::size_t>(slab.z_count) * plane, out);
  };
}

double linear(const Vec3& r) { return 2.0 * r[0] - 0.5 * r[1] + 0.25 * r[2] + 1.0; }

TEST(Profile, ALinearFieldGivesItsLineAlongEachAxis) {
  const GridSpec grid = box_grid();
  std::vector<float> values;
  const PlaneReader read = field(grid, linear, values);
  const UnitCell none;
  // The mean of the other two terms over their planes: their value at the grid's centre.
  const Vec3 centre{grid.origin[0] + 2 * 0.5, grid.origin[1] + 2.5 * 1.5, grid.origin[2] + 3 * 2.0};
  for (ProfileAxis axis : {ProfileAxis::kX, ProfileAxis::kY, ProfileAxis::kZ}) {
    const Profile p = map_profile(axis, grid, none, read);
    const auto a = static_cast<std::size_t>(axis == ProfileAxis::kX   ? 0
                                            : axis == ProfileAxis::kY ? 1
                                                                      : 2);
    ASSERT_EQ(p.mean.size(), static_cast<std::size_t>(grid.counts[a]));
    EXPECT_TRUE(p.fraction.empty());
    for (std::size_t i = 0; i < p.mean.size(); ++i) {
      Vec3 r = centre;
      r[a] = grid.origin[a] + static_cast<double>(i) * grid.spacing[a];
      EXPECT_DOUBLE_EQ(p.position[i], r[a]);
      EXPECT_NEAR(p.mean[i], linear(r), 1e-5) << profile_axis_name(axis) << " plane " << i;
    }
  }
}

const UnitCell& cell() {
  static const UnitCell c = UnitCell::from_lengths_angles({12.0, 14.0, 16.0}, {70.0, 100.0, 115.0});
  return c;
}

/// A grid along the cell's vectors (as make_cell_grid() makes it for --map-axes cell).
GridSpec cell_grid() {
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{6, 7, 8};
  request.cell_box = true;
  return make_cell_grid(cell(), request);
}

double along_z(const Vec3& r) { return 3.0 * r[2] - 1.0; }

/// Periodic in the cell with one period across the a planes: mean 0 over every plane of
/// constant fractional b or c, cos(2 pi s_a) over a plane of constant s_a.
double wave_along_a(const Vec3& r) {
  return std::cos(2.0 * std::numbers::pi * cell().to_fractional(r)[0]);
}

TEST(Profile, PlanesOfConstantFractionalCoordinateOnACellGrid) {
  const GridSpec grid = cell_grid();
  ASSERT_TRUE(grid.skewed());
  std::vector<float> values;
  // Planes of constant c are planes of constant z (a and b in the xy plane): the c profile of
  // a field linear in z is that line, at each plane's z = its distance along the normal.
  const Profile c = map_profile(ProfileAxis::kC, grid, cell(), field(grid, along_z, values));
  ASSERT_EQ(c.mean.size(), 8u);
  const double height = cell().vectors()[2][2];
  for (std::size_t k = 0; k < 8; ++k) {
    EXPECT_DOUBLE_EQ(c.fraction[k], static_cast<double>(k) / 8.0);
    EXPECT_NEAR(c.position[k], height * static_cast<double>(k) / 8.0, 1e-12);
    EXPECT_NEAR(c.mean[k], along_z(Vec3{0.0, 0.0, c.position[k]}), 2e-5);
  }
  // z on this grid is the same planes.
  const Profile z = map_profile(ProfileAxis::kZ, grid, cell(), field(grid, along_z, values));
  for (std::size_t k = 0; k < 8; ++k) EXPECT_NEAR(z.position[k], c.position[k], 1e-12);
  EXPECT_EQ(z.mean, c.mean);
  // A wave along a: cos(2 pi i / n) over the a planes, 0 over the b and c planes.
  const PlaneReader wave = field(grid, wave_along_a, values);
  const Profile a = map_profile(ProfileAxis::kA, grid, cell(), wave);
  for (std::size_t i = 0; i < a.mean.size(); ++i)
    EXPECT_NEAR(a.mean[i], std::cos(2.0 * std::numbers::pi * static_cast<double>(i) / 6.0), 1e-6);
  // Plane spacing along a: V / |b x c|.
  EXPECT_NEAR(a.position[1] * 6.0,
              cell().volume() / 14.0 / 16.0 / std::sin(70.0 * std::numbers::pi / 180.0), 1e-9);
  for (ProfileAxis across : {ProfileAxis::kB, ProfileAxis::kC})
    for (double mean : map_profile(across, grid, cell(), wave).mean) EXPECT_NEAR(mean, 0.0, 1e-6);
}

TEST(Profile, AxesThatAreNotPlanesOfTheGridAreRefused) {
  const UnitCell none;
  EXPECT_THROW(profile_grid_axis(ProfileAxis::kC, box_grid(), none), UsageError);
  EXPECT_THROW(profile_grid_axis(ProfileAxis::kA, box_grid(), cell()), UsageError);  // a box
  EXPECT_THROW(profile_grid_axis(ProfileAxis::kX, cell_grid(), cell()), UsageError);
  EXPECT_THROW(profile_grid_axis(ProfileAxis::kY, cell_grid(), cell()), UsageError);
  EXPECT_EQ(profile_grid_axis(ProfileAxis::kZ, cell_grid(), cell()), 2);
  EXPECT_EQ(profile_grid_axis(ProfileAxis::kB, cell_grid(), cell()), 1);
  EXPECT_THROW(parse_profile_axis("w"), UsageError);
  EXPECT_EQ(parse_profile_axis("c"), ProfileAxis::kC);
}

TEST(Profile, CsvNamesItsColumnsWithUnits) {
  Profile p;
  p.axis = ProfileAxis::kZ;
  p.position = {0.0, 1.5};
  p.mean = {-0.25, 3.0};
  EXPECT_EQ(profile_csv(p, "kT/e", "in.pqr"),
            "# dcs --profile z: the mean potential over each plane of constant z of in.pqr\n"
            "z (A),potential (kT/e)\n0,-0.25\n1.5,3\n");
  p.axis = ProfileAxis::kC;
  p.fraction = {0.0, 0.5};
  const std::string csv = profile_csv(p, "kcal/mol/e", "box.pqr");
  EXPECT_NE(csv.find("c (fraction),distance (A),potential (kcal/mol/e)\n0,0,-0.25\n0.5,1.5,3\n"),
            std::string::npos)
      << csv;
}

}  // namespace
}  // namespace dcs
