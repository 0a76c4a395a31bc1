// The values of the reference sample (validation.hpp), kept as the slabs stream past: the map is
// not read back for them. A huge map read back one plane per sampled point cost more than
// computing it (10^8 atoms x 2048^3: 94 s of reads for 4095 points, the slabs took 45 s).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dcs/io/watching_sink.hpp"

namespace dcs::pipeline {

/// Watches the slabs for the values at `indices` (flat grid indices, sorted, unique); complete()
/// reads the planes of those no slab brought (a resumed run's done planes, other MPI ranks').
/// With keep_extremes, it also finds the map's minimum and maximum among the slabs it sees, each
/// at its first point in index order (what the read-back of reference_sample() finds), for a run
/// that keeps no map to read back (--null-output). Memory: 13 bytes per index.
class SampleSink final : public io::WatchingSink {
 public:
  /// A point of the map and its value.
  struct Extreme {
    std::size_t index = 0;
    float value = 0.0f;
    bool found = false;  ///< false until a slab with a finite value passed
  };

  explicit SampleSink(std::vector<std::size_t> indices, bool keep_extremes = false);
  std::string name() const override { return "(reference sample)"; }
  std::size_t memory_bytes() const override;
  void begin(const MapMetadata& meta) override;
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  void complete(MapReader& map) override;

  const std::vector<std::size_t>& indices() const noexcept { return indices_; }
  /// The value at each index (after complete(): every one).
  const std::vector<float>& values() const noexcept { return values_; }
  /// keep_extremes: the first points of the smallest and largest finite value seen.
  const Extreme& minimum() const noexcept { return minimum_; }
  const Extreme& maximum() const noexcept { return maximum_; }

 private:
  /// [first, last) of the indices in planes [z_begin, z_end).
  std::pair<std::size_t, std::size_t> range(std::int64_t z_begin, std::int64_t z_end) const;

  std::vector<std::size_t> indices_;
  std::vector<float> values_;
  std::vector<bool> seen_;
  std::size_t plane_points_ = 0;
  bool keep_extremes_ = false;
  Extreme minimum_, maximum_;
};

}  // namespace dcs::pipeline
