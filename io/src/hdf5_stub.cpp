// Builds without HDF5 (DCS_ENABLE_HDF5=OFF): the same functions, failing clearly at run time so
// that callers never need #ifdefs.
#include "dcs/io/hdf5.hpp"

#include "dcs/error.hpp"
#include "dcs/io/point_table.hpp"

namespace dcs::io {

bool hdf5_available() noexcept { return false; }

void write_hdf5(const std::string& path, const float* /*values*/, const MapMetadata& /*meta*/,
                const System& /*system*/, const Hdf5Options& /*opts*/) {
  throw IoError("cannot write " + path +
                ": dcs was built without HDF5 (DCS_ENABLE_HDF5=OFF); write OpenDX with --dx "
                "instead, or rebuild with HDF5");
}

Hdf5Potential read_hdf5_potential(const std::string& path) {
  throw IoError("cannot read " + path + ": dcs was built without HDF5 (DCS_ENABLE_HDF5=OFF)");
}

void write_point_hdf5(const std::string& path, const PointTable& /*table*/, bool /*force*/) {
  throw IoError("cannot write " + path +
                ": dcs was built without HDF5 (DCS_ENABLE_HDF5=OFF); write the table as CSV "
                "instead, or rebuild with HDF5");
}

}  // namespace dcs::io
