#include "dcs/physics.hpp"

#include <array>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "dcs/error.hpp"

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
  for (const UnitEntry& entry : kUnits) valid += (valid.empty() ? "" : ", ") + std::string(entry.name);
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
  auto positive = [](double v) { return std::isfinite(v) && v > 0.0; };
  if (!positive(physics.temperature))
    throw UsageError(fmt::format("--temperature must be a positive number of kelvin, got {}",
                                 physics.temperature));
  if (!positive(physics.dielectric))
    throw UsageError(fmt::format("--dielectric must be a positive number, got {}",
                                 physics.dielectric));
  if (!positive(physics.min_distance))
    throw UsageError(fmt::format("--min-distance must be a positive number of Å, got {}",
                                 physics.min_distance));
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
      factor = volts * codata::kElementaryCharge * codata::kAvogadro / (1000.0 * codata::kThermochemicalCalorie);
      break;
    case Unit::KJPerMolPerE:
      factor = volts * codata::kElementaryCharge * codata::kAvogadro / 1000.0;
      break;
    case Unit::Volt:
      factor = volts;
      break;
    case Unit::ElementaryChargePerAngstrom:
      factor = 1.0;
      break;
  }
  return factor / physics.dielectric;
}

}  // namespace dcs
