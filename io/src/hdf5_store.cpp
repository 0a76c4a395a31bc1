// The resumable map store (dcs/io/map_store.hpp): an HDF5 file under a partial name, filled
// slab by slab, checkpointed, and renamed onto its final name when complete.
// The file's layout is in hdf5_store_layout.cpp, writing slabs in hdf5_store_write.cpp, reading
// back in hdf5_store_read.cpp and the closing groups in hdf5_store_finish.cpp.
#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "fd_io.hpp"
#include "map_checks.hpp"
#include "map_store_impl.hpp"

namespace dcs::io {

std::string partial_path_for(const std::string& final_path) { return final_path + ".partial"; }

MapStore::MapStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MapStore::MapStore(MapStore&&) noexcept = default;
MapStore& MapStore::operator=(MapStore&&) noexcept = default;
MapStore::~MapStore() = default;

MapStore MapStore::create(const std::string& partial_path, const MapMetadata& meta,
                          const System& system, const ResumeKey& key,
                          const MapStoreOptions& options) {
  if (options.gzip_level < 0 || options.gzip_level > 9)
    throw UsageError(fmt::format("HDF5 gzip level must be 0-9, got {}", options.gzip_level));
  detail::check_map_grid(partial_path, meta.grid);
  return create(PartialLock::acquire(partial_path, false), meta, system, key, options);
}

MapStore MapStore::create(PartialLock&& lock, const MapMetadata& meta, const System& system,
                          const ResumeKey& key, const MapStoreOptions& options) {
  h5::prepare_library();
  const std::string partial_path = lock.path();  // a copy: the lock moves into the store
  if (options.gzip_level < 0 || options.gzip_level > 9)
    throw UsageError(fmt::format("HDF5 gzip level must be 0-9, got {}", options.gzip_level));
  detail::check_map_grid(partial_path, meta.grid);
  if (!lock.created() && !options.force) {
    const auto [kind, what] = lock.inspect();
    if (kind == PartialKind::kForeign)
      throw IoError(
          fmt::format("{} exists and is not a dcs partial file ({}); dcs replaces it "
                      "only with --force",
                      partial_path, what));
  }
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.path = partial_path;
  s.lock = std::move(lock);
  s.grid = meta.grid;
  s.gzip_level = options.gzip_level;
  s.threads = Impl::store_threads(options.threads);
  s.writers = map_writers(options.writers);
  s.failure = Failure(partial_path, /*reading=*/false);
  s.set_chunk_geometry(options.chunk_depth);
  MapStore store(std::move(impl));
  try {
    store.impl_->build(meta, system, key, options.defer_atoms);
  } catch (...) {
    store.discard();
    throw;
  }
  return store;
}

MapStore MapStore::open_partial(const std::string& partial_path, const MapMetadata& meta,
                                const ResumeKey& key, unsigned threads, bool verify) {
  return open_partial(PartialLock::acquire(partial_path, false), meta, key, threads, verify);
}

MapStore MapStore::open_partial(PartialLock&& lock, const MapMetadata& meta, const ResumeKey& key,
                                unsigned threads, bool verify) {
  h5::prepare_library();
  const std::string partial_path = lock.path();
  const auto [kind, what] = lock.inspect();
  if (kind == PartialKind::kForeign)
    throw IoError(
        fmt::format("{} is not a dcs partial file ({}); nothing to resume. Run without "
                    "--resume and with --force to replace it",
                    partial_path, what));
  if (kind != PartialKind::kResumable)
    throw UnusablePartial(partial_path, 0, fmt::format("holds no usable checkpoint ({})", what));
  auto impl = std::make_unique<Impl>();
  impl->lock = std::move(lock);
  try {
    impl->open_existing(meta, key, threads, verify);
  } catch (...) {
    impl->close_handles();
    lock = std::move(impl->lock);  // still the caller's
    throw;
  }
  return MapStore(std::move(impl));
}

const std::string& MapStore::path() const noexcept { return impl_->path; }
int MapStore::gzip_level() const noexcept { return impl_->gzip_level; }
std::int64_t MapStore::chunk_depth() const noexcept { return impl_->chunk[0]; }
std::int64_t MapStore::x_chunk() const noexcept { return impl_->chunk[2]; }
const std::vector<std::uint8_t>& MapStore::plane_done() const noexcept { return impl_->done; }
const std::vector<StatsAccum>& MapStore::plane_stats() const noexcept { return impl_->stats; }
std::int64_t MapStore::planes_done() const noexcept {
  return std::count(impl_->done.begin(), impl_->done.end(), std::uint8_t{1});
}

void MapStore::write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) {
  Impl& s = *impl_;
  if (slab.z_count < 1 || slab.z_begin < 0 || slab.z_begin + slab.z_count > s.grid.nz())
    throw InternalError(fmt::format("slab [{}, {}) outside the map's {} planes", slab.z_begin,
                                    slab.z_begin + slab.z_count, s.grid.nz()));
  try {
    if (s.gzip_level > 0) {
      const QuietErrors quiet;
      s.write_compressed(slab, values);
    } else {
      s.write_uncompressed(slab, values);
    }
  } catch (const IoError&) {
    s.failed = true;
    throw;
  }
  for (std::int64_t p = 0; p < slab.z_count; ++p) {
    s.stats[static_cast<std::size_t>(slab.z_begin + p)] = plane_stats[p];
    s.pending.push_back(slab.z_begin + p);
  }
}

void MapStore::checkpoint() {
  const QuietErrors quiet;
  if (impl_->failed)
    throw IoError(fmt::format("error writing {}: an earlier write failed", impl_->path));
  try {
    impl_->checkpoint();
  } catch (...) {
    // After a failed fdatasync() the kernel may drop the unwritten pages and report the next
    // one as a success: nothing may be flagged done from now on.
    impl_->failed = true;
    throw;
  }
}

void MapStore::read_planes(const Slab& slab, float* out) {
  Impl& s = *impl_;
  s.read_box({static_cast<hsize_t>(slab.z_begin), 0, 0},
             {static_cast<hsize_t>(slab.z_count), static_cast<hsize_t>(s.grid.ny()),
              static_cast<hsize_t>(s.grid.nx())},
             out);
}

void MapStore::read_x_columns(std::int64_t x_begin, std::int64_t count, float* out) {
  Impl& s = *impl_;
  s.read_box({0, 0, static_cast<hsize_t>(x_begin)},
             {static_cast<hsize_t>(s.grid.nz()), static_cast<hsize_t>(s.grid.ny()),
              static_cast<hsize_t>(count)},
             out);
}

void MapStore::before_first_slab() { impl_->write_deferred_atoms(); }

void MapStore::sync() {
  Impl& s = *impl_;
  if (!s.finished) throw InternalError("MapStore::sync() before finish()");
  if (s.synced) return;
  {
    const QuietErrors quiet;
    s.dataset.close(s.failure, "H5Dclose(potential)");
    s.file.close(s.failure, "H5Fclose");  // flushes: a full disk shows here
  }
  s.direct.reset();  // nothing of its own to flush: its writes are on the device
  if (::fsync(s.fd) != 0 && errno != EINVAL)
    throw IoError(fmt::format("error writing {}: fsync: {}", s.path, errno_text()));
  ::close(s.fd);
  s.fd = -1;
  s.lock.check_same_file();  // the caller renames it by name next
  s.synced = true;
}

void MapStore::check_same_file() const { impl_->lock.check_same_file(); }

void MapStore::commit(const std::string& final_path, bool force) {
  Impl& s = *impl_;
  if (!s.finished) throw InternalError("MapStore::commit() before finish()");
  sync();
  // With --force, what is under the final name now must still be a regular file (never a
  // symbolic link or a device: see check_output_path()).
  if (force) check_output_path(final_path, true);
  s.lock.check_same_file();
  int rc = ::renameat2(AT_FDCWD, s.path.c_str(), AT_FDCWD, final_path.c_str(),
                       force ? 0 : RENAME_NOREPLACE);
  if (rc != 0 && !force && (errno == EINVAL || errno == ENOSYS)) {
    struct stat info {};
    if (::lstat(final_path.c_str(), &info) == 0) {
      errno = EEXIST;
    } else {
      rc = ::rename(s.path.c_str(), final_path.c_str());
    }
  }
  if (rc != 0) {
    const std::string reason =
        errno == EEXIST ? fmt::format("{} appeared meanwhile; use --force to overwrite", final_path)
                        : errno_text();
    if (s.lock.same_file()) (void)::unlink(s.path.c_str());
    throw IoError(fmt::format("cannot rename {} to {}: {}", s.path, final_path, reason));
  }
  const std::filesystem::path dir = std::filesystem::path(final_path).parent_path();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);  // best effort
    ::close(dir_fd);
  }
  s.path = final_path;
}

void MapStore::close_keeping() noexcept { (void)close_keeping_locked(); }

PartialLock MapStore::close_keeping_locked() noexcept {
  if (!impl_) return {};
  try {
    const QuietErrors quiet;
    if (!impl_->finished && !impl_->failed) impl_->checkpoint();
  } catch (...) {
    // The flags of the last slabs are lost: a resume recomputes them.
  }
  if (impl_->failed) {
    // Closing would flush HDF5's metadata of the chunks written since the last checkpoint,
    // and a flush that fails half-way (the full disk, the file size limit) leaves a file HDF5
    // cannot open. Left open, the file keeps its last checkpoint's metadata; the process ends
    // (H5close is not run at exit, see h5::prepare_library()).
    impl_->dataset.leak();
    impl_->file.leak();
  }
  impl_->close_handles();
  return std::move(impl_->lock);
}

void MapStore::discard() noexcept {
  if (!impl_) return;
  impl_->close_handles();
  // Only our own file: someone may have put another under the name (see PartialLock).
  if (impl_->lock.same_file()) (void)::unlink(impl_->path.c_str());
  impl_->lock.release();
}

}  // namespace dcs::io
