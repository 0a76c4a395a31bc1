// Grids along a triclinic cell's vectors (--map-axes cell, GridSpec::axes): the points
// i·a/na + j·b/nb + k·c/nc tile the lattice, the ewald backend maps them (against the float64
// Ewald sum, and periodic: the value at p is the value at p + a), and the backends that read a
// grid by its spacings refuse one.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/periodic/ewald_reference.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

const UnitCell& truncated_octahedron() {
  static const UnitCell cell =
      UnitCell::from_lengths_angles({24.0, 24.0, 24.0}, {109.4712206, 109.4712206, 109.4712206});
  return cell;
}

GridRequest cell_request(double spacing) {
  GridRequest request;
  request.spacing = spacing;
  request.cell_box = true;
  return request;
}

TEST(CellAxes, ATriclinicGridFollowsTheCellVectors) {
  const UnitCell& cell = truncated_octahedron();
  const GridSpec grid = make_cell_grid(cell, cell_request(2.5));
  ASSERT_TRUE(grid.skewed());
  EXPECT_EQ(grid.counts, (std::array<std::int64_t, 3>{10, 10, 10}));  // ceil(24 / 2.5)
  EXPECT_EQ(grid.origin, (Vec3{0.0, 0.0, 0.0}));
  EXPECT_TRUE(tiles_cell(grid, cell));
  EXPECT_NE(grid.describe().find("axes along the cell vectors"), std::string::npos);
  for (std::size_t a = 0; a < 3; ++a) {
    EXPECT_DOUBLE_EQ(grid.spacing[a], 2.4);
    // Point n along an axis is the cell vector: the next image's point 0.
    std::array<std::int64_t, 3> ijk{0, 0, 0};
    ijk[a] = grid.counts[a];
    const Vec3 end = grid.point(ijk[0], ijk[1], ijk[2]);
    for (std::size_t c = 0; c < 3; ++c) EXPECT_NEAR(end[c], cell.vectors()[a][c], 1e-12);
  }
  // Every point's fractional coordinates are (i/na, j/nb, k/nc).
  const Vec3 s = cell.to_fractional(grid.point(3, 7, 9));
  EXPECT_NEAR(s[0], 0.3, 1e-12);
  EXPECT_NEAR(s[1], 0.7, 1e-12);
  EXPECT_NEAR(s[2], 0.9, 1e-12);
  // --grid counts per cell vector.
  GridRequest counts;
  counts.counts = std::array<std::int64_t, 3>{6, 8, 12};
  counts.cell_box = true;
  const GridSpec by_counts = make_cell_grid(cell, counts);
  EXPECT_EQ(by_counts.counts, (std::array<std::int64_t, 3>{6, 8, 12}));
  EXPECT_DOUBLE_EQ(by_counts.spacing[2], 2.0);
  EXPECT_TRUE(tiles_cell(by_counts, cell));
}

TEST(CellAxes, AnAxisAlignedGridIsUnchanged) {
  // The orthorhombic cell's grid has no axes and the same points as before cell axes existed.
  const UnitCell cell = UnitCell::from_lengths_angles({20.0, 30.0, 25.0}, {90.0, 90.0, 90.0});
  const GridSpec grid = make_cell_grid(cell, cell_request(2.1));
  EXPECT_FALSE(grid.skewed());
  const Vec3 p = grid.point(3, 4, 5);
  EXPECT_EQ(p, (Vec3{3.0 * 2.0, 4.0 * 2.0, 5.0 * (25.0 / 12.0)}));
  EXPECT_EQ(grid.step(1), (Vec3{0.0, 2.0, 0.0}));
  // A skewed grid over another cell, or a box grid, does not tile the cell.
  EXPECT_FALSE(tiles_cell(make_cell_grid(truncated_octahedron(), cell_request(2.0)), cell));
  GridRequest box = cell_request(2.0);
  box.map_axes = MapAxes::kBox;
  EXPECT_FALSE(tiles_cell(make_cell_grid(truncated_octahedron(), box), truncated_octahedron()));
}

TEST(CellAxes, SpacingBackendsRefuseASkewedGrid) {
  const GridSpec grid = make_cell_grid(truncated_octahedron(), cell_request(3.0));
  System system = random_atoms(5, {5.0, 5.0, 5.0}, 4.0, 3);
  EXPECT_THROW(make_cpu_fast_backend({})->prepare(system, grid, Physics{}), InternalError);
  EXPECT_THROW(require_axis_aligned(grid, "test"), InternalError);
  GridSpec aligned = grid;
  aligned.axes.reset();
  EXPECT_NO_THROW(require_axis_aligned(aligned, "test"));
}

/// 30 charges (net -1 e) in the truncated octahedron, some outside it (they are wrapped).
System charged_octahedron() {
  return in_cell(random_atoms(30, {4.0, 6.0, 8.0}, 14.0, 11), -1.0, truncated_octahedron(),
                 "octahedron.pqr");
}

std::unique_ptr<PotentialBackend> two_thread_ewald() {
  const BackendOptions options = cpu_options(2);
  return periodic::make_ewald_backend(make_cpu_fast_backend(options),
                                      periodic::ewald_settings(1e-5), options);
}

TEST(CellAxes, EwaldMapAtTheCellPointsMatchesTheFloat64Sum) {
  const System system = charged_octahedron();
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{7, 8, 9};
  request.cell_box = true;
  const GridSpec grid = make_grid(system, request);  // the cell's grid: the system has a cell
  ASSERT_TRUE(grid.skewed());
  const Physics physics;
  auto backend = two_thread_ewald();
  backend->prepare(system, grid, physics);
  std::vector<float> map(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  backend->compute_slab({0, grid.nz()}, map.data(), stats.data());

  std::vector<Vec3> points;
  for (std::int64_t k = 0; k < grid.nz(); ++k)
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) points.push_back(grid.point(i, j, k));
  std::vector<double> reference(points.size());
  backend->reference_points(system, physics, points.data(), points.size(), reference.data(), 2);
  double error = 0.0, norm = 0.0;
  for (std::size_t n = 0; n < points.size(); ++n) {
    error += (map[n] - reference[n]) * (map[n] - reference[n]);
    norm += reference[n] * reference[n];
  }
  EXPECT_LT(std::sqrt(error / norm), 1e-5) << "over " << points.size() << " cell points";

  // Periodic: the value at p + a (+ b, - c) is the value at p, to float rounding.
  const Mat3& v = system.cell.vectors();
  std::vector<Vec3> shifted;
  for (const Vec3& p : points)
    shifted.push_back({p[0] + v[0][0] + v[1][0] - v[2][0], p[1] + v[0][1] + v[1][1] - v[2][1],
                       p[2] + v[0][2] + v[1][2] - v[2][2]});
  backend->prepare_points(system, physics);
  std::vector<float> images(shifted.size());
  backend->compute_points(shifted.data(), nullptr, shifted.size(), images.data());
  float scale = 0.0f;
  for (float value : map) scale = std::max(scale, std::fabs(value));
  for (std::size_t n = 0; n < points.size(); ++n)
    ASSERT_NEAR(images[n], map[n], 1e-5f * scale) << "point " << n;
}

}  // namespace
}  // namespace dcs::test
