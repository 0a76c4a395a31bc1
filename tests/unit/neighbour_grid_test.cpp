// The cell list (dcs/neighbour_grid.hpp) against a brute-force search: random points in
// orthorhombic, triclinic (truncated octahedron, hexagonal, strongly skewed) and open boxes,
// cutoffs from 0 to beyond the cell's width, queries far outside the cell.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/neighbour_grid.hpp"
#include "dcs/unit_cell.hpp"

namespace {

using dcs::NeighbourGrid;
using dcs::UnitCell;
using dcs::Vec3;

double norm2(const Vec3& d) { return d[0] * d[0] + d[1] * d[1] + d[2] * d[2]; }

// Brute force: the minimum image by UnitCell::minimum_image (exact for any cell), or plain.
bool brute_within(const std::vector<Vec3>& points, const Vec3& q, double cutoff,
                  const UnitCell& cell) {
  for (const Vec3& p : points) {
    const Vec3 d = cell.minimum_image({p[0] - q[0], p[1] - q[1], p[2] - q[2]});
    if (norm2(d) <= cutoff * cutoff) return true;
  }
  return false;
}

std::vector<Vec3> random_points(std::mt19937_64& rng, std::size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<Vec3> out(n);
  for (Vec3& p : out) p = {u(rng), u(rng), u(rng)};
  return out;
}

void expect_same(const std::vector<Vec3>& points, const std::vector<Vec3>& queries, double cutoff,
                 const UnitCell& cell, int& within) {
  const NeighbourGrid grid(points, cutoff, cell);
  for (const Vec3& q : queries) {
    const bool expected = brute_within(points, q, cutoff, cell);
    within += expected ? 1 : 0;
    ASSERT_EQ(grid.any_within(q), expected)
        << cell.describe() << " cutoff " << cutoff << " q " << q[0] << " " << q[1] << " " << q[2];
  }
}

TEST(NeighbourGrid, MatchesBruteForceInPeriodicCells) {
  std::mt19937_64 rng(20261201);
  const std::vector<UnitCell> cells = {
      UnitCell::from_lengths_angles({30.0, 24.0, 41.0}, {90.0, 90.0, 90.0}),
      UnitCell::from_lengths_angles({42.44, 42.44, 42.44}, {109.47, 109.47, 109.47}),
      UnitCell::from_lengths_angles({80.0, 80.0, 80.0}, {60.0, 60.0, 90.0}),
      UnitCell::from_lengths_angles({35.0, 35.0, 50.0}, {90.0, 90.0, 120.0}),
      UnitCell::from_lengths_angles({20.0, 25.0, 30.0}, {70.0, 110.0, 50.0}),
  };
  int within = 0;
  int total = 0;
  for (const UnitCell& cell : cells) {
    ASSERT_TRUE(cell.is_periodic()) << cell.describe();
    // Points anywhere (several cells away): their images count, wherever they are given.
    const std::vector<Vec3> points = random_points(rng, 300, -60.0, 120.0);
    const std::vector<Vec3> queries = random_points(rng, 400, -200.0, 200.0);
    for (double cutoff : {0.0, 1.5, 4.0, 9.0, 17.0, 26.0, 60.0}) {
      expect_same(points, queries, cutoff, cell, within);
      total += static_cast<int>(queries.size());
    }
  }
  // Both answers occur often: the comparison is not all "no" or all "yes".
  EXPECT_GT(within, total / 10);
  EXPECT_LT(within, total - total / 10);
}

TEST(NeighbourGrid, MatchesBruteForceWithoutCell) {
  std::mt19937_64 rng(7);
  const UnitCell open;
  const std::vector<Vec3> points = random_points(rng, 500, -20.0, 35.0);
  const std::vector<Vec3> queries = random_points(rng, 600, -45.0, 60.0);
  int within = 0;
  for (double cutoff : {0.0, 0.7, 3.0, 8.0, 30.0, 500.0})
    expect_same(points, queries, cutoff, open, within);
  EXPECT_GT(within, 300);
  // One point, a cutoff of zero: only the point itself.
  const NeighbourGrid one(std::vector<Vec3>{{1.0, 2.0, 3.0}}, 0.0, open);
  EXPECT_TRUE(one.any_within({1.0, 2.0, 3.0}));
  EXPECT_FALSE(one.any_within({1.0, 2.0, 3.000001}));
}

TEST(NeighbourGrid, ImagesAcrossTheBoundary) {
  // Two atoms 1 Å apart through the face of a 20 Å cube, 19 Å apart inside it.
  const UnitCell cube = UnitCell::from_lengths_angles({20.0, 20.0, 20.0}, {90.0, 90.0, 90.0});
  const NeighbourGrid grid(std::vector<Vec3>{{0.5, 10.0, 10.0}}, 1.0, cube);
  EXPECT_TRUE(grid.any_within({19.5, 10.0, 10.0}));
  EXPECT_TRUE(grid.any_within({-0.5, 10.0, 10.0}));
  EXPECT_TRUE(grid.any_within({40.5 + 0.9, 10.0, -10.0}));  // two cells away, 0.9 Å
  EXPECT_FALSE(grid.any_within({18.4, 10.0, 10.0}));        // 2.1 Å through the face
  const NeighbourGrid open(std::vector<Vec3>{{0.5, 10.0, 10.0}}, 1.0, UnitCell());
  EXPECT_FALSE(open.any_within({19.5, 10.0, 10.0}));
}

TEST(NeighbourGrid, HugeCutoffsAndCoordinatesStayBounded) {
  // A cutoff beyond any minimum image: every point is near, without visiting 10^300 bins.
  const UnitCell skewed = UnitCell::from_lengths_angles({20.0, 25.0, 30.0}, {70.0, 110.0, 50.0});
  const std::vector<Vec3> points = {{1.0, 2.0, 3.0}, {-40.0, 7.0, 90.0}};
  for (const UnitCell& cell : {skewed, UnitCell()}) {
    const NeighbourGrid grid(points, 1e300, cell);
    EXPECT_TRUE(grid.any_within({1e5, -3e5, 7.0}));
  }
  // Coordinates far apart: one bin along the overflowing axis, answers still right.
  const NeighbourGrid spread(std::vector<Vec3>{{-1e308, 0.0, 0.0}, {1e308, 0.0, 0.0}}, 1.0,
                             UnitCell());
  EXPECT_TRUE(spread.any_within({1e308, 0.5, 0.0}));
  EXPECT_FALSE(spread.any_within({0.0, 0.0, 0.0}));
}

TEST(NeighbourGrid, NonFiniteCoordinatesAreNeverNear) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const UnitCell cube = UnitCell::from_lengths_angles({20.0, 20.0, 20.0}, {90.0, 90.0, 90.0});
  for (const UnitCell& cell : {cube, UnitCell()}) {
    const NeighbourGrid grid(std::vector<Vec3>{{nan, 0.0, 0.0}, {1.0, 1.0, 1.0}, {inf, 0, 0}}, 2.0,
                             cell);
    EXPECT_TRUE(grid.any_within({1.5, 1.0, 1.0}));
    EXPECT_FALSE(grid.any_within({nan, 1.0, 1.0}));
    EXPECT_FALSE(grid.any_within({5.0, 5.0, 5.0}));
    const NeighbourGrid empty(std::vector<Vec3>{}, 2.0, cell);
    EXPECT_FALSE(empty.any_within({0.0, 0.0, 0.0}));
  }
}

}  // namespace
