// MSM's memory bound and interruptibility (issue 35 item 1): the estimate from the levels'
// extents never wraps, a box beyond the limit is refused before anything is allocated, atoms
// of charge 0 do not enlarge the lattice, and an interrupt stops the lattice work.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/msm.hpp"
#include "dcs/msm_plan.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

std::unique_ptr<PotentialBackend> msm_backend(std::size_t memory_limit = 0) {
  BackendOptions options;
  options.threads = 2;
  return make_msm_backend(make_cpu_fast_backend(options), msm_parameters(1e-3), options,
                          memory_limit);
}

std::vector<float> map_of(const System& system, const GridSpec& grid) {
  auto backend = msm_backend(64u << 20);
  backend->prepare(system, grid, Physics{});
  std::vector<float> out(grid.points());
  backend->compute(Slab{0, grid.nz()}, out.data());
  return out;
}

/// The message of the UsageError `prepare` throws ("" when it throws none).
std::string refusal(PotentialBackend& backend, const System& system, const GridSpec& grid) {
  try {
    backend.prepare(system, grid, Physics{});
  } catch (const UsageError& error) {
    return error.what();
  }
  return "";
}

TEST(MsmMemory, EstimateOfAnAbsurdBoxIsANumberNotAWrappedProduct) {
  const GridSpec grid = make_spec({8, 8, 8}, 1.0, {0.0, 0.0, 0.0});
  const System corners =
      make_system({make_atom(-1e6, -1e6, -1e6, 1.0), make_atom(1e6, 1e6, 1e6, -1.0)});
  const MsmMemory m = msm_memory(msm_parameters(1e-3), msm_box(corners, grid), grid, 2);
  EXPECT_TRUE(std::isfinite(m.host_peak));
  EXPECT_GT(m.host_peak, 1e18);  // (2e6 / 1.5)^3 points of 8 bytes
  EXPECT_GT(m.device_peak, 1e18);
}

TEST(MsmMemory, BoxBeyondTheLimitIsRefusedBeforeAllocating) {
  const GridSpec grid = make_spec({9, 9, 9}, 1.0, {-4.0, -4.0, -4.0});
  // Two atoms 10^6 A apart: ~10^12 lattice points along a line of boxes.
  const System apart = make_system({make_atom(0, 0, 0, 1.0), make_atom(1e6, 0, 0, -1.0)});
  auto limited = msm_backend(100u << 20);
  const std::string message = refusal(*limited, apart, grid);
  EXPECT_NE(message.find("--memory-limit allows 100.0 MiB"), std::string::npos) << message;
  EXPECT_NE(message.find("--method exact"), std::string::npos) << message;
  // Opposite corners of the accepted range: beyond any machine, never a std::length_error.
  const System corners =
      make_system({make_atom(-1e6, -1e6, -1e6, 1.0), make_atom(1e6, 1e6, 1e6, -1.0)});
  auto unlimited = msm_backend(0);
  EXPECT_NE(refusal(*unlimited, corners, grid).find("no machine has that much memory"),
            std::string::npos);
}

TEST(MsmMemory, AtomsOfChargeZeroDoNotEnlargeTheLattice) {
  const System molecule = random_atoms(200, {0.0, 0.0, 0.0}, 12.0, 7);
  System placeholder = molecule;
  placeholder.atoms.push_back(make_atom(9e5, 9e5, 9e5, 0.0));
  const GridSpec grid = make_spec({16, 16, 16}, 1.0, {-8.0, -8.0, -8.0});
  const MsmMemory with = msm_memory(msm_parameters(1e-3), msm_box(placeholder, grid), grid, 2);
  const MsmMemory without = msm_memory(msm_parameters(1e-3), msm_box(molecule, grid), grid, 2);
  EXPECT_EQ(with.host_peak, without.host_peak);
  // The same map, bit for bit, within a 64 MiB limit (the placeholder's box would need 10^16 B).
  EXPECT_EQ(map_of(placeholder, grid), map_of(molecule, grid));
  // Every atom of charge 0: a map of zeros.
  System neutral = molecule;
  for (Atom& atom : neutral.atoms) atom.charge = 0.0;
  neutral.atoms.push_back(make_atom(-9e5, 0.0, 0.0, 0.0));
  for (const float v : map_of(neutral, grid)) ASSERT_EQ(v, 0.0f);
}

TEST(MsmMemory, AnInterruptStopsTheLatticeWork) {
  const System molecule = random_atoms(200, {0.0, 0.0, 0.0}, 12.0, 7);
  const GridSpec grid = make_spec({16, 16, 16}, 1.0, {-8.0, -8.0, -8.0});
  auto backend = msm_backend(0);
  request_interrupt();
  EXPECT_THROW(backend->prepare(molecule, grid, Physics{}), InterruptedError);
  clear_interrupt();
  EXPECT_NO_THROW(backend->prepare(molecule, grid, Physics{}));
}

}  // namespace
}  // namespace dcs::test
