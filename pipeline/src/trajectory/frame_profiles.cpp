// Per-frame profiles of a trajectory (frame_profiles.hpp).
#include "frame_profiles.hpp"

#include <string_view>

#include "dcs/log.hpp"

namespace dcs::pipeline {

std::string profile_frames_csv_path(const std::string& profile_csv) {
  if (profile_csv.empty()) return {};
  constexpr std::string_view kSuffix = ".profile.csv";
  std::string stem = profile_csv;
  if (stem.ends_with(kSuffix)) stem.resize(stem.size() - kSuffix.size());
  return stem + ".profile_frames.csv";
}

std::uint64_t profile_frames_bytes(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                                   std::size_t frames, std::size_t key_bytes) {
  if (axis == ProfileAxis::kNone) return 0;
  const int grid_axis = profile_grid_axis(axis, grid, cell);
  return io::ProfileFramesFile::file_bytes(grid.nz(), frames, plane_sum_count(grid_axis, grid),
                                           key_bytes);
}

io::ProfileFramesFile open_profile_frames(const std::string& path, ProfileAxis axis,
                                          const GridSpec& grid, const UnitCell& cell,
                                          std::size_t frames, const std::string& key,
                                          io::FrameAccumulatorFile& stats, bool force) {
  const int grid_axis = profile_grid_axis(axis, grid, cell);
  io::ProfileFramesFile file =
      io::ProfileFramesFile::open(path, grid.nz(), frames, plane_sum_count(grid_axis, grid),
                                  grid_axis, key, stats.resumed(), force);
  if (stats.resumed() && !file.reused()) {  // the frames checkpointed have no plane sums
    log().warn("{} is missing or another run's: the frames are computed afresh", path);
    stats.forget_all();
  } else if (stats.resumed()) {
    file.verify(stats);
  }
  return file;
}

io::ProfileFramesFile open_made_profile_frames(const std::string& path, ProfileAxis axis,
                                               const GridSpec& grid, const UnitCell& cell,
                                               std::size_t frames, const std::string& key) {
  const int grid_axis = profile_grid_axis(axis, grid, cell);
  return io::ProfileFramesFile::open(path, grid.nz(), frames, plane_sum_count(grid_axis, grid),
                                     grid_axis, key, true, false, /*create=*/false);
}

std::vector<double> frame_profiles(io::ProfileFramesFile& file, const GridSpec& grid,
                                   std::size_t frames) {
  std::vector<double> out;
  for (std::size_t k = 0; k < frames; ++k) {
    const std::vector<double> sums = file.read(k);
    const std::vector<double> means = plane_means(file.grid_axis(), grid, sums.data());
    out.insert(out.end(), means.begin(), means.end());
  }
  return out;
}

}  // namespace dcs::pipeline
