#include "dcs/grid.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/limits.hpp"

namespace dcs {
namespace {

using limits::kMaxCountPerAxis;

/// Checks an --origin/--center triple: finite and within limits::kMaxCoordinate.
void check_position_option(const char* option, const Vec3& v) {
  for (double c : v)
    if (!(std::isfinite(c) && std::fabs(c) <= limits::kMaxCoordinate))
      throw UsageError(fmt::format("{} coordinates must be numbers from -{:g} to {:g} Å, got {}",
                                   option, limits::kMaxCoordinate, limits::kMaxCoordinate, c));
}

/// The placed grid must keep float32 displacements finite and neighbouring points distinct
/// (limits.hpp); `how` says where the spacing came from, for the message.
void check_placed_grid(const GridSpec& grid, const std::string& how) {
  for (std::size_t a = 0; a < 3; ++a) {
    const char axis = "xyz"[a];
    const double h = grid.spacing[a];
    if (!(h >= limits::kMinSpacing && h <= limits::kMaxSpacing))
      throw UsageError(
          fmt::format("the grid spacing along {} would be {:.6g} Å ({}), outside the "
                      "accepted {:g} to {:g} Å",
                      axis, h, how, limits::kMinSpacing, limits::kMaxSpacing));
    const double first = grid.origin[a];
    const double last = first + static_cast<double>(grid.counts[a] - 1) * h;
    const double reach = std::max(std::fabs(first), std::fabs(last));
    if (!(reach <= limits::kMaxGridCoordinate))
      throw UsageError(
          fmt::format("the grid would reach {} = {:.6g} Å (from {:.6g} to {:.6g} Å), "
                      "beyond the accepted ±{:g} Å; use fewer points, a smaller "
                      "--spacing or --padding, or another --origin/--center",
                      axis, std::fabs(first) > std::fabs(last) ? first : last, first, last,
                      limits::kMaxGridCoordinate));
    if (h < reach * limits::kSpacingResolution)
      throw UsageError(
          fmt::format("the grid spacing {:.6g} Å ({}) is too fine for a grid {:.6g} Å "
                      "from the coordinate origin along {}: neighbouring points "
                      "would not differ in float32; the spacing must be at least "
                      "2^-20 of the coordinates ({:.3g} Å here)",
                      h, how, reach, axis, reach * limits::kSpacingResolution));
  }
}

}  // namespace

std::string GridSpec::describe() const {
  return fmt::format(
      "{} x {} x {} points ({} total), spacing {:.6g} x {:.6g} x {:.6g} Å, "
      "origin ({:.4f}, {:.4f}, {:.4f}) Å, extent {:.3f} x {:.3f} x {:.3f} Å{}",
      counts[0], counts[1], counts[2], points(), spacing[0], spacing[1], spacing[2], origin[0],
      origin[1], origin[2], static_cast<double>(counts[0] - 1) * spacing[0],
      static_cast<double>(counts[1] - 1) * spacing[1],
      static_cast<double>(counts[2] - 1) * spacing[2], axes ? ", axes along the cell vectors" : "");
}

void require_axis_aligned(const GridSpec& grid, const char* who) {
  if (grid.skewed())
    throw InternalError(fmt::format(
        "{}: the grid's axes follow a triclinic cell (--map-axes cell), which only --method "
        "ewald computes",
        who));
}

void validate(const GridRequest& request) {
  if (!(std::isfinite(request.padding) && request.padding >= 0.0 &&
        request.padding <= limits::kMaxPadding))
    throw UsageError(fmt::format("--padding must be a number from 0 to {:g} Å, got {}",
                                 limits::kMaxPadding, request.padding));
  if (request.origin && request.center)
    throw UsageError("--origin and --center are mutually exclusive");
  if (request.origin) check_position_option("--origin", *request.origin);
  if (request.center) check_position_option("--center", *request.center);
  if (!request.counts && !request.spacing)
    throw UsageError("give the grid size with --grid N (or --grid NX NY NZ) and/or --spacing H");
  if (request.spacing &&
      !(std::isfinite(*request.spacing) && *request.spacing >= limits::kMinSpacing &&
        *request.spacing <= limits::kMaxSpacing))
    throw UsageError(fmt::format("--spacing must be a number from {:g} to {:g} Å, got {}",
                                 limits::kMinSpacing, limits::kMaxSpacing, *request.spacing));
  if (request.counts) {
    for (std::int64_t n : *request.counts) {
      if (n < 1) throw UsageError(fmt::format("--grid counts must be positive, got {}", n));
      if (n > kMaxCountPerAxis)
        throw UsageError(fmt::format("--grid count {} exceeds the limit of {} points per axis", n,
                                     kMaxCountPerAxis));
      if (n < 2 && !request.spacing)
        throw UsageError(
            "--grid needs at least 2 points per axis to derive a spacing "
            "(or give --spacing as well)");
    }
  }
}

GridSpec make_grid(const System& system, const GridRequest& request) {
  if (system.atoms.empty()) throw UsageError("cannot place a grid around zero atoms");
  validate(request);
  if (request.cell_box && system.cell.is_periodic()) return make_cell_grid(system.cell, request);

  Vec3 lo{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::infinity()};
  Vec3 hi{-lo[0], -lo[1], -lo[2]};
  for (const Atom& atom : system.atoms)
    for (int axis = 0; axis < 3; ++axis) {
      lo[axis] = std::min(lo[axis], atom.position[axis]);
      hi[axis] = std::max(hi[axis], atom.position[axis]);
    }
  Vec3 edge{};
  for (int axis = 0; axis < 3; ++axis) edge[axis] = hi[axis] - lo[axis] + 2.0 * request.padding;

  GridSpec grid;
  if (request.counts && request.spacing) {
    grid.counts = *request.counts;
    grid.spacing = {*request.spacing, *request.spacing, *request.spacing};
  } else if (request.counts) {
    grid.counts = *request.counts;
    double h = 0.0;
    for (int axis = 0; axis < 3; ++axis)
      h = std::max(
          h, edge[axis] / static_cast<double>(grid.counts[static_cast<std::size_t>(axis)] - 1));
    if (!(h > 0.0))  // one atom, no padding: nothing sets the scale
      throw UsageError(
          "the padded box has zero size (a single atom with --padding 0); "
          "give --spacing or a positive --padding");
    grid.spacing = {h, h, h};
  } else {
    const double h = *request.spacing;
    grid.spacing = {h, h, h};
    for (int axis = 0; axis < 3; ++axis) {
      double n = std::ceil(edge[axis] / h - 1e-9) + 1.0;
      // PyMOL (layer2/ObjectMap.cpp): Dim = (int)(edge / h), one more if Dim h < edge.
      if (request.layout == GridLayout::kPymol) {
        n = std::floor(edge[axis] / h);
        if (n * h < edge[axis]) n += 1.0;
      }
      // ChimeraX (coulombic cmd.py): numpy.arange(min - d, max + d, h), d = padding + h/2.
      if (request.layout == GridLayout::kChimerax) n = std::ceil((edge[axis] + h) / h);
      if (n > static_cast<double>(kMaxCountPerAxis))
        throw UsageError(
            fmt::format("--spacing {} Å gives {:.0f} points along axis {}, over the "
                        "limit of {}",
                        h, n, "xyz"[axis], kMaxCountPerAxis));
      grid.counts[static_cast<std::size_t>(axis)] =
          std::max<std::int64_t>(1, static_cast<std::int64_t>(n));
    }
  }

  Vec3 center{};
  for (int axis = 0; axis < 3; ++axis) center[axis] = 0.5 * (lo[axis] + hi[axis]);
  if (request.center) center = *request.center;
  const bool own_layout = request.spacing && !request.counts && !request.origin &&
                          !request.center && request.layout != GridLayout::kDcs;
  for (int axis = 0; axis < 3; ++axis) {
    const auto a = static_cast<std::size_t>(axis);
    const double h = grid.spacing[a];
    const auto n = static_cast<double>(grid.counts[a]);
    if (own_layout && request.layout == GridLayout::kPymol)
      grid.origin[a] = center[a] - 0.5 * n * h;
    else if (own_layout && request.layout == GridLayout::kChimerax)
      grid.origin[a] = lo[a] - (request.padding + 0.5 * h);
    else grid.origin[a] = request.origin ? (*request.origin)[a] : center[a] - 0.5 * (n - 1.0) * h;
  }
  check_placed_grid(grid, request.spacing
                              ? "--spacing"
                              : fmt::format("derived from --grid {} and the {:.6g} Å "
                                            "padded box",
                                            grid.counts[0], std::max({edge[0], edge[1], edge[2]})));
  return grid;
}

GridSpec make_cell_grid(const UnitCell& cell, const GridRequest& request) {
  validate(request);
  if (!cell.is_periodic()) throw InternalError("make_cell_grid: the cell is not periodic");
  // The box the grid fills: the cell's corners' bounding box (the cell itself when orthorhombic).
  Vec3 lo{0.0, 0.0, 0.0}, hi{0.0, 0.0, 0.0};
  for (int corner = 1; corner < 8; ++corner) {
    const Vec3 r = cell.to_cartesian(
        {double(corner & 1), double((corner >> 1) & 1), double((corner >> 2) & 1)});
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], r[a]);
      hi[a] = std::max(hi[a], r[a]);
    }
  }
  if (cell.shape() != UnitCell::Shape::kOrthorhombic && request.map_axes == MapAxes::kBox) {
    // make_grid()'s rules over that box: two atoms at its corners, no padding, from its corner.
    System corners;
    corners.atoms.resize(2);
    corners.atoms[0].position = lo;
    corners.atoms[1].position = hi;
    GridRequest box = request;
    box.cell_box = false;
    box.padding = 0.0;
    box.center.reset();
    box.origin = lo;
    box.layout = GridLayout::kDcs;
    return make_grid(corners, box);
  }
  // n points per cell vector, i·a/n from the origin, so that point n would be point 0 of the
  // next image (axis-aligned i·L/n for an orthorhombic cell, skewed steps otherwise).
  GridSpec grid;
  Mat3 steps{};
  for (int axis = 0; axis < 3; ++axis) {
    const auto a = static_cast<std::size_t>(axis);
    const double length = cell.lengths()[a];
    double n = request.counts ? static_cast<double>((*request.counts)[a])
                              : std::ceil(length / *request.spacing - 1e-9);
    if (n > static_cast<double>(kMaxCountPerAxis))
      throw UsageError(
          fmt::format("--spacing {} Å gives {:.0f} points along the cell's {:.6g} Å "
                      "axis {}, over the limit of {}",
                      *request.spacing, n, length, "abc"[axis], kMaxCountPerAxis));
    n = std::max(1.0, n);
    grid.counts[a] = static_cast<std::int64_t>(n);
    grid.spacing[a] = length / n;
    grid.origin[a] = 0.0;
    for (std::size_t c = 0; c < 3; ++c) steps[a][c] = cell.vectors()[a][c] / n;
  }
  if (cell.shape() != UnitCell::Shape::kOrthorhombic) {
    grid.axes = steps;
    // The float32 limits over the bounding box: check_placed_grid() reads spacing and origin
    // per axis, so it is given the box's per-axis reach with the smallest step.
    GridSpec reach = grid;
    reach.axes.reset();
    const double h = std::min({grid.spacing[0], grid.spacing[1], grid.spacing[2]});
    for (std::size_t a = 0; a < 3; ++a) {
      reach.origin[a] = lo[a];
      reach.spacing[a] = h;
      reach.counts[a] = static_cast<std::int64_t>(std::ceil((hi[a] - lo[a]) / h)) + 1;
    }
    check_placed_grid(reach, "the unit cell (--periodic)");
    return grid;
  }
  check_placed_grid(grid, "the unit cell (--periodic)");
  return grid;
}

bool tiles_cell(const GridSpec& grid, const UnitCell& cell) noexcept {
  if (!cell.is_periodic()) return false;
  const bool orthorhombic = cell.shape() == UnitCell::Shape::kOrthorhombic;
  if (grid.skewed() == orthorhombic) return false;
  for (std::size_t a = 0; a < 3; ++a) {
    const double length = cell.lengths()[a];
    const auto n = static_cast<double>(grid.counts[a]);
    if (grid.origin[a] != 0.0) return false;
    for (std::size_t c = 0; c < 3; ++c)
      if (std::abs(grid.step(a)[c] * n - cell.vectors()[a][c]) > 1e-9 * length) return false;
  }
  return true;
}

std::size_t map_bytes(const GridSpec& grid) noexcept { return grid.points() * sizeof(float); }

std::size_t physical_memory_bytes() noexcept {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size);
}

std::string format_bytes(std::size_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

void check_fits_in_memory(std::size_t bytes_needed, const std::string& what) {
  check_fits_in_memory(bytes_needed, what, read_memory_info());
}

void check_fits_in_memory(std::size_t bytes_needed, const std::string& what,
                          const MemoryInfo& memory) {
  const std::size_t available = memory.available();
  if (available == 0 && !memory.mem_available && !memory.cgroup_available) return;  // unknown
  if (bytes_needed <= available) return;
  std::string limit;
  if (memory.cgroup_limit && (!memory.mem_total || *memory.cgroup_limit < *memory.mem_total))
    limit = fmt::format("the cgroup memory limit is {} ({})", format_bytes(*memory.cgroup_limit),
                        memory.cgroup_dir);
  else limit = fmt::format("this machine has {}", format_bytes(memory.limit()));
  throw UsageError(
      fmt::format("{} needs {} but only {} of memory is available ({}); use a "
                  "coarser grid (--grid/--spacing)",
                  what, format_bytes(bytes_needed), format_bytes(available), limit));
}

}  // namespace dcs
