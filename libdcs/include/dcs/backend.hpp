// The one interface every compute backend implements (CPU reference, CPU fast, CUDA, and the
// method wrappers msm and ewald: dcs/wrapping_backend.hpp).
//
// Narrow on purpose, like OpenMM's CalcXxxKernel: the map's side is MapSource's
// (dcs/map_source.hpp: prepare() uploads the atoms once, compute_slab() fills one slab of
// z-planes and the statistics of each of its planes); a backend adds the potential at points,
// the float64 reference and difference(), which a map that already exists cannot have. All
// calls block until their results are in host memory. A backend is used from one thread at a
// time; the pipeline runs one backend per device, each in its own thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/map_source.hpp"
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

/// A backend that computes potentials: a map's slabs (MapSource), the potential at points, and
/// the float64 reference that validation and the measured methods compare against.
class PotentialBackend : public MapSource {
 public:
  /// Largest relative error (to max|V|) this backend's arithmetic is specified to reach
  /// against the float64 reference: 1e-5 for float32 paths.
  virtual double tolerance() const = 0;

  /// Difference metrics of n host values against a float64 reference.
  virtual DiffAccum difference(const float* values, const double* reference, std::size_t n) = 0;

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
