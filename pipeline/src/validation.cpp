// --validate (validation.hpp).
#include "validation.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "dcs/log.hpp"
#include "dcs/physics.hpp"
#include "dcs/timer.hpp"

namespace dcs::pipeline {
namespace {

/// Atom-point evaluations --validate spends in float64 by default (a few seconds on one core):
/// small grids are compared at every point, larger ones at a sample.
constexpr double kValidationBudget = 5e8;

}  // namespace

ReferenceSample reference_sample(const RunConfig& config, PotentialBackend& lead,
                                 const System& system, const GridSpec& grid, io::MapStore& store,
                                 const std::vector<StatsAccum>& plane_stats, const GridStats& stats,
                                 std::size_t requested) {
  const std::size_t plane = grid.plane_points();
  std::vector<float> buffer(plane);
  // The planes that hold the map's minimum and maximum, from the plane statistics.
  auto index_of = [&](bool minimum) {
    for (std::size_t z = 0; z < plane_stats.size(); ++z) {
      if ((minimum ? plane_stats[z].min : plane_stats[z].max) != (minimum ? stats.min : stats.max))
        continue;
      store.read_planes({static_cast<std::int64_t>(z), 1}, buffer.data());
      const auto it = minimum ? std::min_element(buffer.begin(), buffer.end())
                              : std::max_element(buffer.begin(), buffer.end());
      return z * plane + static_cast<std::size_t>(it - buffer.begin());
    }
    return std::size_t{0};
  };
  const std::size_t index_of_min = index_of(true), index_of_max = index_of(false);
  const std::vector<std::size_t> indices = validation_points(
      grid, system.size(), requested, kValidationBudget, index_of_min, index_of_max);
  ReferenceSample sample;
  sample.all_points = indices.size() == grid.points();
  std::vector<Vec3> points(indices.size());
  sample.values.resize(indices.size());
  std::int64_t loaded = -1;
  for (std::size_t n = 0; n < indices.size(); ++n) {  // indices are sorted: one read per plane
    const std::size_t index = indices[n];
    const auto k = static_cast<std::int64_t>(index / plane);
    if (k != loaded) {
      store.read_planes({k, 1}, buffer.data());
      loaded = k;
    }
    const auto i = static_cast<std::int64_t>(index % static_cast<std::size_t>(grid.nx()));
    const auto j = static_cast<std::int64_t>((index % plane) / static_cast<std::size_t>(grid.nx()));
    points[n] = grid.point(i, j, k);
    sample.values[n] = buffer[index % plane];
  }
  sample.reference.resize(points.size());
  const auto start = SteadyClock::now();
  const std::string where =
      lead.reference_points(system, config.physics, points.data(), points.size(),
                            sample.reference.data(), config.backend.threads);
  log().debug("float64 reference at {} points x {} atoms: {:.3f} s on {}", points.size(),
              system.size(), seconds_since(start), where);
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

void measure_method_error(const ReferenceSample& sample, const GridStats& stats,
                          MethodInfo& method) {
  // Plain double loops over a few thousand points: the same sums whatever ran the map.
  double sum_sq_diff = 0.0, sum_sq_ref = 0.0, max_abs_diff = 0.0;
  for (std::size_t n = 0; n < sample.values.size(); ++n) {
    const double d = static_cast<double>(sample.values[n]) - sample.reference[n];
    sum_sq_diff += d * d;
    sum_sq_ref += sample.reference[n] * sample.reference[n];
    max_abs_diff = std::isfinite(d) ? std::max(max_abs_diff, std::abs(d)) : INFINITY;
  }
  method.measured = true;
  method.points = sample.values.size();
  method.all_points = sample.all_points;
  method.rms_rel_error =
      sum_sq_ref > 0.0 ? std::sqrt(sum_sq_diff / sum_sq_ref) : (sum_sq_diff > 0.0 ? INFINITY : 0.0);
  if (!std::isfinite(sum_sq_diff)) method.rms_rel_error = INFINITY;
  const double scale = stats.max_abs() > 0.0 ? stats.max_abs() : 1.0;
  method.max_rel_error = max_abs_diff / scale;
  method.met = method.rms_rel_error <= method.target;
}

std::vector<std::size_t> validation_points(const GridSpec& grid, std::size_t atoms,
                                           std::size_t requested, double budget,
                                           std::size_t index_of_min, std::size_t index_of_max) {
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
  indices.push_back(index_of_min);
  indices.push_back(index_of_max);
  std::mt19937_64 generator(20261121);  // fixed: the same map is always checked at the same points
  std::uniform_int_distribution<std::size_t> pick(0, total - 1);
  while (indices.size() < wanted) indices.push_back(pick(generator));
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  return indices;
}

}  // namespace dcs::pipeline
