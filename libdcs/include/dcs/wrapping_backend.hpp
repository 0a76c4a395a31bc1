// The base of a method that wraps an exact backend (msm, ewald; msm's CUDA backend): the method
// computes the map's slabs; the wrapped backend keeps what does not depend on the method (the
// reductions, the slab and points hints, the host memory, the device's name) and, unless the
// method has its own, the points and the float64 reference. A method overrides what it changes
// and inherits the rest, so each wrapper is its method and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dcs/backend.hpp"

namespace dcs {

class WrappingBackend : public PotentialBackend {
 public:
  std::string reduction_name() const override { return wrapped_->reduction_name(); }
  std::string device_name() const override { return wrapped_->device_name(); }
  double tolerance() const override { return wrapped_->tolerance(); }

  std::unique_ptr<HostBuffer> allocate_host(std::size_t floats) override {
    return wrapped_->allocate_host(floats);
  }
  StatsAccum statistics(const float* values, std::size_t n) override {
    return wrapped_->statistics(values, n);
  }
  DiffAccum difference(const float* values, const double* reference, std::size_t n) override {
    return wrapped_->difference(values, reference, n);
  }
  /// The wrapper's own stage times (timings_), which its prepare() restarts.
  BackendTimings timings() const override { return timings_; }
  SlabHint slab_hint() const override { return wrapped_->slab_hint(); }

  // Points and the reference: the wrapped backend's, exactly (a method without a form at
  // points is refused before it gets here: check_config()).
  void prepare_points(const System& system, const Physics& physics) override {
    wrapped_->prepare_points(system, physics);
  }
  void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                      float* out) override {
    wrapped_->compute_points(points, skip, n, out);
  }
  PointsHint points_hint() const override { return wrapped_->points_hint(); }
  std::string reference_points(const System& system, const Physics& physics, const Vec3* points,
                               std::size_t n, double* out, unsigned threads) override {
    return wrapped_->reference_points(system, physics, points, n, out, threads);
  }

 protected:
  /// Takes `wrapped`; InternalError naming `factory` when there is none.
  WrappingBackend(std::unique_ptr<PotentialBackend> wrapped, const char* factory);

  PotentialBackend& wrapped() const { return *wrapped_; }

  /// UsageError "<method>: slab [b, e) outside the grid's n planes" for a slab off the grid.
  static void check_slab(const char* method, const Slab& slab, const GridSpec& grid);

  BackendTimings timings_;

 private:
  std::unique_ptr<PotentialBackend> wrapped_;
};

}  // namespace dcs
