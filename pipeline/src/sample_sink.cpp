// SampleSink (sample_sink.hpp).
#include "sample_sink.hpp"

#include <algorithm>
#include <cmath>

namespace dcs::pipeline {

SampleSink::SampleSink(std::vector<std::size_t> indices, bool keep_extremes)
    : indices_(std::move(indices)), keep_extremes_(keep_extremes) {}

std::size_t SampleSink::memory_bytes() const {
  return indices_.size() * (sizeof(std::size_t) + sizeof(float) + 1);
}

void SampleSink::begin(const MapMetadata& meta) {
  plane_points_ = meta.grid.plane_points();
  values_.assign(indices_.size(), NAN);
  seen_.assign(indices_.size(), false);
  minimum_ = maximum_ = Extreme{};
}

std::pair<std::size_t, std::size_t> SampleSink::range(std::int64_t z_begin,
                                                      std::int64_t z_end) const {
  const auto first = std::lower_bound(indices_.begin(), indices_.end(),
                                      static_cast<std::size_t>(z_begin) * plane_points_);
  const auto last =
      std::lower_bound(first, indices_.end(), static_cast<std::size_t>(z_end) * plane_points_);
  return {static_cast<std::size_t>(first - indices_.begin()),
          static_cast<std::size_t>(last - indices_.begin())};
}

void SampleSink::write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) {
  const auto [first, last] = range(slab.z_begin, slab.z_begin + slab.z_count);
  const std::size_t base = static_cast<std::size_t>(slab.z_begin) * plane_points_;
  for (std::size_t n = first; n < last; ++n) {
    values_[n] = values[indices_[n] - base];
    seen_[n] = true;
  }
  if (!keep_extremes_ || plane_stats == nullptr) return;
  // Only a plane whose statistics beat the extreme so far is searched, for its first point of
  // that value; an equal value in a later plane does not replace it, whatever order the slabs
  // come in (planes never overlap, so an earlier plane's points all come first).
  const auto update = [&](Extreme& extreme, double plane_value, std::int64_t p, bool minimum) {
    const std::size_t first_index = base + static_cast<std::size_t>(p) * plane_points_;
    const bool better = !extreme.found ||
                        (minimum ? plane_value < extreme.value : plane_value > extreme.value) ||
                        (plane_value == extreme.value && first_index < extreme.index);
    if (!better) return;
    const float* plane = values + static_cast<std::size_t>(p) * plane_points_;
    const float* at = std::find(plane, plane + plane_points_, static_cast<float>(plane_value));
    if (at == plane + plane_points_) return;  // statistics of other values: not this plane's
    extreme = Extreme{first_index + static_cast<std::size_t>(at - plane), *at, true};
  };
  for (std::int64_t p = 0; p < slab.z_count; ++p) {
    const StatsAccum& stats = plane_stats[p];
    if (stats.count == stats.nonfinite) continue;  // no finite value in the plane
    update(minimum_, stats.min, p, true);
    update(maximum_, stats.max, p, false);
  }
}

void SampleSink::complete(MapReader& map) {
  std::vector<float> plane;
  for (std::size_t n = 0; n < indices_.size(); ++n) {
    if (seen_[n]) continue;
    const auto z = static_cast<std::int64_t>(indices_[n] / plane_points_);
    plane.resize(plane_points_);
    map.read_planes(Slab{z, 1}, plane.data());
    const auto [first, last] = range(z, z + 1);
    for (std::size_t m = first; m < last; ++m) {
      values_[m] = plane[indices_[m] % plane_points_];
      seen_[m] = true;
    }
  }
}

}  // namespace dcs::pipeline
