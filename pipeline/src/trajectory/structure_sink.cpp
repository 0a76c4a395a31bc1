// The structure beside a trajectory's map (structure_sink.hpp).
#include "structure_sink.hpp"

#include <fmt/format.h>

#include "dcs/io/atom_values.hpp"

namespace dcs::pipeline {

void StructureSink::finish(const MapMetadata&, MapReader&) {
  std::size_t guessed = 0;
  const std::string records = io::pqr_records(atoms_, path(), guessed);
  std::string head = fmt::format(
      "REMARK   1 dcs: the {} mapped atoms of {} in the first frame mapped, as fitted (the "
      "map's frame)\nREMARK   1 charges from the topology; radii {}\n",
      atoms_.size(), topology_,
      guessed == 0 ? std::string("from the topology")
                   : fmt::format("of {} atoms guessed from their names' elements (Bondi) for "
                                 "viewers' surfaces (the map does not use radii)",
                                 guessed));
  write_file({head, records, "END\n"});
}

}  // namespace dcs::pipeline
