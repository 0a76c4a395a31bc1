// The fast CPU backend against the float64 reference on molecule-sized systems: the product's
// specification is max|V_fast - V_ref| <= 1e-5 * max|V_ref| (DESIGN §4).
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_cases.hpp"
#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "unit_support.hpp"

namespace dcs::test {
namespace {

constexpr double kSpecification = 1e-5;  // relative to max|V|, float32 paths

std::vector<BackendCase> fast_cases() {
  std::vector<BackendCase> cases;
  for (const BackendCase& c : cpu_backend_cases())
    if (c.kind == BackendKind::CpuFast) cases.push_back(c);
  return cases;
}

class FastAccuracyTest : public BackendCaseTest {
 protected:
  /// Compares the whole map with the oracle and prints the measured error ("[ measured ]").
  void expect_accurate(const System& system, const GridSpec& grid, const std::string& what) {
    const Physics physics;
    const std::vector<float> map = compute_grid(*backend_, system, grid, physics);
    const Comparison c = compare(map, reference_grid(system, grid, physics));
    EXPECT_LE(c.relative(), kSpecification)
        << what << ": max error " << c.max_abs_error << " of max|V| " << c.max_abs_reference;
    std::printf("[ measured ] %s %s: max error %.3g of max|V| %.4g = %.3g\n", GetParam().label.c_str(),
                what.c_str(), c.max_abs_error, c.max_abs_reference, c.relative());
  }

  /// A coarse grid around the whole molecule (the default placement) and a fine box through
  /// its middle, where many points lie within a few tenths of an Å of atoms.
  void check_molecule(const System& system, const std::string& name) {
    GridRequest coarse;
    coarse.counts = std::array<std::int64_t, 3>{25, 25, 25};
    expect_accurate(system, make_grid(system, coarse), name + " coarse");
    GridRequest fine;
    fine.counts = std::array<std::int64_t, 3>{28, 26, 24};
    fine.spacing = 0.37;
    expect_accurate(system, make_grid(system, fine), name + " fine");
  }

};

TEST_P(FastAccuracyTest, ProteinLikeRandomSystem) {
  // 6000 atoms (two chunks) far from the coordinate origin, as in a crystal frame.
  check_molecule(protein_like_system(6000, 2026, {60.0, -45.0, 80.0}), "random-6000");
}

TEST_P(FastAccuracyTest, ApbsDataMolecules) {
  // Real molecules from Debian's apbs-data (read with the tests' minimal fixture reader).
  const std::vector<std::string> files = {"examples/hca-bind/hca.pqr", "examples/misc/mache.pqr",
                                          "examples/misc/achbp.pqr"};
  int found = 0;
  for (const std::string& file : files) {
    const std::string path = std::string(DCS_APBS_DATA_DIR) + "/" + file;
    if (!std::filesystem::exists(path)) continue;
    ++found;
    SCOPED_TRACE(path);
    check_molecule(read_pqr_fixture(path), std::filesystem::path(file).filename().string());
  }
  if (found == 0) GTEST_SKIP() << "apbs-data not installed under " << DCS_APBS_DATA_DIR;
}

INSTANTIATE_TEST_SUITE_P(Cpu, FastAccuracyTest, ::testing::ValuesIn(fast_cases()), case_name);

}  // namespace
}  // namespace dcs::test
