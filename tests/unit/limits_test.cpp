// Every option and every placed grid is checked against the float32 limits of
// dcs/limits.hpp before anything is computed, with a message naming the option.
#include <cmath>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/limits.hpp"
#include "dcs/physics.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

void expect_usage_error(const std::function<void()>& call, const std::string& needle) {
  try {
    call();
    ADD_FAILURE() << "expected a UsageError mentioning '" << needle << "'";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
  }
}

TEST(Limits, PhysicsOptionsOutsideTheirRangesAreRefusedByName) {
  const struct {
    double Physics::*member;
    double value;
    const char* option;
  } cases[] = {{&Physics::temperature, 1e-300, "--temperature"},
               {&Physics::temperature, 1e300, "--temperature"},
               {&Physics::temperature, NAN, "--temperature"},
               {&Physics::dielectric, 1e-300, "--dielectric"},
               {&Physics::dielectric, 0.0, "--dielectric"},
               {&Physics::dielectric, 1e7, "--dielectric"},
               {&Physics::min_distance, 1e300, "--min-distance"},
               {&Physics::min_distance, 1e-30, "--min-distance"},
               {&Physics::min_distance, -1.0, "--min-distance"}};
  for (const auto& c : cases) {
    Physics physics;
    physics.*(c.member) = c.value;
    expect_usage_error([&] { validate(physics); }, c.option);
  }
  Physics edges;
  edges.temperature = limits::kMinTemperature;
  edges.dielectric = limits::kMinDielectric;
  edges.min_distance = limits::kMinMinDistance;
  EXPECT_NO_THROW(validate(edges));
  // The worst accepted factor stays far inside float32.
  EXPECT_LT(coulomb_factor(edges) * limits::kMaxCharge / limits::kMinMinDistance, 1e24);
}

TEST(Limits, GridOptionsOutsideTheirRangesAreRefusedByName) {
  auto request_with = [](const std::function<void(GridRequest&)>& edit) {
    GridRequest request;
    request.counts = std::array<std::int64_t, 3>{9, 9, 9};
    edit(request);
    return request;
  };
  expect_usage_error([&] { validate(request_with([](GridRequest& r) { r.spacing = 1e-20; })); },
                     "--spacing");
  expect_usage_error([&] { validate(request_with([](GridRequest& r) { r.spacing = 1e40; })); },
                     "--spacing");
  expect_usage_error([&] { validate(request_with([](GridRequest& r) { r.padding = 1e300; })); },
                     "--padding");
  expect_usage_error(
      [&] {
        validate(request_with([](GridRequest& r) { r.origin = Vec3{1e20, 0, 0}; }));
      },
      "--origin");
  expect_usage_error(
      [&] {
        validate(request_with([](GridRequest& r) { r.center = Vec3{0, -2e6, 0}; }));
      },
      "--center");
  EXPECT_NO_THROW(validate(request_with([](GridRequest& r) {
    r.spacing = limits::kMinSpacing;
    r.padding = limits::kMaxPadding;
    r.origin = Vec3{limits::kMaxCoordinate, 0, 0};
  })));
}

TEST(Limits, PlacedGridsBeyondFloat32AreRefused) {
  // Far atoms with --grid: the derived spacing is beyond 1e4 Å.
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{9, 9, 9};
  const System far = make_system({make_atom(-1e6, 0, 0, 1.0), make_atom(1e6, 0, 0, -1.0)});
  expect_usage_error([&] { (void)make_grid(far, request); }, "derived from --grid");
  // A grid that reaches beyond 1e7 Å.
  GridRequest wide;
  wide.counts = std::array<std::int64_t, 3>{3000, 2, 2};  // ±1.5e7 Å
  wide.spacing = 1e4;
  expect_usage_error([&] { (void)make_grid(two_atoms(), wide); }, "beyond the accepted");
  // A spacing too fine for the grid's coordinates (neighbouring points equal in float32).
  GridRequest fine;
  fine.counts = std::array<std::int64_t, 3>{9, 9, 9};
  fine.spacing = 1e-4;
  fine.origin = Vec3{1e6, 0, 0};
  expect_usage_error([&] { (void)make_grid(two_atoms(), fine); }, "too fine");
  // The same spacing near the origin is fine.
  fine.origin = Vec3{0, 0, 0};
  EXPECT_NO_THROW((void)make_grid(two_atoms(), fine));
}

TEST(Limits, PotentialBound) {
  Physics physics;
  physics.unit = Unit::ElementaryChargePerAngstrom;
  physics.min_distance = limits::kMinMinDistance;
  System system = make_system({make_atom(0, 0, 0, limits::kMaxCharge)});
  EXPECT_DOUBLE_EQ(max_potential(system, physics), 1e12);
  EXPECT_NO_THROW(check_potential_bound(system, physics));
  // 1e19 atoms' worth of |q| / r_min: beyond 1e30.
  system.atoms[0].charge = 1e25;
  expect_usage_error([&] { check_potential_bound(system, physics); }, "--min-distance");
}

}  // namespace
}  // namespace dcs::test
