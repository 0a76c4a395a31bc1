#include "dcs/physics.hpp"

#include <array>
#include <cmath>
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

std::string factor_unit(Unit unit) {
  for (const UnitEntry& entry : kUnits)
    if (entry.unit == unit) return std::string(entry.factor_unit);
  return "?";
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
}

double max_potential(const System& system, const Physics& physics) {
  double sum_abs_charge = 0.0;
  for (const Atom& atom : system.atoms) sum_abs_charge += std::fabs(atom.charge);
  return std::fabs(coulomb_factor(physics)) * sum_abs_charge / physics.min_distance;
}

void check_potential_bound(const System& system, const Physics& physics) {
  const double bound = max_potential(system, physics);
  if (!(bound <= limits::kMaxPotential))
    throw UsageError(fmt::format(
        "{}: the potential could reach C*sum|q|/r_min = {:.3g} {}, beyond the limit of {:g} "
        "that keeps the float32 map meaningful; raise --min-distance or --dielectric, or use "
        "other units",
        system.source_path, bound, unit_name(physics.unit), limits::kMaxPotential));
}

double coulomb_factor(const Physics& physics) {
  validate(physics);
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
  return factor / physics.dielectric;
}

}  // namespace dcs
