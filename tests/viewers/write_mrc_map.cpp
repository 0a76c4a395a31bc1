// Converts a dcs HDF5 map to MRC2014 through the streaming MrcWriter, in slabs of a few planes,
// so the viewer tests can open real dcs values with MRC readers until the pipeline has --mrc.
//
//   write_mrc_map IN.h5 OUT.mrc [PLANES_PER_SLAB]
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>

#include "dcs/io/hdf5.hpp"
#include "dcs/io/mrc.hpp"
#include "dcs/physics.hpp"
#include "dcs/stats.hpp"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: write_mrc_map IN.h5 OUT.mrc [PLANES_PER_SLAB]\n");
    return 2;
  }
  try {
    const dcs::io::Hdf5Potential map = dcs::io::read_hdf5_potential(argv[1]);
    const std::int64_t step = argc == 4 ? std::max(1, std::stoi(argv[3])) : 3;
    dcs::MapMetadata meta;
    meta.grid = map.grid;
    meta.physics.unit = dcs::parse_unit(map.units);
    meta.provenance.input_path = argv[1];
    dcs::io::MrcWriter writer(argv[2], true);
    writer.begin(meta);
    const std::size_t plane = map.grid.plane_points();
    for (std::int64_t z = 0; z < map.grid.nz(); z += step) {
      const std::int64_t count = std::min(step, map.grid.nz() - z);
      writer.write_slab(z, count, map.values.data() + static_cast<std::size_t>(z) * plane);
    }
    writer.finish(dcs::finalize(dcs::cpu_statistics(map.values.data(), map.values.size())));
    writer.commit();
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "write_mrc_map: %s\n", error.what());
    return 1;
  }
}
