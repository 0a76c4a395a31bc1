// --validate: the map compared with the float64 reference at every point of small grids, else
// at a fixed sample that includes the corners and the map's extreme points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/map.hpp"
#include "dcs/pipeline/run_config.hpp"
#include "sample_sink.hpp"

namespace dcs::pipeline {

/// The map's values at the points compared (validation_points()) and the float64 reference
/// there: what --validate and the error every msm run measures are computed from.
struct ReferenceSample {
  std::vector<float> values;
  std::vector<double> reference;
  /// Per point: one of the uniform random draws (drawn_points()); the corners and the extremes
  /// are in the sample for --validate's max error only, unless a draw also hit them.
  std::vector<bool> drawn;
  bool all_points = false;  ///< every grid point (else a sample)
  /// Where the map's minimum and maximum sit in `values` (a sample only): the points --validate
  /// must see, left out of an unbiased estimate (measure_method_error()).
  std::vector<std::size_t> extremes;
};

/// Every msm map's error is measured, except a trajectory's mean map: the mean of the frames'
/// maps is not the potential of one atom set, so there is nothing to compare it with (--validate
/// is refused for trajectories for the same reason); each frame's map is MSM at its target.
bool measures_method_error(const RunConfig& config);

/// The points the run's check asks for: --validate's (--validate-points), else kMethodCheckPoints.
std::size_t requested_points(const ValidationRequest& request);

/// The sample's points other than the map's extremes: fixed_sample_points() at the run's request
/// and --validate's budget (every point of small grids), or at most about `most` points where
/// the budget alone would afford more (a sample then, not every point).
std::vector<std::size_t> sample_points(const RunConfig& config, const GridSpec& grid,
                                       std::size_t atoms, std::size_t most = SIZE_MAX);

/// The sample's points other than the map's extremes (fixed_sample_points()), for a SampleSink to
/// take from the slabs; nullopt when the run checks no values or compares every point (read
/// back from the store, as small grids are).
std::optional<std::vector<std::size_t>> streamed_sample(const RunConfig& config,
                                                        const GridSpec& grid, std::size_t atoms);

/// The sampled values (from `streamed`, completed, when given; else read from `store`) with the
/// extremes' read from their planes (found by the plane statistics), and the reference at them
/// by lead.reference_points() (on its GPU for CUDA backends, else on config.compute.backend.threads
/// CPU threads): `requested` points (0: as many as --validate's budget of float64 evaluations
/// affords, validation_points()).
ReferenceSample reference_sample(const RunConfig& config, PotentialBackend& lead,
                                 const System& system, const GridSpec& grid, io::MapStore& store,
                                 const std::vector<StatsAccum>& plane_stats, const GridStats& stats,
                                 std::size_t requested, const SampleSink* streamed = nullptr);

/// The same sample for a run that keeps no map (--null-output): the values and the extremes
/// all from `streamed` (a SampleSink that kept them; every slab passed it).
ReferenceSample reference_sample(const RunConfig& config, PotentialBackend& lead,
                                 const System& system, const GridSpec& grid,
                                 const SampleSink& streamed);

/// Points at which an msm run without --validate measures its error: --validate's smallest
/// sample, so the check costs 4096 x atoms float64 evaluations (about 10 % of MSM's own time at
/// 10^5 atoms on the CPU) and the relative RMS is known to a few % of itself.
inline constexpr std::size_t kMethodCheckPoints = 4096;

/// Values --null-output keeps for the check (every point of small grids, as a file run compares,
/// but at most 4 Mi values, 52 MB, not charged to --memory-limit): sample_points()'s `most`.
inline constexpr std::size_t kMostKept = std::size_t{1} << 22;

/// --validate: the sample compared with the backend's tolerance (or --tolerance).
Validation validate_map(const ValidationRequest& request, PotentialBackend& backend,
                        const ReferenceSample& sample, const GridStats& stats);

/// --method msm: the relative RMS error rms(V - V_exact) / rms(V_exact) over the sample's
/// uniform draws (an unbiased sample of the map's points: the extremes, next to atoms, would
/// weigh the denominator and understate the map-wide value, issue 35), and the max error
/// relative to max|V| over the whole sample, into `method` (measured, points: the draws, met).
void measure_method_error(const ReferenceSample& sample, const GridStats& stats,
                          MethodInfo& method);

/// Indices of the points compared: every point when points * atoms <= `budget` evaluations,
/// else a deterministic sample of about budget/atoms points (at least 4096) that always
/// includes the eight corners and the points of the minimum and maximum.
std::vector<std::size_t> validation_points(const GridSpec& grid, std::size_t atoms,
                                           std::size_t requested, double budget,
                                           std::size_t index_of_min, std::size_t index_of_max);

/// validation_points() without the extremes (known only once the map is): sorted, unique; every
/// point when the budget affords them. The eight corners and drawn_points().
std::vector<std::size_t> fixed_sample_points(const GridSpec& grid, std::size_t atoms,
                                             std::size_t requested, double budget);

/// The uniform part of fixed_sample_points(): points drawn uniformly (with replacement, by a
/// fixed seed: the same grid and request always give the same points, whatever the workers or
/// ranks), sorted, unique; every point when the budget affords them.
std::vector<std::size_t> drawn_points(const GridSpec& grid, std::size_t atoms,
                                      std::size_t requested, double budget);

}  // namespace dcs::pipeline
