// --profile (dcs/profile.hpp): plane means of a map read back plane by plane.
#include "dcs/profile.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs {
namespace {

bool along_cell(ProfileAxis axis) noexcept {
  return axis == ProfileAxis::kA || axis == ProfileAxis::kB || axis == ProfileAxis::kC;
}

/// 0, 1, 2 for x/a, y/b, z/c.
int axis_index(ProfileAxis axis) noexcept {
  switch (axis) {
    case ProfileAxis::kX:
    case ProfileAxis::kA: return 0;
    case ProfileAxis::kY:
    case ProfileAxis::kB: return 1;
    default: return 2;
  }
}

/// Planes of about 64 MiB per read, at least one.
std::int64_t planes_per_read(const GridSpec& grid) {
  const std::size_t plane = std::max<std::size_t>(1, grid.plane_points());
  return std::max<std::int64_t>(
      1, std::min<std::int64_t>(grid.nz(), static_cast<std::int64_t>((16u << 20) / plane)));
}

}  // namespace

ProfileAxis parse_profile_axis(std::string_view name) {
  if (name == "x") return ProfileAxis::kX;
  if (name == "y") return ProfileAxis::kY;
  if (name == "z") return ProfileAxis::kZ;
  if (name == "a") return ProfileAxis::kA;
  if (name == "b") return ProfileAxis::kB;
  if (name == "c") return ProfileAxis::kC;
  throw UsageError(fmt::format(
      "--profile {}: give the axis the profile runs along: x, y or z, or a cell vector a, b or "
      "c (--periodic)",
      name));
}

char profile_axis_name(ProfileAxis axis) noexcept {
  switch (axis) {
    case ProfileAxis::kX: return 'x';
    case ProfileAxis::kY: return 'y';
    case ProfileAxis::kZ: return 'z';
    case ProfileAxis::kA: return 'a';
    case ProfileAxis::kB: return 'b';
    case ProfileAxis::kC: return 'c';
    default: return '-';
  }
}

int profile_grid_axis(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell) {
  if (axis == ProfileAxis::kNone) throw InternalError("profile_grid_axis: no axis");
  const char name = profile_axis_name(axis);
  const int index = axis_index(axis);
  if (!along_cell(axis)) {
    // On a triclinic cell's grid, a and b lie in the xy plane: planes of constant c are planes
    // of constant z, and no other x or y plane is a plane of the grid.
    if (grid.skewed() && axis != ProfileAxis::kZ)
      throw UsageError(fmt::format(
          "--profile {}: the map's axes follow the triclinic cell's vectors (--map-axes cell), "
          "so planes of constant {} are not planes of its grid; use --profile a, b, c or z, or "
          "--map-axes box for an x, y, z grid",
          name, name));
    return index;
  }
  if (!cell.is_periodic())
    throw UsageError(fmt::format(
        "--profile {}: the map has no periodic cell (a, b, c are the cell's vectors, with "
        "--periodic); use --profile x, y or z",
        name));
  if (!grid.skewed() && !tiles_cell(grid, cell))
    throw UsageError(fmt::format(
        "--profile {}: the map is an x, y, z box, not the cell's grid (--map-axes box, "
        "--origin, --center or --padding), so its planes are not planes of constant fractional "
        "{}; use --profile x, y or z, or let the grid span the cell",
        name, name));
  return index;
}

std::size_t plane_sum_count(int grid_axis, const GridSpec& grid) {
  if (grid_axis == 2) return 1;
  return static_cast<std::size_t>(grid.counts[static_cast<std::size_t>(grid_axis)]);
}

void plane_sums(int grid_axis, const GridSpec& grid, const float* plane, double* sums) {
  const std::int64_t nx = grid.nx(), ny = grid.ny();
  std::fill_n(sums, plane_sum_count(grid_axis, grid), 0.0);
  // In index order, y rows one after another: the sums' bits are fixed.
  for (std::int64_t j = 0; j < ny; ++j)
    for (std::int64_t i = 0; i < nx; ++i) {
      const std::int64_t at = grid_axis == 0 ? i : grid_axis == 1 ? j : 0;
      sums[static_cast<std::size_t>(at)] +=
          static_cast<double>(plane[static_cast<std::size_t>(j * nx + i)]);
    }
}

std::vector<double> plane_means(int grid_axis, const GridSpec& grid, const double* sums) {
  const std::size_t width = plane_sum_count(grid_axis, grid);
  const auto n = static_cast<std::size_t>(grid.counts[static_cast<std::size_t>(grid_axis)]);
  std::vector<double> total(n, 0.0);
  for (std::int64_t z = 0; z < grid.nz(); ++z) {
    const double* plane = sums + static_cast<std::size_t>(z) * width;
    if (grid_axis == 2) total[static_cast<std::size_t>(z)] = plane[0];
    else
      for (std::size_t i = 0; i < n; ++i) total[i] += plane[i];
  }
  const double per_plane = static_cast<double>(grid.points()) / static_cast<double>(n);
  for (double& value : total) value /= per_plane;
  return total;
}

Profile profile_of(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                   std::vector<double> mean) {
  const auto a = static_cast<std::size_t>(axis_index(axis));
  Profile profile;
  profile.axis = axis;
  const double n = static_cast<double>(mean.size());
  // Distance between the planes of constant fractional coordinate: 1 / |a*| (V / |b x c|).
  const Vec3& star = cell.reciprocal()[a];
  const double width =
      cell.is_periodic()
          ? 1.0 / std::sqrt(star[0] * star[0] + star[1] * star[1] + star[2] * star[2])
          : 0.0;
  for (std::size_t i = 0; i < mean.size(); ++i) {
    const auto di = static_cast<double>(i);
    if (along_cell(axis)) {
      profile.fraction.push_back(di / n);
      profile.position.push_back(di / n * width);
    } else {
      profile.position.push_back(grid.origin[a] + di * grid.step(a)[a]);
    }
  }
  profile.mean = std::move(mean);
  return profile;
}

Profile map_profile(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                    const PlaneReader& read) {
  const int index = profile_grid_axis(axis, grid, cell);
  const std::size_t width = plane_sum_count(index, grid);
  std::vector<double> sums(static_cast<std::size_t>(grid.nz()) * width, 0.0);
  const std::int64_t step = planes_per_read(grid);
  std::vector<float> values(static_cast<std::size_t>(step) * grid.plane_points());
  for (std::int64_t z0 = 0; z0 < grid.nz(); z0 += step) {
    const std::int64_t count = std::min(step, grid.nz() - z0);
    read({z0, count}, values.data());
    for (std::int64_t q = 0; q < count; ++q)
      plane_sums(index, grid, values.data() + static_cast<std::size_t>(q) * grid.plane_points(),
                 sums.data() + static_cast<std::size_t>(z0 + q) * width);
  }
  return profile_of(axis, grid, cell, plane_means(index, grid, sums.data()));
}

namespace {

/// The header row's columns of the plane: "z (A)", or "c (fraction),distance (A)".
std::string plane_columns(const Profile& profile) {
  const char name = profile_axis_name(profile.axis);
  return profile.fraction.empty() ? fmt::format("{} (A)", name)
                                  : fmt::format("{} (fraction),distance (A)", name);
}

/// Plane i's columns of a row, each followed by a comma.
std::string plane_cells(const Profile& profile, std::size_t i) {
  std::string out;
  if (!profile.fraction.empty()) out += fmt::format("{:.9g},", profile.fraction[i]);
  return out + fmt::format("{:.9g},", profile.position[i]);
}

/// The comment lines both CSVs start with: what the planes are, of what.
std::string profile_comments(const Profile& profile, std::string_view what,
                             std::string_view source) {
  const char name = profile_axis_name(profile.axis);
  const bool cell = !profile.fraction.empty();
  std::string out = fmt::format("# dcs --profile {}: {} over each plane of {} {}", name, what,
                                cell ? "constant fractional" : "constant", name);
  out += fmt::format(" of {}\n", source);
  if (cell)
    out += fmt::format(
        "# {} (fraction): the plane's fractional coordinate; distance (A): from the cell's "
        "origin along the plane's normal\n",
        name);
  return out;
}

}  // namespace

std::string profile_csv(const Profile& profile, std::string_view unit, std::string_view source) {
  std::string out = profile_comments(profile, "the mean potential", source);
  out += fmt::format("{},potential ({})\n", plane_columns(profile), unit);
  for (std::size_t i = 0; i < profile.mean.size(); ++i)
    out += plane_cells(profile, i) + fmt::format("{:.9g}\n", profile.mean[i]);
  return out;
}

std::string profile_frames_csv(const Profile& profile, const std::vector<std::int64_t>& frames,
                               const std::vector<double>& times_ps, std::string_view unit,
                               std::string_view source) {
  const std::size_t n = profile.mean.size();
  if (n == 0 || profile.frame_means.size() != frames.size() * n || times_ps.size() != frames.size())
    throw InternalError(fmt::format("profile_frames_csv: {} values for {} frames of {} planes",
                                    profile.frame_means.size(), frames.size(), n));
  std::string out = profile_comments(profile, "each frame's mean potential", source);
  out +=
      "# frame: the frame's index in the trajectory files (0-based); time (ps): its time, nan "
      "where the file has none\n";
  out += fmt::format("frame,time (ps),{},potential ({})\n", plane_columns(profile), unit);
  for (std::size_t k = 0; k < frames.size(); ++k) {
    const std::string frame = fmt::format("{},{:.9g},", frames[k], times_ps[k]);
    for (std::size_t i = 0; i < n; ++i)
      out +=
          frame + plane_cells(profile, i) + fmt::format("{:.9g}\n", profile.frame_means[k * n + i]);
  }
  return out;
}

}  // namespace dcs
