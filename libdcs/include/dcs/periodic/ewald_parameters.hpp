// The Ewald splitting of the periodic Coulomb potential and how its parameters are chosen
// (DESIGN.md §10): the Ewald parameter β, the real-space cutoff, the k-space cutoff of the
// float64 reference and the smooth-PME mesh, from a requested accuracy with the standard
// estimates. Everything is in e, Å and e/Å: the caller applies the Coulomb constant.
#pragma once

#include <array>
#include <string>

#include "dcs/physics.hpp"
#include "dcs/unit_cell.hpp"

namespace dcs::periodic {

/// What a periodic potential is asked for. Defaults: the product's (issue 34, 1e-5).
struct PeriodicSettings {
  /// Requested relative accuracy δ (0 < δ ≤ 0.01). β = sqrt(-ln 2δ) / real_cutoff (OpenMM's
  /// NonbondedForce rule: erfc(β rc) ≈ δ); the PME mesh and the reference's k cutoff follow.
  double accuracy = 1e-5;
  double real_cutoff = 10.0;  ///< Å (> 0); may exceed half the cell: every image is summed
  int order = 6;              ///< cardinal B-spline order of smooth PME, 4..8
  /// Å (≥ 0): the real-space distance from a point to a charge is clamped here, as dcs's open
  /// maps clamp |p - r| (physics.hpp), so a point on an atom stays finite. Not used at atoms.
  double min_distance = kDefaultMinDistance;
  unsigned threads = 0;  ///< 0: every hardware thread. Results are the same bits for any count.
};

/// The parameters one periodic sum runs with, as chosen by choose_ewald_parameters().
struct EwaldParameters {
  double beta = 0.0;         ///< Å⁻¹
  double real_cutoff = 0.0;  ///< Å
  /// |k| (2π included, Å⁻¹) up to which the float64 reference sums: exp(-k²/4β²) = δ.
  double k_cutoff = 0.0;
  std::array<int, 3> mesh{};  ///< PME mesh points along a, b, c (products of 2, 3, 5)
  int order = 6;              ///< B-spline order

  /// "beta 0.3290 1/A, real cutoff 10.00 A, mesh 48 x 48 x 48, order 6".
  std::string describe() const;
};

/// Checks `settings` (throws UsageError naming the bad value) and chooses the parameters for
/// `cell` (which must be periodic, else UsageError). PME mesh along cell vector i: the standard
/// estimate K_i ≥ (2/3) β w_i δ^(-1/p) (OpenMM's rule for p = 5, its exponent generalised to
/// order p), w_i the cell's width across the lattice planes i, rounded up to a product of 2, 3
/// and 5 (fast FFTW sizes); at least 2·order.
EwaldParameters choose_ewald_parameters(const UnitCell& cell, const PeriodicSettings& settings);

/// The smallest n' ≥ n whose only prime factors are 2, 3 and 5.
int fft_friendly_size(int n);

}  // namespace dcs::periodic
