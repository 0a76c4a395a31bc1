// msm's work estimate (issue 38 item 10, libdcs/src/msm/work.cpp): each term follows the count
// it stands for on a plan, and the estimate puts a dense box at --msm-error 1e-5 above the
// exact method by more than the warning's margin while the default target stays below it.
#include <cmath>

#include <gtest/gtest.h>

#include "dcs/grid.hpp"
#include "dcs/msm.hpp"
#include "dcs/msm_plan.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

MsmWork work_of(const System& system, const GridSpec& grid, double target,
                std::size_t check_points = 4096) {
  return msm_work(msm_parameters(target), msm_box(system, grid), grid, system.size(), check_points);
}

TEST(MsmWork, ExactIsAtomsTimesPointsAndTheCheckScalesWithItsSample) {
  const GridSpec grid = make_spec({21, 22, 23}, 1.0, {-10.0, -11.0, -12.0});
  const System system = random_atoms(500, {0.0, 0.0, 0.0}, 12.0, 7);
  const MsmWork w = work_of(system, grid, 1e-3);
  EXPECT_EQ(w.exact, 500.0 * 21 * 22 * 23);
  EXPECT_DOUBLE_EQ(work_of(system, grid, 1e-3, 2048).check, 0.5 * w.check);
  EXPECT_EQ(work_of(system, grid, 1e-3, 0).check, 0.0);
  EXPECT_DOUBLE_EQ(w.msm(), w.short_range + w.interpolation + w.levels + w.top + w.check);
  for (const double term : {w.short_range, w.interpolation, w.levels, w.top, w.check})
    EXPECT_GT(term, 0.0);
}

TEST(MsmWork, ShortRangeCountsOnlyPointsWithinTheCutoffOfTheAtoms) {
  const GridSpec grid = make_spec({31, 31, 31}, 1.0, {-15.0, -15.0, -15.0});
  const double a = msm_parameters(1e-3).cutoff;  // 8 A
  const MsmWork near = work_of(make_system({make_atom(0.0, 0.0, 0.0, 1.0)}), grid, 1e-3);
  // An atom beyond a of every point: no point sums it (its lattice work remains).
  const MsmWork far = work_of(make_system({make_atom(0.0, 0.0, 15.0 + a + 1.0, 1.0)}), grid, 1e-3);
  EXPECT_GT(near.short_range, 0.0);
  EXPECT_EQ(far.short_range, 0.0);
  EXPECT_GT(far.levels, 0.0);
  // Twice the atoms in the same box: twice the pairs within the cutoff.
  const System one = random_atoms(4000, {0.0, 0.0, 0.0}, 20.0, 3);
  System two = one;
  for (const Atom& atom : one.atoms) two.atoms.push_back(atom);
  EXPECT_NEAR(work_of(two, grid, 1e-3).short_range / work_of(one, grid, 1e-3).short_range, 2.0,
              1e-9);
}

TEST(MsmWork, TighterTargetsCostMoreOnTheLattice) {
  const GridSpec grid = make_spec({33, 33, 33}, 1.0, {-16.0, -16.0, -16.0});
  const System system = random_atoms(2000, {0.0, 0.0, 0.0}, 24.0, 5);
  const MsmWork loose = work_of(system, grid, 1e-2);
  const MsmWork tight = work_of(system, grid, 1e-5);
  EXPECT_GT(tight.levels, loose.levels);
  EXPECT_GT(tight.short_range, loose.short_range);  // a = 13 A against 8 A
  EXPECT_EQ(tight.exact, loose.exact);
}

TEST(MsmWork, DenseBoxAtTheTightestTargetIsEstimatedSlowerThanExact) {
  // Issue 38's case scaled down: many atoms in a small box, --msm-error 1e-5.
  const GridSpec grid = make_spec({65, 65, 65}, 1.0, {-32.0, -32.0, -32.0});
  const System dense = random_atoms(20000, {0.0, 0.0, 0.0}, 30.0, 11);
  const MsmWork tight = work_of(dense, grid, 1e-5);
  EXPECT_GT(tight.msm(), kMsmSlowerMargin * tight.exact);
  const MsmWork loose = work_of(dense, grid, kDefaultMsmError);
  EXPECT_LT(loose.msm(), kMsmSlowerMargin * loose.exact);
}

TEST(MsmWork, AnAbsurdBoxGivesFiniteNumbers) {
  const GridSpec grid = make_spec({8, 8, 8}, 1.0, {0.0, 0.0, 0.0});
  const System corners =
      make_system({make_atom(-1e6, -1e6, -1e6, 1.0), make_atom(1e6, 1e6, 1e6, -1.0)});
  const MsmWork w = work_of(corners, grid, 1e-3);
  EXPECT_TRUE(std::isfinite(w.msm()));
  EXPECT_GT(w.levels, w.exact);
}

}  // namespace
}  // namespace dcs::test
