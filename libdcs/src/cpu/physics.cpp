#include "dcs/physics.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/limits.hpp"
#include "dcs/types.hpp"

namespace dcs {
namespace {

struct UnitEntry {
  Unit unit;
  std::string_view name;
  std::string_view factor_unit;
};

constexpr std::array<UnitEntry, 5> kUnits{{
    {Unit::kTPerE, "kT/e", "kT*A/e^2"},
    {Unit::KcalPerMolPerE, "kcal/mol/e", "kcal*A/(mol*e^2)"},
    {Unit::KJPerMolPerE, "kJ/mol/e", "kJ*A/(mol*e^2)"},
    {Unit::Volt, "V", "V*A/e"},
    {Unit::ElementaryChargePerAngstrom, "e/A", "1"},
}};

}  // namespace

std::string_view unit_name(Unit unit) noexcept {
  for (const UnitEntry& entry : kUnits)
    if (entry.unit == unit) return entry.name;
  return "?";
}

Unit parse_unit(std::string_view name) {
  for (const UnitEntry& entry : kUnits)
    if (entry.name == name) return entry.unit;
  std::string valid;
  for (const UnitEntry& entry : kUnits)
    valid += (valid.empty() ? "" : ", ") + std::string(entry.name);
  throw UsageError("unknown unit '" + std::string(name) + "' (valid: " + valid + ")");
}

std::vector<std::string> unit_names() {
  std::vector<std::string> names;
  for (const UnitEntry& entry : kUnits) names.emplace_back(entry.name);
  return names;
}

std::string factor_unit(Unit unit, DielectricModel model) {
  for (const UnitEntry& entry : kUnits) {
    if (entry.unit != unit) continue;
    std::string text(entry.factor_unit);
    // eps = k r: the factor C/k carries one more Å (k is per Å).
    if (model == DielectricModel::kDistance) {
      const auto at = text.find('A');
      if (at != std::string::npos) text.replace(at, 1, "A^2");
      else text = "A";
    }
    return text;
  }
  return "?";
}

std::string_view dielectric_model_name(DielectricModel model) noexcept {
  return model == DielectricModel::kDistance ? "distance" : "constant";
}

DielectricModel parse_dielectric_model(std::string_view name) {
  if (name == "constant") return DielectricModel::kConstant;
  if (name == "distance") return DielectricModel::kDistance;
  throw UsageError("unknown dielectric model '" + std::string(name) +
                   "' (valid: constant, distance)");
}

double debye_length(const Physics& physics) {
  if (physics.ionic_strength <= 0.0) return std::numeric_limits<double>::infinity();
  // kappa^2 = 2 N_A e^2 I / (eps0 eps kB T), I in mol/m^3 (1 mol/L = 1000 mol/m^3).
  const double e = codata::kElementaryCharge;
  const double kappa2 =
      2.0 * codata::kAvogadro * e * e * physics.ionic_strength * 1000.0 /
      (codata::kVacuumPermittivity * physics.dielectric * codata::kBoltzmann * physics.temperature);
  return 1.0 / std::sqrt(kappa2) / codata::kAngstrom;
}

PairTerm pair_term(const Physics& physics) {
  if (physics.dielectric_model == DielectricModel::kDistance)
    return {PairKind::kInverseSquare, 0.0};
  if (physics.ionic_strength > 0.0) return {PairKind::kScreened, 1.0 / debye_length(physics)};
  return {PairKind::kCoulomb, 0.0};
}

std::string_view pair_formula(const Physics& physics) noexcept {
  if (physics.dielectric_model == DielectricModel::kDistance) return "1/r^2";
  if (physics.ionic_strength > 0.0) return "exp(-r/lambda)/r";
  return "1/r";
}

std::string describe_model(const Physics& physics) {
  std::string text;
  if (physics.dielectric_model == DielectricModel::kDistance)
    text =
        fmt::format("distance-dependent dielectric, eps(r) = {:g} r (r in A)", physics.dielectric);
  else if (physics.ionic_strength > 0.0)
    text = fmt::format(
        "Debye-Hueckel, I = {:g} mol/L, eps = {:g}, T = {:g} K (Debye length {:.4g} A)",
        physics.ionic_strength, physics.dielectric, physics.temperature, debye_length(physics));
  else text = fmt::format("Coulomb, constant dielectric eps = {:g}", physics.dielectric);
  if (!physics.preset.empty())
    text += fmt::format("; preset {} (C = {:g} {})", physics.preset, coulomb_constant(physics),
                        factor_unit(physics.unit));
  return text;
}

void validate(const Physics& physics) {
  auto check = [](const char* option, double value, double low, double high, const char* unit) {
    if (!(std::isfinite(value) && value >= low && value <= high))
      throw UsageError(fmt::format("{} must be a number from {:g} to {:g}{}, got {}", option, low,
                                   high, unit, value));
  };
  check("--temperature", physics.temperature, limits::kMinTemperature, limits::kMaxTemperature,
        " K");
  check("--dielectric", physics.dielectric, limits::kMinDielectric, limits::kMaxDielectric, "");
  check("--min-distance", physics.min_distance, limits::kMinMinDistance, limits::kMaxMinDistance,
        " Å");
  check("--ionic-strength", physics.ionic_strength, 0.0, limits::kMaxIonicStrength, " mol/L");
  if (physics.coulomb_constant != 0.0)
    check("the Coulomb constant", physics.coulomb_constant, limits::kMinCoulombConstant,
          limits::kMaxCoulombConstant, "");
  if (physics.ionic_strength > 0.0 && physics.dielectric_model == DielectricModel::kDistance)
    throw UsageError(
        "--ionic-strength (Debye-Hueckel screening) needs --dielectric-model constant: the "
        "screening length follows from one bulk dielectric, which eps(r) = k r does not have");
}

double max_potential(const System& system, const Physics& physics) {
  double sum_abs_charge = 0.0;
  for (const Atom& atom : system.atoms) sum_abs_charge += std::fabs(atom.charge);
  const double r_min = physics.min_distance;
  const double g_max = physics.dielectric_model == DielectricModel::kDistance
                           ? 1.0 / (r_min * r_min)
                           : 1.0 / r_min;  // exp(-kappa r) <= 1
  return std::fabs(coulomb_factor(physics)) * sum_abs_charge * g_max;
}

void check_potential_bound(const System& system, const Physics& physics) {
  const double bound = max_potential(system, physics);
  if (!(bound <= limits::kMaxPotential))
    throw UsageError(fmt::format(
        "{}: the potential could reach C*sum|q|*g(r_min) = {:.3g} {}, beyond the limit of {:g} "
        "that keeps the float32 map meaningful; raise --min-distance or --dielectric, or use "
        "other units",
        system.source_path, bound, unit_name(physics.unit), limits::kMaxPotential));
}

double coulomb_factor(const Physics& physics) {
  return coulomb_constant(physics) / physics.dielectric;
}

double coulomb_constant(const Physics& physics) {
  validate(physics);
  if (physics.coulomb_constant != 0.0) return physics.coulomb_constant;
  const double volts = kVoltsPerElementaryChargePerAngstrom;  // V per (e/Å)
  double factor = 1.0;
  switch (physics.unit) {
    case Unit::kTPerE:  // e*V / (k_B T)
      factor = volts * codata::kElementaryCharge / (codata::kBoltzmann * physics.temperature);
      break;
    case Unit::KcalPerMolPerE:
      factor = volts * codata::kElementaryCharge * codata::kAvogadro /
               (1000.0 * codata::kThermochemicalCalorie);
      break;
    case Unit::KJPerMolPerE:
      factor = volts * codata::kElementaryCharge * codata::kAvogadro / 1000.0;
      break;
    case Unit::Volt: factor = volts; break;
    case Unit::ElementaryChargePerAngstrom: factor = 1.0; break;
  }
  return factor;
}

}  // namespace dcs
