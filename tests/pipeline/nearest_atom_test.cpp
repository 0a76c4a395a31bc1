// The points' distances to the nearest atom (pipeline/src/points/nearest_atom.hpp) against a
// brute-force search: points inside, around and far outside the atoms' box (where the cell
// search starts at the box's edge), one atom, and atoms on a plane (a flat box).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "points/nearest_atom.hpp"

namespace {

dcs::pipeline::NearestAtomDistances brute_force(const std::vector<dcs::Vec3>& points,
                                                const dcs::System& system) {
  std::vector<double> d;
  for (const dcs::Vec3& p : points) {
    double best = std::numeric_limits<double>::infinity();
    for (const dcs::Atom& atom : system.atoms) {
      double d2 = 0.0;
      for (int a = 0; a < 3; ++a) d2 += (p[a] - atom.position[a]) * (p[a] - atom.position[a]);
      best = std::min(best, d2);
    }
    d.push_back(std::sqrt(best));
  }
  dcs::pipeline::NearestAtomDistances out;
  out.max = *std::max_element(d.begin(), d.end());
  std::sort(d.begin(), d.end());
  out.median = d[d.size() / 2];
  return out;
}

dcs::System random_atoms(std::size_t n, double flat_z, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> box(-20.0, 20.0);
  dcs::System system;
  system.atoms.resize(n);
  for (dcs::Atom& atom : system.atoms)
    atom.position = {box(rng), 0.5 * box(rng), flat_z >= 0.0 ? flat_z : box(rng)};
  return system;
}

void expect_same(const std::vector<dcs::Vec3>& points, const dcs::System& system) {
  const auto want = brute_force(points, system);
  const auto got = dcs::pipeline::nearest_atom_distances(points, system);
  EXPECT_DOUBLE_EQ(got.median, want.median);  // the same sums (up to a fused multiply-add)
  EXPECT_DOUBLE_EQ(got.max, want.max);
}

TEST(NearestAtom, MatchesBruteForceInsideAroundAndFarOutside) {
  std::mt19937_64 rng(38);
  for (const double flat_z : {-1.0, 3.0}) {  // a 3-D cloud, then atoms on a plane
    const dcs::System system = random_atoms(2000, flat_z, rng);
    std::uniform_real_distribution<double> near(-25.0, 25.0), far(-300.0, 300.0);
    std::vector<dcs::Vec3> points;
    for (int i = 0; i < 1500; ++i) points.push_back({near(rng), near(rng), near(rng)});
    for (int i = 0; i < 300; ++i) points.push_back({far(rng), far(rng), far(rng)});
    expect_same(points, system);
  }
}

TEST(NearestAtom, OneAtom) {
  dcs::System system;
  system.atoms.resize(1);
  system.atoms[0].position = {1.0, 2.0, 3.0};
  const std::vector<dcs::Vec3> points{{1.0, 2.0, 3.0}, {4.0, 6.0, 3.0}, {1.0, 2.0, -97.0}};
  const auto got = dcs::pipeline::nearest_atom_distances(points, system);
  EXPECT_EQ(got.median, 5.0);
  EXPECT_EQ(got.max, 100.0);
}

}  // namespace
