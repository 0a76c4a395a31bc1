// --profile's CSV (profile_sink.hpp).
#include "profile_sink.hpp"

#include "dcs/error.hpp"

namespace dcs::pipeline {

void ProfileSink::finish(const MapMetadata& meta, MapReader&) {
  if (meta.profile.empty()) throw InternalError("--profile: no profile to write to " + path());
  write_file({profile_csv(meta.profile, unit_name(meta.physics.unit), source_)});
}

void ProfileFramesSink::finish(const MapMetadata& meta, MapReader&) {
  if (meta.profile.frame_means.empty())
    throw InternalError("--profile: no per-frame profiles to write to " + path());
  write_file({profile_frames_csv(meta.profile, frames_, times_ps_, unit_name(meta.physics.unit),
                                 source_)});
}

Profile finished_profile(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                         MapReader& map) {
  if (axis == ProfileAxis::kNone) return {};
  return map_profile(axis, grid, cell,
                     [&](const Slab& slab, float* out) { map.read_planes(slab, out); });
}

}  // namespace dcs::pipeline
