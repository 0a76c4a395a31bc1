// MoleculeGraph: molecules cut by the boundary (every atom wrapped into the cell) come out
// whole, the same shape as before the cut, in orthorhombic and triclinic cells; a chain bonded
// to its own image is reported; wrapping puts each molecule's centre in the cell.
#include "dcs/periodic/whole.hpp"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

namespace dcs {
namespace {

const double kOctahedronAngle = std::acos(-1.0 / 3.0) * 180.0 / 3.14159265358979323846;

/// Three chains of 40 atoms (1.5 Å steps in random directions) and 30 lone ions, placed so
/// that most chains straddle a face.
struct Molecules {
  std::vector<Vec3> positions;
  std::vector<std::array<std::size_t, 2>> bonds;
};

Molecules make_molecules(std::uint64_t seed, double spread) {
  Molecules m;
  std::mt19937_64 random(seed);
  std::normal_distribution<double> step(0.0, 1.0);
  std::uniform_real_distribution<double> start(-spread, spread);
  for (int chain = 0; chain < 3; ++chain) {
    Vec3 p{start(random), start(random), start(random)};
    for (int i = 0; i < 40; ++i) {
      if (i > 0) {
        Vec3 d{step(random), step(random), step(random)};
        const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int a = 0; a < 3; ++a) p[a] += 1.5 * d[a] / n;
        m.bonds.push_back({m.positions.size(), m.positions.size() - 1});  // reversed on purpose
      }
      m.positions.push_back(p);
    }
  }
  for (int ion = 0; ion < 30; ++ion)
    m.positions.push_back({start(random), start(random), start(random)});
  return m;
}

void expect_same_shape(const std::vector<Vec3>& a, const std::vector<Vec3>& b,
                       const MoleculeGraph& graph, const UnitCell& cell) {
  // Within each molecule, every atom moved by the same lattice vector as the molecule's first.
  std::vector<Vec3> shift(graph.molecules(), Vec3{NAN, 0, 0});
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Vec3 d{b[i][0] - a[i][0], b[i][1] - a[i][1], b[i][2] - a[i][2]};
    const Vec3 s = cell.to_fractional(d);
    for (int k = 0; k < 3; ++k) ASSERT_NEAR(s[k], std::round(s[k]), 1e-9) << "atom " << i;
    Vec3& first = shift[graph.molecule_of()[i]];
    if (std::isnan(first[0])) first = d;
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(d[k], first[k], 1e-9) << "atom " << i;
  }
}

TEST(MoleculeGraph, FindsTheMolecules) {
  const Molecules m = make_molecules(1, 10.0);
  const MoleculeGraph graph(m.positions.size(), m.bonds);
  EXPECT_EQ(graph.molecules(), 3u + 30u);
  EXPECT_EQ(graph.bonds(), 3u * 39u);
  EXPECT_EQ(graph.molecule_of()[39], 0u);
  EXPECT_EQ(graph.molecule_of()[40], 1u);
}

TEST(MoleculeGraph, CutMoleculesComeOutWhole) {
  for (const UnitCell& cell :
       {UnitCell::from_lengths_angles({30, 34, 38}, {90, 90, 90}),
        UnitCell::from_lengths_angles({36, 36, 36},
                                      {kOctahedronAngle, kOctahedronAngle, kOctahedronAngle}),
        UnitCell::from_lengths_angles({33, 35, 37}, {70, 105, 115})}) {
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      const Molecules m = make_molecules(seed, 40.0);
      const MoleculeGraph graph(m.positions.size(), m.bonds);
      std::vector<Vec3> cut = m.positions;
      for (Vec3& p : cut) p = cell.wrap(p);  // what an MD engine writes
      const WholeReport report = graph.make_whole(cell, cut);
      EXPECT_EQ(report.long_bonds, 0u) << cell.describe();
      EXPECT_NEAR(report.longest_bond, 1.5, 1e-9);
      expect_same_shape(m.positions, cut, graph, cell);
    }
  }
}

TEST(MoleculeGraph, AChainBondedToItsOwnImageIsReported) {
  // A ring of 8 atoms around a 10 Å box: the closing bond cannot be short in any image.
  const UnitCell cell = UnitCell::from_lengths_angles({10, 30, 30}, {90, 90, 90});
  std::vector<Vec3> positions;
  std::vector<std::array<std::size_t, 2>> bonds;
  for (std::size_t i = 0; i < 8; ++i) {
    positions.push_back({1.25 * static_cast<double>(i), 5.0, 5.0});
    if (i > 0) bonds.push_back({i - 1, i});
  }
  bonds.push_back({0, 7});  // 7 -> 8.75 Å, or 1.25 Å to the image of atom 0
  const MoleculeGraph graph(positions.size(), bonds);
  const WholeReport report = graph.make_whole(cell, positions);
  EXPECT_GE(report.long_bonds, 1u);
  EXPECT_GE(report.longest_bond, 5.0);
}

TEST(MoleculeGraph, InfiniteCellChangesNothing) {
  const Molecules m = make_molecules(3, 40.0);
  const MoleculeGraph graph(m.positions.size(), m.bonds);
  std::vector<Vec3> positions = m.positions;
  graph.make_whole(UnitCell(), positions);
  EXPECT_EQ(positions, m.positions);
}

TEST(MoleculeGraph, WrapPutsEachMoleculeCentreInTheCell) {
  const UnitCell cell = UnitCell::from_lengths_angles(
      {36, 36, 36}, {kOctahedronAngle, kOctahedronAngle, kOctahedronAngle});
  const Molecules m = make_molecules(4, 120.0);
  const MoleculeGraph graph(m.positions.size(), m.bonds);
  std::vector<Vec3> positions = m.positions;
  graph.make_whole(cell, positions);
  graph.wrap_molecules(cell, positions);
  expect_same_shape(m.positions, positions, graph, cell);
  for (std::size_t mol = 0; mol < graph.molecules(); ++mol) {
    Vec3 centre{0, 0, 0};
    double n = 0;
    for (std::size_t i = 0; i < positions.size(); ++i)
      if (graph.molecule_of()[i] == mol) {
        for (int a = 0; a < 3; ++a) centre[a] += positions[i][a];
        n += 1;
      }
    const Vec3 s = cell.to_fractional({centre[0] / n, centre[1] / n, centre[2] / n});
    for (int a = 0; a < 3; ++a) {
      EXPECT_GE(s[a], -1e-12);
      EXPECT_LT(s[a], 1.0 + 1e-12);
    }
  }
}

}  // namespace
}  // namespace dcs
