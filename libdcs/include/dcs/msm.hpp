// Multilevel summation (MSM, Hardy and Skeel) for open systems: the potential of a map in
// linear time, to a chosen relative error, behind the PotentialBackend interface.
//
//   1/r = [1/r - g_a(r)] + sum_{l<L} [g_{2^l a}(r) - g_{2^{l+1} a}(r)] + g_{2^L a}(r)
//
// g_a(r) = gamma(r/a)/a is 1/r softened inside r < a (Taylor-C_k splitting: gamma(rho) is the
// degree-k Taylor polynomial of (rho^2)^(-1/2) about rho^2 = 1, C^k at rho = 1). The first term
// vanishes beyond a and is summed exactly over the atoms near each map point (spatial bins);
// each smooth term is summed on a lattice of spacing 2^l h (charges anterpolated, restricted,
// a cutoff lattice sum per level, the top level all-pairs, prolonged back) and interpolated to
// the map's points with the piecewise-polynomial C1 basis of order 4 (cubic) or 6 (quintic).
// msm_parameters() picks h, a, order and k from a relative RMS error target.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/parallel.hpp"

namespace dcs {

/// What MSM needs to know beyond the atoms and the grid.
struct MsmParameters {
  double spacing = 2.0;  ///< h: the finest lattice's spacing, Å
  double cutoff = 10.0;  ///< a: the short-range cutoff, Å (a/h >= 2)
  int order = 4;         ///< interpolation order: 4 (cubic) or 6 (quintic)
  int split = 2;         ///< k of the Taylor-C_k splitting (1..6)
  double target = 1e-3;  ///< the relative RMS error these were chosen for (informational)
};

/// The default relative RMS error target of --msm-error.
inline constexpr double kDefaultMsmError = 1e-3;

/// Parameters whose measured relative RMS error (rms(V - V_exact) / rms(V_exact) over a map's
/// points) stays below `target` on the calibration molecules (the table in
/// libdcs/src/msm/parameters.cpp). Throws UsageError for a target outside [1e-5, 1e-1].
/// Testing aid: the environment variable DCS_MSM_TESTING_PARAMETERS="h a order k" replaces the
/// table's choice (so that a test can make a run miss its target).
MsmParameters msm_parameters(double target);

/// Throws UsageError naming the field when `parameters` is not usable.
void validate(const MsmParameters& parameters);

/// What every msm backend's prepare() refuses, before any work (UsageError): no atoms, a model
/// other than Coulomb, a min_distance of half the cutoff or more.
void check_msm_input(const System& system, const Physics& physics, const MsmParameters& parameters);

/// "msm cubic, h = 2 A, a = 10 A, C2 splitting": for logs, kernel names and file metadata.
std::string describe(const MsmParameters& parameters);

/// MSM around an exact backend: prepare() builds the lattices and bins (Coulomb model only:
/// others throw UsageError), compute_slab() sums each point's short-range part and interpolates
/// the long-range lattice, on `options.threads` threads. The value of a point is the same bits
/// for any slab split and thread count. statistics() and difference() are the wrapped backend's;
/// prepare_points()/compute_points() throw UsageError (MSM at points is not implemented).
/// prepare() estimates its memory first (msm_memory(), dcs/msm_plan.hpp) and refuses
/// (UsageError) beyond `memory_limit` bytes (this worker's share of --memory-limit; 0: none
/// given), the memory available now or the address-space limit.
std::unique_ptr<PotentialBackend> make_msm_backend(std::unique_ptr<PotentialBackend> exact,
                                                   const MsmParameters& parameters,
                                                   const BackendOptions& options,
                                                   std::size_t memory_limit = 0);

/// One CPU MSM prepare() in plain arrays: the lattice, bins and weights the CPU backend computes
/// from (the CUDA backend builds its own on the device from the same plan, dcs/msm_plan.hpp;
/// its tests compare the two finest lattices).
struct MsmHostData {
  double factor = 0.0;            ///< the unit's Coulomb factor: V = factor * (short + long)
  double cutoff = 0.0;            ///< a, Å
  double min_distance = 0.0;      ///< Å
  int order = 4;                  ///< interpolation order (weights per axis and point)
  std::array<double, 7> gamma{};  ///< gamma(rho) = sum_n gamma[n] (rho^2 - 1)^n inside a
  /// The finest lattice's long-range potential (e/Å) at indices lattice_lo .. + lattice_n - 1,
  /// x fastest.
  std::array<long, 3> lattice_lo{}, lattice_n{};
  std::vector<double> lattice;
  /// Per map axis: each grid coordinate's first lattice index and its `order` weights.
  std::array<std::vector<long>, 3> base;
  std::array<std::vector<double>, 3> weights;
  /// Bins of side bin_side from bin_lower, bins[0] x bins[1] x bins[2], x fastest: bin b holds
  /// atoms[bin_start[b], bin_start[b + 1]) as (x, y, z, q) in Å and e.
  Vec3 bin_lower{};
  double bin_side = 0.0;
  std::array<long, 3> bins{};
  std::vector<std::size_t> bin_start;
  std::vector<std::array<double, 4>> atoms;
};

/// The CPU backend's prepare() for `parameters`, copied out (throws as its prepare() does).
MsmHostData msm_prepare_host(const System& system, const GridSpec& grid, const Physics& physics,
                             const MsmParameters& parameters, ThreadPool& pool);

}  // namespace dcs
