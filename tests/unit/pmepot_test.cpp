// --preset pmepot's backend (dcs/periodic/pmepot_backend.hpp): its map on the cell's grid
// against the float64 reciprocal-only Ewald sum at β = 0.25 Å⁻¹ (within kPmepotError), its
// reference_points() is that sum, the k = 0 term left out (mean over the cell 0), the same bits
// for any slab split, and what it refuses.
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/periodic/ewald_reference.hpp"
#include "dcs/periodic/periodic_potential.hpp"
#include "dcs/periodic/pmepot_backend.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

/// 12 charges (net +1 e) in a triclinic cell.
System ions() {
  return in_cell(random_atoms(12, {9.0, 9.0, 10.0}, 14.0, 21), 1.0,
                 UnitCell::from_lengths_angles({18.0, 19.0, 21.0}, {82.0, 96.0, 104.0}),
                 "ions.pqr");
}

std::unique_ptr<PotentialBackend> pmepot(unsigned threads) {
  const BackendOptions options = cpu_options(threads);
  return periodic::make_pmepot_backend(make_cpu_fast_backend(options), options);
}

GridSpec one_angstrom_cell_grid(const UnitCell& cell) {
  GridRequest request;
  request.spacing = 1.0;
  request.cell_box = true;
  return make_cell_grid(cell, request);
}

TEST(Pmepot, MapMatchesTheFloat64ReciprocalSum) {
  const System system = ions();
  const GridSpec grid = one_angstrom_cell_grid(system.cell);
  const Physics physics;
  auto backend = pmepot(2);
  backend->prepare(system, grid, physics);
  std::vector<float> map(grid.points());
  std::vector<StatsAccum> stats(static_cast<std::size_t>(grid.nz()));
  backend->compute_slab({0, grid.nz()}, map.data(), stats.data());
  // The same bits in two slabs on another thread count.
  const std::vector<float> split = compute_two_slabs(*pmepot(3), system, grid, physics, 5);
  EXPECT_EQ(std::memcmp(map.data(), split.data(), map.size() * sizeof(float)), 0);

  const std::vector<Vec3> points = slab_points(grid, {0, grid.nz()});
  std::vector<double> reference(points.size());
  backend->reference_points(system, physics, points.data(), points.size(), reference.data(), 2);
  double error = 0.0, norm = 0.0, mean = 0.0;
  for (std::size_t n = 0; n < points.size(); ++n) {
    error += (map[n] - reference[n]) * (map[n] - reference[n]);
    norm += reference[n] * reference[n];
    mean += map[n];
  }
  const double relative = std::sqrt(error / norm);
  std::cout << "pmepot: " << points.size() << " points of a 1 A cell grid, relative RMS "
            << relative << " against the float64 reciprocal sum\n";
  EXPECT_LT(relative, 0.1 * periodic::kPmepotError);  // 1e-3 is the run's target, for any grid
  // The k = 0 term is left out: the mean over the cell's grid is 0 (to the grid's quadrature).
  const auto count = static_cast<double>(points.size());
  EXPECT_LT(std::fabs(mean / count), 1e-3 * std::sqrt(norm / count));
}

TEST(Pmepot, ReferenceIsTheReciprocalPartOfTheEwaldSum) {
  // φ = real + reciprocal + background at one β: the reciprocal reference is φ less the other
  // two, summed here by brute force over images for a neutral pair in an orthorhombic cell.
  System pair;
  pair.atoms.resize(2);
  pair.atoms[0].position = {2.0, 3.0, 4.0};
  pair.atoms[0].charge = 1.0;
  pair.atoms[1].position = {9.0, 5.0, 11.0};
  pair.atoms[1].charge = -1.0;
  pair.cell = UnitCell::from_lengths_angles({15.0, 16.0, 17.0}, {90.0, 90.0, 90.0});
  const std::vector<Vec3> points{{7.0, 7.0, 7.0}, {1.0, 12.0, 3.0}};
  periodic::EwaldParameters p;
  p.beta = periodic::kPmepotBeta;
  p.k_cutoff = 2.0 * p.beta * std::sqrt(-std::log(1e-14));
  p.real_cutoff = 60.0;  // erfc(0.25 * 60) ~ 1e-99: every real-space term that matters
  const std::vector<double> full = periodic::ewald_reference_at(
      periodic::positions_of(pair), periodic::charges_of(pair), pair.cell, points, p, 0.0, 2);
  const std::vector<double> reciprocal = periodic::reciprocal_reference_at(
      periodic::positions_of(pair), periodic::charges_of(pair), pair.cell, points, p, 2);
  for (std::size_t i = 0; i < points.size(); ++i) {
    double real = 0.0;  // Σ q erfc(βr)/r over images within 60 Å, neutral: no background
    for (int a = -5; a <= 5; ++a)
      for (int b = -5; b <= 5; ++b)
        for (int c = -5; c <= 5; ++c)
          for (const Atom& atom : pair.atoms) {
            const double dx = points[i][0] - atom.position[0] + 15.0 * a;
            const double dy = points[i][1] - atom.position[1] + 16.0 * b;
            const double dz = points[i][2] - atom.position[2] + 17.0 * c;
            const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
            if (r < 60.0) real += atom.charge * std::erfc(p.beta * r) / r;
          }
    EXPECT_NEAR(reciprocal[i], full[i] - real, 1e-9) << "point " << i;
  }
}

TEST(Pmepot, RefusesWhatPmepotDoesNotMake) {
  const System system = ions();
  GridRequest coarse;
  coarse.counts = std::array<std::int64_t, 3>{6, 12, 12};  // 6 < 2 x order 4
  coarse.cell_box = true;
  EXPECT_THROW(pmepot(1)->prepare(system, make_cell_grid(system.cell, coarse), Physics{}),
               UsageError);
  EXPECT_THROW(pmepot(1)->prepare_points(system, Physics{}), UsageError);
  System no_cell = system;
  no_cell.cell = UnitCell();
  EXPECT_THROW(pmepot(1)->prepare(no_cell, one_angstrom_cell_grid(system.cell), Physics{}),
               UsageError);
}

}  // namespace
}  // namespace dcs::test
