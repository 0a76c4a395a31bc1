// Self-describing HDF5 maps (the default output of dcs), readable with h5py, h5dump, ChimeraX
// and ParaView. The file's layout (groups, datasets, attributes, the VTKHDF and ChimeraX views)
// is described in docs/hdf5-layout.md. Debian's HDF5 is not thread-safe: call these from one
// thread at a time.
#pragma once

#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/map.hpp"
#include "dcs/types.hpp"

namespace dcs::io {

struct Hdf5Options {
  bool force = false;  ///< replace an existing file
  int gzip_level = 0;  ///< 0: no compression; 1-9: shuffle + deflate at this level
};

/// True when dcs was built with HDF5 (DCS_ENABLE_HDF5=ON).
bool hdf5_available() noexcept;

/// Writes the map (meta.grid.points() floats, x fastest), its metadata and `system`'s atoms to
/// `path` through an AtomicFile: complete under `path` or absent. The map is written one chunk of
/// z-planes at a time. Blocks until the file is closed and fsync()ed. Throws UsageError for a
/// gzip level outside 0-9, IoError for every failed HDF5 or file call (with HDF5's own error
/// text), an existing file without `force`, and a non-finite value (naming the grid point).
/// Builds without HDF5 throw IoError("... built without HDF5 ...").
void write_hdf5(const std::string& path, const float* values, const MapMetadata& meta,
                const System& system, const Hdf5Options& opts);

/// The map and its grid as read back from a dcs HDF5 file.
struct Hdf5Potential {
  GridSpec grid;                ///< from /potential's dims, origin and spacing
  std::vector<float> values;    ///< x fastest
  std::string units;            ///< /potential's "units"
  double coulomb_factor = 0.0;  ///< /potential's "coulomb_factor"
};

/// Reads /potential and its grid attributes, checking that dims matches the dataset's shape.
/// Throws InputError(path, 0, reason) for a missing file, a missing or malformed dataset or
/// attribute (with HDF5's error text), and IoError in builds without HDF5.
Hdf5Potential read_hdf5_potential(const std::string& path);

}  // namespace dcs::io
