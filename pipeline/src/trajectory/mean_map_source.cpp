// The mean map as a slab source (mean_map_source.hpp).
#include "mean_map_source.hpp"

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs::pipeline {

void MeanMapSource::prepare(const System&, const GridSpec& grid, const Physics&) { grid_ = grid; }

void MeanMapSource::compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) {
  const std::size_t plane = grid_.plane_points();
  for (std::int64_t k = 0; k < slab.z_count; ++k) {
    const std::int64_t z = slab.z_begin + k;
    file_.load(z, plane_);
    if (plane_.frames != frames_)
      throw InternalError(fmt::format("{}: plane {} holds {} of {} frames", file_.path(), z,
                                      plane_.frames, frames_));
    float* values = out + static_cast<std::size_t>(k) * plane;
    for (std::size_t i = 0; i < plane; ++i) values[i] = static_cast<float>(plane_.mean[i]);
    plane_stats[k] = by_.statistics(values, plane);
  }
}

}  // namespace dcs::pipeline
