// --preset pmepot: the map VMD's PMEpot plugin makes (DESIGN.md §10), for those who compare with
// old results: only the reciprocal part of smooth PME, i.e. the periodic potential of Gaussian
// charges of σ = 1/(√2 β) without the k = 0 term, at PMEpot's Ewald factor β = 0.25 Å⁻¹ with
// order-4 B-splines on a PME mesh that is the map's own grid over the cell. It is not the
// potential of the point charges: within ~7 Å of a charge it differs from the exact periodic
// map (--periodic) by more than 1 %. Values at the grid points are the PME potential
// interpolated there (PmeReciprocal::potential_at); reference_points() is the float64
// reciprocal-only sum (ewald_reference.hpp), the oracle of the run's measured error.
#pragma once

#include <memory>

#include "dcs/backend.hpp"

namespace dcs::periodic {

inline constexpr double kPmepotBeta = 0.25;  ///< Å⁻¹, PMEpot's default -ewaldfactor
inline constexpr int kPmepotOrder = 4;       ///< PMEpot's B-spline order
/// --ewald-error's default with --preset pmepot: the relative RMS difference from the float64
/// reciprocal sum that an order-4 mesh of about 1 Å keeps (measured: tests/unit).
inline constexpr double kPmepotError = 1e-3;

/// The pmepot backend around an exact CPU backend (its reductions, hints and names). The PME
/// mesh has the grid's counts along the vectors of the system's cell (the grid itself on the
/// cell's grid, which the command line requires); prepare() refuses (UsageError) fewer than 8
/// points along a vector; points and --at-atoms are refused (PMEpot makes maps).
std::unique_ptr<PotentialBackend> make_pmepot_backend(std::unique_ptr<PotentialBackend> exact,
                                                      const BackendOptions& options);

}  // namespace dcs::periodic
