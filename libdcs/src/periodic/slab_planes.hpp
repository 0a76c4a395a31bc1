// A slab of a map from a potential evaluated at points (the ewald and pmepot backends): each
// plane's points from grid.point() (skewed grids included), the float64 values scaled by
// `factor` into floats, then each plane reduced on its own as the CPU backends do (backend.hpp's
// determinism); the times go to `timings`.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dcs/backend.hpp"
#include "dcs/grid.hpp"
#include "dcs/stats.hpp"
#include "dcs/timer.hpp"

namespace dcs::periodic::detail {

/// `at(points, values)` fills values[m] with the potential (unscaled) at points[m].
template <class At>
void fill_slab_planes(const GridSpec& grid, const Slab& slab, double factor, float* out,
                      StatsAccum* plane_stats, BackendTimings& timings, At&& at) {
  const auto start = std::chrono::steady_clock::now();
  const std::size_t plane = grid.plane_points();
  std::vector<Vec3> points(plane);
  std::vector<double> values(plane);
  for (std::int64_t q = 0; q < slab.z_count; ++q) {
    std::size_t n = 0;
    for (std::int64_t j = 0; j < grid.ny(); ++j)
      for (std::int64_t i = 0; i < grid.nx(); ++i) points[n++] = grid.point(i, j, slab.z_begin + q);
    at(std::span<const Vec3>(points), std::span<double>(values));
    float* plane_out = out + static_cast<std::size_t>(q) * plane;
    for (std::size_t m = 0; m < plane; ++m) plane_out[m] = static_cast<float>(factor * values[m]);
  }
  timings.kernels += seconds_since(start);
  const auto stats_start = std::chrono::steady_clock::now();
  for (std::int64_t q = 0; q < slab.z_count; ++q)
    plane_stats[q] = cpu_statistics(out + static_cast<std::size_t>(q) * plane, plane);
  timings.statistics += seconds_since(stats_start);
}

}  // namespace dcs::periodic::detail
