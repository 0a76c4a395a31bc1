// The backend tests, written once (as OpenMM's shared Test*.h): analytic answers,
// accuracy against the float64 reference on real molecules (apbs-data) and random ones, odd
// sizes, chunk boundaries, atoms on grid points, slabs and the determinism contract of
// dcs/backend.hpp, statistics and the interface's refusals. Every body runs against
// PotentialBackend& for each BackendCase a test binary instantiates:
//   tests/unit/backend_test.cpp          every CPU variant of the table (reference, simd, ...)
//   tests/cuda/potential/backend_test.cpp  every CUDA kernel of the table (skipped without a GPU)
// Include this header in exactly one file per test binary; instantiate with
//   INSTANTIATE_TEST_SUITE_P(Name, BackendTest, ::testing::ValuesIn(cases), backend_case_name);
// Tolerances come from the case (backend_cases.hpp) and are stated where they are used.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend_cases.hpp"
#include "dcs/atoms.hpp"
#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/limits.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"
#include "test_systems.hpp"

namespace dcs::test {

inline std::string backend_case_name(const ::testing::TestParamInfo<BackendCase>& info) {
  return info.param.label;
}

class BackendTest : public ::testing::TestWithParam<BackendCase> {
 protected:
  void SetUp() override {
    const std::string why = GetParam().unavailable ? GetParam().unavailable() : std::string();
    if (!why.empty()) GTEST_SKIP() << GetParam().label << ": " << why;
    backend_ = create();
  }

  /// A new backend of this case (threads: CPU worker threads, 0 = all).
  std::unique_ptr<PotentialBackend> create(unsigned threads = 0) const {
    BackendOptions options;
    options.kernel = GetParam().kernel;
    options.threads = threads;
    options.debug_sync = true;  // GPU: fault at the kernel that caused it, NaN-poisoned slabs
    return GetParam().create(options);
  }

  struct Exact {
    double value = 0.0;  ///< C * sum q_i g(max(r_i, r_min))
    /// C * sum |q_i| g(max(r_i, r_min)) times g's condition number (1 for 1/r, 2 for 1/r^2,
    /// 1 + r/lambda for the screened term): the size of the rounding errors.
    double scale = 0.0;
  };

  /// Exact potential of `system` at grid point (i, j, k), in the unit of `physics`.
  static Exact analytic(const System& system, const GridSpec& grid, const Physics& physics,
                        std::int64_t i, std::int64_t j, std::int64_t k) {
    const Vec3 p = grid.point(i, j, k);
    Exact exact;
    // The model's g(r), written out here from its definition (not through dcs::pair_term's
    // arithmetic): 1/r, exp(-r/lambda)/r or 1/r^2, r clamped at r_min.
    const double lambda = debye_length(physics);
    for (const Atom& atom : system.atoms) {
      const double r = std::max(std::sqrt((p[0] - atom.position[0]) * (p[0] - atom.position[0]) +
                                          (p[1] - atom.position[1]) * (p[1] - atom.position[1]) +
                                          (p[2] - atom.position[2]) * (p[2] - atom.position[2])),
                                physics.min_distance);
      double g = 1.0 / r;
      double condition = 1.0;  // how much g magnifies a relative error of r
      if (physics.dielectric_model == DielectricModel::kDistance) {
        g = 1.0 / (r * r);
        condition = 2.0;
      } else if (physics.ionic_strength > 0.0) {
        g = std::exp(-r / lambda) / r;
        condition = 1.0 + r / lambda;  // float32 r, times r/lambda in the exponent
      }
      exact.value += atom.charge * g;
      exact.scale += std::fabs(atom.charge) * g * condition;
    }
    exact.value *= coulomb_factor(physics);
    exact.scale *= coulomb_factor(physics);
    return exact;
  }

  /// Every value of a few-atom map against C * sum q/max(r, r_min), the error relative to
  /// C * sum |q|/max(r, r_min) (= |V| for one atom), where terms of opposite sign cancel.
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

  /// The whole map against the float64 reference (cached per `key` within the test binary's
  /// process, so that one molecule's oracle is computed once) within map_tolerance of max|V|,
  /// every point written, and the statistics compute() returned equal to those of the values.
  void expect_matches_reference(const System& system, const GridSpec& grid, const std::string& key,
                                std::int64_t slab_planes = 0, const Physics& physics = Physics{}) {
    StatsAccum stats;
    const std::vector<float> map =
        compute_grid(*backend_, system, grid, physics, slab_planes, &stats);
    const std::vector<double>& reference = cached_reference(key, system, grid, physics);
    const Comparison c = compare(map, reference);
    EXPECT_EQ(c.nonfinite, 0u) << key << ": points not written (still NaN) or not finite";
    EXPECT_LE(c.max_abs_error, GetParam().map_tolerance * c.max_abs_reference)
        << key << ": relative error " << c.relative() << " at point " << c.worst_index << " of "
        << map.size() << " (V_ref = " << reference[c.worst_index] << ")";
    std::printf("[ measured ] %s %s: max error %.3g of max|V| %.4g = %.3g\n",
                GetParam().label.c_str(), key.c_str(), c.max_abs_error, c.max_abs_reference,
                c.max_abs_error / c.max_abs_reference);
    expect_statistics_of(map, stats);
  }

  /// compute()'s statistics describe the values it wrote: min, max, counts exactly, sums
  /// within the rounding of double sums in another order.
  static void expect_statistics_of(const std::vector<float>& map, const StatsAccum& stats) {
    const StatsAccum oracle = cpu_statistics(map.data(), map.size());
    EXPECT_EQ(stats.count, oracle.count);
    EXPECT_EQ(stats.nonfinite, oracle.nonfinite);
    EXPECT_EQ(stats.min, oracle.min);
    EXPECT_EQ(stats.max, oracle.max);
    EXPECT_NEAR(stats.sum, oracle.sum, sum_tolerance(oracle));
  }

  /// Double sums of the same values in another order differ by a few ulp per addition.
  static double sum_tolerance(const StatsAccum& accum) {
    return 1e-12 * static_cast<double>(accum.count) *
               std::max(std::fabs(accum.min), std::fabs(accum.max)) +
           1e-12;
  }

  /// Two maps of the same inputs: the same bits for a deterministic backend, else within
  /// map_tolerance of their max|V|.
  void expect_same_map(const std::vector<float>& a, const std::vector<float>& b,
                       const std::string& what) {
    ASSERT_EQ(a.size(), b.size());
    if (GetParam().deterministic) {
      for (std::size_t n = 0; n < a.size(); ++n) ASSERT_EQ(a[n], b[n]) << what << ", point " << n;
      return;
    }
    double max_abs = 0.0, worst = 0.0;
    for (std::size_t n = 0; n < a.size(); ++n) {
      max_abs = std::max(max_abs, std::fabs(static_cast<double>(a[n])));
      worst = std::max(worst, std::fabs(static_cast<double>(a[n]) - b[n]));
    }
    EXPECT_LE(worst, GetParam().map_tolerance * max_abs) << what;
  }

  static const std::vector<double>& cached_reference(const std::string& key, const System& system,
                                                     const GridSpec& grid, const Physics& physics) {
    static std::map<std::string, std::vector<double>> cache;
    auto found = cache.find(key);
    if (found == cache.end())
      found = cache.emplace(key, reference_grid(system, grid, physics)).first;
    return found->second;
  }

  /// An apbs-data molecule, or a skip naming the missing file (public: the points bodies too).
 public:
  static bool load_apbs(const std::string& relative, System& system) {
    const std::string path = apbs_data_dir() + "/" + relative;
    if (!std::filesystem::exists(path)) return false;
    system = read_pqr_fixture(path);
    return true;
  }

 protected:
  std::unique_ptr<PotentialBackend> backend_;
};

// --- Analytic answers ---------------------------------------------------------------------------

TEST_P(BackendTest, OneChargeGivesFactorQOverREverywhere) {
  const System system = make_system({make_atom(0.31, -0.22, 0.47, 0.7)});
  const GridSpec grid = make_spec({9, 8, 7}, 0.5, {-2.0, -2.0, -1.5});
  Physics physics;
  physics.unit = Unit::KcalPerMolPerE;
  expect_analytic(system, grid, physics);
}

/// The physics models of dcs/physics.hpp beyond the default, and the presets' constants.
inline std::vector<std::pair<std::string, Physics>> model_physics() {
  Physics screened;
  screened.ionic_strength = 0.15;
  screened.dielectric = 78.54;
  Physics strong = screened;  // a Debye length of 1.4 Å: exp(-r/lambda) spans 1e-30 on the grid
  strong.ionic_strength = 4.5;
  strong.dielectric = 20.0;
  Physics distance;
  distance.dielectric_model = DielectricModel::kDistance;
  distance.dielectric = 4.0;
  Physics chimerax = distance;
  chimerax.unit = Unit::KcalPerMolPerE;
  chimerax.coulomb_constant = 331.62;
  Physics pymol;
  pymol.dielectric = 2.0;
  pymol.coulomb_constant = 557.0;
  return {{"debye-hueckel 0.15 M", screened},
          {"debye-hueckel 4.5 M, eps 20", strong},
          {"eps = 4r", distance},
          {"chimerax constants", chimerax},
          {"pymol constants", pymol}};
}

TEST_P(BackendTest, OneChargeUnderEveryModelMatchesTheAnalyticForm) {
  const System system = make_system({make_atom(0.31, -0.17, 0.23, -1.5)});
  const GridSpec grid = make_spec(17, 15, 13, {-6.0, -5.1, -4.4}, {0.73, 0.69, 0.71});
  for (const auto& [label, physics] : model_physics()) {
    SCOPED_TRACE(label);
    if (!GetParam().every_model) {  // a Coulomb-only kernel refuses the model by name
      if (pair_term(physics).kind == PairKind::kCoulomb) continue;
      EXPECT_THROW(backend_->prepare(system, grid, physics), UsageError);
      continue;
    }
    expect_analytic(system, grid, physics);
  }
}

TEST_P(BackendTest, ApbsMoleculeUnderEveryModelMatchesReference) {
  // A real molecule (Debian apbs-data) and a fine box through its middle, where points come
  // within tenths of an Å of atoms, under each model: the fast paths against the float64 loop.
  System system;
  if (!load_apbs("examples/hca-bind/hca.pqr", system))
    GTEST_SKIP() << "apbs-data not installed under " << apbs_data_dir();
  GridRequest fine;
  fine.counts = std::array<std::int64_t, 3>{28, 26, 24};
  fine.spacing = 0.37;
  const GridSpec grid = make_grid(system, fine);
  if (!GetParam().every_model) GTEST_SKIP() << "a Coulomb-only kernel (see the test above)";
  for (const auto& [label, physics] : model_physics()) {
    SCOPED_TRACE(label);
    expect_matches_reference(system, grid, "hca_fine " + label, 0, physics);
  }
}

TEST_P(BackendTest, OneChargeOnAnAnisotropicGrid) {
  // Three spacings and odd counts: every axis's displacement is formed on its own.
  const System system = make_system({make_atom(0.123, 4.567, 3.21, -1.3)});
  expect_analytic(system, make_spec(23, 19, 17, {-3.2, 1.1, 0.7}, {0.37, 0.41, 0.45}), Physics{});
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
  const double tolerance = std::fabs(clamped) * GetParam().point_tolerance;
  EXPECT_NEAR(map[grid.index(3, 3, 3)], clamped, tolerance);
  EXPECT_NEAR(map[grid.index(4, 3, 3)], clamped, tolerance);
  EXPECT_NEAR(map[grid.index(4, 4, 3)], clamped, tolerance);
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
  const System system =
      make_system({make_atom(120.06, 0.06, 0.06, 0.8), make_atom(119.44, -0.44, 0.56, -0.5)});
  expect_analytic(system, grid, Physics{});
}

TEST_P(BackendTest, SmallestAcceptedMinDistanceStaysFinite) {
  // The smallest --min-distance (dcs/limits.hpp) with the largest charge on a grid point.
  Physics physics;
  physics.min_distance = limits::kMinMinDistance;
  physics.unit = Unit::ElementaryChargePerAngstrom;
  const std::vector<float> map =
      compute_grid(*backend_, make_system({make_atom(0, 0, 0, limits::kMaxCharge)}),
                   make_spec({3, 3, 3}, 1.0, {-1, -1, -1}), physics);
  for (float value : map) EXPECT_TRUE(std::isfinite(value));
  const double peak = limits::kMaxCharge / limits::kMinMinDistance;  // 1e12 at the atom
  EXPECT_NEAR(map[13], peak, 1e-5 * peak);
}

// --- Structure: superposition, symmetry, invariance, units
// ----------------------------------------

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
    worst = std::max(worst,
                     std::fabs(static_cast<double>(vab[n]) - (static_cast<double>(va[n]) + vb[n])));
  }
  EXPECT_LE(worst, 3.0 * GetParam().map_tolerance * max_abs);
}

TEST_P(BackendTest, SignFlipNegatesExactly) {
  // Round-to-nearest is symmetric and every step is odd in q, so -q gives exactly -V (a
  // backend that adds with atomics: within its tolerance).
  const System positive = protein_like_system(500, 21);
  System negative = positive;
  for (Atom& atom : negative.atoms) atom.charge = -atom.charge;
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{19, 18, 17};
  const GridSpec grid = make_grid(positive, request);
  const std::vector<float> vp = compute_grid(*backend_, positive, grid, Physics{});
  std::vector<float> vn = compute_grid(*backend_, negative, grid, Physics{});
  for (float& value : vn) value = -value;
  expect_same_map(vp, vn, "-V(-q) vs V(q)");
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

// --- Accuracy against the float64 reference: sizes, chunks, special placements -------------------

TEST_P(BackendTest, ChunkBoundariesMatchReference) {
  // Around the constant-memory chunks of the textbook GPU kernels (2000 atoms) and the 4000-atom
  // chunks of the production kernel and the CPU backends.
  for (std::size_t atoms : {1, 1999, 2000, 2001, 3999, 4000, 4001, 10007}) {
    SCOPED_TRACE("atoms = " + std::to_string(atoms));
    const double side = std::max(std::cbrt(static_cast<double>(atoms) / 0.05), 8.0);
    const System system = random_atoms(atoms, {0.0, 0.0, 0.0}, side, 100 + atoms);
    expect_matches_reference(system, make_spec({12, 11, 10}, 0.6, {-3.3, -3.0, -2.7}),
                             "atoms_" + std::to_string(atoms));
  }
}

TEST_P(BackendTest, OddGridSizesMatchReference) {
  // Row lengths around the SIMD widths (8, 16), the CPU blocks (32, 64) and a GPU block (256),
  // with tails of every length; 129 = the default grid, 2^k + 1.
  const System system = protein_like_system(250, 51);
  for (std::int64_t nx :
       {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 47, 63, 64, 65, 100, 129, 136, 257, 261}) {
    SCOPED_TRACE("nx = " + std::to_string(nx));
    GridRequest request;
    request.counts = std::array<std::int64_t, 3>{nx, 3, 2};
    request.spacing = 0.9;
    expect_matches_reference(system, make_grid(system, request), "nx_" + std::to_string(nx));
  }
  GridRequest odd;
  odd.counts = std::array<std::int64_t, 3>{37, 29, 23};
  expect_matches_reference(system, make_grid(system, odd), "odd_37x29x23");
  const GridSpec one = make_spec({1, 1, 1}, 1.0, {0.25, -0.5, 1.0});
  expect_matches_reference(random_atoms(20, {0.0, 0.0, 0.0}, 10.0, 1, true), one, "grid_1x1x1");
}

TEST_P(BackendTest, AtomsOnGridPointsMatchReference) {
  // Atoms exactly on grid points (the clamp, and the exact path of the production kernel),
  // two on one corner point.
  const GridSpec grid = make_spec({16, 16, 16}, 0.5, {1.0, 2.0, 3.0});
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> index(0, 15);
  std::uniform_real_distribution<double> charge(-1.0, 1.0);
  std::vector<Atom> atoms;
  for (int a = 0; a < 60; ++a) {
    const int i = index(rng), j = index(rng), k = index(rng);
    const double q = charge(rng);
    const Vec3 p = grid.point(i, j, k);
    atoms.push_back(make_atom(p[0], p[1], p[2], q));
  }
  const Vec3 corner = grid.point(15, 0, 15);
  atoms.push_back(make_atom(corner[0], corner[1], corner[2], 0.7));
  atoms.push_back(make_atom(corner[0], corner[1], corner[2], -0.2));
  expect_matches_reference(make_system(std::move(atoms)), grid, "atoms_on_grid_points");
}

TEST_P(BackendTest, AtomsFarOutsideTheGridMatchReference) {
  // Atoms hundreds of Å outside the grid next to atoms inside it.
  System system = random_atoms(80, {3.5, 3.0, 3.0}, 7.0, 14);
  system.atoms.push_back(make_atom(-700.0, 20.0, 3.0, 5.0));
  system.atoms.push_back(make_atom(4.0, 2500.0, -900.0, -5.0));
  expect_matches_reference(system, make_spec({14, 13, 12}, 0.5, {0.0, 0.0, 0.0}), "far_atoms");
}

TEST_P(BackendTest, ProteinLikeRandomSystemMatchesReference) {
  // 6000 atoms (two chunks) far from the coordinate origin, as in a crystal frame: a coarse
  // grid around the whole molecule and a fine box through its middle.
  const System system = protein_like_system(6000, 2026, {60.0, -45.0, 80.0});
  GridRequest coarse;
  coarse.counts = std::array<std::int64_t, 3>{25, 25, 25};
  expect_matches_reference(system, make_grid(system, coarse), "random_6000_coarse");
  GridRequest fine;
  fine.counts = std::array<std::int64_t, 3>{28, 26, 24};
  fine.spacing = 0.37;
  expect_matches_reference(system, make_grid(system, fine), "random_6000_fine");
}

TEST_P(BackendTest, ApbsDataMoleculesMatchReference) {
  // Real molecules from Debian's apbs-data (read with the tests' minimal fixture reader): a
  // grid around the molecule (the default placement) and a fine box through its middle, where
  // many points lie within a few tenths of an Å of atoms.
  const std::vector<std::string> files = {
      "examples/hca-bind/hca.pqr", "examples/misc/mache.pqr", "examples/misc/achbp.pqr",
      "examples/pbsam-barn_bars/barnase.pqr", "examples/actin-dimer/mol1.pqr"};
  int found = 0;
  for (const std::string& file : files) {
    System system;
    if (!load_apbs(file, system)) continue;
    ++found;
    SCOPED_TRACE(file);
    const std::string name = std::filesystem::path(file).stem().string();
    GridRequest coarse;
    coarse.counts = std::array<std::int64_t, 3>{25, 25, 25};
    expect_matches_reference(system, make_grid(system, coarse), name + "_coarse");
    GridRequest fine;
    fine.counts = std::array<std::int64_t, 3>{28, 26, 24};
    fine.spacing = 0.37;
    expect_matches_reference(system, make_grid(system, fine), name + "_fine");
  }
  if (found == 0) GTEST_SKIP() << "apbs-data not installed under " << apbs_data_dir();
}

// --- Slabs, threads and the determinism contract of dcs/backend.hpp ------------------------------

TEST_P(BackendTest, SlabsAnywhereMatchReference) {
  // Slabs that start anywhere (not only at the backend's plane multiple) are still correct.
  const System system = protein_like_system(500, 27);
  const GridSpec grid = make_spec({20, 18, 27}, 0.5, {-5.0, -4.5, -6.5});
  // Named arguments: GCC 13 takes a reference returned from a call with temporaries for a
  // dangling one (-Wdangling-reference).
  const std::string key = "slabs";
  const Physics physics{};
  const std::vector<double>& reference = cached_reference(key, system, grid, physics);
  backend_->prepare(system, grid, Physics{});
  const std::size_t plane = grid.plane_points();
  for (const Slab slab :
       {Slab{0, 1}, Slab{1, 3}, Slab{4, 8}, Slab{12, 9}, Slab{21, 6}, Slab{0, 27}}) {
    SCOPED_TRACE("slab z " + std::to_string(slab.z_begin) + " + " + std::to_string(slab.z_count));
    std::vector<float> out(plane * static_cast<std::size_t>(slab.z_count), NAN);
    const StatsAccum stats = backend_->compute(slab, out.data());
    const std::vector<double> part(
        reference.begin() +
            static_cast<std::ptrdiff_t>(plane * static_cast<std::size_t>(slab.z_begin)),
        reference.begin() + static_cast<std::ptrdiff_t>(
                                plane * static_cast<std::size_t>(slab.z_begin + slab.z_count)));
    const Comparison c = compare(out, part);
    EXPECT_EQ(c.nonfinite, 0u);
    EXPECT_LE(c.max_abs_error, GetParam().map_tolerance * c.max_abs_reference) << c.relative();
    expect_statistics_of(out, stats);
  }
}

TEST_P(BackendTest, PointValuesDoNotDependOnTheSlab) {
  // backend.hpp's contract: a point's value is the same bits whichever slab computes it,
  // provided slabs start at multiples of slab_hint().plane_multiple, including slabs that end
  // inside a kernel's group of planes. Atoms on and next to grid points exercise exact paths.
  const std::int64_t m = std::max<std::int64_t>(1, backend_->slab_hint().plane_multiple);
  const std::int64_t nz = 3 * m + 5;
  const GridSpec grid =
      make_spec(29, 23, nz, {-7.0, -5.5, -0.2 * static_cast<double>(nz)}, {0.5, 0.5, 0.4});
  System system = protein_like_system(1500, 77);
  for (std::int64_t k = 0; k < nz; k += 3) {
    const Vec3 p = grid.point(k % 29, (2 * k) % 23, k);
    system.atoms.push_back(make_atom(p[0], p[1], p[2], k % 2 == 0 ? 0.6 : -0.6));
  }
  backend_->prepare(system, grid, Physics{});
  const std::size_t plane = grid.plane_points();
  std::vector<float> whole(plane * static_cast<std::size_t>(nz));
  const StatsAccum whole_stats = backend_->compute(Slab{0, nz}, whole.data());
  for (const Slab slab :
       {Slab{0, m}, Slab{m, m}, Slab{2 * m, m}, Slab{3 * m, 5}, Slab{0, m + 3}, Slab{m, 3},
        Slab{m, nz - m}, Slab{2 * m, 1}, Slab{3 * m, 2}, Slab{0, 1}, Slab{2 * m, m + 4}}) {
    SCOPED_TRACE("slab [" + std::to_string(slab.z_begin) + ", " +
                 std::to_string(slab.z_begin + slab.z_count) + ")");
    std::vector<float> part(plane * static_cast<std::size_t>(slab.z_count));
    backend_->compute(slab, part.data());
    const auto first =
        whole.begin() + static_cast<std::ptrdiff_t>(plane * static_cast<std::size_t>(slab.z_begin));
    expect_same_map(
        part, std::vector<float>(first, first + static_cast<std::ptrdiff_t>(part.size())), "slab");
  }
  // In whole slabs of m planes, the combined statistics equal the single slab's.
  StatsAccum slab_stats;
  for (std::int64_t z = 0; z < nz; z += m) {
    const Slab slab{z, std::min(m, nz - z)};
    std::vector<float> part(plane * static_cast<std::size_t>(slab.z_count));
    slab_stats = StatsAccum::combine(slab_stats, backend_->compute(slab, part.data()));
  }
  EXPECT_EQ(slab_stats.count, whole_stats.count);
  if (GetParam().deterministic) {
    EXPECT_EQ(slab_stats.min, whole_stats.min);
    EXPECT_EQ(slab_stats.max, whole_stats.max);
  }
  EXPECT_NEAR(slab_stats.sum, whole_stats.sum,
              sum_tolerance(whole_stats) + 1e-6 * std::fabs(whole_stats.sum));
}

TEST_P(BackendTest, ThreadCountDoesNotChangeTheMap) {
  // CPU worker threads split rows; a GPU backend ignores the option. Either way the same bits.
  const System system = protein_like_system(700, 71);
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{23, 7, 5};
  const GridSpec grid = make_grid(system, request);
  const std::vector<float> expected = compute_grid(*create(1), system, grid, Physics{});
  for (unsigned threads : {2u, 3u, 7u, 64u}) {
    SCOPED_TRACE("threads = " + std::to_string(threads));
    expect_same_map(compute_grid(*create(threads), system, grid, Physics{}), expected, "threads");
  }
}

// --- Statistics and the interface ---------------------------------------------------------------

TEST_P(BackendTest, StatisticsAndDifferenceMatchTheCpuOracle) {
  // Large enough for threaded and multi-block reductions to split the work.
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
  EXPECT_EQ(backend_->name(), GetParam().backend);
  EXPECT_EQ(backend_->kernel_name(), GetParam().kernel);
  EXPECT_FALSE(backend_->reduction_name().empty());
  EXPECT_FALSE(backend_->device_name().empty());
  EXPECT_GT(backend_->tolerance(), 0.0);
  EXPECT_LE(backend_->tolerance(), kRelativeTolerance);
  const System system = protein_like_system(50, 91);
  GridRequest request;
  request.counts = std::array<std::int64_t, 3>{4, 4, 4};
  compute_grid(*backend_, system, make_grid(system, request), Physics{});
  EXPECT_GT(backend_->timings().kernels, 0.0);
}

TEST_P(BackendTest, RefusesEmptySystemsBadPhysicsAndSlabsOutsideTheGrid) {
  const GridSpec grid = make_spec({3, 3, 3}, 1.0, {0.0, 0.0, 0.0});
  std::vector<float> out(27);
  EXPECT_THROW(backend_->prepare(System{}, grid, Physics{}), UsageError);
  Physics bad;
  bad.dielectric = 0.0;
  EXPECT_THROW(backend_->prepare(make_system({make_atom(0, 0, 0, 1)}), grid, bad), UsageError);
  EXPECT_THROW(create()->compute(Slab{0, 1}, out.data()), UsageError) << "compute before prepare";
  backend_->prepare(make_system({make_atom(0.5, 0.5, 0.5, 1)}), grid, Physics{});
  EXPECT_THROW(backend_->compute(Slab{2, 2}, out.data()), UsageError);
  EXPECT_THROW(backend_->compute(Slab{-1, 1}, out.data()), UsageError);
  EXPECT_NO_THROW(backend_->compute(Slab{2, 1}, out.data()));
}

}  // namespace dcs::test
