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
/// Memory: 13 bytes per index.
class SampleSink final : public io::WatchingSink {
 public:
  explicit SampleSink(std::vector<std::size_t> indices);
  std::string name() const override { return "(reference sample)"; }
  std::size_t memory_bytes() const override;
  void begin(const MapMetadata& meta) override;
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  void complete(MapReader& map) override;

  const std::vector<std::size_t>& indices() const noexcept { return indices_; }
  /// The value at each index (after complete(): every one).
  const std::vector<float>& values() const noexcept { return values_; }

 private:
  /// [first, last) of the indices in planes [z_begin, z_end).
  std::pair<std::size_t, std::size_t> range(std::int64_t z_begin, std::int64_t z_end) const;

  std::vector<std::size_t> indices_;
  std::vector<float> values_;
  std::vector<bool> seen_;
  std::size_t plane_points_ = 0;
};

}  // namespace dcs::pipeline
