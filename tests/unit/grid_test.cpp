// Grid placement (DESIGN §3): node-centred grids, --grid N / NX NY NZ, --spacing, --origin,
// --center, padding, every refusal, and the memory check.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

using Counts = std::array<std::int64_t, 3>;

/// Two atoms spanning 10 x 4 x 2 Å; with the default 10 Å padding the box is 30 x 24 x 22 Å
/// centred on (5, 2, 1).
void expect_vec(const Vec3& got, const Vec3& expected, double tolerance = 1e-12) {
  for (int axis = 0; axis < 3; ++axis)
    EXPECT_NEAR(got[axis], expected[axis], tolerance) << "axis " << axis;
}

TEST(MakeGrid, CubicCountsGiveCubicVoxelsCentredOnTheMolecule) {
  GridRequest request;
  request.counts = Counts{33, 33, 33};
  const GridSpec grid = make_grid(two_atoms(), request);
  EXPECT_EQ(grid.counts, (Counts{33, 33, 33}));
  expect_vec(grid.spacing, {0.9375, 0.9375, 0.9375});  // longest padded edge 30 Å / 32
  expect_vec(grid.origin, {5.0 - 16 * 0.9375, 2.0 - 16 * 0.9375, 1.0 - 16 * 0.9375});
  EXPECT_EQ(grid.points(), 33u * 33u * 33u);
  EXPECT_EQ(grid.plane_points(), 33u * 33u);
}

TEST(MakeGrid, ThreeCountsTakeTheSpacingThatCoversEveryAxis) {
  GridRequest request;
  request.counts = Counts{31, 25, 11};
  const GridSpec grid = make_grid(two_atoms(), request);
  EXPECT_EQ(grid.counts, (Counts{31, 25, 11}));
  expect_vec(grid.spacing, {2.2, 2.2, 2.2});  // 22 Å over 10 intervals is the widest need
  expect_vec(grid.origin, {5.0 - 15 * 2.2, 2.0 - 12 * 2.2, 1.0 - 5 * 2.2});
  const Vec3 edge{30, 24, 22};
  for (std::size_t axis = 0; axis < 3; ++axis)
    EXPECT_GE(static_cast<double>(grid.counts[axis] - 1) * grid.spacing[axis], edge[axis] - 1e-9);
}

TEST(MakeGrid, SpacingAloneDerivesCountsThatCoverThePaddedBox) {
  GridRequest request;
  request.spacing = 0.5;
  GridSpec grid = make_grid(two_atoms(), request);
  EXPECT_EQ(grid.counts, (Counts{61, 49, 45}));  // exact multiples: edge/h + 1
  expect_vec(grid.spacing, {0.5, 0.5, 0.5});
  expect_vec(grid.origin, {-10.0, -10.0, -10.0});

  request.spacing = 0.7;
  grid = make_grid(two_atoms(), request);
  EXPECT_EQ(grid.counts, (Counts{44, 36, 33}));  // ceil(30/0.7)+1, ceil(24/0.7)+1, ceil(22/0.7)+1
  const Vec3 edge{30, 24, 22};
  for (std::size_t axis = 0; axis < 3; ++axis) {
    EXPECT_GE(static_cast<double>(grid.counts[axis] - 1) * 0.7, edge[axis]);
    EXPECT_LT(static_cast<double>(grid.counts[axis] - 2) * 0.7, edge[axis]);  // not one too many
  }
}

TEST(MakeGrid, PymolLayoutPutsDimPointsHalfASpacingBelowTheCentre) {
  // PyMOL's ObjectMap: Dim = ceil(edge / h), origin = centre - Dim h / 2 (it never reaches the
  // buffered box's upper corner).
  const System system = two_atoms();  // box 10 x 4 x 2 Å
  GridRequest request;
  request.spacing = 2.0 / 3.0;
  request.padding = 2.0;
  request.layout = GridLayout::kPymol;
  const GridSpec grid = make_grid(system, request);
  EXPECT_EQ(grid.nx(), 21);  // 14 / (2/3) = 21 exactly
  EXPECT_EQ(grid.ny(), 12);  // 8 / (2/3) = 12
  EXPECT_EQ(grid.nz(), 9);   // 6 / (2/3) = 9
  EXPECT_NEAR(grid.origin[0], 5.0 - 0.5 * 21 * (2.0 / 3.0), 1e-12);
  EXPECT_NEAR(grid.origin[2], 1.0 - 0.5 * 9 * (2.0 / 3.0), 1e-12);
}

TEST(MakeGrid, ChimeraxLayoutStartsHalfASpacingBeyondThePadding) {
  // ChimeraX coulombic: numpy.arange(min - (pad + h/2), max + (pad + h/2), h).
  const System system = two_atoms();
  GridRequest request;
  request.spacing = 1.0;
  request.padding = 5.0;
  request.layout = GridLayout::kChimerax;
  const GridSpec grid = make_grid(system, request);
  EXPECT_EQ(grid.nx(), 21);  // arange(-5.5, 15.5, 1): 21 points
  EXPECT_EQ(grid.ny(), 15);
  EXPECT_EQ(grid.nz(), 13);
  EXPECT_DOUBLE_EQ(grid.origin[0], -5.5);
  EXPECT_DOUBLE_EQ(grid.origin[1], -5.5);
  // --origin wins over the layout.
  request.origin = Vec3{1, 2, 3};
  EXPECT_DOUBLE_EQ(make_grid(system, request).origin[0], 1.0);
}

TEST(MakeGrid, CountsAndSpacingTogetherAreTakenAsGiven) {
  GridRequest request;
  request.counts = Counts{10, 20, 30};
  request.spacing = 0.25;
  const GridSpec grid = make_grid(two_atoms(), request);
  EXPECT_EQ(grid.counts, (Counts{10, 20, 30}));
  expect_vec(grid.spacing, {0.25, 0.25, 0.25});
  expect_vec(grid.origin, {5.0 - 4.5 * 0.25, 2.0 - 9.5 * 0.25, 1.0 - 14.5 * 0.25});
}

TEST(MakeGrid, OneCountWithSpacingIsAllowed) {
  GridRequest request;
  request.counts = Counts{1, 1, 1};
  request.spacing = 1.0;
  const GridSpec grid = make_grid(two_atoms(), request);
  EXPECT_EQ(grid.points(), 1u);
  expect_vec(grid.origin, {5.0, 2.0, 1.0});
}

TEST(MakeGrid, OriginAndCenterPlaceTheGrid) {
  GridRequest request;
  request.spacing = 1.0;
  request.origin = Vec3{1.5, -2.5, 3.25};
  GridSpec grid = make_grid(two_atoms(), request);
  expect_vec(grid.origin, {1.5, -2.5, 3.25});
  EXPECT_EQ(grid.counts, (Counts{31, 25, 23}));

  request.origin.reset();
  request.center = Vec3{100.0, 0.0, -50.0};
  grid = make_grid(two_atoms(), request);
  expect_vec(grid.origin, {100.0 - 15.0, 0.0 - 12.0, -50.0 - 11.0});
}

TEST(MakeGrid, PaddingSetsTheBox) {
  GridRequest request;
  request.counts = Counts{11, 11, 11};
  request.padding = 0.0;
  GridSpec grid = make_grid(two_atoms(), request);
  expect_vec(grid.spacing, {1.0, 1.0, 1.0});  // 10 Å / 10
  expect_vec(grid.origin, {0.0, -3.0, -4.0});
  request.padding = 5.0;
  grid = make_grid(two_atoms(), request);
  expect_vec(grid.spacing, {2.0, 2.0, 2.0});  // 20 Å / 10
}

TEST(MakeGrid, RefusesAbsurdRequests) {
  const System system = two_atoms();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto refused = [&](const GridRequest& request, const std::string& why) {
    EXPECT_THROW(make_grid(system, request), UsageError) << why;
  };
  GridRequest r;
  refused(r, "neither counts nor spacing");
  for (std::int64_t bad : {0, -1, -1000}) {
    r = {};
    r.counts = Counts{bad, 10, 10};
    refused(r, "count " + std::to_string(bad));
    r.counts = Counts{10, 10, bad};
    refused(r, "count " + std::to_string(bad) + " on z");
  }
  r = {};
  r.counts = Counts{1'000'001, 2, 2};
  refused(r, "more than a million points on an axis");
  r = {};
  r.counts = Counts{1, 10, 10};
  refused(r, "one point without a spacing");
  for (double bad : {0.0, -0.5, nan, inf}) {
    r = {};
    r.spacing = bad;
    refused(r, "spacing " + std::to_string(bad));
  }
  r = {};
  r.spacing = 1e-6;
  refused(r, "a spacing that needs 3e7 points per axis");
  r = {};
  r.spacing = 1.0;
  r.origin = Vec3{0, 0, 0};
  r.center = Vec3{0, 0, 0};
  refused(r, "origin and center");
  r = {};
  r.spacing = 1.0;
  r.origin = Vec3{nan, 0, 0};
  refused(r, "NaN origin");
  r = {};
  r.spacing = 1.0;
  r.center = Vec3{0, inf, 0};
  refused(r, "infinite center");
  for (double bad : {-1.0, nan, inf}) {
    r = {};
    r.spacing = 1.0;
    r.padding = bad;
    refused(r, "padding " + std::to_string(bad));
  }
  r = {};
  r.spacing = 1.0;
  EXPECT_THROW(make_grid(System{}, r), UsageError) << "zero atoms";
  r = {};
  r.counts = Counts{10, 10, 10};
  r.padding = 0.0;
  EXPECT_THROW(make_grid(make_system({make_atom(1, 2, 3, 1)}), r), UsageError)
      << "one atom, no padding: no scale";
}

TEST(GridSpec, IndexIsXFastestAndPointIsNodeCentred) {
  const GridSpec grid = make_spec({4, 3, 2}, 0.5, {1.0, 2.0, 3.0});
  EXPECT_EQ(grid.index(0, 0, 0), 0u);
  EXPECT_EQ(grid.index(1, 0, 0), 1u);
  EXPECT_EQ(grid.index(0, 1, 0), 4u);
  EXPECT_EQ(grid.index(0, 0, 1), 12u);
  EXPECT_EQ(grid.index(3, 2, 1), 23u);
  expect_vec(grid.point(0, 0, 0), {1.0, 2.0, 3.0});
  expect_vec(grid.point(3, 2, 1), {2.5, 3.0, 3.5});
  std::size_t expected = 0;
  for (std::int64_t k = 0; k < 2; ++k)
    for (std::int64_t j = 0; j < 3; ++j)
      for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(grid.index(i, j, k), expected++);
  EXPECT_NE(grid.describe().find("4 x 3 x 2"), std::string::npos) << grid.describe();
}

TEST(Memory, MapBytesAndTheMemoryCheck) {
  const GridSpec grid = make_spec({100, 200, 300}, 1.0, {0, 0, 0});
  EXPECT_EQ(map_bytes(grid), 100u * 200u * 300u * sizeof(float));
  EXPECT_GT(physical_memory_bytes(), 0u);
  EXPECT_NO_THROW(check_fits_in_memory(1u << 20, "a small map"));
  try {
    check_fits_in_memory(std::numeric_limits<std::size_t>::max() / 2, "an absurd map");
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("an absurd map"), std::string::npos) << message;
  }
  // The largest grid make_grid accepts (a million points per axis) is refused here.
  const GridSpec huge = make_spec({1'000'000, 1'000'000, 1'000'000}, 1.0, {0, 0, 0});
  EXPECT_THROW(check_fits_in_memory(map_bytes(huge), "the map"), UsageError);
}

TEST(Memory, FormatBytes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1536), "1.5 KiB");
  EXPECT_EQ(format_bytes(std::size_t{1} << 30), "1.0 GiB");
}

}  // namespace
}  // namespace dcs::test
