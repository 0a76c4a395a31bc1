// The structure written beside a trajectory's map: the mapped atoms in the first frame as
// fitted (the frame of the grid), as PQR with the topology's charges, so that a viewer loads the
// molecule with the map (a trajectory file alone does not load in PyMOL). An output of the map
// like the DX file: written under a temporary name, committed with the map, removed on failure.
#pragma once

#include <memory>
#include <string>

#include "dcs/io/atomic_file.hpp"
#include "dcs/map_sink.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

class StructureSink final : public MapSink {
 public:
  /// `path` ends in .pqr; `topology` is named in the file's remarks.
  StructureSink(std::string path, System atoms, std::string topology, bool force)
      : path_(std::move(path)),
        atoms_(std::move(atoms)),
        topology_(std::move(topology)),
        force_(force) {}
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
  System atoms_;
  std::string topology_;
  bool force_;
  std::unique_ptr<io::AtomicFile> file_;
};

}  // namespace dcs::pipeline
