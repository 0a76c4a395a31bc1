// The values at points as tables: CSV for spreadsheets and pandas, HDF5 for h5py and programs.
// Both are written under a temporary name and renamed when complete (AtomicFile).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dcs/types.hpp"

namespace dcs::io {

/// Points and their values, plus what describes them.
struct PointTable {
  std::vector<Vec3> positions;  ///< Å: where each value was computed
  std::vector<float> values;    ///< one per position, in `unit`
  std::vector<Vec3> normals;    ///< empty, or one unit normal per point (meshes)
  /// Empty, or one per point: the mesh vertex before `--offset` moved it along its normal.
  std::vector<Vec3> surface_positions;
  std::string unit;  ///< e.g. "kT/e"
  /// Described by the caller (physics, input, offset, ...): written as "# key: value" lines in
  /// CSV and as string attributes of the HDF5 file's root. Keys must be distinct.
  std::vector<std::pair<std::string, std::string>> attributes;
};

/// CSV: "# unit: <unit>" and "# <key>: <value>" lines, then the header
/// "x,y,z,potential[,nx,ny,nz][,surface_x,surface_y,surface_z]" and one row per point.
/// Numbers are written with the fewest digits that read back to the same value (doubles for
/// positions, float32 for potentials: what "%.9g" guarantees, without its noise digits).
/// Throws IoError, and InternalError when the vectors' sizes disagree.
void write_point_csv(const std::string& path, const PointTable& table, bool force);

/// HDF5: /points/position (n, 3) float64 and /points/potential (n) float32, each with a string
/// attribute "units" ("angstrom", table.unit); /points/normal (n, 3) and
/// /points/surface_position (n, 3) float64 when given; root attributes: "format" = "dcs points",
/// "format_version" = 1, "unit", and every (key, value) pair of table.attributes as strings.
/// Throws IoError (also in a build without HDF5), and InternalError when sizes disagree.
void write_point_hdf5(const std::string& path, const PointTable& table, bool force);

}  // namespace dcs::io
