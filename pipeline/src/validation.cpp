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
  return traits(config.method).measures_error && !config.trajectory;
}

std::size_t requested_points(const RunConfig& config) {
  return config.validate || config.validate_points > 0 ? config.validate_points
                                                       : kMethodCheckPoints;
}

std::vector<std::size_t> sample_points(const RunConfig& config, const GridSpec& grid,
                                       std::size_t atoms, std::size_t most) {
  const double budget =
      std::min(kValidationBudget,
               static_cast<double>(most) * static_cast<double>(std::max<std::size_t>(atoms, 1)));
  return fixed_sample_points(grid, atoms, requested_points(config), budget);
}

std::optional<std::vector<std::size_t>> streamed_sample(const RunConfig& config,
                                                        const GridSpec& grid, std::size_t atoms) {
  if (!config.validate && !measures_method_error(config)) return std::nullopt;
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

/// The places of the extremes' indices in the sorted `indices` (a sample's, not every point).
void mark_extremes(const std::vector<std::size_t>& indices, std::size_t index_of_min,
                   std::size_t index_of_max, ReferenceSample& sample) {
  for (const std::size_t index : {index_of_min, index_of_max}) {
    const auto it = std::lower_bound(indices.begin(), indices.end(), index);
    if (it != indices.end() && *it == index)
      sample.extremes.push_back(static_cast<std::size_t>(it - indices.begin()));
  }
}

/// The float64 reference at the sample's grid points, by lead.reference_points().
void add_reference(const RunConfig& config, PotentialBackend& lead, const System& system,
                   const GridSpec& grid, const std::vector<std::size_t>& indices,
                   ReferenceSample& sample) {
  const std::size_t plane = grid.plane_points();
  sample.all_points = indices.size() == grid.points();
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
                            sample.reference.data(), config.backend.threads);
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
  mark_extremes(indices, point(streamed.minimum()).first, point(streamed.maximum()).first, sample);
  add_reference(config, lead, system, grid, indices, sample);
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
  if (indices.size() < grid.points()) mark_extremes(indices, index_of_min, index_of_max, sample);
  add_reference(config, lead, system, grid, indices, sample);
  return sample;
}

Validation validate_map(const RunConfig& config, PotentialBackend& backend,
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
  validation.tolerance = config.tolerance.value_or(backend.tolerance());
  validation.passed = validation.max_rel_error <= validation.tolerance;
  return validation;
}

void measure_method_error(const ReferenceSample& sample, const GridStats& stats, MethodInfo& method,
                          bool unbiased) {
  // Plain double loops over a few thousand points: the same sums whatever ran the map.
  double sum_sq_diff = 0.0, sum_sq_ref = 0.0, max_abs_diff = 0.0;
  std::size_t counted = 0;
  for (std::size_t n = 0; n < sample.values.size(); ++n) {
    if (unbiased &&
        std::find(sample.extremes.begin(), sample.extremes.end(), n) != sample.extremes.end())
      continue;
    ++counted;
    const double d = static_cast<double>(sample.values[n]) - sample.reference[n];
    sum_sq_diff += d * d;
    sum_sq_ref += sample.reference[n] * sample.reference[n];
    max_abs_diff = std::isfinite(d) ? std::max(max_abs_diff, std::abs(d)) : INFINITY;
  }
  method.measured = true;
  method.points = counted;
  method.all_points = sample.all_points;
  method.rms_rel_error =
      sum_sq_ref > 0.0 ? std::sqrt(sum_sq_diff / sum_sq_ref) : (sum_sq_diff > 0.0 ? INFINITY : 0.0);
  if (!std::isfinite(sum_sq_diff)) method.rms_rel_error = INFINITY;
  const double scale = stats.max_abs() > 0.0 ? stats.max_abs() : 1.0;
  method.max_rel_error = max_abs_diff / scale;
  method.met = method.rms_rel_error <= method.target;
}

std::vector<std::size_t> fixed_sample_points(const GridSpec& grid, std::size_t atoms,
                                             std::size_t requested, double budget) {
  const std::size_t total = grid.points();
  std::size_t wanted = requested;
  if (wanted == 0) {
    const double affordable = budget / static_cast<double>(std::max<std::size_t>(atoms, 1));
    wanted = static_cast<double>(total) <= affordable
                 ? total
                 : std::max<std::size_t>(4096, static_cast<std::size_t>(affordable));
  }
  std::vector<std::size_t> indices;
  if (wanted >= total) {
    indices.resize(total);
    for (std::size_t index = 0; index < total; ++index) indices[index] = index;
    return indices;
  }
  for (std::int64_t k : {std::int64_t{0}, grid.nz() - 1})
    for (std::int64_t j : {std::int64_t{0}, grid.ny() - 1})
      for (std::int64_t i : {std::int64_t{0}, grid.nx() - 1})
        indices.push_back(grid.index(i, j, k));
  // Two places are the extremes' (validation_points()): wanted - 10 random draws either way.
  std::mt19937_64 generator(20261121);  // fixed: the same map is always checked at the same points
  std::uniform_int_distribution<std::size_t> pick(0, total - 1);
  while (indices.size() + 2 < wanted) indices.push_back(pick(generator));
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
