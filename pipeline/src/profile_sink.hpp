// --profile's CSV beside the map (<stem>.profile.csv): the profile finish_map() computed from the
// finished map (MapMetadata::profile), written under a temporary name and committed with the
// map's other outputs, removed on failure (as the trajectory's structure file).
#pragma once

#include <string>
#include <utility>

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

/// --profile's plane means of the finished map (dcs/profile.hpp), read back through `map`;
/// an empty profile without --profile.
Profile finished_profile(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                         MapReader& map);

}  // namespace dcs::pipeline
