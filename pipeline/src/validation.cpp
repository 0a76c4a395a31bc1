// --validate (validation.hpp).
#include "validation.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <utility>

#include "dcs/log.hpp"
#include "dcs/physics.hpp"
#include "dcs/timer.hpp"

namespace dcs::pipeline {
namespace {

/// Atom-point evaluations --validate spends in float64 by default (a few seconds on one core):
/// small grids are compared at every point, larger ones at a sample.
constexpr double kValidationBudget = 5e8;

}  // namespace

bool measures_method_error(const RunConfig& config) {
  return traits(config.method.kind).measures_error && !config.trajectory;
}

std::size_t requested_points(const ValidationRequest& request) {
  return request.enabled || request.points > 0 ? request.points : kMethodCheckPoints;
}

namespace {

/// --validate's budget of evaluations, or less where at most `most` values may be kept.
double sample_budget(std::size_t atoms, std::size_t most) {
  return std::min(kValidationBudget,
                  static_cast<double>(most) * static_cast<double>(std::max<std::size_t>(atoms, 1)));
}

}  // namespace

std::vector<std::size_t> sample_points(const RunConfig& config, const GridSpec& grid,
                                       std::size_t atoms, std::size_t most) {
  return fixed_sample_points(grid, atoms, requested_points(config.validation),
                             sample_budget(atoms, most));
}

std::optional<std::vector<std::size_t>> streamed_sample(const RunConfig& config,
                                                        const GridSpec& grid, std::size_t atoms) {
  if (!config.validation.enabled && !measures_method_error(config)) return std::nullopt;
  std::vector<std::size_t> indices = sample_points(config, grid, atoms);
  if (indices.size() == grid.points()) return std::nullopt;  // every point: read back
  return indices;
}

namespace {

/// The streamed sample's values with the extremes' joined in index order (the same points and
/// values validation_points() and a read-back give), as indices and values.
void join_extremes(const SampleSink& streamed, std::pair<std::size_t, float> minimum,
                   std::pair<std::size_t, float> maximum, std::vector<std::size_t>& indices,
                   std::vector<float>& values) {
  std::vector<std::pair<std::size_t, float>> all;
  all.reserve(streamed.indices().size() + 2);
  for (std::size_t n = 0; n < streamed.indices().size(); ++n)
    all.emplace_back(streamed.indices()[n], streamed.values()[n]);
  all.push_back(minimum);
  all.push_back(maximum);
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  all.erase(std::unique(all.begin(), all.end(),
                        [](const auto& a, const auto& b) { return a.first == b.first; }),
            all.end());
  for (const auto& [index, value] : all) {
    indices.push_back(index);
    values.push_back(value);
  }
}

/// The float64 reference at the sample's grid points, by lead.reference_points().
/// `draws` (drawn_points(), sorted) marks the sample's uniform part.
void add_reference(const RunConfig& config, PotentialBackend& lead, const System& system,
                   const GridSpec& grid, const std::vector<std::size_t>& indices,
                   const std::vector<std::size_t>& draws, ReferenceSample& sample) {
  const std::size_t plane = grid.plane_points();
  sample.all_points = indices.size() == grid.points();
  sample.drawn.resize(indices.size());
  for (std::size_t n = 0; n < indices.size(); ++n)
    sample.drawn[n] = std::binary_search(draws.begin(), draws.end(), indices[n]);
  std::vector<Vec3> points(indices.size());
  for (std::size_t n = 0; n < indices.size(); ++n) {
    const std::size_t index = indices[n];
    const auto k = static_cast<std::int64_t>(index / plane);
    const auto i = static_cast<std::int64_t>(index % static_cast<std::size_t>(grid.nx()));
    const auto j = static_cast<std::int64_t>((index % plane) / static_cast<std::size_t>(grid.nx()));
    points[n] = grid.point(i, j, k);
  }
  sample.reference.resize(points.size());
  const auto start = SteadyClock::now();
  const std::string where =
      lead.reference_points(system, config.physics, points.data(), points.size(),
                            sample.reference.data(), config.compute.backend.threads);
  log().debug("float64 reference at {} points x {} atoms: {} ms on {}", points.size(),
              system.size(), std::llround(1e3 * seconds_since(start)), where);
}

}  // namespace

ReferenceSample reference_sample(const RunConfig& config, PotentialBackend& lead,
                                 const System& system, const GridSpec& grid,
                                 const SampleSink& streamed) {
  ReferenceSample sample;
  std::vector<std::size_t> indices;
  // The caller refuses a map with a value that is not finite, so both are found; an extreme
  // not found (no finite value passed) would join as the first sample point, a duplicate. (Not
  // a throw: an InternalError thrown in this file makes GCC 13 -O3 misfire -Werror=array-bounds
  // inside fmt 9, bisected on the GPU machine's compiler.)
  const auto point = [&streamed](const SampleSink::Extreme& extreme) {
    return extreme.found ? std::pair{extreme.index, extreme.value}
                         : std::pair{streamed.indices().front(), streamed.values().front()};
  };
  join_extremes(streamed, point(streamed.minimum()), point(streamed.maximum()), indices,
                sample.values);
  // The streamed points are sample_points(config, grid, atoms, kMostKept) (map_job.cpp).
  add_reference(config, lead, system, grid, indices,
                drawn_points(grid, system.size(), requested_points(config.validation),
                             sample_budget(system.size(), kMostKept)),
                sample);
  return sample;
}

ReferenceSample reference_sample(const RunConfig& config, PotentialBackend& lead,
                                 const System& system, const GridSpec& grid, io::MapStore& store,
                                 const std::vector<StatsAccum>& plane_stats, const GridStats& stats,
                                 std::size_t requested, const SampleSink* streamed) {
  const std::size_t plane = grid.plane_points();
  std::vector<float> buffer(plane);
  // The points of the map's minimum and maximum and their values, from the plane statistics.
  auto extreme = [&](bool minimum) {
    for (std::size_t z = 0; z < plane_stats.size(); ++z) {
      if ((minimum ? plane_stats[z].min : plane_stats[z].max) != (minimum ? stats.min : stats.max))
        continue;
      store.read_planes({static_cast<std::int64_t>(z), 1}, buffer.data());
      const auto it = minimum ? std::min_element(buffer.begin(), buffer.end())
                              : std::max_element(buffer.begin(), buffer.end());
      return std::pair{z * plane + static_cast<std::size_t>(it - buffer.begin()), *it};
    }
    return std::pair{std::size_t{0}, NAN};
  };
  const auto [index_of_min, value_of_min] = extreme(true);
  const auto [index_of_max, value_of_max] = extreme(false);
  ReferenceSample sample;
  std::vector<std::size_t> indices;
  if (streamed != nullptr) {
    // The fixed part's values came with the slabs; the extremes join it in index order.
    join_extremes(*streamed, {index_of_min, value_of_min}, {index_of_max, value_of_max}, indices,
                  sample.values);
  } else {
    indices = validation_points(grid, system.size(), requested, kValidationBudget, index_of_min,
                                index_of_max);
    sample.values.resize(indices.size());
    std::int64_t loaded = -1;
    for (std::size_t n = 0; n < indices.size(); ++n) {  // sorted indices: one read per plane
      const auto k = static_cast<std::int64_t>(indices[n] / plane);
      if (k != loaded) {
        store.read_planes({k, 1}, buffer.data());
        loaded = k;
      }
      sample.values[n] = buffer[indices[n] % plane];
    }
  }
  // The streamed points are sample_points(config, grid, atoms) with `requested` (finish.cpp).
  add_reference(config, lead, system, grid, indices,
                drawn_points(grid, system.size(), requested, kValidationBudget), sample);
  return sample;
}

Validation validate_map(const ValidationRequest& request, PotentialBackend& backend,
                        const ReferenceSample& sample, const GridStats& stats) {
  Validation validation;
  validation.performed = true;
  const DiffAccum diff =
      backend.difference(sample.values.data(), sample.reference.data(), sample.values.size());
  validation.points = diff.count;
  validation.all_points = sample.all_points;
  validation.max_abs_error = diff.nonfinite > 0 ? INFINITY : diff.max_abs_diff;
  validation.rms_error =
      diff.count > 0 ? std::sqrt(diff.sum_sq_diff / static_cast<double>(diff.count)) : 0.0;
  validation.max_abs_reference = diff.max_abs_ref;
  const double scale = stats.max_abs() > 0.0 ? stats.max_abs() : 1.0;
  validation.max_rel_error = validation.max_abs_error / scale;
  validation.tolerance = request.tolerance.value_or(backend.tolerance());
  validation.passed = validation.max_rel_error <= validation.tolerance;
  return validation;
}

void measure_method_error(const ReferenceSample& sample, const GridStats& stats,
                          MethodInfo& method) {
  // Plain double loops over a few thousand points: the same sums whatever ran the map. The RMS
  // over the uniform draws only; the max error over every point (the extremes' included).
  double sum_sq_diff = 0.0, sum_sq_ref = 0.0, max_abs_diff = 0.0;
  std::size_t drawn = 0;
  for (std::size_t n = 0; n < sample.values.size(); ++n) {
    const double d = static_cast<double>(sample.values[n]) - sample.reference[n];
    max_abs_diff = std::isfinite(d) ? std::max(max_abs_diff, std::abs(d)) : INFINITY;
    if (!sample.drawn.empty() && !sample.drawn[n]) continue;
    sum_sq_diff += d * d;
    sum_sq_ref += sample.reference[n] * sample.reference[n];
    ++drawn;
  }
  method.measured = true;
  method.points = drawn;
  method.all_points = sample.all_points;
  method.rms_rel_error =
      sum_sq_ref > 0.0 ? std::sqrt(sum_sq_diff / sum_sq_ref) : (sum_sq_diff > 0.0 ? INFINITY : 0.0);
  if (!std::isfinite(sum_sq_diff) || !std::isfinite(max_abs_diff)) method.rms_rel_error = INFINITY;
  const double scale = stats.max_abs() > 0.0 ? stats.max_abs() : 1.0;
  method.max_rel_error = max_abs_diff / scale;
  method.met = method.rms_rel_error <= method.target;
}

namespace {

/// The points fixed_sample_points() wants: `requested`, else as many as `budget` evaluations
/// afford (at least 4096); the grid's every point when that is as many.
std::size_t wanted_points(const GridSpec& grid, std::size_t atoms, std::size_t requested,
                          double budget) {
  const std::size_t total = grid.points();
  if (requested > 0) return std::min(requested, total);
  const double affordable = budget / static_cast<double>(std::max<std::size_t>(atoms, 1));
  return static_cast<double>(total) <= affordable
             ? total
             : std::min(total, std::max<std::size_t>(4096, static_cast<std::size_t>(affordable)));
}

std::vector<std::size_t> every_point(const GridSpec& grid) {
  std::vector<std::size_t> indices(grid.points());
  for (std::size_t index = 0; index < indices.size(); ++index) indices[index] = index;
  return indices;
}

}  // namespace

std::vector<std::size_t> drawn_points(const GridSpec& grid, std::size_t atoms,
                                      std::size_t requested, double budget) {
  const std::size_t total = grid.points();
  const std::size_t wanted = wanted_points(grid, atoms, requested, budget);
  if (wanted >= total) return every_point(grid);
  // Ten places are the corners' and the extremes' (validation_points()): wanted - 10 draws.
  std::vector<std::size_t> indices;
  std::mt19937_64 generator(20261121);  // fixed: the same map is always checked at the same points
  std::uniform_int_distribution<std::size_t> pick(0, total - 1);
  for (std::size_t draw = 0; draw + 10 < wanted; ++draw) indices.push_back(pick(generator));
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

std::vector<std::size_t> fixed_sample_points(const GridSpec& grid, std::size_t atoms,
                                             std::size_t requested, double budget) {
  std::vector<std::size_t> indices = drawn_points(grid, atoms, requested, budget);
  if (indices.size() == grid.points()) return indices;
  for (std::int64_t k : {std::int64_t{0}, grid.nz() - 1})
    for (std::int64_t j : {std::int64_t{0}, grid.ny() - 1})
      for (std::int64_t i : {std::int64_t{0}, grid.nx() - 1})
        indices.push_back(grid.index(i, j, k));
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

std::vector<std::size_t> validation_points(const GridSpec& grid, std::size_t atoms,
                                           std::size_t requested, double budget,
                                           std::size_t index_of_min, std::size_t index_of_max) {
  std::vector<std::size_t> indices = fixed_sample_points(grid, atoms, requested, budget);
  if (indices.size() == grid.points()) return indices;
  indices.push_back(index_of_min);
  indices.push_back(index_of_max);
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

}  // namespace dcs::pipeline
