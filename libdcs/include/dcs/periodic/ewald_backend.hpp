// --method ewald (--periodic): the periodic potential of a cell (periodic_potential.hpp) behind
// the PotentialBackend interface, as msm.hpp wraps multilevel summation around the exact
// backend. prepare() builds one frame's PeriodicPotential from the system's atoms and
// System::cell; compute_slab() evaluates the slab's points (× the Coulomb factor of the
// physics, into float); prepare_points()/compute_points() give points and atoms (own term
// excluded); reference_points() is the float64 Ewald sum at reference_parameters() (the oracle
// the run's measured error and --validate compare with). Reductions are the wrapped backend's.
#pragma once

#include <memory>
#include <string>

#include "dcs/backend.hpp"
#include "dcs/periodic/ewald_parameters.hpp"

namespace dcs::periodic {

/// The default relative RMS error target of --ewald-error.
inline constexpr double kDefaultEwaldError = 1e-5;

/// The settings a run with --ewald-error `target` computes with: accuracy = target (measured:
/// the relative RMS error then stays below it, tests/periodic). Throws UsageError for a target
/// outside [1e-8, 1e-2]. Testing aid: the environment variable DCS_EWALD_TESTING_ACCURACY="δ"
/// replaces the accuracy (not the target), so that a test can make a run miss its target.
PeriodicSettings ewald_settings(double target);

/// What every ewald backend's prepare() refuses before any work (UsageError): no atoms, a model
/// other than Coulomb, a cell that is not periodic (naming the input and why).
void check_ewald_input(const System& system, const Physics& physics);

/// The oracle of every ewald backend's reference_points() (CPU and CUDA alike): the float64
/// Ewald sum at reference_parameters() of a run with `settings` at points[0..n), times the
/// Coulomb factor of `physics`, into out; returns its description for the run's summary.
std::string ewald_reference_points(const PeriodicSettings& settings, const System& system,
                                   const Physics& physics, const Vec3* points, std::size_t n,
                                   double* out, unsigned threads);

/// The Ewald parameters of a run for `cell`: "beta 0.3290 1/A, real cutoff 10.00 A, ...".
EwaldParameters ewald_parameters(const UnitCell& cell, double target);

/// The ewald backend around an exact CPU backend (its statistics(), difference(), hints and
/// names are used). `settings.threads` is replaced by options.threads. The value of a point is
/// the same bits for any slab split, thread count and worker.
std::unique_ptr<PotentialBackend> make_ewald_backend(std::unique_ptr<PotentialBackend> exact,
                                                     const PeriodicSettings& settings,
                                                     const BackendOptions& options);

}  // namespace dcs::periodic
