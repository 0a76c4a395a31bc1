// The periodic (Ewald) potential (libdcs/src/periodic/): known answers (the Madelung constants
// of rock salt and CsCl), the gauge (mean over the cell 0, so no dependence on β), invariance
// under lattice translations and under another basis of the same lattice, smooth PME against
// the float64 Ewald sum at the default accuracy for every B-spline order, and the same bits
// for any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/periodic/bspline.hpp"
#include "dcs/periodic/ewald_reference.hpp"
#include "dcs/periodic/periodic_potential.hpp"

namespace dcs::periodic {
namespace {

struct Charges {
  std::vector<Vec3> positions;
  std::vector<double> charges;
};

bool sanitized() {
  const char* env = std::getenv("DCS_TEST_SANITIZED");
  return env != nullptr && std::string(env) == "1";
}

/// Rock salt's conventional cubic cell: 4 Na+ on the fcc sites, 4 Cl- between them.
Charges rock_salt(double a) {
  Charges c;
  const double h = 0.5 * a;
  for (const Vec3& r : {Vec3{0, 0, 0}, Vec3{0, h, h}, Vec3{h, 0, h}, Vec3{h, h, 0}})
    c.positions.push_back(r), c.charges.push_back(1.0);
  for (const Vec3& r : {Vec3{h, 0, 0}, Vec3{0, h, 0}, Vec3{0, 0, h}, Vec3{h, h, h}})
    c.positions.push_back(r), c.charges.push_back(-1.0);
  return c;
}

/// `n` random charges (fixed seed) in `cell`, uniform in fractional coordinates, charges in
/// [-1, 1] shifted so that they sum to `net`.
Charges random_charges(const UnitCell& cell, std::size_t n, double net, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0), charge(-1.0, 1.0);
  Charges c;
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    c.positions.push_back(cell.to_cartesian(Vec3{unit(rng), unit(rng), unit(rng)}));
    c.charges.push_back(charge(rng));
    sum += c.charges.back();
  }
  for (double& q : c.charges) q += (net - sum) / double(n);
  return c;
}

std::vector<Vec3> random_points(const UnitCell& cell, std::size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> span(-0.2, 1.2);  // also outside the home cell
  std::vector<Vec3> points;
  for (std::size_t i = 0; i < n; ++i)
    points.push_back(cell.to_cartesian(Vec3{span(rng), span(rng), span(rng)}));
  return points;
}

double relative_rms(const std::vector<double>& value, const std::vector<double>& reference) {
  double diff = 0.0, norm = 0.0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    diff += (value[i] - reference[i]) * (value[i] - reference[i]);
    norm += reference[i] * reference[i];
  }
  return std::sqrt(diff / norm);
}

/// The oracle's parameters: accuracy 1e-12 (k up to 2β·5.3, erfc(β rc) ~ 1e-12).
EwaldParameters tight(const UnitCell& cell) {
  PeriodicSettings settings;
  settings.accuracy = 1e-12;
  settings.real_cutoff = 12.0;
  return choose_ewald_parameters(cell, settings);
}

double reference_energy(const Charges& c, const UnitCell& cell) {
  const auto phi = ewald_reference_at_atoms(c.positions, c.charges, cell, tight(cell));
  double e = 0.0;
  for (std::size_t i = 0; i < phi.size(); ++i) e += c.charges[i] * phi[i];
  return 0.5 * e;
}

const UnitCell kTruncatedOctahedron =
    UnitCell::from_lengths_angles({30.0, 30.0, 30.0}, {109.4712206, 109.4712206, 109.4712206});
const UnitCell kOrthorhombic = UnitCell::from_lengths_angles({24.0, 28.0, 32.0}, {90, 90, 90});

TEST(BSpline, WeightsArePartitionOfUnityAndMatchClosedFormOfOrder4) {
  for (int order = 4; order <= 8; ++order) {
    for (const double t : {0.0, 0.123, 0.5, 0.999}) {
      std::array<double, detail::kMaxOrder> w{};
      detail::bspline_weights(t, order, w.data());
      double sum = 0.0;
      for (int m = 0; m < order; ++m) sum += w[std::size_t(m)];
      EXPECT_NEAR(sum, 1.0, 1e-14) << "order " << order << " t " << t;
    }
  }
  // M_4(x) = x³/6 on [0, 1], (-3x³ + 12x² - 12x + 4)/6 on [1, 2]: w[0] = M_4(t), w[1] = M_4(t+1).
  std::array<double, detail::kMaxOrder> w{};
  detail::bspline_weights(0.3, 4, w.data());
  const double x = 1.3;
  EXPECT_NEAR(w[0], 0.3 * 0.3 * 0.3 / 6.0, 1e-15);
  EXPECT_NEAR(w[1], (-3 * x * x * x + 12 * x * x - 12 * x + 4) / 6.0, 1e-15);
}

// E = -M N / r0 for N ion pairs at nearest-neighbour distance r0 (e²/Å).
TEST(Madelung, RockSalt) {
  const double a = 5.64, r0 = a / 2, madelung = 1.747564594633;
  const UnitCell cell = UnitCell::from_lengths_angles({a, a, a}, {90, 90, 90});
  const Charges c = rock_salt(a);
  const double expected = -madelung * 4.0 / r0;
  EXPECT_NEAR(reference_energy(c, cell) / expected, 1.0, 1e-10);
  EXPECT_NEAR(ewald_energy(c.positions, c.charges, cell) / expected, 1.0, 1e-5);
  // Every ion sits at -q M / r0.
  const auto phi = periodic_potential_at_atoms(c.positions, c.charges, cell);
  for (std::size_t i = 0; i < phi.size(); ++i)
    EXPECT_NEAR(phi[i], -c.charges[i] * madelung / r0, 1e-5 * madelung / r0) << "ion " << i;
}

TEST(Madelung, CesiumChloride) {
  const double a = 4.12, r0 = a * std::sqrt(3.0) / 2, madelung = 1.762674773070;
  const UnitCell cell = UnitCell::from_lengths_angles({a, a, a}, {90, 90, 90});
  const Charges c{{Vec3{0, 0, 0}, Vec3{a / 2, a / 2, a / 2}}, {1.0, -1.0}};
  const double expected = -madelung / r0;
  EXPECT_NEAR(reference_energy(c, cell) / expected, 1.0, 1e-10);
  EXPECT_NEAR(ewald_energy(c.positions, c.charges, cell) / expected, 1.0, 1e-5);
  // The same through a System, which carries its own cell.
  System system;
  system.cell = cell;
  for (std::size_t i = 0; i < c.positions.size(); ++i) {
    Atom atom;
    atom.position = c.positions[i];
    atom.charge = c.charges[i];
    system.atoms.push_back(atom);
  }
  EXPECT_EQ(ewald_energy(system), ewald_energy(c.positions, c.charges, cell));
  EXPECT_EQ(periodic_potential_at_atoms(system),
            periodic_potential_at_atoms(c.positions, c.charges, cell));
  EXPECT_EQ(periodic_potential_at(system, c.positions),
            periodic_potential_at(c.positions, c.charges, cell, c.positions));
}

// A single charge in a cell with its neutralising background: the potential's mean over the
// cell is 0 (the gauge), whatever β. Midpoint rule on a 40³ grid that misses the charge.
TEST(Gauge, SingleChargeAveragesToZeroForAnyBeta) {
  const UnitCell cell = UnitCell::from_lengths_angles({12.0, 13.0, 14.0}, {80, 95, 100});
  const Charges c{{cell.to_cartesian(Vec3{0.5, 0.5, 0.5})}, {1.0}};
  const int n = sanitized() ? 20 : 40;
  std::vector<Vec3> points;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        points.push_back(cell.to_cartesian(Vec3{(i + 0.5) / n, (j + 0.5) / n, (k + 0.5) / n}));
  std::vector<std::vector<double>> maps;
  for (const double cutoff : {6.0, 11.0}) {
    PeriodicSettings settings;
    settings.real_cutoff = cutoff;
    settings.min_distance = 0.0;
    maps.push_back(periodic_potential_at(c.positions, c.charges, cell, points, settings));
    double mean = 0.0, peak = 0.0;
    for (const double v : maps.back()) mean += v, peak = std::max(peak, std::abs(v));
    mean /= double(points.size());
    // A missing or wrong background would leave ±πQ/(β²V) ≈ 0.01-0.05 e/Å here.
    EXPECT_LT(std::abs(mean), 2e-3) << "cutoff " << cutoff << ", peak " << peak;
  }
  EXPECT_LT(relative_rms(maps[0], maps[1]), 1e-5);
}

// Moving every atom by a lattice vector changes no potential; nor does moving atoms and
// points together by any vector.
TEST(Invariance, LatticeTranslation) {
  const UnitCell& cell = kTruncatedOctahedron;
  const Charges c = random_charges(cell, 120, 2.0, 7);
  const auto points = random_points(cell, 50, 8);
  Charges moved = c, shifted = c;
  const Mat3& v = cell.vectors();
  const Vec3 t{0.37, -2.1, 5.3};
  for (std::size_t i = 0; i < c.positions.size(); ++i)
    for (int k = 0; k < 3; ++k) {
      moved.positions[i][k] += 2 * v[0][k] - v[1][k] + 3 * v[2][k];
      shifted.positions[i][k] += t[k];
    }
  std::vector<Vec3> shifted_points = points;
  for (Vec3& p : shifted_points)
    for (int k = 0; k < 3; ++k) p[k] += t[k];
  const auto base = periodic_potential_at(c.positions, c.charges, cell, points);
  EXPECT_LT(relative_rms(periodic_potential_at(moved.positions, c.charges, cell, points), base),
            1e-12);
  EXPECT_LT(
      relative_rms(periodic_potential_at(shifted.positions, c.charges, cell, shifted_points), base),
      1e-6);
  EXPECT_LT(relative_rms(periodic_potential_at_atoms(moved.positions, c.charges, cell),
                         periodic_potential_at_atoms(c.positions, c.charges, cell)),
            1e-12);
}

// A cubic lattice described by the skewed basis a, a + b, a + c gives the same potentials.
TEST(Invariance, AnotherBasisOfTheSameLattice) {
  const double l = 18.0;
  const UnitCell cubic = UnitCell::from_lengths_angles({l, l, l}, {90, 90, 90});
  const UnitCell skewed = UnitCell::from_lengths_angles({l, l * std::sqrt(2.0), l * std::sqrt(2.0)},
                                                        {60.0, 45.0, 45.0});
  ASSERT_NEAR(skewed.volume(), cubic.volume(), 1e-9 * cubic.volume());
  ASSERT_NEAR(skewed.vectors()[1][0], l, 1e-12);  // b = (l, l, 0), c = (l, 0, l)
  ASSERT_NEAR(skewed.vectors()[2][0], l, 1e-12);
  const Charges c = random_charges(cubic, 100, -1.0, 11);
  const auto points = random_points(cubic, 60, 12);
  const auto a = periodic_potential_at(c.positions, c.charges, cubic, points);
  const auto b = periodic_potential_at(c.positions, c.charges, skewed, points);
  EXPECT_LT(relative_rms(b, a), 1e-5);
  const auto ra = ewald_reference_at(c.positions, c.charges, cubic, points, tight(cubic), 0.0);
  const auto rb = ewald_reference_at(c.positions, c.charges, skewed, points, tight(skewed), 0.0);
  EXPECT_LT(relative_rms(rb, ra), 1e-10);
  EXPECT_LT(relative_rms(a, ra), 1e-5);
}

// The oracle does not depend on its own β: at accuracy 1e-12 with a 12 Å cutoff and at
// reference_parameters() (a 1e-8 accuracy, a 20 Å cutoff here) it gives the same values.
TEST(Reference, IndependentOfItsSplitting) {
  const UnitCell& cell = kTruncatedOctahedron;
  const Charges c = random_charges(cell, sanitized() ? 40 : 150, -2.0, 41);
  const auto points = random_points(cell, 40, 42);
  const EwaldParameters check = reference_parameters(cell, PeriodicSettings{});
  EXPECT_EQ(check.real_cutoff, std::max(20.0, 0.5 * cell.shortest_width()));
  EXPECT_LT(check.beta, tight(cell).beta);
  const auto a = ewald_reference_at(c.positions, c.charges, cell, points, tight(cell), 0.0);
  const auto b = ewald_reference_at(c.positions, c.charges, cell, points, check, 0.0);
  EXPECT_LT(relative_rms(b, a), 1e-8);
  EXPECT_LT(relative_rms(ewald_reference_at_atoms(c.positions, c.charges, cell, check),
                         ewald_reference_at_atoms(c.positions, c.charges, cell, tight(cell))),
            1e-8);
}

struct PmeCase {
  const char* name;
  const UnitCell* cell;
  int order;
};

void PrintTo(const PmeCase& pme_case, std::ostream* out) { *out << pme_case.name; }

class PmeAgainstReference : public ::testing::TestWithParam<PmeCase> {};

// Smooth PME (default accuracy 1e-5) against the float64 Ewald sum at accuracy 1e-12, at random
// points and at the atoms, for a net-charged set of random charges.
TEST_P(PmeAgainstReference, RelativeRmsWithinDefaultAccuracy) {
  const UnitCell& cell = *GetParam().cell;
  const std::size_t atoms = sanitized() ? 60 : 300;
  const Charges c = random_charges(cell, atoms, 3.0, 21);
  const auto points = random_points(cell, sanitized() ? 40 : 200, 22);
  PeriodicSettings settings;
  settings.order = GetParam().order;
  settings.min_distance = 0.0;
  const PeriodicPotential pme(c.positions, c.charges, cell, settings);
  const auto reference = ewald_reference_at(c.positions, c.charges, cell, points, tight(cell), 0.0);
  const double at_points = relative_rms(pme.potential_at(points), reference);
  const auto at_atoms_reference =
      ewald_reference_at_atoms(c.positions, c.charges, cell, tight(cell));
  const double at_atoms = relative_rms(pme.potential_at_atoms(), at_atoms_reference);
  EXPECT_LT(at_points, 1e-5) << pme.parameters().describe();
  EXPECT_LT(at_atoms, 1e-5) << pme.parameters().describe();
  RecordProperty("relative_rms_points", fmt::format("{:.2e}", at_points));
  RecordProperty("relative_rms_atoms", fmt::format("{:.2e}", at_atoms));
}

INSTANTIATE_TEST_SUITE_P(Cells, PmeAgainstReference,
                         ::testing::Values(PmeCase{"orthorhombic_order4", &kOrthorhombic, 4},
                                           PmeCase{"orthorhombic_order5", &kOrthorhombic, 5},
                                           PmeCase{"orthorhombic_order6", &kOrthorhombic, 6},
                                           PmeCase{"orthorhombic_order8", &kOrthorhombic, 8},
                                           PmeCase{"octahedron_order4", &kTruncatedOctahedron, 4},
                                           PmeCase{"octahedron_order6", &kTruncatedOctahedron, 6},
                                           PmeCase{"octahedron_order7", &kTruncatedOctahedron, 7}),
                         [](const ::testing::TestParamInfo<PmeCase>& case_info) {
                           return std::string(case_info.param.name);
                         });

// The same bits for 1, 2 and 3 threads: PME, the real-space cell list and the reference.
TEST(Determinism, SameBitsForAnyThreadCount) {
  const UnitCell& cell = kTruncatedOctahedron;
  const Charges c = random_charges(cell, sanitized() ? 50 : 400, 1.0, 31);
  const auto points = random_points(cell, 97, 32);
  std::vector<std::vector<double>> at_points, at_atoms, reference;
  for (const unsigned threads : {1u, 2u, 3u}) {
    PeriodicSettings settings;
    settings.threads = threads;
    const PeriodicPotential potential(c.positions, c.charges, cell, settings);
    at_points.push_back(potential.potential_at(points));
    at_atoms.push_back(potential.potential_at_atoms());
    reference.push_back(ewald_reference_at(c.positions, c.charges, cell, points,
                                           potential.parameters(), 0.1, threads));
  }
  for (std::size_t t = 1; t < at_points.size(); ++t) {
    EXPECT_EQ(0, std::memcmp(at_points[t].data(), at_points[0].data(),
                             at_points[0].size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(at_atoms[t].data(), at_atoms[0].data(),
                             at_atoms[0].size() * sizeof(double)));
    EXPECT_EQ(0, std::memcmp(reference[t].data(), reference[0].data(),
                             reference[0].size() * sizeof(double)));
  }
}

// The influence function is even in m (θ(m) = θ(-m), as the half-spectrum product needs, up to
// the rounding of the B-spline moduli), and the mesh potential exists only after solve().
TEST(Pme, InfluenceIsEvenAndTheMeshIsExposed) {
  const UnitCell& cell = kTruncatedOctahedron;
  const PmeReciprocal pme(cell, 0.35, {20, 24, 30}, 6);
  const auto theta = pme.influence();
  ASSERT_EQ(theta.size(), std::size_t(20 * 24 * 16));
  EXPECT_EQ(theta[0], 0.0);
  const auto at = [&](int m1, int m2, int m3) {
    return theta[(std::size_t(m1) * 24 + std::size_t(m2)) * 16 + std::size_t(m3)];
  };
  for (const auto& m :
       {std::array<int, 3>{1, 2, 0}, std::array<int, 3>{3, 5, 0}, std::array<int, 3>{0, 7, 0}})
    EXPECT_NEAR(at(m[0], m[1], m[2]), at((20 - m[0]) % 20, (24 - m[1]) % 24, 0),
                1e-13 * at(m[0], m[1], m[2]));
  EXPECT_TRUE(pme.mesh_potential().empty());  // before solve()
}

TEST(Parameters, ChosenFromAccuracy) {
  const EwaldParameters p = choose_ewald_parameters(kOrthorhombic, PeriodicSettings{});
  const double x = p.beta * p.real_cutoff;  // exp(-β² rc²) = 2δ, erfc(β rc) ≈ 2δ/(√π β rc)
  EXPECT_NEAR(std::exp(-x * x), 2e-5, 1e-15);
  EXPECT_LT(std::erfc(x), 1e-5);
  EXPECT_NEAR(std::exp(-p.k_cutoff * p.k_cutoff / (4 * p.beta * p.beta)), 1e-5, 1e-12);
  for (const int k : p.mesh) EXPECT_EQ(fft_friendly_size(k), k);
  EXPECT_LT(p.mesh[0], p.mesh[1]);  // 24, 28, 32 Å
  EXPECT_LT(p.mesh[1], p.mesh[2]);
  EXPECT_EQ(fft_friendly_size(49), 50);
  EXPECT_EQ(fft_friendly_size(1), 1);
}

TEST(Parameters, BadRequestsAreRefused) {
  PeriodicSettings settings;
  settings.order = 3;
  EXPECT_THROW(choose_ewald_parameters(kOrthorhombic, settings), UsageError);
  settings = {};
  settings.accuracy = 0.0;
  EXPECT_THROW(choose_ewald_parameters(kOrthorhombic, settings), UsageError);
  settings = {};
  settings.real_cutoff = -1.0;
  EXPECT_THROW(choose_ewald_parameters(kOrthorhombic, settings), UsageError);
  EXPECT_THROW(choose_ewald_parameters(UnitCell{}, PeriodicSettings{}), UsageError);
  const std::vector<Vec3> positions{{0, 0, 0}, {std::nan(""), 0, 0}};
  const std::vector<double> charges{1.0, -1.0};
  EXPECT_THROW(ewald_energy(positions, charges, kOrthorhombic), Error);
  EXPECT_THROW(ewald_energy(positions, std::vector<double>{1.0}, kOrthorhombic), UsageError);
  const std::vector<Vec3> fine{{0, 0, 0}, {1, 0, 0}};
  const std::vector<Vec3> bad_point{{std::numeric_limits<double>::infinity(), 0, 0}};
  EXPECT_THROW(periodic_potential_at(fine, charges, kOrthorhombic, bad_point), Error);
}

}  // namespace
}  // namespace dcs::periodic
