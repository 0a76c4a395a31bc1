// The geometry of one MSM long-range solve, computed once on the host and shared by the CPU
// solve (libdcs/src/msm/lattice.cpp) and the device one (kernels/src/msm/), so the two cannot
// drift: the lattice levels' extents, the two-scale weights, the level kernels tabulated by
// squared lattice distance, the short-range bins and each map axis' interpolation weights.
// Everything here is O(lattice extents + map axes), never O(atoms) or O(lattice points).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/msm.hpp"
#include "dcs/types.hpp"

namespace dcs {

/// Lattice indices lo[d] .. lo[d] + n[d] - 1 of one level, x fastest.
struct MsmExtent {
  std::array<long, 3> lo{}, n{};
  std::size_t points() const noexcept {
    return static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) *
           static_cast<std::size_t>(n[2]);
  }
  /// points() in double: never wraps, whatever the box (the memory estimate's).
  double volume() const noexcept {
    return static_cast<double>(n[0]) * static_cast<double>(n[1]) * static_cast<double>(n[2]);
  }
};

/// A level kernel K(d) = by_d2[dx^2 + dy^2 + dz^2] on |d_axis| <= radius[axis] (lattice units):
/// the kernels are radial, so one value per squared distance gives the whole stencil.
struct MsmRadialKernel {
  std::array<long, 3> radius{};
  std::vector<double> by_d2;  ///< indices 0 .. sum radius^2
};

struct MsmLatticePlan {
  double h = 0.0;  ///< finest spacing, Å
  double a = 0.0;  ///< cutoff, Å
  int order = 4;   ///< basis order 2s
  Vec3 origin{};   ///< lattice index 0 of every level (level l's index m sits at origin + m 2^l h)
  /// The charge lattices, finest first; the last is the top level (all pairs).
  std::vector<MsmExtent> levels;
  int reach = 0;                  ///< 2s - 1: the two-scale weights' half-width
  std::vector<double> two_scale;  ///< J_k = Phi(k/2) for k = -reach .. reach
  /// cutoff: (g_a - g_2a)(h |d|); level l's sum uses it times 2^-l. top: gamma(|d| h / a) / a,
  /// times 2^-L on the top level L (radius: the top level's extents - 1).
  MsmRadialKernel cutoff, top;
  /// For the device's tiled cutoff sum: cutoff_span[dz * (R + 1) + dy] (|dz|, |dy| <= R = the
  /// cutoff radius) is the largest |dx| with a non-zero tap on any row (dz', +-dy) with
  /// |dz'| >= dz, or -1: a tile that reaches input planes no nearer than dz loops dx over
  /// [-span, span] only, and skips only zero taps.
  std::vector<long> cutoff_span;

  int top_level() const noexcept { return static_cast<int>(levels.size()) - 1; }
  std::size_t lattice_points() const noexcept {
    std::size_t total = 0;
    for (const MsmExtent& l : levels) total += l.points();
    return total;
  }
};

/// The levels' extents alone (msm_lattice_plan's, without the kernels): O(levels) whatever the
/// box, so the memory estimate can size an absurd box before anything is allocated.
std::vector<MsmExtent> msm_level_extents(const MsmParameters& parameters, const Vec3& lower,
                                         const Vec3& upper);

/// The plan for a finest lattice whose index 0 sits at `lower` and which covers [lower, upper]
/// (atoms and map) with the basis' support; levels are restricted until the top one has at
/// most 16^3 points.
MsmLatticePlan msm_lattice_plan(const MsmParameters& parameters, const Vec3& lower,
                                const Vec3& upper);

/// Cubic bins of side a/2 from the atoms' lower corner: bin (x, y, z) covers [lower + (x, y, z)
/// side, + side), the last bin of an axis also its upper edge; b = (z n[1] + y) n[0] + x.
struct MsmBins {
  Vec3 lower{};
  double side = 0.0;
  std::array<long, 3> n{};
};
MsmBins msm_bins(double cutoff, const Vec3& atoms_lower, const Vec3& atoms_upper);

/// What the lattice must cover: the map and the charged atoms. An atom of charge 0 adds nothing
/// to any potential, so it neither enlarges the lattice nor enters the bins (a zero-charge
/// placeholder far from a molecule costs nothing); `charged` counts the others. With none
/// charged, atoms_lower = atoms_upper = the map's origin (where the backends put one zero
/// charge, so that the bins are not empty).
struct MsmBox {
  Vec3 lower{}, upper{};              ///< the lattice's box: the map's and the charged atoms'
  Vec3 atoms_lower{}, atoms_upper{};  ///< the charged atoms' box (the bins')
  std::size_t charged = 0;
};
MsmBox msm_box(const System& system, const GridSpec& grid);

/// Bytes one msm prepare() takes, from the levels' extents alone, in double (a box of 10^7 A
/// gives a number, not a wrapped product). host_peak: the CPU solve at its largest (every
/// level's charges, two potentials, the transfer temporaries, an FFT's buffers, the atoms'
/// copies and the bins) on `threads` threads; host_kept: what the CPU backend keeps for the
/// slabs (the finest potential, the binned atoms, the axes' weights); device_peak: the CUDA
/// solve's (device_lattice.hpp).
struct MsmMemory {
  double finest_points = 0.0, lattice_points = 0.0, bins = 0.0;
  double host_peak = 0.0, host_kept = 0.0, device_peak = 0.0;
};
MsmMemory msm_memory(const MsmParameters& parameters, const MsmBox& box, const GridSpec& grid,
                     unsigned threads);

/// The work of one map by either method, in units of one exact pair evaluation (the CPU exact
/// kernel's, one thread), from the plan's sizes alone (libdcs/src/msm/work.cpp has the weights
/// and their measured accuracy). exact: atoms x points. msm: the short-range pairs (the atoms
/// within the cutoff of each point's row block, from the bins' density), the interpolation
/// (points x order and rows x order^2 x the finest lattice's x extent), the levels (anterpolation,
/// atoms x order^3, each level's lattice sum, stencil or FFT as lattice.cpp chooses, and the
/// transfers), the top level's and the error check's float64 sample.
struct MsmWork {
  double exact = 0.0;
  double short_range = 0.0, interpolation = 0.0, levels = 0.0, top = 0.0, check = 0.0;
  double msm() const noexcept { return short_range + interpolation + levels + top + check; }
};
/// `atoms`: every atom (exact's count); `check_points`: the points msm's error check compares
/// with the float64 direct sum (0: none, or the same --validate sample for both methods).
MsmWork msm_work(const MsmParameters& parameters, const MsmBox& box, const GridSpec& grid,
                 std::size_t atoms, std::size_t check_points);

/// How much slower msm may be estimated before dcs says so: the model's measured error (within
/// 0.58-1.79x the measured ratio on the calibration runs, libdcs/src/msm/work.cpp) covered.
inline constexpr double kMsmSlowerMargin = 2.0;

/// The refusal of a box too large for msm: what it needs (`need` bytes, `what`), the box that
/// sets it and what to do, after `have` ("--memory-limit allows 100 MiB").
std::string msm_too_large(const MsmParameters& parameters, const MsmBox& box, double need,
                          const std::string& what, const std::string& have);

/// Throws UsageError (msm_too_large) when the CPU solve's host_peak exceeds `limit` bytes (the
/// share of --memory-limit for this backend; 0: none given) or the memory available now.
void check_msm_host_memory(const MsmParameters& parameters, const MsmBox& box,
                           const MsmMemory& memory, std::size_t limit);

/// One map axis' interpolation: grid coordinate i uses finest lattice indices base[i] ..
/// base[i] + order - 1 (absolute) with weights w[i * order ..].
struct MsmAxisWeights {
  std::vector<long> base;
  std::vector<double> w;
};
MsmAxisWeights msm_axis_weights(const MsmLatticePlan& plan, const GridSpec& grid, int axis);

/// gamma's Taylor coefficients c_0..c_k (k = parameters.split; the rest 0).
std::array<double, 7> msm_gamma(const MsmParameters& parameters);

/// A lattice's values, x fastest (tests compare the device's finest lattice with the CPU's).
struct MsmLatticeValues {
  MsmExtent extent;
  std::vector<double> v;
};

}  // namespace dcs
