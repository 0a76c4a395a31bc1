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
  /// A trajectory's per-frame profiles (its mean map's profile in `mean`): frame k's plane
  /// means at [k * mean.size() + i], over the same planes; empty for one map.
  std::vector<double> frame_means;
  bool empty() const noexcept { return mean.empty(); }
};

/// The grid axis (0, 1, 2) whose planes are `axis`'s planes; UsageError saying what to use
/// instead when they are not planes of `grid`: a, b or c without a periodic cell, or on an
/// x, y, z box that is not the cell's grid (--map-axes box, --origin ...); x or y on a grid
/// along a triclinic cell's vectors (z is: a and b lie in the xy plane).
int profile_grid_axis(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell);

/// How many sums plane_sums() gives for one z-plane of `grid` along grid axis `grid_axis`
/// (profile_grid_axis()): nx for axis 0, ny for axis 1, 1 for axis 2.
std::size_t plane_sum_count(int grid_axis, const GridSpec& grid);

/// One z-plane's share of the profile along `grid_axis` (`plane` x fastest, `sums` of
/// plane_sum_count()): for axis 0, sums[i] = the sum over y of v(i, y); for axis 1, sums[j] =
/// the sum over x of v(x, j); for axis 2 the plane's sum. Float64, in index order from 0: the
/// same bits for any way the plane was computed.
void plane_sums(int grid_axis, const GridSpec& grid, const float* plane, double* sums);

/// The plane means of a map from every z-plane's plane_sums(), `sums` nz x plane_sum_count()
/// in z order, added up in z order (the same bits wherever the sums were made).
std::vector<double> plane_means(int grid_axis, const GridSpec& grid, const double* sums);

/// The profile of `axis` with its plane means `mean` (plane_means()): the planes' positions and,
/// along a cell vector, fractions.
Profile profile_of(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                   std::vector<double> mean);

/// Reads planes [z_begin, z_begin + z_count) of the map into `out`, x fastest.
using PlaneReader = std::function<void(const Slab& slab, float* out)>;

/// The profile of a map on `grid` along `axis` (profile_grid_axis() first), its planes read in
/// z order through `read`, a few at a time (at most about 64 MiB): plane_sums() of each z-plane,
/// then plane_means(), as a trajectory's per-frame profiles are made.
Profile map_profile(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                    const PlaneReader& read);

/// The profile as CSV: '#' comment lines (what it is, the unit), a header row naming the
/// columns with their units ("z (A)", "potential (kT/e)"; for a, b, c also "c (fraction)"),
/// then one row per plane (%.9g).
std::string profile_csv(const Profile& profile, std::string_view unit, std::string_view source);

/// A trajectory's per-frame profiles (Profile::frame_means) as CSV in long form: '#' comment
/// lines, a header row ("frame", "time (ps)", then the columns of profile_csv()), then one row
/// per frame and plane, frame after frame: listed frame k is trajectory frame `frames[k]` at
/// `times_ps[k]` (nan where the file has no time).
std::string profile_frames_csv(const Profile& profile, const std::vector<std::int64_t>& frames,
                               const std::vector<double>& times_ps, std::string_view unit,
                               std::string_view source);

}  // namespace dcs
