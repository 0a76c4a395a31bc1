// Values at points as an HDF5 table (dcs/io/point_table.hpp), with the helpers of the map files
// (hdf5_support.hpp). Only compiled with DCS_ENABLE_HDF5; hdf5_stub.cpp stands in otherwise.
#include <fmt/format.h>

#include "dcs/io/atomic_file.hpp"
#include "dcs/io/point_table.hpp"
#include "hdf5_support.hpp"
#include "point_table_check.hpp"

namespace dcs::io {

void write_point_hdf5(const std::string& path, const PointTable& table, bool force) {
  using h5::Failure;
  using h5::Handle;
  detail::check_point_table(table, "write_point_hdf5");
  h5::prepare_library();
  AtomicFile file(path, force);
  const Failure failure(path, false);
  {
    const h5::QuietErrors quiet;
    const Handle fapl = h5::file_access_plist(failure);
    Handle h5file(
        failure.id(H5Fcreate(file.temp_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                   "H5Fcreate"),
        H5Fclose);
    const h5::Writer w(failure);
    w.text(h5file.get(), "format", "dcs points");
    w.count(h5file.get(), "format_version", 1);
    w.text(h5file.get(), "unit", table.unit);
    for (const auto& [key, value] : table.attributes) {
      if (key == "format" || key == "format_version" || key == "unit")
        throw InternalError("write_point_hdf5: attribute " + key + " is the writer's own");
      w.text(h5file.get(), key, value);
    }
    const Handle points = w.group(h5file.get(), "points");
    const hsize_t n = table.positions.size();
    const auto rows = [&](const char* name, const std::vector<Vec3>& data) {
      w.dataset(points.get(), name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n, 3}, data.data());
      const Handle set(failure.id(H5Dopen2(points.get(), name, H5P_DEFAULT), "H5Dopen2"), H5Dclose);
      w.text(set.get(), "units", "angstrom");
    };
    rows("position", table.positions);
    w.dataset(points.get(), "potential", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {n},
              table.values.data());
    {
      const Handle set(failure.id(H5Dopen2(points.get(), "potential", H5P_DEFAULT), "H5Dopen2"),
                       H5Dclose);
      w.text(set.get(), "units", table.unit);
    }
    if (!table.normals.empty()) {
      w.dataset(points.get(), "normal", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {n, 3},
                table.normals.data());
    }
    if (!table.surface_positions.empty()) rows("surface_position", table.surface_positions);
    h5file.close(failure, "H5Fclose");
  }
  file.commit();
}

}  // namespace dcs::io
