// Finishing the resumable map store (map_store_impl.hpp): the groups written once every plane
// is done (statistics, validation, method, provenance, VTKHDF view, a job's extras).
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dcs/io/map_extras.hpp"
#include "dcs/physics.hpp"
#include "map_store_impl.hpp"

namespace dcs::io {

namespace {

/// The group of `extras` (map_extras.hpp): grids chunked and filtered like /potential (`dcpl`),
/// written a chunk row of planes at a time.
void write_extras(hid_t root, hid_t dcpl, const GridSpec& grid, std::int64_t chunk_depth,
                  const MapExtras& extras, const Writer& w, const Failure& failure) {
  const Handle group = w.group(root, extras.group.c_str());
  for (const auto& [name, value] : extras.attributes) w.text(group.get(), name, value);
  for (const auto& [name, values] : extras.texts) w.strings(group.get(), name.c_str(), values);
  for (const auto& [name, values] : extras.integers)
    w.dataset(group.get(), name.c_str(), H5T_STD_I64LE, H5T_NATIVE_INT64, {values.size()},
              values.data());
  for (const auto& [name, values] : extras.reals)
    w.dataset(group.get(), name.c_str(), H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {values.size()},
              values.data());
  for (const ExtraTable& table : extras.tables) {
    const hsize_t columns = std::max<std::size_t>(table.columns, 1);
    w.dataset(group.get(), table.name.c_str(), H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
              {table.values.size() / columns, columns}, table.values.data());
  }
  const auto plane = static_cast<hsize_t>(grid.plane_points());
  for (const ExtraGrid& extra : extras.grids) {
    const Handle space = w.space({static_cast<hsize_t>(grid.nz()), static_cast<hsize_t>(grid.ny()),
                                  static_cast<hsize_t>(grid.nx())});
    const Handle dataset(failure.id(H5Dcreate2(group.get(), extra.name.c_str(), H5T_IEEE_F32LE,
                                               space.get(), H5P_DEFAULT, dcpl, H5P_DEFAULT),
                                    "H5Dcreate2(" + extra.name + ")"),
                         H5Dclose);
    w.text(dataset.get(), "units", extra.units);
    w.text(dataset.get(), "description", extra.description);
    std::vector<float> values;
    for (std::int64_t z0 = 0; z0 < grid.nz(); z0 += chunk_depth) {
      const std::int64_t count = std::min(chunk_depth, grid.nz() - z0);
      values.resize(static_cast<std::size_t>(count) * plane);
      for (std::int64_t k = 0; k < count; ++k)
        extra.fill(z0 + k, values.data() + static_cast<std::size_t>(k) * plane);
      const std::array<hsize_t, 3> start{static_cast<hsize_t>(z0), 0, 0};
      const std::array<hsize_t, 3> counts{static_cast<hsize_t>(count),
                                          static_cast<hsize_t>(grid.ny()),
                                          static_cast<hsize_t>(grid.nx())};
      failure.status(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                         counts.data(), nullptr),
                     "H5Sselect_hyperslab");
      const Handle memory = w.space({counts[0], counts[1], counts[2]});
      failure.status(H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, memory.get(), space.get(),
                              H5P_DEFAULT, values.data()),
                     "H5Dwrite(" + extra.name + ")");
    }
  }
}

}  // namespace

void MapStore::finish(const MapMetadata& meta, const MapExtras* extras) {
  Impl& s = *impl_;
  const QuietErrors quiet;
  s.write_deferred_atoms();  // no slab was computed here (every plane was done already)
  checkpoint();
  s.ensure_open();
  const Failure& failure = s.failure;
  const Writer w(failure);
  const hid_t root = s.file.get();
  // A resumed file already has these groups only if finish() ran before (it never commits
  // twice), so they are created here once.
  h5::write_colour_range(s.dataset.get(), meta.colour_range, w);
  h5::write_statistics(root, meta.stats, w);
  h5::write_validation(root, meta.validation, w);
  h5::write_method(root, meta.method, w);
  h5::write_provenance(root, meta.provenance, w, failure);
  h5::write_vtkhdf(root, meta.grid, w, failure);
  if (extras != nullptr && !extras->group.empty()) {
    const Handle dcpl(failure.id(H5Dget_create_plist(s.dataset.get()), "H5Dget_create_plist"),
                      H5Pclose);
    write_extras(root, dcpl.get(), meta.grid, s.chunk[0], *extras, w, failure);
  }
  h5::write_profile(root, extras != nullptr ? extras->group : std::string(), meta.profile,
                    unit_name(meta.physics.unit), w, failure);
  failure.status(H5Ldelete(root, "resume", H5P_DEFAULT), "H5Ldelete(resume)");
  s.finished = true;
}

}  // namespace dcs::io
