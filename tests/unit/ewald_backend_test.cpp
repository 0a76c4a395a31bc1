// The ewald backend (dcs/periodic/ewald_backend.hpp) and the grid over a cell: the values are
// PeriodicPotential's times the Coulomb factor, the same bits for any slab split, thread count
// and point batch; at atoms the own term is left out; reference_points() is the float64 Ewald
// sum; models and systems it cannot compute are refused.
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/periodic/ewald_backend.hpp"
#include "dcs/periodic/ewald_reference.hpp"
#include "dcs/periodic/periodic_potential.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

/// 40 charges (net +1 e) in a triclinic cell, some outside it (they are wrapped).
System charged_cell() {
  return in_cell(random_atoms(40, {6.0, 7.0, 8.0}, 12.0, 5), 1.0,
                 UnitCell::from_lengths_angles({18.0, 20.0, 22.0}, {80.0, 95.0, 105.0}),
                 "cell.pqr");
}

std::unique_ptr<PotentialBackend> ewald(unsigned threads) {
  const BackendOptions options = cpu_options(threads);
  return periodic::make_ewald_backend(make_cpu_fast_backend(options),
                                      periodic::ewald_settings(1e-5), options);
}

GridSpec small_grid() { return test::make_spec(7, 6, 9, {-3.0, -2.0, -1.0}, {2.5, 3.0, 2.0}); }

TEST(EwaldBackend, SameBitsForAnySlabSplitAndThreadCount) {
  const System system = charged_cell();
  const GridSpec grid = small_grid();
  const Physics physics;
  std::vector<float> whole(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  auto one = ewald(1);
  one->prepare(system, grid, physics);
  one->compute_slab({0, grid.nz()}, whole.data(), stats.data());
  const std::vector<float> split = compute_two_slabs(*ewald(3), system, grid, physics, 4);
  EXPECT_EQ(std::memcmp(whole.data(), split.data(), whole.size() * sizeof(float)), 0);
  // The values are the periodic potential times the Coulomb factor, into float.
  const std::vector<Vec3> points = slab_points(grid, {0, grid.nz()});
  const std::vector<double> phi = periodic::periodic_potential_at(system, points);
  for (std::size_t n = 0; n < points.size(); ++n)
    ASSERT_EQ(whole[n], static_cast<float>(coulomb_factor(physics) * phi[n])) << n;
}

TEST(EwaldBackend, AtAtomsLeavesOutTheOwnTerm) {
  const System system = charged_cell();
  Physics physics;
  physics.unit = Unit::KcalPerMolPerE;
  auto backend = ewald(2);
  backend->prepare_points(system, physics);
  auto [points, skip] = points_at_atoms(system);
  points.push_back({1.0, 2.0, 3.0});  // a free point between them
  skip.push_back(kNoAtom);
  std::vector<float> out(points.size());
  backend->compute_points(points.data(), skip.data(), points.size(), out.data());
  const std::vector<double> at_atoms = periodic::periodic_potential_at_atoms(system);
  const double factor = coulomb_factor(physics);
  for (std::size_t i = 0; i < system.size(); ++i)
    EXPECT_EQ(out[i], static_cast<float>(factor * at_atoms[i])) << i;
  EXPECT_EQ(out.back(),
            static_cast<float>(factor * periodic::periodic_potential_at(
                                            system, std::vector<Vec3>{points.back()})[0]));
}

TEST(EwaldBackend, ReferencePointsAreTheFloat64EwaldSum) {
  const System system = charged_cell();
  const Physics physics;
  const std::vector<Vec3> points{{0.5, 0.5, 0.5}, {10.0, -4.0, 30.0}, system.atoms[3].position};
  std::vector<double> out(points.size());
  ewald(2)->reference_points(system, physics, points.data(), points.size(), out.data(), 2);
  periodic::PeriodicSettings settings;
  const std::vector<double> expected = periodic::ewald_reference_at(
      periodic::positions_of(system), periodic::charges_of(system), system.cell, points,
      periodic::reference_parameters(system.cell, settings), physics.min_distance, 2);
  for (std::size_t i = 0; i < points.size(); ++i)
    EXPECT_EQ(out[i], coulomb_factor(physics) * expected[i]) << i;
}

TEST(EwaldBackend, RefusesWhatItCannotCompute) {
  System no_cell = charged_cell();
  no_cell.cell = UnitCell();
  EXPECT_THROW(ewald(1)->prepare(no_cell, small_grid(), Physics{}), UsageError);
  Physics screened;
  screened.ionic_strength = 0.15;
  EXPECT_THROW(ewald(1)->prepare(charged_cell(), small_grid(), screened), UsageError);
  Physics distance;
  distance.dielectric_model = DielectricModel::kDistance;
  EXPECT_THROW(ewald(1)->prepare_points(charged_cell(), distance), UsageError);
  EXPECT_THROW(periodic::ewald_settings(0.1), UsageError);
  EXPECT_THROW(periodic::ewald_settings(1e-9), UsageError);
}

TEST(CellGrid, AnOrthorhombicCellIsTiled) {
  const UnitCell cell = UnitCell::from_lengths_angles({20.0, 30.0, 25.0}, {90.0, 90.0, 90.0});
  GridRequest request;
  request.spacing = 2.1;
  request.cell_box = true;
  const GridSpec grid = make_cell_grid(cell, request);
  EXPECT_EQ(grid.counts, (std::array<std::int64_t, 3>{10, 15, 12}));
  EXPECT_DOUBLE_EQ(grid.spacing[0], 2.0);
  EXPECT_DOUBLE_EQ(grid.spacing[2], 25.0 / 12.0);
  EXPECT_EQ(grid.origin, (Vec3{0.0, 0.0, 0.0}));
  EXPECT_TRUE(tiles_cell(grid, cell));
  // make_grid() takes the cell's grid for a system with a cell, the atoms' box without.
  System system;
  system.atoms.resize(1);
  system.atoms[0].position = {5.0, 5.0, 5.0};
  system.cell = cell;
  EXPECT_EQ(make_grid(system, request).counts, grid.counts);
  request.cell_box = false;
  EXPECT_FALSE(tiles_cell(make_grid(system, request), cell));
}

TEST(CellGrid, ATriclinicCellGetsItsBoundingBoxWithMapAxesBox) {
  const UnitCell cell =
      UnitCell::from_lengths_angles({30.0, 30.0, 30.0}, {109.4712206, 109.4712206, 109.4712206});
  GridRequest request;
  request.spacing = 2.0;
  request.cell_box = true;
  request.map_axes = MapAxes::kBox;
  const GridSpec grid = make_cell_grid(cell, request);
  EXPECT_FALSE(grid.skewed());
  EXPECT_FALSE(tiles_cell(grid, cell));
  for (int corner = 0; corner < 8; ++corner) {
    const Vec3 r = cell.to_cartesian(
        {double(corner & 1), double((corner >> 1) & 1), double((corner >> 2) & 1)});
    for (std::size_t a = 0; a < 3; ++a) {
      EXPECT_GE(r[a], grid.origin[a] - 1e-9);
      EXPECT_LE(r[a], grid.origin[a] + double(grid.counts[a] - 1) * grid.spacing[a] + 1e-9);
    }
  }
  EXPECT_DOUBLE_EQ(grid.spacing[0], 2.0);
}

}  // namespace
}  // namespace dcs::test
