// --profile's CSV beside the map (<stem>.profile.csv): the profile finish_map() computed from the
// finished map (MapMetadata::profile), written under a temporary name and committed with the
// map's other outputs, removed on failure (as the trajectory's structure file).
#pragma once

#include <memory>
#include <string>

#include "dcs/io/atomic_file.hpp"
#include "dcs/map_sink.hpp"

namespace dcs::pipeline {

class ProfileSink final : public MapSink {
 public:
  /// `source` names the map's input in the CSV's first line.
  ProfileSink(std::string path, std::string source, bool force)
      : path_(std::move(path)), source_(std::move(source)), force_(force) {}
  std::string name() const override { return path_; }
  bool wants_slabs() const override { return false; }
  void begin(const MapMetadata&) override {}
  void write_slab(const Slab&, const float*, const StatsAccum*) override {}
  void finish(const MapMetadata& meta, MapReader& map) override;
  void sync() override { file_->sync(); }
  void commit() override { file_->commit(); }
  void abort() noexcept override {
    if (file_) file_->discard();
  }

 private:
  std::string path_;
  std::string source_;
  bool force_;
  std::unique_ptr<io::AtomicFile> file_;
};

/// --profile's plane means of the finished map (dcs/profile.hpp), read back through `map`;
/// an empty profile without --profile.
Profile finished_profile(ProfileAxis axis, const GridSpec& grid, const UnitCell& cell,
                         MapReader& map);

}  // namespace dcs::pipeline
