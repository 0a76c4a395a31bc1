// The periodic (Ewald) potential of a charge set in a cell, the one entry point the jobs call:
// the real-space sum on a cell list (real_space.hpp) + the reciprocal part by smooth PME
// (pme.hpp) + the neutralising background -πQ/(β²V), parameters from choose_ewald_parameters().
// Tin-foil boundary; the gauge is the mean over the cell = 0; values in e/Å (multiply by the
// Coulomb constant of physics.hpp for a unit). The float64 oracle is ewald_reference.hpp.
// Deterministic: the same bits for any thread count.
#pragma once

#include <span>
#include <vector>

#include "dcs/periodic/ewald_parameters.hpp"
#include "dcs/periodic/pme.hpp"
#include "dcs/periodic/real_space.hpp"
#include "dcs/types.hpp"
#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs::periodic {

/// One frame's periodic potential, prepared once (binning, spreading, FFTs) and then read at
/// any points in as many calls as wanted (a map's slabs) and at the atoms.
class PeriodicPotential {
 public:
  /// Throws UsageError for a non-periodic cell, bad settings or a size mismatch, and dcs::Error
  /// for a non-finite position or charge (naming the atom, 0-based).
  PeriodicPotential(std::span<const Vec3> positions, std::span<const double> charges,
                    const UnitCell& cell, const PeriodicSettings& settings = {});

  const EwaldParameters& parameters() const noexcept { return parameters_; }

  /// out[i] = φ(points[i]) in e/Å (real-space distances clamped at settings.min_distance);
  /// dcs::Error for a point that is not finite.
  void potential_at(std::span<const Vec3> points, std::span<double> out) const;
  std::vector<double> potential_at(std::span<const Vec3> points) const;

  /// φ_i at every atom: all other atoms and all images, own n = 0 term excluded,
  /// -2β/√π q_i added, so ½ Σ q_i φ_i is the Ewald energy.
  std::vector<double> potential_at_atoms() const;

 private:
  PeriodicSettings settings_;
  EwaldParameters parameters_;
  std::vector<double> charges_;
  std::vector<Vec3> positions_;
  RealSpaceSum real_;
  PmeReciprocal reciprocal_;
  double background_ = 0.0;  ///< -πQ/(β²V)
};

std::vector<double> periodic_potential_at(std::span<const Vec3> positions,
                                          std::span<const double> charges, const UnitCell& cell,
                                          std::span<const Vec3> points,
                                          const PeriodicSettings& settings = {});
std::vector<double> periodic_potential_at_atoms(std::span<const Vec3> positions,
                                                std::span<const double> charges,
                                                const UnitCell& cell,
                                                const PeriodicSettings& settings = {});
/// ½ Σ q_i φ_i in e²/Å (times the Coulomb constant: an energy), summed in atom order.
double ewald_energy(std::span<const Vec3> positions, std::span<const double> charges,
                    const UnitCell& cell, const PeriodicSettings& settings = {});

/// A System's atom positions (Å) and charges (e), in atom order: what the System overloads
/// below (and the ewald backend) pass on.
std::vector<Vec3> positions_of(const System& system);
std::vector<double> charges_of(const System& system);

/// The same for a System: its atoms' positions and charges in its own cell.
std::vector<double> periodic_potential_at(const System& system, std::span<const Vec3> points,
                                          const PeriodicSettings& settings = {});
std::vector<double> periodic_potential_at_atoms(const System& system,
                                                const PeriodicSettings& settings = {});
double ewald_energy(const System& system, const PeriodicSettings& settings = {});

}  // namespace dcs::periodic
