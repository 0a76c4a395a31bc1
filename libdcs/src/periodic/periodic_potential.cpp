// The periodic potential: real space + smooth PME + background (periodic_potential.hpp).
#include "dcs/periodic/periodic_potential.hpp"

#include <cmath>
#include <numbers>

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs::periodic {
namespace {

/// The settings, after checking the charge set (the members below are built from it).
const PeriodicSettings& checked(std::span<const Vec3> positions, std::span<const double> charges,
                                const PeriodicSettings& settings) {
  if (positions.size() != charges.size())
    throw UsageError(fmt::format("the periodic potential got {} positions and {} charges",
                                 positions.size(), charges.size()));
  for (std::size_t i = 0; i < positions.size(); ++i) {
    const Vec3& r = positions[i];
    if (!std::isfinite(r[0]) || !std::isfinite(r[1]) || !std::isfinite(r[2]) ||
        !std::isfinite(charges[i]))
      throw Error(fmt::format("atom {} has a position or charge that is not a finite number", i));
  }
  return settings;
}

EwaldParameters parameters_for(std::span<const Vec3> positions, std::span<const double> charges,
                               const UnitCell& cell, const PeriodicSettings& settings) {
  return choose_ewald_parameters(cell, checked(positions, charges, settings));
}

}  // namespace

std::vector<Vec3> positions_of(const System& system) {
  std::vector<Vec3> positions;
  positions.reserve(system.size());
  for (const Atom& atom : system.atoms) positions.push_back(atom.position);
  return positions;
}

std::vector<double> charges_of(const System& system) {
  std::vector<double> charges;
  charges.reserve(system.size());
  for (const Atom& atom : system.atoms) charges.push_back(atom.charge);
  return charges;
}

PeriodicPotential::PeriodicPotential(std::span<const Vec3> positions,
                                     std::span<const double> charges, const UnitCell& cell,
                                     const PeriodicSettings& settings)
    : settings_(settings),
      parameters_(parameters_for(positions, charges, cell, settings)),
      charges_(charges.begin(), charges.end()),
      positions_(positions.begin(), positions.end()),
      real_(positions, charges, cell, parameters_.beta, parameters_.real_cutoff),
      reciprocal_(cell, parameters_.beta, parameters_.mesh, parameters_.order) {
  reciprocal_.solve(positions, charges, settings_.threads);
  double total = 0.0;
  for (const double q : charges) total += q;
  background_ = -std::numbers::pi * total / (parameters_.beta * parameters_.beta * cell.volume());
}

void PeriodicPotential::potential_at(std::span<const Vec3> points, std::span<double> out) const {
  if (out.size() != points.size())
    throw InternalError("PeriodicPotential::potential_at: output size differs from points");
  for (std::size_t i = 0; i < points.size(); ++i)
    if (!std::isfinite(points[i][0]) || !std::isfinite(points[i][1]) ||
        !std::isfinite(points[i][2]))
      throw Error(fmt::format("point {} is not a finite position", i));
  std::vector<double> reciprocal(points.size());
  reciprocal_.potential_at(points, reciprocal, settings_.threads);
  real_.potential_at(points, out, settings_.min_distance, settings_.threads);
  for (std::size_t i = 0; i < points.size(); ++i) out[i] += reciprocal[i] + background_;
}

std::vector<double> PeriodicPotential::potential_at(std::span<const Vec3> points) const {
  std::vector<double> out(points.size());
  potential_at(points, out);
  return out;
}

std::vector<double> PeriodicPotential::potential_at_atoms() const {
  std::vector<double> out(positions_.size()), reciprocal(positions_.size());
  reciprocal_.potential_at(positions_, reciprocal, settings_.threads);
  real_.potential_at_atoms(out, settings_.threads);
  const double self = -2.0 * parameters_.beta / std::sqrt(std::numbers::pi);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] += reciprocal[i] + background_ + self * charges_[i];
  return out;
}

std::vector<double> periodic_potential_at(std::span<const Vec3> positions,
                                          std::span<const double> charges, const UnitCell& cell,
                                          std::span<const Vec3> points,
                                          const PeriodicSettings& settings) {
  return PeriodicPotential(positions, charges, cell, settings).potential_at(points);
}

std::vector<double> periodic_potential_at_atoms(std::span<const Vec3> positions,
                                                std::span<const double> charges,
                                                const UnitCell& cell,
                                                const PeriodicSettings& settings) {
  return PeriodicPotential(positions, charges, cell, settings).potential_at_atoms();
}

double ewald_energy(std::span<const Vec3> positions, std::span<const double> charges,
                    const UnitCell& cell, const PeriodicSettings& settings) {
  const std::vector<double> phi = periodic_potential_at_atoms(positions, charges, cell, settings);
  double energy = 0.0;
  for (std::size_t i = 0; i < phi.size(); ++i) energy += charges[i] * phi[i];
  return 0.5 * energy;
}

std::vector<double> periodic_potential_at(const System& system, std::span<const Vec3> points,
                                          const PeriodicSettings& settings) {
  return periodic_potential_at(positions_of(system), charges_of(system), system.cell, points,
                               settings);
}

std::vector<double> periodic_potential_at_atoms(const System& system,
                                                const PeriodicSettings& settings) {
  return periodic_potential_at_atoms(positions_of(system), charges_of(system), system.cell,
                                     settings);
}

double ewald_energy(const System& system, const PeriodicSettings& settings) {
  return ewald_energy(positions_of(system), charges_of(system), system.cell, settings);
}

}  // namespace dcs::periodic
