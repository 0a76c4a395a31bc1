// --profile on a trajectory: each frame's profile from that frame's own map. The frame engine
// writes every frame's plane sums (dcs/profile.hpp: plane_sums()) to a scratch file beside the
// output ("<output>.profile.partial", dcs/io/profile_frames.hpp) as it adds the frame to the
// statistics; once every plane holds every frame, the leader adds each frame's sums up in z
// order (plane_means(), as the mean map's profile is made): the same bits for any number of
// workers, decoders, blocks, ranks and resumptions. The frames' maps are never held.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/io/frame_accumulators.hpp"
#include "dcs/io/profile_frames.hpp"
#include "dcs/profile.hpp"
#include "dcs/unit_cell.hpp"

namespace dcs::pipeline {

/// The CSV of the per-frame profiles beside `profile_csv` (<stem>.profile.csv):
/// <stem>.profile_frames.csv; empty for an empty path.
std::string profile_frames_csv_path(const std::string& profile_csv);

/// Bytes of the scratch file of `frames` frames along `axis` (its grid axis on `grid`, `cell`),
/// for the disk check; 0 without --profile.
std::uint64_t profile_frames_bytes(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                                   std::size_t frames, std::size_t key_bytes);

/// The leader, after opening the frame statistics `stats`: the scratch file at `path` for
/// `axis` (UsageError when the axis is not one of the grid's, before any frame), kept when the
/// statistics were kept (--resume) and it holds the same key. Kept statistics without it are
/// started afresh (their frames have no plane sums: warning); with it, planes whose frames lack
/// valid sums are computed again (ProfileFramesFile::verify()).
io::ProfileFramesFile open_profile_frames(const std::string& path, ProfileAxis axis,
                                          const GridSpec& grid, const UnitCell& cell,
                                          std::size_t frames, const std::string& key,
                                          io::FrameAccumulatorFile& stats, bool force);

/// Another MPI rank: the file the leader made.
io::ProfileFramesFile open_made_profile_frames(const std::string& path, ProfileAxis axis,
                                               const GridSpec& grid, const UnitCell& cell,
                                               std::size_t frames, const std::string& key);

/// Every listed frame's plane means (frames x planes, frame after frame), from the complete file.
std::vector<double> frame_profiles(io::ProfileFramesFile& file, const GridSpec& grid,
                                   std::size_t frames);

}  // namespace dcs::pipeline
