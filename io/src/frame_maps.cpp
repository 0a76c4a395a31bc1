// Every frame's map (frame_maps.hpp).
#include "dcs/io/frame_maps.hpp"

#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/log.hpp"
#include "fd_io.hpp"
#include "hdf5_support.hpp"

namespace dcs::io {
namespace {

using h5::Failure;
using h5::Handle;
using h5::QuietErrors;
using h5::Writer;

constexpr const char* kFormat = "dcs frame maps";

/// The key, shape and data offset of an existing file; false when it is not one of ours.
bool read_layout(const std::string& path, std::string* key, std::vector<hsize_t>* dims,
                 std::uint64_t* offset) {
  const QuietErrors quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) return false;
  const Failure failure(path, true);
  const Handle fapl = h5::file_access_plist(failure);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (file < 0) return false;
  const Handle closer(file, H5Fclose);
  if (H5Aexists(file, "format") <= 0 || H5Aexists(file, "key") <= 0 ||
      H5Lexists(file, "frame_maps", H5P_DEFAULT) <= 0)
    return false;
  if (h5::read_string_attribute(file, "format", failure) != kFormat) return false;
  *key = h5::read_string_attribute(file, "key", failure);
  const hid_t set = H5Dopen2(file, "frame_maps", H5P_DEFAULT);
  if (set < 0) return false;
  const Handle set_closer(set, H5Dclose);
  const Handle space(H5Dget_space(set), H5Sclose);
  dims->assign(4, 0);
  if (H5Sget_simple_extent_ndims(space.get()) != 4) return false;
  H5Sget_simple_extent_dims(space.get(), dims->data(), nullptr);
  const haddr_t address = H5Dget_offset(set);
  if (address == HADDR_UNDEF) return false;
  *offset = address;
  return true;
}

std::vector<hsize_t> shape(const GridSpec& grid, std::size_t frames) {
  return {frames, static_cast<hsize_t>(grid.nz()), static_cast<hsize_t>(grid.ny()),
          static_cast<hsize_t>(grid.nx())};
}

/// Makes the file: attributes, /frames, and /frame_maps contiguous and allocated now.
std::uint64_t create(const std::string& path, const GridSpec& grid,
                     const std::vector<std::int64_t>& frames, const std::string& units,
                     const std::string& key) {
  const QuietErrors quiet;
  const Failure failure(path, false);
  const Writer w(failure);
  const Handle fapl = h5::file_access_plist(failure);
  const Handle file(
      failure.id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), "H5Fcreate"),
      H5Fclose);
  w.text(file.get(), "format", kFormat);
  w.text(file.get(), "key", key);
  w.dataset(file.get(), "frames", H5T_STD_I64LE, H5T_NATIVE_INT64, {frames.size()}, frames.data());
  const Handle dcpl(failure.id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  failure.status(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  failure.status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  failure.status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  const Handle space = w.space(shape(grid, frames.size()));
  const Handle set(failure.id(H5Dcreate2(file.get(), "frame_maps", H5T_IEEE_F32LE, space.get(),
                                         H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                              "H5Dcreate2(frame_maps)"),
                   H5Dclose);
  w.doubles(set.get(), "origin", grid.origin.data(), 3);
  w.doubles(set.get(), "spacing", grid.spacing.data(), 3);
  if (grid.skewed()) h5::write_axes(set.get(), grid, w);  // at origin + x*axes[0] + ...
  w.text(set.get(), "axis_order", "frame z y x");
  w.text(set.get(), "units", units);
  w.text(set.get(), "description",
         "frame_maps[k] is the potential of frame frames[k] (0-based over the trajectory files) "
         "on the grid of the map file's /potential: value [k][z][y][x] at origin + (x*hx, y*hy, "
         "z*hz) Angstrom; the map file's /potential is their mean");
  const haddr_t address = H5Dget_offset(set.get());
  if (address == HADDR_UNDEF) failure.invalid("the frame maps dataset has no file offset");
  return address;
}

}  // namespace

std::uint64_t FrameMapsFile::file_bytes(const GridSpec& grid, std::size_t frames) {
  return static_cast<std::uint64_t>(frames) * grid.points() * sizeof(float) + 65536;
}

FrameMapsFile FrameMapsFile::open(const std::string& path, const GridSpec& grid,
                                  const std::vector<std::int64_t>& frames, const std::string& units,
                                  const std::string& key, bool resume, bool replace) {
  check_output_path(path, /*force=*/true);
  FrameMapsFile file;
  file.path_ = path;
  file.plane_bytes_ = grid.plane_points() * sizeof(float);
  file.nz_ = grid.nz();
  file.frames_ = frames.size();
  std::string found_key;
  std::vector<hsize_t> dims;
  std::uint64_t offset = 0;
  const bool exists = std::filesystem::exists(path);
  const bool ours = exists && read_layout(path, &found_key, &dims, &offset);
  if (exists && !ours && !replace && std::filesystem::file_size(path) > 0)
    throw IoError(fmt::format(
        "{} is not a dcs frame maps file; remove it or use --force to replace it", path));
  if (resume && ours && found_key == key && dims == shape(grid, frames.size())) {
    file.offset_ = offset;
    file.reused_ = true;
  } else {
    file.offset_ = create(path, grid, frames, units, key);
  }
  file.fd_ = FileDescriptor(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!file.fd_.is_open()) throw IoError(fmt::format("cannot open {}: {}", path, errno_text()));
  return file;
}

FrameMapsFile FrameMapsFile::open_made(const std::string& path, const GridSpec& grid,
                                       std::size_t frames) {
  FrameMapsFile file;
  file.path_ = path;
  file.plane_bytes_ = grid.plane_points() * sizeof(float);
  file.nz_ = grid.nz();
  file.frames_ = frames;
  std::string key;
  std::vector<hsize_t> dims;
  if (!read_layout(path, &key, &dims, &file.offset_) || dims != shape(grid, frames))
    throw IoError(fmt::format("{}: the frame maps file is not ready", path));
  file.fd_ = FileDescriptor(::open(path.c_str(), O_RDWR | O_CLOEXEC));
  if (!file.fd_.is_open()) throw IoError(fmt::format("cannot open {}: {}", path, errno_text()));
  return file;
}

void FrameMapsFile::verify(FrameAccumulatorFile& stats) {
  const std::size_t points = plane_bytes_ / sizeof(float);
  std::vector<float> values(points);
  PlaneAccumulator kept, again;
  std::vector<std::int64_t> damaged;
  for (std::int64_t z = 0; z < nz_; ++z) {
    stats.load(z, kept);
    if (kept.frames == 0) continue;
    again.reset(points);
    for (std::int64_t k = 0; k < kept.frames && static_cast<std::size_t>(k) < frames_; ++k) {
      const std::uint64_t at =
          offset_ + (static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(nz_) +
                     static_cast<std::uint64_t>(z)) *
                        plane_bytes_;
      read_at(fd_.get(), values.data(), plane_bytes_, at, path_);
      again.add(values.data());
    }
    const auto same = [](const auto& a, const auto& b) {
      return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof a[0]) == 0;
    };
    if (again.frames != kept.frames || !same(again.mean, kept.mean) || !same(again.m2, kept.m2) ||
        !same(again.min, kept.min) || !same(again.max, kept.max))
      damaged.push_back(z);
  }
  if (damaged.empty()) return;
  for (const std::int64_t z : damaged) stats.forget(z);
  log().warn(
      "{}: the frame maps of {} do not give the frame statistics checkpointed in {} (the file "
      "was changed or damaged); those planes are computed again",
      path_, h5::plane_list(damaged), stats.path());
}

void FrameMapsFile::write(std::size_t k, std::int64_t z_begin, std::int64_t z_count,
                          const float* values) {
  if (k >= frames_ || z_begin < 0 || z_count < 0 || z_begin + z_count > nz_)
    throw InternalError(fmt::format("{}: frame {} planes [{}, {}) outside the dataset", path_, k,
                                    z_begin, z_begin + z_count));
  const std::uint64_t at =
      offset_ + (static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(nz_) +
                 static_cast<std::uint64_t>(z_begin)) *
                    plane_bytes_;
  write_at(fd_.get(), values, static_cast<std::size_t>(z_count) * plane_bytes_, at, path_);
}

void FrameMapsFile::sync() { data_sync(fd_.get(), path_); }

void FrameMapsFile::commit(const std::string& final_path, bool force) {
  sync();
  fd_.reset();
  check_output_path(final_path, force);
  if (!force && std::filesystem::exists(final_path))
    throw IoError(fmt::format("{} exists; use --force to overwrite", final_path));
  if (std::rename(path_.c_str(), final_path.c_str()) != 0)
    throw IoError(fmt::format("cannot rename {} onto {}: {}", path_, final_path, errno_text()));
  const std::string dir = std::filesystem::path(final_path).parent_path().string();
  const int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  path_ = final_path;
}

}  // namespace dcs::io
