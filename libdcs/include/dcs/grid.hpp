// Node-centred regular grids (APBS/OpenDX convention) and how they are placed around a molecule.
//
// Point (i, j, k) sits at origin + (i*hx, j*hy, k*hz), i = 0..nx-1; the origin is the first
// grid point. A grid along a triclinic cell's vectors (--map-axes cell) has step vectors instead:
// origin + i*va + j*vb + k*vc with va = a/na, vb = b/nb, vc = c/nc. Maps are stored with x fastest:
// index = (k*ny + j)*nx + i, i.e. shape [nz][ny][nx].
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "dcs/sysinfo.hpp"
#include "dcs/types.hpp"

namespace dcs {

struct GridSpec {
  std::array<std::int64_t, 3> counts{};  ///< nx, ny, nz (>= 1)
  Vec3 origin{};                         ///< Å, position of point (0, 0, 0)
  Vec3 spacing{};                        ///< Å, hx, hy, hz (> 0); |va|, |vb|, |vc| if skewed
  /// The step vectors va, vb, vc as rows (Å) of a grid along a triclinic cell's vectors; none for
  /// an axis-aligned grid, whose steps are (hx, 0, 0), (0, hy, 0), (0, 0, hz).
  std::optional<Mat3> axes;

  bool skewed() const noexcept { return axes.has_value(); }
  /// The step vector of axis 0, 1 or 2 (Å).
  Vec3 step(std::size_t axis) const noexcept {
    if (axes) return (*axes)[axis];
    Vec3 v{0.0, 0.0, 0.0};
    v[axis] = spacing[axis];
    return v;
  }

  std::int64_t nx() const noexcept { return counts[0]; }
  std::int64_t ny() const noexcept { return counts[1]; }
  std::int64_t nz() const noexcept { return counts[2]; }
  std::size_t points() const noexcept {
    return static_cast<std::size_t>(counts[0]) * static_cast<std::size_t>(counts[1]) *
           static_cast<std::size_t>(counts[2]);
  }
  std::size_t plane_points() const noexcept {
    return static_cast<std::size_t>(counts[0]) * static_cast<std::size_t>(counts[1]);
  }
  /// Position of point (i, j, k) in Å.
  Vec3 point(std::int64_t i, std::int64_t j, std::int64_t k) const noexcept {
    if (axes) {
      const Mat3& v = *axes;
      const auto di = static_cast<double>(i), dj = static_cast<double>(j),
                 dk = static_cast<double>(k);
      return {origin[0] + di * v[0][0] + dj * v[1][0] + dk * v[2][0],
              origin[1] + di * v[0][1] + dj * v[1][1] + dk * v[2][1],
              origin[2] + di * v[0][2] + dj * v[1][2] + dk * v[2][2]};
    }
    return {origin[0] + static_cast<double>(i) * spacing[0],
            origin[1] + static_cast<double>(j) * spacing[1],
            origin[2] + static_cast<double>(k) * spacing[2]};
  }
  /// Flat index of (i, j, k), x fastest.
  std::size_t index(std::int64_t i, std::int64_t j, std::int64_t k) const noexcept {
    return (static_cast<std::size_t>(k) * static_cast<std::size_t>(counts[1]) +
            static_cast<std::size_t>(j)) *
               static_cast<std::size_t>(counts[0]) +
           static_cast<std::size_t>(i);
  }
  /// One-line description: "129 x 129 x 129 points, spacing 0.5 x 0.5 x 0.5 Å, origin (...)"
  /// (", axes along the cell vectors" added for a skewed grid).
  std::string describe() const;
};

/// A range of z-planes [z_begin, z_begin + z_count) of a grid: the unit of work handed to a
/// backend, and later the unit of MPI and multi-GPU decomposition. Its values are stored
/// x fastest, plane after plane, plane_points() * z_count floats.
struct Slab {
  std::int64_t z_begin = 0;
  std::int64_t z_count = 0;
};

/// How the user asked for the grid. Exactly one of the ways of giving counts must hold:
/// `counts` (--grid), `spacing` (--spacing), or both (fixed counts and spacing).
/// How a spacing-only request lays out the padded box: dcs's own rule, or the one of the tool a
/// --preset reproduces, so that its maps overlay that tool's point for point.
enum class GridLayout {
  kDcs,       ///< n = ceil(edge / h) + 1, centred on the atoms' box
  kPymol,     ///< PyMOL map_new: n = ceil(edge / h), origin = centre - n h / 2
  kChimerax,  ///< ChimeraX coulombic: from min - (padding + h/2), n = ceil((edge + h) / h)
};

/// --map-axes cell|box (GridRequest::map_axes).
enum class MapAxes { kCell, kBox };

struct GridRequest {
  std::optional<std::array<std::int64_t, 3>> counts;  ///< --grid N or --grid NX NY NZ
  std::optional<double> spacing;                      ///< --spacing h (Å), cubic voxels
  double padding = 10.0;                              ///< Å added on every side of the atom box
  std::optional<Vec3> origin;                         ///< --origin: the first grid point
  std::optional<Vec3> center;                         ///< --center: the box centre
  GridLayout layout = GridLayout::kDcs;  ///< spacing-only requests without --origin/--center
  /// --periodic without --origin/--center/--padding: for a system with a periodic cell the grid
  /// spans the cell instead of the atoms' box (make_cell_grid()).
  bool cell_box = false;
  /// --map-axes: a cell_box grid of a triclinic cell along the cell vectors (kCell, the default)
  /// or over the orthorhombic box that bounds the cell (kBox). The same grid for an orthorhombic
  /// cell.
  MapAxes map_axes = MapAxes::kCell;
};

/// Places the grid for `system` as DESIGN §3 says:
/// - box = bounding box of atom centres + padding on every side, centred on the molecule
///   (or on --center; or starting at --origin);
/// - counts only: cubic voxel h = max over axes of padded_edge / (n - 1), so every axis covers
///   at least its padded edge; counts must be >= 2;
/// - spacing only: n = ceil(padded_edge / h) + 1 per axis;
/// - both: the given counts and spacing;
/// - spacing only with layout kPymol or kChimerax (and no --origin/--center): that tool's
///   counts and origin (GridLayout).
/// Throws UsageError for absurd requests (validate(GridRequest)) and for a placed grid outside
/// the float32 limits of dcs/limits.hpp: a spacing (given or derived) outside [1e-4, 1e4] Å,
/// a grid point beyond ±1e7 Å, or a spacing under 2^-20 of the grid's coordinates.
GridSpec make_grid(const System& system, const GridRequest& request);

/// The grid of a periodic map over the unit cell `cell` (request.cell_box): the points i·a/na +
/// j·b/nb + k·c/nc (i = 0..na-1, ...) from the cell's origin, so that the map tiles the
/// lattice (n from --grid, or ceil(|a|/h) for --spacing h; each step is then at most h). For an
/// orthorhombic cell those are axis-aligned points i·L/n; for a triclinic cell the grid is
/// skewed (GridSpec::axes), unless request.map_axes is kBox: then it is the orthorhombic box
/// that bounds the cell, corner to corner, as make_grid() fills a box (axes x, y, z).
GridSpec make_cell_grid(const UnitCell& cell, const GridRequest& request);

/// Whether `grid` holds the points i·a/na + j·b/nb + k·c/nc of `cell` (so the map tiles the
/// lattice): an orthorhombic cell's i·L/n or a triclinic cell's skewed grid.
bool tiles_cell(const GridSpec& grid, const UnitCell& cell) noexcept;

/// Throws InternalError naming `who` for a skewed grid: the backends and writers that take a
/// grid by its spacings (every method but ewald) call it before they use one.
void require_axis_aligned(const GridSpec& grid, const char* who);

/// Checks the request alone, before any file is read (UsageError naming the option): padding
/// in [0, 1e6] Å, --origin/--center within ±1e6 Å and not both, --spacing in [1e-4, 1e4] Å,
/// counts in [1, 1'000'000] (>= 2 without --spacing), and counts or spacing given.
void validate(const GridRequest& request);

/// Bytes the map of `grid` needs in host memory (one float per point).
std::size_t map_bytes(const GridSpec& grid) noexcept;

/// Physical memory of this machine in bytes (0 if unknown).
std::size_t physical_memory_bytes() noexcept;

/// Throws UsageError, saying how much is needed and available, when `bytes_needed` exceeds
/// the memory this process can still allocate: MemAvailable or, in a container or batch job,
/// its cgroup (v1 or v2) limit minus its usage, whichever is smaller (dcs/sysinfo.hpp; no check
/// when neither is known). Called before any allocation.
void check_fits_in_memory(std::size_t bytes_needed, const std::string& what);
/// The same check against given memory figures (tests, or a caller that already read them).
void check_fits_in_memory(std::size_t bytes_needed, const std::string& what,
                          const MemoryInfo& memory);

/// Human-readable byte count ("1.5 GiB").
std::string format_bytes(std::size_t bytes);

}  // namespace dcs
