// Multilevel summation (dcs/msm.hpp) against analytic answers and the float64 reference:
// its interpolation basis and splitting, one charge at many positions (q/r), real molecules
// (data/2lzt.pqr and apbs-data) at every error target of the parameter table, the same bits for
// any slab split and thread count, and the errors it must raise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/msm.hpp"
#include "dcs/parallel.hpp"
#include "fft_convolution.hpp"
#include "lattice.hpp"
#include "msm_cases.hpp"
#include "splitting.hpp"
#include "test_systems.hpp"

namespace dcs::test {
namespace {

std::unique_ptr<PotentialBackend> msm_backend(const MsmParameters& parameters,
                                              unsigned threads = 0) {
  const BackendOptions options = cpu_options(threads);
  return make_msm_backend(make_cpu_fast_backend(options), parameters, options);
}

// --- Building blocks --------------------------------------------------------------------------

TEST(MsmBasis, IsNodalAndReproducesPolynomialsOfItsDegree) {
  for (const int order : {4, 6}) {
    const msm::Basis basis(order);
    EXPECT_EQ(basis.phi(0.0), 1.0);
    for (int n = 1; n <= order; ++n) EXPECT_NEAR(basis.phi(n), 0.0, 1e-15) << order << " " << n;
    // sum_m m^d Phi(t - m) = t^d for d <= order - 2 (cubic: 2, quintic: 4), not beyond
    for (int degree = 0; degree <= order - 1; ++degree) {
      double worst = 0.0;
      for (double t = -0.5; t <= 0.5; t += 0.0625) {
        double sum = 0.0;
        for (int m = -8; m <= 8; ++m) sum += std::pow(m, degree) * basis.phi(t - m);
        worst = std::max(worst, std::fabs(sum - std::pow(t, degree)));
      }
      if (degree <= order - 2) EXPECT_LT(worst, 1e-12) << "order " << order << " degree " << degree;
      else EXPECT_GT(worst, 1e-3) << "order " << order << " degree " << degree;
    }
    // The weights of a point are Phi at its distances to the base's lattice points.
    double w[6];
    const long base = basis.weights(2.3, w);
    EXPECT_EQ(base, 2 - order / 2 + 1);
    for (int j = 0; j < order; ++j) EXPECT_EQ(w[j], basis.phi(2.3 - static_cast<double>(base + j)));
    // C1: value and slope continuous at the knots
    for (int knot = 1; knot <= order / 2; ++knot) {
      const double e = 1e-6;
      EXPECT_NEAR(basis.phi(knot - e), basis.phi(knot + e), 1e-5);
      const double left = (basis.phi(knot - e) - basis.phi(knot - 2 * e)) / e;
      const double right = (basis.phi(knot + 2 * e) - basis.phi(knot + e)) / e;
      EXPECT_NEAR(left, right, 1e-4) << "order " << order << " knot " << knot;
    }
  }
  // The two-scale weights of the cubic: -1/16, 0, 9/16, 1, 9/16, 0, -1/16.
  const msm::Basis cubic(4);
  EXPECT_EQ(cubic.two_scale(1), 9.0 / 16.0);
  EXPECT_EQ(cubic.two_scale(3), -1.0 / 16.0);
  EXPECT_EQ(cubic.two_scale(2), 0.0);
}

TEST(MsmSplitting, SoftensOneOverRSmoothlyAtOne) {
  for (int k = 1; k <= 6; ++k) {
    const msm::Splitting split(k);
    EXPECT_NEAR(split.inner(1.0), 1.0, 1e-15);
    // d^n/ds^n of the polynomial and of s^(-1/2) agree at s = 1 for n <= k: compare values
    // just inside and outside to O(e^(k+1)).
    const double e = 1e-3;
    EXPECT_NEAR(split.inner(1.0 - e), 1.0 / std::sqrt(1.0 - e), 2.0 * std::pow(e, k + 1));
    // bounded and decreasing inside
    for (double s = 0.0; s < 1.0; s += 0.01)
      EXPECT_GT(split.inner(s), split.inner(s + 0.01) - 1e-12);
    EXPECT_EQ(split.gamma(4.0), 0.5);
  }
  const msm::Splitting c2(2);
  EXPECT_DOUBLE_EQ(c2.inner(0.0), 15.0 / 8.0);  // 15/8 - 5/4 s + 3/8 s^2
}

// The FFT lattice sum against the direct one: lattices smaller and larger than the stencil
// (aliasing of the padded kernel), odd extents, charges only in part of the lattice.
TEST(MsmLatticeSum, FftAgreesWithTheDirectStencilSum) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> charge(-1.0, 1.0);
  ThreadPool pool(3);
  for (const std::array<long, 3> n :
       {std::array<long, 3>{5, 4, 3}, std::array<long, 3>{23, 17, 30}}) {
    for (const long r : {2L, 7L}) {
      msm::Lattice q, direct, fft;
      q.resize({-2, 1, 0}, n);
      for (std::size_t i = 0; i < q.v.size(); ++i) q.v[i] = i % 3 == 0 ? charge(rng) : 0.0;
      msm::Stencil K;
      K.r = {r, r, r};
      for (long dz = -r; dz <= r; ++dz)
        for (long dy = -r; dy <= r; ++dy)
          for (long dx = -r; dx <= r; ++dx) {
            const double d2 = static_cast<double>(dx * dx + dy * dy + dz * dz);
            K.v.push_back(d2 < static_cast<double>(r * r) ? 1.0 / (1.0 + d2) : 0.0);
          }
      direct.resize(q.lo, q.n);
      fft.resize(q.lo, q.n);
      msm::direct_lattice_sum(q, K, 0.5, direct, pool);
      msm::fft_lattice_sum(q, K, 0.5, fft, msm::fft_plan(q.n, K.r), pool);
      double worst = 0.0, scale = 0.0;
      for (std::size_t i = 0; i < q.v.size(); ++i) {
        worst = std::max(worst, std::fabs(fft.v[i] - direct.v[i]));
        scale = std::max(scale, std::fabs(direct.v[i]));
      }
      EXPECT_LT(worst, 1e-12 * scale) << n[0] << "x" << n[1] << "x" << n[2] << " r " << r;
      EXPECT_GT(scale, 0.0);
    }
  }
}

TEST(MsmParameters, TableTightensWithTheTargetAndRejectsNonsense) {
  double last_cost = 0.0;
  for (const double target : kMsmTargets) {
    const MsmParameters p = msm_parameters(target);
    EXPECT_EQ(p.target, target);
    EXPECT_NO_THROW(validate(p));
    const double cost = std::pow(p.cutoff / p.spacing, 3) * p.order;
    EXPECT_GE(cost, last_cost) << describe(p);
    last_cost = cost;
  }
  EXPECT_THROW(msm_parameters(0.0), UsageError);
  EXPECT_THROW(msm_parameters(1e-7), UsageError);
  EXPECT_THROW(msm_parameters(0.5), UsageError);
  MsmParameters bad;
  bad.order = 5;
  EXPECT_THROW(validate(bad), UsageError);
  bad = {};
  bad.cutoff = 1.0;
  EXPECT_THROW(validate(bad), UsageError);
}

// --- Accuracy ---------------------------------------------------------------------------------

// One charge at positions on and off the lattice; the exact answer is C q / max(r, r_min).
TEST(MsmAccuracy, OneChargeAtManyPositionsGivesQOverR) {
  std::mt19937_64 rng(25);
  std::uniform_real_distribution<double> offset(-3.0, 3.0);
  Physics physics;
  physics.unit = Unit::KcalPerMolPerE;
  for (const double target : kMsmTargets) {
    const MsmParameters parameters = msm_parameters(target);
    auto backend = msm_backend(parameters);
    double worst = 0.0;
    for (int trial = 0; trial < 6; ++trial) {
      const System system =
          make_system({make_atom(offset(rng), offset(rng), offset(rng), trial % 2 ? -0.8 : 1.3)});
      const GridSpec grid = make_spec({33, 30, 31}, 1.1, {-17.0, -16.0, -15.5});
      const std::vector<float> map = compute_grid(*backend, system, grid, physics);
      worst = std::max(worst, relative_rms(map, reference_grid(system, grid, physics)));
    }
    std::printf("one charge, target %.0e (%s): measured relative RMS %.3e\n", target,
                describe(parameters).c_str(), worst);
    EXPECT_LE(worst, target) << describe(parameters);
  }
}

// A map beside the molecule, not around it: most of its points have no atom within a, and
// the lattice spans both boxes.
TEST(MsmAccuracy, MapBesideTheMoleculeMeetsTheTarget) {
  const System system = protein_like_system(800, 11);
  const GridSpec grid = make_spec({24, 20, 22}, 0.9, {14.0, -9.0, -10.0});
  for (const double target : {1e-2, 1e-3}) {
    auto backend = msm_backend(msm_parameters(target));
    const double error = relative_rms(compute_grid(*backend, system, grid, Physics{}),
                                      reference_grid(system, grid, Physics{}));
    std::printf("map beside 800 atoms, target %.0e: measured relative RMS %.3e\n", target, error);
    EXPECT_LE(error, target);
  }
}

const std::vector<MsmMoleculeCase>& molecules() {
  static const std::vector<MsmMoleculeCase> list = {
      {"2lzt", std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr", false, 65},
      {"hca", "examples/hca-bind/hca.pqr", true, 65},
      {"1a63", "examples/geoflow/1a63.pqr", true, 65},
      {"actin-dimer", "examples/actin-dimer/complex.pqr", true, 49},
  };
  return list;
}

class MsmMolecule : public ::testing::TestWithParam<MsmMoleculeCase> {};

TEST_P(MsmMolecule, MeetsEveryErrorTarget) {
  const MsmLoadedCase* c = load_msm_case(GetParam());
  if (c == nullptr) GTEST_SKIP() << GetParam().path << " is not installed";
  for (const double target : kMsmTargets) {
    const MsmParameters parameters = msm_parameters(target);
    auto backend = msm_backend(parameters);
    const std::vector<float> map = compute_grid(*backend, c->system, c->grid, Physics{});
    const double error = relative_rms(map, c->reference);
    std::printf("%s (%zu atoms, %lld^3), target %.0e (%s): measured relative RMS %.3e\n",
                GetParam().name.c_str(), c->system.size(), static_cast<long long>(c->grid.nx()),
                target, describe(parameters).c_str(), error);
    EXPECT_LE(error, target) << GetParam().name << " " << describe(parameters);
  }
}

INSTANTIATE_TEST_SUITE_P(Molecules, MsmMolecule, ::testing::ValuesIn(molecules()),
                         [](const ::testing::TestParamInfo<MsmMoleculeCase>& param) {
                           std::string name = param.param.name;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// A wrong MSM must fail: a splitting too rough for its lattice misses 1e-3 by far.
TEST(MsmAccuracy, CoarseParametersMissATightTargetSoTheTestsCanFail) {
  const MsmLoadedCase* c = load_msm_case(molecules()[0]);
  ASSERT_NE(c, nullptr);
  MsmParameters coarse{6.0, 12.0, 4, 1, 1e-3};
  auto backend = msm_backend(coarse);
  const double error =
      relative_rms(compute_grid(*backend, c->system, c->grid, Physics{}), c->reference);
  std::printf("2lzt with %s: relative RMS %.3e\n", describe(coarse).c_str(), error);
  EXPECT_GT(error, 1e-3);
}

// --- Determinism ------------------------------------------------------------------------------

// Every thread count with every slab size; under the sanitizers (DCS_TEST_SANITIZED=1, the
// "sanitize" test preset: 21 s instead of 3.6 s) each thread count with one slab size, a different
// one for each (2 with 1, 3 with 5, 7 with 16), so every thread count and every slab size still
// runs sanitized, for both targets.
TEST(MsmDeterminism, SameBitsForAnySlabSplitAndThreadCount) {
  const char* sanitized_env = std::getenv("DCS_TEST_SANITIZED");
  const bool sanitized = sanitized_env != nullptr && std::string(sanitized_env) == "1";
  const System system = protein_like_system(1500, 7);
  const GridSpec grid = default_grid(system, 33);
  const Physics physics;
  // 1e-4's level-0 sum goes by FFT, the others' directly
  for (const double target : {1e-2, 1e-4}) {
    const MsmParameters parameters = msm_parameters(target);
    auto one = msm_backend(parameters, 1);
    const std::vector<float> whole = compute_grid(*one, system, grid, physics);
    std::size_t thread_index = 0;
    for (const unsigned threads : {2u, 3u, 7u}) {
      std::size_t plane_index = 0;
      for (const std::int64_t planes : {1, 5, 16}) {
        if (sanitized && plane_index++ != thread_index) continue;
        auto many = msm_backend(parameters, threads);
        StatsAccum stats_many, stats_one;
        const std::vector<float> sliced =
            compute_grid(*many, system, grid, physics, planes, &stats_many);
        ASSERT_EQ(0, std::memcmp(whole.data(), sliced.data(), whole.size() * sizeof(float)))
            << threads << " threads, slabs of " << planes;
      }
      ++thread_index;
    }
  }
}

TEST(MsmDeterminism, PlaneStatisticsAreThoseOfThePlanes) {
  const System system = protein_like_system(300, 3);
  const GridSpec grid = default_grid(system, 21);
  auto backend = msm_backend(msm_parameters(1e-3), 2);
  backend->prepare(system, grid, Physics{});
  std::vector<float> out(grid.points());
  std::vector<StatsAccum> planes(static_cast<std::size_t>(grid.nz()));
  backend->compute_slab({0, grid.nz()}, out.data(), planes.data());
  for (std::int64_t z = 0; z < grid.nz(); ++z) {
    const StatsAccum expected = cpu_statistics(
        out.data() + static_cast<std::size_t>(z) * grid.plane_points(), grid.plane_points());
    EXPECT_EQ(planes[static_cast<std::size_t>(z)].sum, expected.sum);
    EXPECT_EQ(planes[static_cast<std::size_t>(z)].min, expected.min);
    EXPECT_EQ(planes[static_cast<std::size_t>(z)].count, expected.count);
  }
}

// --- Errors -----------------------------------------------------------------------------------

TEST(MsmErrors, EmptySystemAndOtherModelsAreRefused) {
  auto backend = msm_backend(msm_parameters(1e-3));
  const GridSpec grid = make_spec({8, 8, 8}, 1.0, {0.0, 0.0, 0.0});
  EXPECT_THROW(backend->prepare(make_system({}), grid, Physics{}), UsageError);
  const System one = make_system({make_atom(1.0, 2.0, 3.0, 1.0)});
  Physics screened;
  screened.ionic_strength = 0.15;
  screened.dielectric = kWaterDielectric;
  try {
    backend->prepare(one, grid, screened);
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("--method msm supports the Coulomb model only"),
              std::string::npos)
        << error.what();
  }
  Physics distance;
  distance.dielectric_model = DielectricModel::kDistance;
  distance.dielectric = 4.0;
  EXPECT_THROW(backend->prepare(one, grid, distance), UsageError);
  std::vector<float> out(grid.points());
  auto fresh = msm_backend(msm_parameters(1e-3));
  EXPECT_THROW(fresh->compute(Slab{0, 1}, out.data()), UsageError);
}

// --- Calibration (run by hand: --gtest_also_run_disabled_tests) ---------------------------------
// DCS_MSM_SWEEP="h a order k;h a order k;..." prints each molecule's error and time per set.
TEST(MsmCalibration, DISABLED_Sweep) {
  const char* env = std::getenv("DCS_MSM_SWEEP");
  if (env == nullptr) GTEST_SKIP() << "set DCS_MSM_SWEEP";
  std::vector<MsmParameters> sets;
  std::string text(env);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find(';', at), text.size());
    MsmParameters p;
    if (std::sscanf(text.substr(at, end - at).c_str(), "%lf %lf %d %d", &p.spacing, &p.cutoff,
                    &p.order, &p.split) == 4)
      sets.push_back(p);
    at = end + 1;
  }
  const char* only = std::getenv("DCS_MSM_SWEEP_ONLY");  // "hca,1a63": these molecules only
  for (const MsmMoleculeCase& molecule : molecules()) {
    if (only != nullptr && std::string(only).find(molecule.name) == std::string::npos) continue;
    const MsmLoadedCase* c = load_msm_case(molecule);
    if (c == nullptr) continue;
    for (const MsmParameters& p : sets) {
      auto backend = msm_backend(p);
      const auto start = std::chrono::steady_clock::now();
      const std::vector<float> map = compute_grid(*backend, c->system, c->grid, Physics{});
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf("%-12s %-45s rel RMS %.3e  %.3f s\n", molecule.name.c_str(), describe(p).c_str(),
                  relative_rms(map, c->reference), seconds);
    }
  }
}

}  // namespace
}  // namespace dcs::test

namespace dcs::test {
namespace {

// Time against the exact cpu-fast backend (run by hand): DCS_MSM_TIME_GRID=128 (default) on
// DCS_MSM_TIME_PQR (default data/2lzt.pqr), DCS_MSM_TIME_THREADS threads (0: all).
TEST(MsmTiming, DISABLED_AgainstExact) {
  const char* grid_env = std::getenv("DCS_MSM_TIME_GRID");
  const char* threads_env = std::getenv("DCS_MSM_TIME_THREADS");
  const std::int64_t n = grid_env ? std::atoll(grid_env) : 128;
  BackendOptions options;
  options.threads = threads_env ? static_cast<unsigned>(std::atoi(threads_env)) : 0u;
  const char* pqr_env = std::getenv("DCS_MSM_TIME_PQR");
  const System system =
      read_pqr_fixture(pqr_env ? pqr_env : std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr");
  const GridSpec grid = default_grid(system, n);
  auto time = [&](PotentialBackend& backend, std::vector<float>& map) {
    const auto start = std::chrono::steady_clock::now();
    map = compute_grid(backend, system, grid, Physics{});
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  std::vector<float> exact_map, map;
  auto exact = make_cpu_fast_backend(options);
  const double exact_seconds = time(*exact, exact_map);
  std::printf("%s (%zu atoms) %lld^3, cpu-fast (%s): %.3f s\n", system.source_path.c_str(),
              system.size(), static_cast<long long>(n), exact->device_name().c_str(),
              exact_seconds);
  for (const double target : kMsmTargets) {
    auto backend =
        make_msm_backend(make_cpu_fast_backend(options), msm_parameters(target), options);
    const double seconds = time(*backend, map);
    std::vector<double> reference(exact_map.begin(), exact_map.end());
    std::printf("  msm %.0e (%s): %.3f s (prepare %.3f s), %.2fx exact; rel RMS vs cpu-fast %.2e\n",
                target, backend->kernel_name().c_str(), seconds, backend->timings().upload,
                exact_seconds / seconds, relative_rms(map, reference));
  }
}

}  // namespace
}  // namespace dcs::test
