#include "dcs/stats.hpp"

#include <cmath>

#include "dcs/parallel.hpp"

namespace dcs {

GridStats finalize(const StatsAccum& accum) noexcept {
  GridStats stats;
  stats.count = accum.count;
  stats.nonfinite = accum.nonfinite;
  const std::uint64_t finite = accum.count - accum.nonfinite;
  if (finite == 0) return stats;
  stats.min = accum.min;
  stats.max = accum.max;
  stats.sum = accum.sum;
  stats.mean = accum.sum / static_cast<double>(finite);
  stats.rms = std::sqrt(accum.sum_sq / static_cast<double>(finite));
  return stats;
}

StatsAccum cpu_statistics(const float* values, std::size_t n) noexcept {
  StatsAccum accum;
  for (std::size_t index = 0; index < n; ++index) accum.add(values[index]);
  return accum;
}

void plane_statistics(const float* values, std::size_t plane_points, std::size_t planes,
                      unsigned threads, StatsAccum* out) {
  parallel_for(planes, threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t plane = begin; plane < end; ++plane)
      out[plane] = cpu_statistics(values + plane * plane_points, plane_points);
  });
}

DiffAccum cpu_difference(const float* values, const double* reference, std::size_t n) noexcept {
  DiffAccum accum;
  for (std::size_t index = 0; index < n; ++index) accum.add(values[index], reference[index]);
  return accum;
}

}  // namespace dcs
