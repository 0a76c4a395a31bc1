// The second stage of a trajectory run: its mean map handed to the one-map job as a backend
// whose slabs are the frames' means (from the frame statistics file), so that the map is stored,
// reduced, written as DX/MRC, finished and committed exactly as an atom file's map is.
#pragma once

#include "dcs/backend.hpp"
#include "dcs/error.hpp"
#include "dcs/io/frame_accumulators.hpp"

namespace dcs::pipeline {

class MeanMapBackend final : public PotentialBackend {
 public:
  /// `file` holds every plane's statistics over `frames` frames; `computed_by` is the backend
  /// that computed them (its names are the map's provenance; its reductions are used).
  MeanMapBackend(io::FrameAccumulatorFile& file, std::int64_t frames, PotentialBackend& computed_by)
      : file_(file), frames_(frames), by_(computed_by) {}

  std::string name() const override { return by_.name(); }
  std::string kernel_name() const override { return by_.kernel_name(); }
  std::string reduction_name() const override { return by_.reduction_name(); }
  std::string device_name() const override { return by_.device_name(); }
  double tolerance() const override { return by_.tolerance(); }
  void prepare(const System& system, const GridSpec& grid, const Physics& physics) override;
  void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) override;
  StatsAccum statistics(const float* values, std::size_t n) override {
    return by_.statistics(values, n);
  }
  DiffAccum difference(const float* values, const double* reference, std::size_t n) override {
    return by_.difference(values, reference, n);
  }
  /// A mean map is read from the statistics file, never evaluated at points.
  void prepare_points(const System&, const Physics&) override {
    throw InternalError("the trajectory's mean map has no points to compute");
  }
  void compute_points(const Vec3*, const std::uint32_t*, std::size_t, float*) override {
    throw InternalError("the trajectory's mean map has no points to compute");
  }

 private:
  io::FrameAccumulatorFile& file_;
  std::int64_t frames_;
  PotentialBackend& by_;
  GridSpec grid_;
  io::PlaneAccumulator plane_;
};

}  // namespace dcs::pipeline
