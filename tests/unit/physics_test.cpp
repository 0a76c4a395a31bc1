// Units and the Coulomb factor (DESIGN §4), checked against values computed here by hand from
// the CODATA constants. The Coulomb term's edge cases: coulomb_term_test.cpp.
#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/physics.hpp"
#include "dcs/presets.hpp"

namespace dcs {
namespace {

// CODATA 2022 (e, k_B, N_A exact since 2019), written out independently of physics.hpp.
constexpr double kE = 1.602176634e-19;      // C
constexpr double kKB = 1.380649e-23;        // J/K
constexpr double kNA = 6.02214076e23;       // 1/mol
constexpr double kEps0 = 8.8541878188e-12;  // F/m
constexpr double kPiHere = 3.141592653589793;

/// e/(4 pi eps0 * 1 Å) in volts: 14.3996 V.
double volts_per_e_per_angstrom() { return kE / (4.0 * kPiHere * kEps0 * 1e-10); }

Physics with_unit(Unit unit) {
  Physics physics;
  physics.unit = unit;
  return physics;
}

TEST(CoulombFactor, KTPerEAt298K) {
  const double expected = volts_per_e_per_angstrom() * kE / (kKB * 298.15);  // 560.4593
  EXPECT_NEAR(coulomb_factor(Physics{}), expected, 1e-9 * expected);
  EXPECT_NEAR(coulomb_factor(Physics{}), 560.459, 1e-3);
}

TEST(CoulombFactor, KcalPerMolPerE) {
  EXPECT_NEAR(coulomb_factor(with_unit(Unit::KcalPerMolPerE)), 332.0637, 1e-4);
  const double expected = volts_per_e_per_angstrom() * kE * kNA / 4184.0;
  EXPECT_NEAR(coulomb_factor(with_unit(Unit::KcalPerMolPerE)), expected, 1e-9 * expected);
}

TEST(CoulombFactor, KJPerMolPerEIsThermochemicalCaloriesTimes4184) {
  EXPECT_NEAR(coulomb_factor(with_unit(Unit::KJPerMolPerE)),
              4.184 * coulomb_factor(with_unit(Unit::KcalPerMolPerE)), 1e-10);
  EXPECT_NEAR(coulomb_factor(with_unit(Unit::KJPerMolPerE)), 1389.3546, 1e-3);
}

TEST(CoulombFactor, VoltAndRawUnits) {
  EXPECT_NEAR(coulomb_factor(with_unit(Unit::Volt)), 14.3996, 1e-4);
  EXPECT_NEAR(coulomb_factor(with_unit(Unit::Volt)), volts_per_e_per_angstrom(), 1e-12);
  EXPECT_EQ(coulomb_factor(with_unit(Unit::ElementaryChargePerAngstrom)), 1.0);
}

TEST(CoulombFactor, TemperatureScalesOnlyKTPerE) {
  Physics hot;
  hot.temperature = 2.0 * 298.15;
  EXPECT_NEAR(coulomb_factor(hot), 0.5 * coulomb_factor(Physics{}), 1e-12);
  for (Unit unit :
       {Unit::KcalPerMolPerE, Unit::KJPerMolPerE, Unit::Volt, Unit::ElementaryChargePerAngstrom}) {
    Physics physics = with_unit(unit);
    const double base = coulomb_factor(physics);
    physics.temperature = 310.0;
    EXPECT_EQ(coulomb_factor(physics), base) << unit_name(unit);
  }
}

TEST(CoulombFactor, DielectricDividesEveryUnit) {
  for (const std::string& name : unit_names()) {
    Physics physics = with_unit(parse_unit(name));
    const double vacuum = coulomb_factor(physics);
    physics.dielectric = 78.54;
    EXPECT_NEAR(coulomb_factor(physics), vacuum / 78.54, 1e-12 * vacuum) << name;
  }
}

TEST(Units, NamesRoundTrip) {
  const auto names = unit_names();
  ASSERT_EQ(names.size(), 5u);
  for (const std::string& name : names) EXPECT_EQ(unit_name(parse_unit(name)), name);
  EXPECT_EQ(parse_unit("kT/e"), Unit::kTPerE);
  EXPECT_EQ(parse_unit("kcal/mol/e"), Unit::KcalPerMolPerE);
  EXPECT_EQ(parse_unit("kJ/mol/e"), Unit::KJPerMolPerE);
  EXPECT_EQ(parse_unit("V"), Unit::Volt);
  EXPECT_EQ(parse_unit("e/A"), Unit::ElementaryChargePerAngstrom);
  for (const std::string& name : names) EXPECT_FALSE(factor_unit(parse_unit(name)).empty());
}

TEST(Units, UnknownNamesAreUsageErrorsListingTheValidOnes) {
  for (const char* bad : {"kt/e", "", "volt", "kcal", " kT/e", "kT/e "}) {
    try {
      parse_unit(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("kcal/mol/e"), std::string::npos) << message;
      EXPECT_EQ(error.exit_code(), ExitCode::kUsageError);
    }
  }
}

TEST(Physics, ValidateRefusesNonPositiveOrNonFiniteParameters) {
  EXPECT_NO_THROW(validate(Physics{}));
  const double bad_values[] = {0.0, -1.0, std::numeric_limits<double>::quiet_NaN(),
                               std::numeric_limits<double>::infinity()};
  for (double bad : bad_values) {
    Physics t;
    t.temperature = bad;
    EXPECT_THROW(validate(t), UsageError) << "temperature " << bad;
    EXPECT_THROW(coulomb_factor(t), UsageError);
    Physics d;
    d.dielectric = bad;
    EXPECT_THROW(validate(d), UsageError) << "dielectric " << bad;
    Physics m;
    m.min_distance = bad;
    EXPECT_THROW(validate(m), UsageError) << "min_distance " << bad;
  }
}

TEST(Physics, DebyeLengthIsApbsFigureAtPhysiologicalSaltInWater) {
  Physics p;
  EXPECT_TRUE(std::isinf(debye_length(p)));
  p.ionic_strength = 0.15;
  p.dielectric = 78.54;
  EXPECT_NEAR(debye_length(p), 7.857, 5e-4);  // what APBS logs for 0.15 M, 78.54, 298.15 K
  // lambda ~ sqrt(eps T / I): four times the salt halves it.
  Physics q = p;
  q.ionic_strength = 0.6;
  EXPECT_NEAR(debye_length(q), debye_length(p) / 2.0, 1e-12);
  const PairTerm term = pair_term(p);
  EXPECT_EQ(term.kind, PairKind::kScreened);
  EXPECT_NEAR(term.kappa * debye_length(p), 1.0, 1e-15);
}

TEST(Physics, DistanceDielectricDividesByKAndSquaresTheLength) {
  Physics p;
  p.dielectric_model = DielectricModel::kDistance;
  p.dielectric = 4.0;
  Physics constant;
  EXPECT_DOUBLE_EQ(coulomb_factor(p), coulomb_factor(constant) / 4.0);
  EXPECT_EQ(pair_term(p).kind, PairKind::kInverseSquare);
  EXPECT_EQ(pair_term(p).length_power(), 2);
  EXPECT_EQ(factor_unit(Unit::KcalPerMolPerE, DielectricModel::kDistance), "kcal*A^2/(mol*e^2)");
  EXPECT_EQ(factor_unit(Unit::ElementaryChargePerAngstrom, DielectricModel::kDistance), "A");
  // The bound on |V| uses 1/r_min^2.
  System one;
  one.atoms.emplace_back();
  one.atoms.back().charge = 2.0;
  EXPECT_DOUBLE_EQ(max_potential(one, p), coulomb_factor(p) * 2.0 / (0.1 * 0.1));
}

TEST(Physics, ScreeningNeedsAConstantDielectricAndASaneIonicStrength) {
  Physics p;
  p.ionic_strength = 0.15;
  p.dielectric_model = DielectricModel::kDistance;
  EXPECT_THROW(validate(p), UsageError);
  for (double bad : {-0.1, 11.0, std::numeric_limits<double>::quiet_NaN()}) {
    Physics q;
    q.ionic_strength = bad;
    EXPECT_THROW(validate(q), UsageError) << bad;
  }
}

TEST(Physics, PresetsCarryTheirToolsConstants) {
  const Preset& chimerax = find_preset("chimerax");
  EXPECT_DOUBLE_EQ(coulomb_factor(chimerax.physics), 331.62 / 4.0);
  EXPECT_EQ(chimerax.physics.unit, Unit::KcalPerMolPerE);
  EXPECT_EQ(pair_term(chimerax.physics).kind, PairKind::kInverseSquare);
  EXPECT_DOUBLE_EQ(chimerax.surface_offset, 1.4);
  const Preset& pymol = find_preset("pymol");
  EXPECT_DOUBLE_EQ(coulomb_factor(pymol.physics), 557.0 / 2.0);
  EXPECT_EQ(pair_term(pymol.physics).kind, PairKind::kCoulomb);
  // 557 is CODATA's kT/e factor at 300 K to 4.5e-6: the preset keeps PyMOL's rounded figure.
  Physics at300;
  at300.temperature = 300.0;
  EXPECT_NEAR(coulomb_constant(at300) / 557.0, 1.0, 1e-5);
  EXPECT_THROW(find_preset("vmd"), UsageError);
  EXPECT_NE(describe_model(pymol.physics).find("preset pymol"), std::string::npos);
}

}  // namespace
}  // namespace dcs
