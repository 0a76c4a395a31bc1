// Analytic and structural tests of the CPU backends, written once against PotentialBackend&
// and run for the reference and for every fast kernel (see backend_cases.hpp).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_cases.hpp"
#include "dcs/atoms.hpp"
#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/limits.hpp"
#include "dcs/grid.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"
#include "unit_support.hpp"

namespace dcs::test {
namespace {

/// Double sums of the same values in another order differ by a few ulp per addition.
double sum_tolerance(const StatsAccum& accum) {
  return 1e-12 * static_cast<double>(accum.count) * std::max(std::fabs(accum.min), std::fabs(accum.max));
}

class BackendTest : public BackendCaseTest {
 protected:
  struct Exact {
    double value = 0.0;  ///< C * sum q_i / max(r_i, r_min)
    double scale = 0.0;  ///< C * sum |q_i| / max(r_i, r_min): the size of the rounding errors
  };

  /// Exact potential of `system` at grid point (i, j, k), in the unit of `physics`.
  static Exact analytic(const System& system, const GridSpec& grid, const Physics& physics,
                        std::int64_t i, std::int64_t j, std::int64_t k) {
    const Vec3 p = grid.point(i, j, k);
    Exact exact;
    for (const Atom& atom : system.atoms) {
      const double r = std::sqrt((p[0] - atom.position[0]) * (p[0] - atom.position[0]) +
                                 (p[1] - atom.position[1]) * (p[1] - atom.position[1]) +
                                 (p[2] - atom.position[2]) * (p[2] - atom.position[2]));
      exact.value += atom.charge / std::max(r, physics.min_distance);
      exact.scale += std::fabs(atom.charge) / std::max(r, physics.min_distance);
    }
    exact.value *= coulomb_factor(physics);
    exact.scale *= coulomb_factor(physics);
    return exact;
  }

  /// Checks every value of a few-atom map against C * sum q/max(r, r_min); the error is
  /// measured relative to C * sum |q|/max(r, r_min) (= |V| for one atom), where terms of
  /// opposite sign cancel.
  void expect_analytic(const System& system, const GridSpec& grid, const Physics& physics) {
    const std::vector<float> map = compute_grid(*backend_, system, grid, physics);
    double worst = 0.0;
    for (std::int64_t k = 0; k < grid.nz(); ++k)
      for (std::int64_t j = 0; j < grid.ny(); ++j)
        for (std::int64_t i = 0; i < grid.nx(); ++i) {
          const float value = map[grid.index(i, j, k)];
          ASSERT_TRUE(std::isfinite(value)) << "at " << i << "," << j << "," << k;
          const Exact exact = analytic(system, grid, physics, i, j, k);
          const double relative = std::fabs(value - exact.value) / exact.scale;
          worst = std::max(worst, relative);
          ASSERT_LE(relative, GetParam().point_tolerance)
              << "at " << i << "," << j << "," << k << ": " << value << " vs " << exact.value;
        }
    RecordProperty("worst_relative_error", std::to_string(worst));
  }
};

TEST_P(BackendTest, OneChargeGivesFactorQOverREverywhere) {
  const System system = make_system({make_atom(0.31, -0.22, 0.47, 0.7)});
  const GridSpec grid = make_spec({9, 8, 7}, 0.5, {-2.0, -2.0, -1.5});
  Physics physics;
  physics.unit = Unit::KcalPerMolPerE;
  expect_analytic(system, grid, physics);
}

TEST_P(BackendTest, ClampHoldsInsideMinDistance) {
  // Atom on grid point (3, 3, 3); with r_min = 0.8 Å and h = 0.5 Å the point itself and its
  // six neighbours (r = 0.5) are clamped to C*q/0.8, the diagonal ones (r = 0.707) too.
  const GridSpec grid = make_spec({7, 7, 7}, 0.5, {-1.5, -1.5, -1.5});
  const System system = make_system({make_atom(0.0, 0.0, 0.0, -1.3)});
  Physics physics;
  physics.min_distance = 0.8;
  expect_analytic(system, grid, physics);
  const std::vector<float> map = compute_grid(*backend_, system, grid, physics);
  const double clamped = coulomb_factor(physics) * -1.3 / 0.8;
  EXPECT_NEAR(map[grid.index(3, 3, 3)], clamped, std::fabs(clamped) * GetParam().point_tolerance);
  EXPECT_NEAR(map[grid.index(4, 3, 3)], clamped, std::fabs(clamped) * GetParam().point_tolerance);
  EXPECT_NEAR(map[grid.index(4, 4, 3)], clamped, std::fabs(clamped) * GetParam().point_tolerance);
}

TEST_P(BackendTest, PointExactlyOnAtomIsFinite) {
  const GridSpec grid = make_spec({5, 5, 5}, 1.0, {-2.0, -2.0, -2.0});
  const System system = make_system({make_atom(0.0, 0.0, 0.0, 2.0)});
  const Physics physics;  // r_min 0.1 Å
  const std::vector<float> map = compute_grid(*backend_, system, grid, physics);
  const double expected = coulomb_factor(physics) * 2.0 / kDefaultMinDistance;
  ASSERT_TRUE(std::isfinite(map[grid.index(2, 2, 2)]));
  EXPECT_NEAR(map[grid.index(2, 2, 2)], expected, expected * GetParam().point_tolerance);
  expect_analytic(system, grid, physics);
}

TEST_P(BackendTest, NearAtomPrecisionFarFromTheOrigin) {
  // A point 0.104 Å from an atom 140 Å from the grid origin: float coordinates relative to
  // the origin would carry ~1e-5 Å of rounding, a 1e-4 relative error here.
  const GridSpec grid = make_spec({301, 5, 5}, 0.5, {-20.0, -1.0, -1.0});
  const System system = make_system({make_atom(120.06, 0.06, 0.06, 0.8),
                                      make_atom(119.44, -0.44, 0.56, -0.5)});
  const Physics physics;
  expect_analytic(system, grid, physics);
}

TEST_P(BackendTest, SuperpositionOfTwoSystems) {
  const System a = protein_like_system(300, 11);
  const System b = protein_like_system(200, 12, {3.0, -2.0, 1.0});
  System both = a;
  both.atoms.insert(both.atoms.end(), b.atoms.begin(), b.atoms.end());
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{17, 15, 13};
  const GridSpec grid = make_grid(both, request);
  const Physics physics;
  const std::vector<float> va = compute_grid(*backend_, a, grid, physics);
  const std::vector<float> vb = compute_grid(*backend_, b, grid, physics);
  const std::vector<float> vab = compute_grid(*backend_, both, grid, physics);
  double max_abs = 0.0, worst = 0.0;
  for (std::size_t n = 0; n < vab.size(); ++n) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(vab[n])));
    worst = std::max(worst, std::fabs(static_cast<double>(vab[n]) - (static_cast<double>(va[n]) + vb[n])));
  }
  EXPECT_LE(worst, 3.0 * GetParam().map_tolerance * max_abs);
}

TEST_P(BackendTest, SignFlipNegatesExactly) {
  // Round-to-nearest is symmetric and every step is odd in q, so -q gives exactly -V.
  const System positive = protein_like_system(500, 21);
  System negative = positive;
  for (Atom& atom : negative.atoms) atom.charge = -atom.charge;
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{19, 18, 17};
  const GridSpec grid = make_grid(positive, request);
  const std::vector<float> vp = compute_grid(*backend_, positive, grid, Physics{});
  const std::vector<float> vn = compute_grid(*backend_, negative, grid, Physics{});
  for (std::size_t n = 0; n < vp.size(); ++n) ASSERT_EQ(vn[n], -vp[n]) << "at " << n;
}

TEST_P(BackendTest, TranslationInvariance) {
  const System system = protein_like_system(400, 31);
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{21, 20, 19};
  const GridSpec grid = make_grid(system, request);
  const Vec3 shift{250.25, -130.5, 75.125};
  System moved = system;
  for (Atom& atom : moved.atoms)
    for (int axis = 0; axis < 3; ++axis) atom.position[axis] += shift[axis];
  GridSpec moved_grid = grid;
  for (int axis = 0; axis < 3; ++axis) moved_grid.origin[axis] += shift[axis];
  const std::vector<float> v = compute_grid(*backend_, system, grid, Physics{});
  const std::vector<float> w = compute_grid(*backend_, moved, moved_grid, Physics{});
  double max_abs = 0.0, worst = 0.0;
  for (std::size_t n = 0; n < v.size(); ++n) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(v[n])));
    worst = std::max(worst, std::fabs(static_cast<double>(v[n]) - w[n]));
  }
  EXPECT_LE(worst, GetParam().map_tolerance * max_abs);
}

TEST_P(BackendTest, ChunkBoundariesMatchReference) {
  for (std::size_t atoms : {std::size_t{1}, std::size_t{3999}, std::size_t{4000},
                            std::size_t{4001}, std::size_t{9000}}) {
    SCOPED_TRACE("atoms = " + std::to_string(atoms));
    const System system = protein_like_system(atoms, 41);
    GridRequest request;
    request.counts = std::array<std::int64_t, 3>{7, 6, 5};
    const GridSpec grid = make_grid(system, request);
    const Physics physics;
    StatsAccum stats;
    const std::vector<float> map = compute_grid(*backend_, system, grid, physics, 0, &stats);
    const Comparison c = compare(map, reference_grid(system, grid, physics));
    EXPECT_LE(c.relative(), GetParam().map_tolerance) << "max error " << c.max_abs_error;
    const StatsAccum oracle = cpu_statistics(map.data(), map.size());
    EXPECT_EQ(stats.count, grid.points());
    EXPECT_EQ(stats.min, oracle.min);
    EXPECT_EQ(stats.max, oracle.max);
    EXPECT_NEAR(stats.sum, oracle.sum, sum_tolerance(oracle));
  }
}

TEST_P(BackendTest, OddGridSizesMatchReference) {
  // Row lengths around the SIMD widths (8, 16) and block widths (32, 64) exercise every tail.
  const System system = protein_like_system(250, 51);
  const Physics physics;
  for (std::int64_t nx : {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 47, 63, 64, 65, 100, 129}) {
    SCOPED_TRACE("nx = " + std::to_string(nx));
    GridRequest request;
    request.counts = std::array<std::int64_t, 3>{nx, 3, 2};
    request.spacing = 0.9;
    const GridSpec grid = make_grid(system, request);
    const std::vector<float> map = compute_grid(*backend_, system, grid, physics);
    const Comparison c = compare(map, reference_grid(system, grid, physics));
    EXPECT_LE(c.relative(), GetParam().map_tolerance) << "max error " << c.max_abs_error;
  }
}

TEST_P(BackendTest, SlabsGiveTheSameMapAsOneSlab) {
  const System system = protein_like_system(600, 61);
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{13, 11, 9};
  const GridSpec grid = make_grid(system, request);
  StatsAccum whole_stats;
  const std::vector<float> whole = compute_grid(*backend_, system, grid, Physics{}, 0, &whole_stats);
  for (std::int64_t planes : {1, 2, 4, 8}) {
    SCOPED_TRACE("planes per slab = " + std::to_string(planes));
    StatsAccum slab_stats;
    const std::vector<float> slabs = compute_grid(*backend_, system, grid, Physics{}, planes, &slab_stats);
    ASSERT_EQ(slabs, whole);  // every row is computed the same way, whatever the slab
    EXPECT_EQ(slab_stats.count, whole_stats.count);
    EXPECT_EQ(slab_stats.min, whole_stats.min);
    EXPECT_EQ(slab_stats.max, whole_stats.max);
    EXPECT_NEAR(slab_stats.sum, whole_stats.sum, sum_tolerance(whole_stats));
  }
}

TEST_P(BackendTest, ThreadCountDoesNotChangeTheMap) {
  const System system = protein_like_system(700, 71);
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{23, 7, 5};
  const GridSpec grid = make_grid(system, request);
  const std::vector<float> expected = compute_grid(*create_backend(GetParam(), 1), system, grid, Physics{});
  for (unsigned threads : {2u, 3u, 7u, 64u}) {
    SCOPED_TRACE("threads = " + std::to_string(threads));
    EXPECT_EQ(compute_grid(*create_backend(GetParam(), threads), system, grid, Physics{}), expected);
  }
}

TEST_P(BackendTest, UnitsScaleTheMap) {
  const System system = protein_like_system(100, 81);
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{6, 5, 4};
  const GridSpec grid = make_grid(system, request);
  Physics raw;
  raw.unit = Unit::ElementaryChargePerAngstrom;
  Physics scaled;
  scaled.unit = Unit::KJPerMolPerE;
  scaled.dielectric = 4.0;
  const std::vector<float> v = compute_grid(*backend_, system, grid, raw);
  const std::vector<float> w = compute_grid(*backend_, system, grid, scaled);
  const double factor = coulomb_factor(scaled);
  double max_abs = 0.0;
  for (float value : w) max_abs = std::max(max_abs, std::fabs(static_cast<double>(value)));
  for (std::size_t n = 0; n < v.size(); ++n)
    EXPECT_NEAR(w[n], factor * v[n], 2.0 * GetParam().map_tolerance * max_abs) << "at " << n;
}

TEST_P(BackendTest, StatisticsAndDifferenceMatchTheCpuOracle) {
  // Large enough for the threaded reduction to split the work.
  std::vector<float> values(300'001);
  std::vector<double> reference(values.size());
  for (std::size_t n = 0; n < values.size(); ++n) {
    values[n] = static_cast<float>(std::sin(0.001 * static_cast<double>(n)) * 100.0);
    reference[n] = static_cast<double>(values[n]) + 1e-3 * std::cos(static_cast<double>(n));
  }
  values[17] = NAN;
  values[200'000] = INFINITY;
  const StatsAccum expected = cpu_statistics(values.data(), values.size());
  const StatsAccum got = backend_->statistics(values.data(), values.size());
  EXPECT_EQ(got.count, expected.count);
  EXPECT_EQ(got.nonfinite, 2u);
  EXPECT_EQ(got.min, expected.min);
  EXPECT_EQ(got.max, expected.max);
  EXPECT_NEAR(got.sum, expected.sum, sum_tolerance(expected));
  EXPECT_NEAR(got.sum_sq, expected.sum_sq, 1e-12 * expected.sum_sq);

  const DiffAccum expected_diff = cpu_difference(values.data(), reference.data(), values.size());
  const DiffAccum diff = backend_->difference(values.data(), reference.data(), values.size());
  EXPECT_EQ(diff.count, expected_diff.count);
  EXPECT_EQ(diff.nonfinite, 2u);
  EXPECT_EQ(diff.max_abs_diff, expected_diff.max_abs_diff);
  EXPECT_EQ(diff.max_abs_ref, expected_diff.max_abs_ref);
  EXPECT_NEAR(diff.sum_sq_diff, expected_diff.sum_sq_diff, 1e-9 * expected_diff.sum_sq_diff);
}

TEST_P(BackendTest, DescribesItself) {
  EXPECT_EQ(backend_->name(), GetParam().kind == BackendKind::CpuReference ? "cpu-reference" : "cpu-fast");
  EXPECT_EQ(backend_->kernel_name(), GetParam().kernel);
  EXPECT_FALSE(backend_->reduction_name().empty());
  EXPECT_FALSE(backend_->device_name().empty());
  EXPECT_GT(backend_->tolerance(), 0.0);
  EXPECT_LE(backend_->tolerance(), 1e-5);
  const System system = protein_like_system(50, 91);
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{4, 4, 4};
  compute_grid(*backend_, system, make_grid(system, request), Physics{});
  EXPECT_GT(backend_->timings().kernels, 0.0);
}

TEST_P(BackendTest, RefusesAnEmptySystemAndBadPhysics) {
  const GridSpec grid = make_spec({3, 3, 3}, 1.0, {0.0, 0.0, 0.0});
  EXPECT_THROW(backend_->prepare(System{}, grid, Physics{}), UsageError);
  Physics bad;
  bad.dielectric = 0.0;
  EXPECT_THROW(backend_->prepare(make_system({make_atom(0, 0, 0, 1)}), grid, bad), UsageError);
}

INSTANTIATE_TEST_SUITE_P(Cpu, BackendTest, ::testing::ValuesIn(cpu_backend_cases()), case_name);

// --- Backend-specific behaviour ---------------------------------------------------------------

TEST(FastBackend, RejectsUnknownKernelAndReductionNamingTheValidOnes) {
  BackendOptions options;
  options.kernel = "warp-drive";
  try {
    make_cpu_fast_backend(options);
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("simd"), std::string::npos) << error.what();
  }
  options.kernel.clear();
  options.reduction = "tree";
  EXPECT_THROW(make_cpu_fast_backend(options), UsageError);
  options.reduction = "cpu-serial";
  EXPECT_EQ(make_cpu_fast_backend(options)->reduction_name(), "cpu-serial");
}

TEST(FastBackend, DefaultKernelIsSimdAndNamesTheIsa) {
  const auto backend = make_cpu_fast_backend(BackendOptions{});
  EXPECT_EQ(backend->kernel_name(), "simd");
  const std::string device = backend->device_name();
  EXPECT_TRUE(device.find("AVX-512") != std::string::npos || device.find("AVX2") != std::string::npos ||
              device.find("portable") != std::string::npos)
      << device;
}

TEST(FastBackend, ComputeBeforePrepareOrOutsideTheGridIsRefused) {
  const auto backend = make_cpu_fast_backend(BackendOptions{});
  std::vector<float> out(27);
  EXPECT_THROW(backend->compute(Slab{0, 1}, out.data()), UsageError);
  backend->prepare(make_system({make_atom(0, 0, 0, 1)}), make_spec({3, 3, 3}, 1.0, {0, 0, 0}), Physics{});
  EXPECT_THROW(backend->compute(Slab{2, 2}, out.data()), UsageError);
  EXPECT_THROW(backend->compute(Slab{-1, 1}, out.data()), UsageError);
}

TEST(FastBackend, SmallestAcceptedMinDistanceStaysFinite) {
  // The smallest --min-distance (dcs/limits.hpp) with the largest charge on a grid point.
  const auto backend = make_cpu_fast_backend(BackendOptions{});
  Physics physics;
  physics.min_distance = limits::kMinMinDistance;
  physics.unit = Unit::ElementaryChargePerAngstrom;
  const std::vector<float> map =
      compute_grid(*backend, make_system({make_atom(0, 0, 0, limits::kMaxCharge)}),
                   make_spec({3, 3, 3}, 1.0, {-1, -1, -1}), physics);
  for (float value : map) EXPECT_TRUE(std::isfinite(value));
  const double peak = limits::kMaxCharge / limits::kMinMinDistance;  // 1e12 at the atom
  EXPECT_NEAR(map[13], peak, 1e-5 * peak);
  physics.min_distance = 1e-30;  // once accepted; now refused before computing
  EXPECT_THROW(validate(physics), UsageError);
}

TEST(ReferenceBackend, RejectsOtherKernels) {
  BackendOptions options;
  options.kernel = "simd";
  EXPECT_THROW(make_cpu_reference_backend(options), UsageError);
}

TEST(ReferenceBackend, RejectsOtherReductions) {
  BackendOptions options;
  options.reduction = "warp-shuffle";
  EXPECT_THROW(make_cpu_reference_backend(options), UsageError);
  options.reduction = "cpu-serial";
  EXPECT_EQ(make_cpu_reference_backend(options)->reduction_name(), "cpu-serial");
}

}  // namespace
}  // namespace dcs::test
