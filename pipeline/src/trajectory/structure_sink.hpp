// The structure written beside a trajectory's map: the mapped atoms in the first frame as
// fitted (the frame of the grid), as PQR with the topology's charges, so that a viewer loads the
// molecule with the map (a trajectory file alone does not load in PyMOL). An output of the map
// like the DX file: written under a temporary name, committed with the map, removed on failure.
#pragma once

#include <string>
#include <utility>

#include "../text_file_sink.hpp"
#include "dcs/map_sink.hpp"
#include "dcs/types.hpp"

namespace dcs::pipeline {

class StructureSink final : public TextFileSink {
 public:
  /// `path` ends in .pqr; `topology` is named in the file's remarks.
  StructureSink(std::string path, System atoms, std::string topology, bool force)
      : TextFileSink(std::move(path), force),
        atoms_(std::move(atoms)),
        topology_(std::move(topology)) {}
  void finish(const MapMetadata& meta, MapReader& map) override;

 private:
  System atoms_;
  std::string topology_;
};

}  // namespace dcs::pipeline
