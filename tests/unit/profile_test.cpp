// --profile (dcs/profile.hpp) on fields with known plane means: a linear field along x, y or z,
// planes of constant fractional c on a triclinic cell's grid, a field periodic across the
// planes (mean 0); the axes that are not planes of the grid are refused; the CSV's layout; a
// trajectory's per-frame profiles from plane sums (the map's own profile, bit for bit; their mean
// the mean map's profile) and their long-form CSV.
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

double frame_one(const Vec3& r) { return 0.5 * r[0] + 2.0 * r[1] - r[2] + 4.0; }
double frame_two(const Vec3& r) { return -1.5 * r[0] + 0.25 * r[1] + 3.0 * r[2] - 2.0; }

/// The profile of a map from its z-planes' plane_sums() added up by plane_means(), as a
/// trajectory's frames are.
std::vector<double> means_from_plane_sums(int grid_axis, const GridSpec& grid,
                                          const std::vector<float>& values) {
  const std::size_t width = plane_sum_count(grid_axis, grid);
  std::vector<double> sums(static_cast<std::size_t>(grid.nz()) * width);
  for (std::int64_t z = 0; z < grid.nz(); ++z)
    plane_sums(grid_axis, grid, values.data() + static_cast<std::size_t>(z) * grid.plane_points(),
               sums.data() + static_cast<std::size_t>(z) * width);
  return plane_means(grid_axis, grid, sums.data());
}

TEST(Profile, PerFramePlaneSumsGiveEachMapsProfileAndTheMeanMapsOnAverage) {
  const GridSpec grid = box_grid();
  const UnitCell none;
  std::vector<float> one, two;
  const PlaneReader read_one = field(grid, frame_one, one);
  const PlaneReader read_two = field(grid, frame_two, two);
  // The mean map, float32 as a trajectory's mean map is stored.
  std::vector<float> mean(one.size());
  for (std::size_t i = 0; i < one.size(); ++i)
    mean[i] = static_cast<float>(0.5 * (static_cast<double>(one[i]) + two[i]));
  const PlaneReader read_mean = [&grid, &mean](const Slab& slab, float* out) {
    const std::size_t plane = grid.plane_points();
    std::copy_n(mean.data() + static_cast<std::size_t>(slab.z_begin) * plane,
                static_cast<std::size_t>(slab.z_count) * plane, out);
  };
  const Vec3 centre{grid.origin[0] + 2 * 0.5, grid.origin[1] + 2.5 * 1.5, grid.origin[2] + 3 * 2.0};
  for (ProfileAxis axis : {ProfileAxis::kX, ProfileAxis::kY, ProfileAxis::kZ}) {
    const int a = profile_grid_axis(axis, grid, none);
    const std::vector<double> p1 = means_from_plane_sums(a, grid, one);
    const std::vector<double> p2 = means_from_plane_sums(a, grid, two);
    // Each frame's profile is its map's profile, the same bits.
    EXPECT_EQ(p1, map_profile(axis, grid, none, read_one).mean);
    EXPECT_EQ(p2, map_profile(axis, grid, none, read_two).mean);
    // Known answers: the frames' fields are linear, their plane means their value on the line
    // through the grid's centre.
    const auto u = static_cast<std::size_t>(a);
    const Profile of_mean = map_profile(axis, grid, none, read_mean);
    for (std::size_t i = 0; i < p1.size(); ++i) {
      Vec3 r = centre;
      r[u] = grid.origin[u] + static_cast<double>(i) * grid.spacing[u];
      EXPECT_NEAR(p1[i], frame_one(r), 1e-5) << profile_axis_name(axis) << " plane " << i;
      EXPECT_NEAR(p2[i], frame_two(r), 1e-5) << profile_axis_name(axis) << " plane " << i;
      // The mean of the frames' profiles is the mean map's profile up to float32 rounding.
      EXPECT_NEAR(0.5 * (p1[i] + p2[i]), of_mean.mean[i], 1e-5) << profile_axis_name(axis);
    }
  }
}

TEST(Profile, PerFrameCsvIsLongFormWithFramesAndTimes) {
  Profile p;
  p.axis = ProfileAxis::kZ;
  p.position = {0.0, 1.5};
  p.mean = {-0.25, 3.0};
  p.frame_means = {-0.5, 2.0, 0.0, 4.0};
  const std::vector<double> times{10.0, std::nan("")};
  EXPECT_EQ(profile_frames_csv(p, {3, 7}, times, "kT/e", "t.dcd"),
            "# dcs --profile z: each frame's mean potential over each plane of constant z of "
            "t.dcd\n"
            "# frame: the frame's index in the trajectory files (0-based); time (ps): its time, "
            "nan where the file has none\n"
            "frame,time (ps),z (A),potential (kT/e)\n"
            "3,10,0,-0.5\n3,10,1.5,2\n7,nan,0,0\n7,nan,1.5,4\n");
  p.axis = ProfileAxis::kC;
  p.fraction = {0.0, 0.5};
  const std::string csv = profile_frames_csv(p, {3, 7}, times, "kT/e", "t.dcd");
  EXPECT_NE(csv.find("frame,time (ps),c (fraction),distance (A),potential (kT/e)\n"
                     "3,10,0,0,-0.5\n3,10,0.5,1.5,2\n"),
            std::string::npos)
      << csv;
  EXPECT_THROW(profile_frames_csv(p, {3}, {10.0}, "kT/e", "t.dcd"), InternalError);
}

}  // namespace
}  // namespace dcs
