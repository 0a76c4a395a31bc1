// --profile in the map file (docs/hdf5-layout.md): the group `profile` (under /trajectory for a
// trajectory's mean map, else at the root) with the plane means and their positions, and for a
// trajectory each frame's plane means (frame_potential, frames x planes).
#include <string>

#include <fmt/format.h>

#include "hdf5_support.hpp"

namespace dcs::io::h5 {

void write_profile(hid_t root, const std::string& parent, const Profile& profile,
                   std::string_view unit, const Writer& w, const Failure& failure) {
  if (profile.empty()) return;
  Handle opened;
  if (!parent.empty())
    opened = Handle(failure.id(H5Gopen2(root, parent.c_str(), H5P_DEFAULT),
                               fmt::format("H5Gopen2({})", parent)),
                    H5Gclose);
  const Handle group = w.group(parent.empty() ? root : opened.get(), "profile");
  const hid_t id = group.get();
  const char axis = profile_axis_name(profile.axis);
  const bool cell = !profile.fraction.empty();
  const hsize_t n = profile.mean.size();
  w.text(id, "axis", std::string(1, axis));
  w.dataset(id, "potential", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, profile.mean.data());
  w.dataset(id, "position", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, profile.position.data());
  if (cell)
    w.dataset(id, "fraction", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n}, profile.fraction.data());
  w.text(id, "units", unit);
  w.text(id, "position_units", "angstrom");
  w.text(id, "description",
         cell ? fmt::format("potential[i] is the mean of the map over its plane of constant "
                            "fractional {0} = fraction[i] = i/n; position[i] (Angstrom) is that "
                            "plane's distance from the cell's origin along its normal",
                            axis)
              : fmt::format("potential[i] is the mean of the map over its plane of constant {0} "
                            "= position[i] (Angstrom)",
                            axis));
  if (profile.frame_means.empty()) return;
  const hsize_t frames = profile.frame_means.size() / n;
  w.dataset(id, "frame_potential", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {frames, n},
            profile.frame_means.data());
  const Handle set(
      failure.id(H5Dopen2(id, "frame_potential", H5P_DEFAULT), "H5Dopen2(frame_potential)"),
      H5Dclose);
  w.text(set.get(), "units", unit);
  w.text(set.get(), "axis_order", "frame plane");
  w.text(set.get(), "description",
         "frame_potential[k][i] is the mean over the same plane as potential[i] of the map of "
         "frame /trajectory/frames[k] (time /trajectory/time_ps[k]), from that frame's own map "
         "before averaging; the mean over k is potential[i] up to rounding");
}

}  // namespace dcs::io::h5
