// What serves the slabs of a map to the one-map job (pipeline's engine): a backend computing
// them (dcs/backend.hpp), or a map that already exists, such as a trajectory's mean or values
// held in memory. It has the map's side of a backend only: no points, no float64 reference.
//
// Determinism: the value at a grid point and the statistics of a z-plane do not depend on which
// slab the point or plane was computed in, provided slabs start at multiples of
// slab_hint().plane_multiple. The pipeline relies on this to make the map and its statistics
// bit-identical for any number of devices, slab sizes, ranks and resumptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dcs/grid.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"
#include "dcs/types.hpp"

namespace dcs {

/// Seconds spent inside the backend since the last prepare() (which restarts them), by stage.
struct BackendTimings {
  double upload = 0.0;      ///< host to device (atoms)
  double kernels = 0.0;     ///< potential kernels
  double download = 0.0;    ///< device to host (map)
  double statistics = 0.0;  ///< reductions
};

/// How a caller should cut a grid into slabs for one backend: at least `min_points` per
/// compute() call (a GPU launch must fill the device) and plane counts in multiples of
/// `plane_multiple` (a kernel's z-coarsening), except for the last slab.
struct SlabHint {
  std::size_t min_points = 0;
  std::int64_t plane_multiple = 1;
};

/// Host memory owned by whoever allocated it (see MapSource::allocate_host()).
class HostBuffer {
 public:
  virtual ~HostBuffer() = default;
  float* data() noexcept { return data_; }
  const float* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

 protected:
  float* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Plain heap memory (not zero-filled: the pages are touched by whoever writes them first).
std::unique_ptr<HostBuffer> allocate_plain_host(std::size_t floats);

class MapSource {
 public:
  virtual ~MapSource() = default;

  virtual std::string name() const = 0;            ///< "cpu-reference", "cpu-fast", "cuda"
  virtual std::string kernel_name() const = 0;     ///< the potential variant in use
  virtual std::string reduction_name() const = 0;  ///< the statistics variant in use
  virtual std::string device_name() const = 0;     ///< e.g. "NVIDIA H200 (cuda:0, sm_90, 132 SMs)"

  /// Takes the atoms, grid and physics for the following compute() calls (uploads once).
  /// Throws UsageError for an empty system.
  virtual void prepare(const System& system, const GridSpec& grid, const Physics& physics) = 0;

  /// Computes the potential on `slab` of the prepared grid into `out`
  /// (grid.plane_points() * slab.z_count floats, x fastest, ideally from allocate_host()) and
  /// the statistics of each plane into plane_stats[0, slab.z_count), each reduced on its own in
  /// a fixed order (see Determinism above).
  virtual void compute_slab(const Slab& slab, float* out, StatsAccum* plane_stats) = 0;

  /// compute_slab() with the planes' statistics combined in plane order.
  StatsAccum compute(const Slab& slab, float* out);

  /// Host memory for `floats` values that compute_slab() writes fastest into (page-locked and
  /// usable by every device for CUDA; plain memory for CPU backends).
  virtual std::unique_ptr<HostBuffer> allocate_host(std::size_t floats);

  /// Statistics of n host values with this source's reduction.
  virtual StatsAccum statistics(const float* values, std::size_t n) = 0;

  virtual BackendTimings timings() const { return {}; }

  virtual SlabHint slab_hint() const { return {}; }
};

}  // namespace dcs
