// --profile: the mean potential along one axis of a map, averaged over the planes across it
// (what membrane and channel users take from `gmx potential`, here from the 3-D map). Along x,
// y or z the planes are those of constant x, y or z; along a cell vector a, b or c of a periodic
// map those of constant fractional coordinate (the grid's own planes on the cell's grid).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/unit_cell.hpp"

namespace dcs {

enum class ProfileAxis { kNone, kX, kY, kZ, kA, kB, kC };

/// "x", "y", "z", "a", "b" or "c"; UsageError naming --profile otherwise.
ProfileAxis parse_profile_axis(std::string_view name);
/// 'x' ... 'c' ('-' for kNone).
char profile_axis_name(ProfileAxis axis) noexcept;

struct Profile {
  ProfileAxis axis = ProfileAxis::kNone;
  std::vector<double> fraction;  ///< a, b, c: the plane's fractional coordinate i/n; else empty
  /// Å: the plane's x, y or z; for a, b, c its distance from the cell's origin along the plane
  /// normal (for c that is the plane's z: a and b lie in the xy plane of the reduced cell).
  std::vector<double> position;
  std::vector<double> mean;  ///< the mean value over the plane, in the map's unit
  bool empty() const noexcept { return mean.empty(); }
};

/// The grid axis (0, 1, 2) whose planes are `axis`'s planes; UsageError saying what to use
/// instead when they are not planes of `grid`: a, b or c without a periodic cell, or on an
/// x, y, z box that is not the cell's grid (--map-axes box, --origin ...); x or y on a grid
/// along a triclinic cell's vectors (z is: a and b lie in the xy plane).
int profile_grid_axis(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell);

/// Reads planes [z_begin, z_begin + z_count) of the map into `out`, x fastest.
using PlaneReader = std::function<void(const Slab& slab, float* out)>;

/// The profile of a map on `grid` along `axis` (profile_grid_axis() first), its planes read in
/// z order through `read`, a few at a time (at most about 64 MiB). Every plane's mean is a
/// float64 sum in index order divided by its point count: the same bits for any way the map
/// was computed.
Profile map_profile(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                    const PlaneReader& read);

/// The profile as CSV: '#' comment lines (what it is, the unit), a header row naming the
/// columns with their units ("z (A)", "potential (kT/e)"; for a, b, c also "c (fraction)"),
/// then one row per plane (%.9g).
std::string profile_csv(const Profile& profile, std::string_view unit, std::string_view source);

}  // namespace dcs
