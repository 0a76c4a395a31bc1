// The second stage of a trajectory run: its mean map handed to the one-map job as a slab source
// whose slabs are the frames' means (from the frame statistics file), so that the map is stored,
// reduced, written as DX/MRC, finished and committed exactly as an atom file's map is.
#pragma once

#include "dcs/io/frame_accumulators.hpp"
#include "dcs/map_source.hpp"

namespace dcs::pipeline {

class MeanMapSource final : public MapSource {
 public:
  /// `file` holds every plane's statistics over `frames` frames; `computed_by` is the worker
  /// that computed them (its names are the map's provenance; its reductions are used).
  MeanMapSource(io::FrameAccumulatorFile& file, std::int64_t frames, MapSource& computed_by)
      : file_(file), frames_(frames), by_(computed_by) {}

  std::string name() const override { return by_.name(); }
  std::string kernel_name() const override { return by_.kernel_name(); }
  std::string reduction_name() const override { return by_.reduction_name(); }
  std::string device_name() const override { return by_.device_name(); }
  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override;
  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override;
  StatsAccum statistics(const float* values, std::size_t n) override {
    return by_.statistics(values, n);
  }

 private:
  io::FrameAccumulatorFile& file_;
  std::int64_t frames_;
  MapSource& by_;
  GridSpec grid_;
  io::PlaneAccumulator plane_;
};

}  // namespace dcs::pipeline
