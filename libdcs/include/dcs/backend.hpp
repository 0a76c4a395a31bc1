// The one interface every compute backend implements (CPU reference, CPU fast, CUDA).
//
// Narrow on purpose, like OpenMM's CalcXxxKernel: prepare() uploads the atoms once,
// compute_slab() fills one slab of z-planes and the statistics of each of its planes,
// statistics()/difference() reduce host arrays. All calls block until their results are in host
// memory. A backend is used from one thread at a time; the pipeline runs one backend per device,
// each in its own thread.
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
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"
#include "dcs/types.hpp"
#include "dcs/variants.hpp"

namespace dcs {

/// Choices that travel to a backend without widening the interface.
struct BackendOptions {
  std::string kernel;       ///< potential variant name; empty: the backend's default
  std::string reduction;    ///< reduction variant name; empty: the backend's default
  int device = 0;           ///< CUDA device ordinal
  unsigned threads = 0;     ///< CPU worker threads; 0: all hardware threads
  bool debug_sync = false;  ///< synchronise and check after every kernel launch
};

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

/// compute_points(): no atom is left out of this point's sum.
inline constexpr std::uint32_t kNoAtom = 0xFFFFFFFFu;

/// How a caller should cut a point list between calls of compute_points(): calls start at
/// multiples of `block` points of the list (a backend evaluates a block's points relative to
/// the block's own centre, so a value depends on its block, never on how blocks are shared out)
/// and hold at least `min_points` points where the list allows (a GPU launch must fill the
/// device).
struct PointsHint {
  std::size_t block = 1;
  std::size_t min_points = 0;
};

/// Host memory owned by whoever allocated it (see PotentialBackend::allocate_host()).
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

class PotentialBackend {
 public:
  virtual ~PotentialBackend() = default;

  virtual std::string name() const = 0;            ///< "cpu-reference", "cpu-fast", "cuda"
  virtual std::string kernel_name() const = 0;     ///< the potential variant in use
  virtual std::string reduction_name() const = 0;  ///< the statistics variant in use
  virtual std::string device_name() const = 0;     ///< e.g. "NVIDIA H200 (cuda:0, sm_90, 132 SMs)"

  /// Largest relative error (to max|V|) this backend's arithmetic is specified to reach
  /// against the float64 reference: 1e-5 for float32 paths.
  virtual double tolerance() const = 0;

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

  /// Statistics of n host values with this backend's reduction.
  virtual StatsAccum statistics(const float* values, std::size_t n) = 0;

  /// Difference metrics of n host values against a float64 reference.
  virtual DiffAccum difference(const float* values, const double* reference, std::size_t n) = 0;

  virtual BackendTimings timings() const { return {}; }

  virtual SlabHint slab_hint() const { return {}; }

  // --- Potential at points (--points, meshes, --at-atoms) ------------------------------------

  /// Takes the atoms and physics for the following compute_points() calls (uploads once).
  /// Throws UsageError for an empty system.
  virtual void prepare_points(const System& system, const Physics& physics) = 0;

  /// The potential at points[0, n) (Å) into out[0, n), in the unit of the prepared physics:
  /// each point summed over every atom but skip[i] (kNoAtom: none; --at-atoms passes the atom
  /// at the point; skip may be nullptr) in input order and fixed atom chunks. A call starts at a
  /// multiple of points_hint().block of the caller's list (the last block may be short), and a
  /// value depends only on its point, its skip and its block's points: the same for any number
  /// of calls, devices or ranks. Terms at r^2 < min_distance^2 are clamped as on the grid.
  virtual void compute_points(const Vec3* points, const std::uint32_t* skip, std::size_t n,
                              float* out) = 0;

  virtual PointsHint points_hint() const { return {}; }

  // --- The float64 reference (--validate, the error every --method msm run measures) --------

  /// reference_potential() at points[0, n) into out[0, n): float64 sums over every atom of
  /// `system` (uploaded for this call, independent of prepare()), each point's value the same
  /// bits on every call. The default runs reference_potential() on `threads` CPU threads (0: all;
  /// the run's threads, not this backend's share of them); the CUDA backend sums on its device
  /// in a fixed order (kernels/src/reference/), within ~1e-13 of the CPU's sums. Returns where
  /// the sums ran, for the log ("CPU, 16 threads", or the device's name).
  virtual std::string reference_points(const System& system, const Physics& physics,
                                       const Vec3* points, std::size_t n, double* out,
                                       unsigned threads);
};

/// The float64 oracle: plain loops over points and atoms, never tuned.
std::unique_ptr<PotentialBackend> make_cpu_reference_backend(const BackendOptions& options);
/// float32, SIMD (AVX-512 where the CPU has it) and multi-threaded; the default without a GPU.
std::unique_ptr<PotentialBackend> make_cpu_fast_backend(const BackendOptions& options);

/// The table's rows of both CPU backends (dcs/variants.hpp), ISA-specific kernels this CPU
/// cannot run marked "[not supported by this CPU]", for `dcs kernels` and --kernel.
std::vector<VariantInfo> cpu_variants();

/// Float64 reference potential at arbitrary points (Å), in the unit of `physics`: the oracle
/// that --validate and the tests compare against. Plain loops; splits the points over
/// `threads` threads (0: all hardware threads), each point summed over atoms in input order.
void reference_potential(const System& system, const Physics& physics, const Vec3* points,
                         std::size_t n_points, double* out, unsigned threads = 0);

}  // namespace dcs
