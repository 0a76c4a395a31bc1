// Reading the resumable map store back (map_store_impl.hpp): planes and columns for the
// text formats, and the flags and statistics of a partial file being resumed.
#include <hdf5.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/log.hpp"
#include "fd_io.hpp"
#include "map_store_impl.hpp"

namespace dcs::io {

void MapStore::Impl::verify_done_planes() {
  std::vector<std::int64_t> bad =
      h5::damaged_done_planes(dataset.get(), grid, chunk[0], done, stats, threads);
  if (bad.empty()) return;
  if (gzip_level > 0) {  // compressed chunks are rewritten whole: their whole row goes
    std::vector<std::int64_t> rows;
    for (const std::int64_t z : bad)
      for (std::int64_t p = z / chunk[0] * chunk[0];
           p < std::min(grid.nz(), (z / chunk[0] + 1) * chunk[0]); ++p)
        if (done[static_cast<std::size_t>(p)] != 0 && (rows.empty() || rows.back() < p))
          rows.push_back(p);
    bad = std::move(rows);
  }
  const std::uint8_t zero = 0;
  for (const std::int64_t z : bad) {
    write_at(fd, &zero, 1, done_address + static_cast<std::uint64_t>(z), path);
    done[static_cast<std::size_t>(z)] = 0;
    stats[static_cast<std::size_t>(z)] = StatsAccum{};
  }
  log().warn(
      "{}: {} flagged done in the partial file do not match their stored statistics "
      "(the file was changed or damaged); they are computed again",
      path, h5::plane_list(bad));
}

void MapStore::Impl::load_resume_state() {
  done.assign(static_cast<std::size_t>(grid.nz()), 0);
  stats.assign(static_cast<std::size_t>(grid.nz()), StatsAccum{});
  read_at(fd, done.data(), done.size(), done_address, path);
  std::vector<double> rows(done.size() * kStatFields);
  read_at(fd, rows.data(), rows.size() * sizeof(double), stats_address, path);
  for (std::size_t z = 0; z < done.size(); ++z) {
    if (done[z] > 1) failure.invalid("/resume/plane_done holds values other than 0 and 1");
    if (done[z] == 0) continue;
    const StatsAccum& s = stats[z] = h5::plane_stats_from_row(rows.data() + z * kStatFields);
    if (s.count != grid.plane_points())
      failure.invalid(fmt::format("plane {} is flagged done but its statistics are damaged", z));
  }
}

Handle MapStore::Impl::open_dataset_for_reading(hid_t from) const {
  Handle dapl(failure.id(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate"), H5Pclose);
  // No chunk cache: chunks may be written behind HDF5's back (pwrite) between reads.
  failure.status(H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0), "H5Pset_chunk_cache");
  return {failure.id(H5Dopen2(from, "/potential", dapl.get()), "H5Dopen2(/potential)"), H5Dclose};
}

void MapStore::Impl::read_box(const std::array<hsize_t, 3>& start,
                              const std::array<hsize_t, 3>& count, float* out) {
  const QuietErrors quiet;
  // While values stream in, an uncompressed store's HDF5 file is closed: read through a
  // read-only handle that leaves it so (a writer's handle would mark the file open).
  Handle reader;
  if (file.get() < 0) {
    lock.check_same_file();  // HDF5 opens by name: make sure the name is still ours
    const Handle fapl = h5::file_access_plist(failure);
    reader =
        Handle(failure.id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), "H5Fopen"), H5Fclose);
  }
  const Handle set = open_dataset_for_reading(file.get() >= 0 ? file.get() : reader.get());
  const Handle file_space(failure.id(H5Dget_space(set.get()), "H5Dget_space"), H5Sclose);
  failure.status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                     count.data(), nullptr),
                 "H5Sselect_hyperslab");
  const Handle memory_space(
      failure.id(H5Screate_simple(3, count.data(), nullptr), "H5Screate_simple"), H5Sclose);
  failure.status(
      H5Dread(set.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(), H5P_DEFAULT, out),
      "H5Dread(potential)");
}

}  // namespace dcs::io
