// The float64 Ewald sum, written as plainly as possible: the oracle that smooth PME and every
// periodic map are measured against (as the reference backend is for open maps).
//
//   φ(r) = Σ_j Σ_n q_j erfc(β|r - r_j - n|)/|r - r_j - n|                   (every image within
//                                                                            the real cutoff)
//        + (4π/V) Σ_{0<|k|≤k_cutoff} exp(-k²/4β²)/k² Re[S(k) e^{-ik·r}]   − π Q/(β² V)
//
// with S(k) = Σ_j q_j e^{ik·r_j}, k = 2π(m1 a* + m2 b* + m3 c*), Q = Σ q_j: tin-foil boundary,
// a uniform neutralising background for a net charge, mean over the cell 0. At atom i the own
// n = 0 term is left out and -2β/√π q_i added, so ½ Σ q_i φ_i is the Ewald energy. In e/Å
// (the caller multiplies by the Coulomb constant). The real part loops over all atoms and all
// lattice translations whose images can come within the cutoff; the reciprocal part over the
// half space of k (each ±k pair once), both in a fixed order: same bits for any thread count.
#pragma once

#include <span>
#include <vector>

#include "dcs/periodic/ewald_parameters.hpp"
#include "dcs/unit_cell.hpp"
#include "dcs/vec3.hpp"

namespace dcs::periodic {

/// The oracle's parameters for checking a result computed with `settings` (a run's measured
/// error, as --validate does for open maps): accuracy min(1e-8, δ/1000) and real cutoff
/// max(2 rc, shortest width / 2). The longer cutoff gives a smaller β and far fewer k vectors,
/// whose S(k) over all atoms is most of the cost, while the image loop stays small: 50 points
/// of a 1e5-atom 100 Å box took 2.9 s here against 412 s at the run's own 10 Å cutoff
/// (bench/results/periodic_cpu_2026-11-28.md). Throws as choose_ewald_parameters().
EwaldParameters reference_parameters(const UnitCell& cell, const PeriodicSettings& settings);

/// φ at arbitrary points (real-space distances clamped below at min_distance Å).
std::vector<double> ewald_reference_at(std::span<const Vec3> positions,
                                       std::span<const double> charges, const UnitCell& cell,
                                       std::span<const Vec3> points,
                                       const EwaldParameters& parameters, double min_distance,
                                       unsigned threads = 0);

/// The reciprocal part alone, (4π/V) Σ_{0<|k|≤k_cutoff} exp(-k²/4β²)/k² Re[S(k) e^{-ik·r}]:
/// the periodic potential of Gaussian charges of σ = 1/(√2 β) without the k = 0 term (no
/// background; its mean over the cell is 0), the float64 oracle of --preset pmepot. Uses
/// parameters.beta and parameters.k_cutoff only.
std::vector<double> reciprocal_reference_at(std::span<const Vec3> positions,
                                            std::span<const double> charges, const UnitCell& cell,
                                            std::span<const Vec3> points,
                                            const EwaldParameters& parameters,
                                            unsigned threads = 0);

/// φ_i at every atom (own term excluded, self term added).
std::vector<double> ewald_reference_at_atoms(std::span<const Vec3> positions,
                                             std::span<const double> charges, const UnitCell& cell,
                                             const EwaldParameters& parameters,
                                             unsigned threads = 0);

}  // namespace dcs::periodic
