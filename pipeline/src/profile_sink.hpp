// --profile's CSV beside the map (<stem>.profile.csv): the profile finish_map() computed from the
// finished map (MapMetadata::profile), written under a temporary name and committed with the
// map's other outputs, removed on failure (as the trajectory's structure file); for a trajectory
// also each frame's profile (<stem>.profile_frames.csv).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "dcs/map_sink.hpp"
#include "text_file_sink.hpp"

namespace dcs::pipeline {

class ProfileSink final : public TextFileSink {
 public:
  /// `source` names the map's input in the CSV's first line.
  ProfileSink(std::string path, std::string source, bool force)
      : TextFileSink(std::move(path), force), source_(std::move(source)) {}
  void finish(const MapMetadata& meta, MapReader& map) override;

 private:
  std::string source_;
};

/// A trajectory's per-frame profiles (MapMetadata::profile.frame_means) as the long-form CSV
/// <stem>.profile_frames.csv, written and committed as ProfileSink's.
class ProfileFramesSink final : public TextFileSink {
 public:
  /// `frames`: the listed frames' indices in the trajectory, `times_ps` their times.
  ProfileFramesSink(std::string path, std::string source, bool force,
                    std::vector<std::int64_t> frames, std::vector<double> times_ps)
      : TextFileSink(std::move(path), force),
        source_(std::move(source)),
        frames_(std::move(frames)),
        times_ps_(std::move(times_ps)) {}
  void finish(const MapMetadata& meta, MapReader& map) override;

 private:
  std::string source_;
  std::vector<std::int64_t> frames_;
  std::vector<double> times_ps_;
};

/// --profile's plane means of the finished map (dcs/profile.hpp), read back through `map`;
/// an empty profile without --profile.
Profile finished_profile(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                         MapReader& map);

}  // namespace dcs::pipeline
