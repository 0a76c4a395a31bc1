// The resumable map store (dcs/io/map_store.hpp): an HDF5 file under a partial name, filled
// slab by slab, checkpointed, and renamed onto its final name when complete.
#include <fcntl.h>
#include <hdf5.h>
#include <libdeflate.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/log.hpp"
#include "dcs/parallel.hpp"
#include "fd_io.hpp"
#include "hdf5_support.hpp"
#include "map_checks.hpp"
#include "parallel_writes.hpp"

namespace dcs::io {

using h5::Failure;
using h5::Handle;
using h5::QuietErrors;
using h5::Writer;

namespace {

static_assert(std::endian::native == std::endian::little,
              "the store writes little-endian float32/float64 bytes directly");

constexpr std::int64_t kChunkEdge = h5::kStoreChunkEdge;
constexpr std::size_t kStatFields = h5::kPlaneStatFields;

/// Packing and compression threads: those asked for, else every hardware thread (deflate of
/// a slab's chunks is CPU-bound and its chunks are independent).
unsigned store_threads(unsigned requested) { return resolve_threads(requested); }

/// Byte-shuffles `n` 4-byte elements (HDF5's shuffle filter: all first bytes, then all second
/// bytes, ...).
void shuffle4(const float* in, std::size_t n, std::uint8_t* out) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(in);
  for (std::size_t e = 0; e < n; ++e)
    for (std::size_t b = 0; b < 4; ++b) out[b * n + e] = bytes[4 * e + b];
}

}  // namespace

std::string partial_path_for(const std::string& final_path) { return final_path + ".partial"; }

struct MapStore::Impl {
  std::string path;
  GridSpec grid;
  int gzip_level = 0;
  std::array<std::int64_t, 3> chunk{};   // cz, cy, cx
  std::array<std::int64_t, 3> chunks{};  // chunk counts along z, y, x
  unsigned threads = 1;
  std::unique_ptr<ThreadPool> compress_pool;  // compressed maps: made at the first slab
  Failure failure{"", false};

  PartialLock lock;  // the file is this run's (see PartialLock)
  Handle file;
  Handle dataset;
  int fd = -1;                         // a dup() of the lock's descriptor, for pwrite/pread
  std::vector<haddr_t> chunk_address;  // uncompressed: per chunk (z, y, x order)
  bool rows_contiguous = false;        // uncompressed: chunk rows back to back in index order
  // Uncompressed: the writers that write the slabs back (parallel_writes.hpp), and the bytes
  // written since the last checkpoint that they still have to make durable.
  std::unique_ptr<ParallelWrites> writes;
  unsigned writers = 0;
  std::uint64_t pending_begin = UINT64_MAX, pending_end = 0;
  haddr_t done_address = HADDR_UNDEF;
  haddr_t stats_address = HADDR_UNDEF;

  std::vector<std::uint8_t> done;
  std::vector<StatsAccum> stats;
  std::vector<std::int64_t> pending;       // planes written since the last checkpoint
  const System* deferred_atoms = nullptr;  ///< /atoms still to write (defer_atoms)
  bool finished = false;
  bool synced = false;  ///< closed and fsynced after finish(): only a rename is left
  bool failed = false;  ///< a write or checkpoint failed: nothing more may be flagged done

  ~Impl() { close_handles(); }

  /// Creates the file's layout (MapStore::create()).
  void build(const MapMetadata& meta, const System& system, const ResumeKey& key, bool defer_atoms);
  /// Opens the locked partial file to continue it (MapStore::open_partial()).
  void open_existing(const MapMetadata& meta, const ResumeKey& key, unsigned n_threads,
                     bool verify);

  /// Reads every plane flagged done back and checks it against its stored statistics; those
  /// that fail are flagged not done (in the file too) and named in a warning.
  void verify_done_planes() {
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

  void close_handles() noexcept {
    const QuietErrors quiet;
    dataset = Handle();
    file = Handle();
    if (fd >= 0) ::close(fd);
    fd = -1;
  }

  /// Uncompressed maps keep HDF5 closed while values stream in (pwrite through fd): a process
  /// killed then leaves a cleanly closed file. Reopened here for reading back and finishing.
  void ensure_open() {
    if (file.get() >= 0) return;
    const QuietErrors quiet;
    lock.check_same_file();  // HDF5 opens by name: make sure the name is still ours
    const Handle fapl = h5::file_access_plist(failure);
    file = Handle(failure.id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), "H5Fopen"), H5Fclose);
    dataset =
        Handle(failure.id(H5Dopen2(file.get(), "/potential", H5P_DEFAULT), "H5Dopen2(/potential)"),
               H5Dclose);
  }
  void close_hdf5() {
    const QuietErrors quiet;
    dataset.close(failure, "H5Dclose(potential)");
    file.close(failure, "H5Fclose");
  }

  /// /atoms, if create() left them for later: through HDF5 (opened for it and closed again
  /// where values stream in by pwrite). Their space comes after everything create() allocated,
  /// so no chunk or /resume address moves. A partial file without /atoms is never resumed
  /// (open_existing()), so a run stopped before this point starts afresh.
  void write_deferred_atoms() {
    if (deferred_atoms == nullptr) return;
    const auto start = std::chrono::steady_clock::now();
    const bool was_closed = file.get() < 0;
    ensure_open();
    const QuietErrors quiet;
    const Writer w(failure);
    h5::write_atoms(file.get(), *deferred_atoms, w);
    failure.status(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "H5Fflush");
    if (was_closed) close_hdf5();
    log().debug("{}: {} atoms written in {:.1f} ms, while the first slab computed", path,
                deferred_atoms->size(),
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count());
    deferred_atoms = nullptr;
  }

  std::size_t chunk_floats() const {
    return static_cast<std::size_t>(chunk[0] * chunk[1] * chunk[2]);
  }
  /// The chunk (z, y, x) of job `job` among the chunk rows from `zc0` on, row-major.
  std::array<std::int64_t, 3> chunk_of_job(std::int64_t zc0, std::size_t job) const {
    const auto per_row = static_cast<std::size_t>(chunks[1] * chunks[2]);
    const auto in_row = static_cast<std::int64_t>(job % per_row);
    return {zc0 + static_cast<std::int64_t>(job / per_row), in_row / chunks[2], in_row % chunks[2]};
  }
  std::size_t chunk_index(std::int64_t zc, std::int64_t yc, std::int64_t xc) const {
    return static_cast<std::size_t>((zc * chunks[1] + yc) * chunks[2] + xc);
  }

  /// The store writes through the locked description: always the file it holds.
  void open_fd() {
    fd = ::fcntl(lock.fd(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw IoError(fmt::format("cannot open {}: {}", path, errno_text()));
  }

  void set_chunk_geometry(std::int64_t depth) {
    chunk = {std::clamp<std::int64_t>(depth, 1, grid.nz()), std::min(kChunkEdge, grid.ny()),
             std::min(kChunkEdge, grid.nx())};
    chunks = {(grid.nz() + chunk[0] - 1) / chunk[0], (grid.ny() + chunk[1] - 1) / chunk[1],
              (grid.nx() + chunk[2] - 1) / chunk[2]};
  }

  haddr_t chunk_address_at(std::int64_t zc, std::int64_t yc, std::int64_t xc) const {
    const std::array<hsize_t, 3> offset{static_cast<hsize_t>(zc * chunk[0]),
                                        static_cast<hsize_t>(yc * chunk[1]),
                                        static_cast<hsize_t>(xc * chunk[2])};
    unsigned filter_mask = 0;
    haddr_t address = HADDR_UNDEF;
    hsize_t size = 0;
    failure.status(
        H5Dget_chunk_info_by_coord(dataset.get(), offset.data(), &filter_mask, &address, &size),
        "H5Dget_chunk_info_by_coord");
    if (address == HADDR_UNDEF || size != chunk_floats() * sizeof(float))
      failure.invalid("a chunk of /potential is not allocated");
    return address;
  }

  void read_chunk_addresses() {
    chunk_address.assign(static_cast<std::size_t>(chunks[0] * chunks[1] * chunks[2]), HADDR_UNDEF);
    // Early allocation with the fixed-array index lays the chunks out in index order, back to
    // back: check that on a few chunks (the first two, both ends of the first row, the middle,
    // the last) and compute the others. HDF5 1.10 finds a chunk's address by iterating over all
    // chunks: at 1700^3 (78,003 chunks) a lookup takes ~3 ms, and the ~1,000 lookups of a
    // larger sample took 0.9 s of the store's creation.
    const haddr_t first = chunk_address_at(0, 0, 0);
    const std::uint64_t bytes = chunk_floats() * sizeof(float);
    const std::size_t total = chunk_address.size();
    const std::size_t per_row = static_cast<std::size_t>(chunks[1] * chunks[2]);
    const std::size_t sample[] = {1, per_row - 1, per_row, total / 2, total - 1};
    bool regular = true;
    for (const std::size_t index : sample) {
      if (index >= total) continue;
      const auto [zc, yc, xc] = chunk_of_job(0, index);
      regular = regular && chunk_address_at(zc, yc, xc) == first + index * bytes;
    }
    rows_contiguous = regular;
    if (!writes) writes = std::make_unique<ParallelWrites>(writers);
    if (regular) {
      for (std::size_t index = 0; index < total; ++index)
        chunk_address[index] = first + index * bytes;
      return;
    }
    for (std::int64_t zc = 0; zc < chunks[0]; ++zc)
      for (std::int64_t yc = 0; yc < chunks[1]; ++yc)
        for (std::int64_t xc = 0; xc < chunks[2]; ++xc)
          chunk_address[chunk_index(zc, yc, xc)] = chunk_address_at(zc, yc, xc);
  }

  void read_resume_addresses() {
    const Handle done_set(failure.id(H5Dopen2(file.get(), "/resume/plane_done", H5P_DEFAULT),
                                     "H5Dopen2(/resume/plane_done)"),
                          H5Dclose);
    const Handle stats_set(failure.id(H5Dopen2(file.get(), "/resume/plane_stats", H5P_DEFAULT),
                                      "H5Dopen2(/resume/plane_stats)"),
                           H5Dclose);
    done_address = H5Dget_offset(done_set.get());
    stats_address = H5Dget_offset(stats_set.get());
    if (done_address == HADDR_UNDEF || stats_address == HADDR_UNDEF)
      failure.invalid("the /resume datasets have no storage");
  }

  /// Copies the planes [p0, p1) of chunk (zc, yc, xc) from a slab starting at plane s0 into
  /// `out` (chunk layout, zero-padded at the grid's edges), checking that values are finite.
  void pack(const float* slab_values, std::int64_t s0, std::int64_t p0, std::int64_t p1,
            std::int64_t yc, std::int64_t xc, float* out) const {
    const std::int64_t y0 = yc * chunk[1], x0 = xc * chunk[2];
    const std::int64_t ny = std::min(chunk[1], grid.ny() - y0);
    const std::int64_t nx = std::min(chunk[2], grid.nx() - x0);
    const std::size_t plane = grid.plane_points();
    for (std::int64_t p = p0; p < p1; ++p) {
      float* dst_plane = out + static_cast<std::size_t>((p - p0) * chunk[1] * chunk[2]);
      if (ny < chunk[1] || nx < chunk[2])
        std::fill(dst_plane, dst_plane + chunk[1] * chunk[2], 0.0f);
      for (std::int64_t j = 0; j < ny; ++j) {
        const std::size_t src_index = static_cast<std::size_t>(p - s0) * plane +
                                      static_cast<std::size_t>((y0 + j) * grid.nx() + x0);
        const float* src = slab_values + src_index;
        float* dst = dst_plane + j * chunk[2];
        for (std::int64_t i = 0; i < nx; ++i) {
          if (!std::isfinite(src[i]))
            throw detail::nonfinite_value_error(
                path, src[i], grid, static_cast<std::size_t>(s0) * plane + src_index + i);
          dst[i] = src[i];
        }
      }
    }
  }

  void write_uncompressed(const Slab& slab, const float* values) {
    const std::int64_t s0 = slab.z_begin, s1 = slab.z_begin + slab.z_count;
    const std::int64_t zc0 = s0 / chunk[0], zc1 = (s1 - 1) / chunk[0] + 1;
    const std::size_t per_row = static_cast<std::size_t>(chunks[1] * chunks[2]);
    const std::size_t jobs = static_cast<std::size_t>(zc1 - zc0) * per_row;
    parallel_for(jobs, threads, [&](std::size_t begin, std::size_t end) {
      std::vector<float> buffer(chunk_floats());
      for (std::size_t job = begin; job < end; ++job) {
        const auto [zc, yc, xc] = chunk_of_job(zc0, job);
        const std::int64_t p0 = std::max(s0, zc * chunk[0]);
        const std::int64_t p1 = std::min(s1, (zc + 1) * chunk[0]);
        pack(values, s0, p0, p1, yc, xc, buffer.data());
        const std::size_t plane_bytes =
            static_cast<std::size_t>(chunk[1] * chunk[2]) * sizeof(float);
        write_at(fd, buffer.data(), static_cast<std::size_t>(p1 - p0) * plane_bytes,
                 chunk_address[chunk_index(zc, yc, xc)] +
                     static_cast<std::uint64_t>(p0 - zc * chunk[0]) * plane_bytes,
                 path);
      }
    });
    if (!rows_contiguous) return;  // fdatasync() alone writes it back
    // The slab's chunk rows are one contiguous range of the file: its writeback starts now, on
    // every writer, instead of all at the next checkpoint on one thread.
    const std::uint64_t begin = chunk_address[chunk_index(zc0, 0, 0)];
    const std::uint64_t end = chunk_address[chunk_index(zc1 - 1, chunks[1] - 1, chunks[2] - 1)] +
                              chunk_floats() * sizeof(float);
    pending_begin = std::min(pending_begin, begin);
    pending_end = std::max(pending_end, end);
    writes->start_writeback(fd, begin, end, path);
  }

  void write_compressed(const Slab& slab, const float* values) {
    const std::int64_t s0 = slab.z_begin, s1 = slab.z_begin + slab.z_count;
    if (s0 % chunk[0] != 0 || (s1 % chunk[0] != 0 && s1 != grid.nz()))
      throw InternalError(
          fmt::format("slab [{}, {}) of a compressed map is not aligned "
                      "to its {}-plane chunks",
                      s0, s1, chunk[0]));
    const std::int64_t zc0 = s0 / chunk[0], zc1 = (s1 - 1) / chunk[0] + 1;
    const std::size_t per_row = static_cast<std::size_t>(chunks[1] * chunks[2]);
    const std::size_t jobs = static_cast<std::size_t>(zc1 - zc0) * per_row;
    // A pipeline: every thread compresses the next chunk not yet taken, and the calling thread
    // (the only one that calls HDF5) writes the compressed chunks in job order as soon as each
    // is ready, between compressing chunks of its own. The file gets the same chunks, in the
    // same order, as when all were compressed first; deflate and the writes now overlap.
    std::vector<std::vector<std::uint8_t>> compressed(jobs);
    std::vector<std::uint8_t> ready(jobs, 0);  // under `mutex`
    std::mutex mutex;
    std::condition_variable chunk_ready;
    std::atomic<std::size_t> next_job{0};
    std::atomic<bool> stop{false};
    const std::size_t floats = chunk_floats();
    std::size_t next_write = 0;  // the writer's
    const auto write_ready = [&](bool wait) {
      while (next_write < jobs) {
        {
          std::unique_lock guard(mutex);
          if (wait) chunk_ready.wait(guard, [&] { return ready[next_write] != 0 || stop.load(); });
          if (stop.load()) return;
          if (ready[next_write] == 0) return;
        }
        const auto [zc, yc, xc] = chunk_of_job(zc0, next_write);
        const std::array<hsize_t, 3> offset{static_cast<hsize_t>(zc * chunk[0]),
                                            static_cast<hsize_t>(yc * chunk[1]),
                                            static_cast<hsize_t>(xc * chunk[2])};
        std::vector<std::uint8_t>& bytes = compressed[next_write];
        failure.status(H5Dwrite_chunk(dataset.get(), H5P_DEFAULT, 0, offset.data(), bytes.size(),
                                      bytes.data()),
                       fmt::format("H5Dwrite_chunk(potential, planes {}-{})", zc * chunk[0],
                                   std::min(grid.nz(), (zc + 1) * chunk[0]) - 1));
        std::vector<std::uint8_t>().swap(bytes);  // written: its memory goes back now
        ++next_write;
      }
    };
    if (!compress_pool) compress_pool = std::make_unique<ThreadPool>(threads);
    compress_pool->parallel_for(compress_pool->size(), [&](std::size_t begin, std::size_t) {
      const bool is_writer = begin == 0;  // the calling thread's range
      try {
        std::vector<float> buffer(floats, 0.0f);
        std::vector<std::uint8_t> shuffled(floats * sizeof(float));
        std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor(
            libdeflate_alloc_compressor(gzip_level), libdeflate_free_compressor);
        if (!compressor) throw IoError("cannot allocate a deflate compressor (out of memory)");
        const std::size_t bound =
            libdeflate_zlib_compress_bound(compressor.get(), floats * sizeof(float));
        for (std::size_t job; !stop.load() && (job = next_job.fetch_add(1)) < jobs;) {
          const auto [zc, yc, xc] = chunk_of_job(zc0, job);
          const std::int64_t p0 = zc * chunk[0];
          const std::int64_t p1 = std::min(s1, (zc + 1) * chunk[0]);
          if (p1 - p0 < chunk[0]) std::fill(buffer.begin(), buffer.end(), 0.0f);  // last row
          pack(values, s0, p0, p1, yc, xc, buffer.data());
          shuffle4(buffer.data(), floats, shuffled.data());
          std::vector<std::uint8_t> out(bound);
          const std::size_t size = libdeflate_zlib_compress(
              compressor.get(), shuffled.data(), shuffled.size(), out.data(), out.size());
          if (size == 0) throw IoError("deflate failed on a chunk of the map");
          out.resize(size);
          compressed[job] = std::move(out);
          {
            const std::lock_guard guard(mutex);
            ready[job] = 1;
          }
          chunk_ready.notify_all();
          if (is_writer) write_ready(false);
        }
        if (is_writer) write_ready(true);
      } catch (...) {
        stop.store(true);
        {
          const std::lock_guard guard(mutex);  // a waiting writer sees `stop`
        }
        chunk_ready.notify_all();
        throw;
      }
    });
    if (next_write != jobs) throw InternalError("compressed chunks left unwritten");
  }

  void checkpoint() {
    if (pending.empty()) return;
    std::sort(pending.begin(), pending.end());
    if (gzip_level > 0) failure.status(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "H5Fflush");
    // Statistics first, then data and statistics to stable storage, then the flags.
    for (const std::int64_t z : pending) {
      const h5::PlaneStatsRow row = h5::plane_stats_row(stats[static_cast<std::size_t>(z)]);
      write_at(fd, row.data(), sizeof row,
               stats_address + static_cast<std::uint64_t>(z) * sizeof row, path);
    }
    if (writes && pending_end > pending_begin)  // the values on every writer, then the rest
      writes->write_back(fd, pending_begin, pending_end, path);
    pending_begin = UINT64_MAX;
    pending_end = 0;
    if (::fdatasync(fd) != 0 && errno != EINVAL)
      throw IoError(fmt::format("error writing {}: fdatasync: {}", path, errno_text()));
    const std::uint8_t one = 1;
    for (const std::int64_t z : pending) {
      write_at(fd, &one, 1, done_address + static_cast<std::uint64_t>(z), path);
      done[static_cast<std::size_t>(z)] = 1;
    }
    pending.clear();
  }

  void load_resume_state() {
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

  Handle open_dataset_for_reading(hid_t from) const {
    Handle dapl(failure.id(H5Pcreate(H5P_DATASET_ACCESS), "H5Pcreate"), H5Pclose);
    // No chunk cache: chunks may be written behind HDF5's back (pwrite) between reads.
    failure.status(H5Pset_chunk_cache(dapl.get(), 0, 0, 1.0), "H5Pset_chunk_cache");
    return {failure.id(H5Dopen2(from, "/potential", dapl.get()), "H5Dopen2(/potential)"), H5Dclose};
  }

  void read_box(const std::array<hsize_t, 3>& start, const std::array<hsize_t, 3>& count,
                float* out) {
    const QuietErrors quiet;
    // While values stream in, an uncompressed store's HDF5 file is closed: read through a
    // read-only handle that leaves it so (a writer's handle would mark the file open).
    Handle reader;
    if (file.get() < 0) {
      lock.check_same_file();  // HDF5 opens by name: make sure the name is still ours
      const Handle fapl = h5::file_access_plist(failure);
      reader = Handle(failure.id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()), "H5Fopen"),
                      H5Fclose);
    }
    const Handle set = open_dataset_for_reading(file.get() >= 0 ? file.get() : reader.get());
    const Handle file_space(failure.id(H5Dget_space(set.get()), "H5Dget_space"), H5Sclose);
    failure.status(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr,
                                       count.data(), nullptr),
                   "H5Sselect_hyperslab");
    const Handle memory_space(
        failure.id(H5Screate_simple(3, count.data(), nullptr), "H5Screate_simple"), H5Sclose);
    failure.status(H5Dread(set.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                           H5P_DEFAULT, out),
                   "H5Dread(potential)");
  }
};

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
  s.threads = store_threads(options.threads);
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

void MapStore::Impl::build(const MapMetadata& meta, const System& system, const ResumeKey& key,
                           bool defer_atoms) {
  Impl& s = *this;
  const std::string& partial_path = path;
  // Each step's time goes to the debug log: creation takes ~3 ms on a local ext4 disk, and a
  // slow one elsewhere should show which step it is.
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  std::string steps;
  const auto step = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    steps += fmt::format("{}{} {:.1f} ms", steps.empty() ? "" : ", ", name,
                         std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
  };
  const QuietErrors quiet;
  const Writer w(failure);
  const Handle fapl = h5::file_access_plist(failure);
  if (s.gzip_level == 0)  // the 1.10 format's fixed-array chunk index: allocating and looking up
                          // 10^5 chunks takes milliseconds, not the v1 B-tree's minutes
    failure.status(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V110, H5F_LIBVER_V110),
                   "H5Pset_libver_bounds");
  // Truncates the locked file in place (same inode, so the lock stays on it).
  s.file =
      Handle(failure.id(H5Fcreate(partial_path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()),
                        "H5Fcreate"),
             H5Fclose);
  s.lock.check_same_file();
  const hid_t root = s.file.get();
  w.text(root, "format", "dcs potential map");
  const std::int64_t format_version = h5::kFormatVersion;
  w.int64s(root, "format_version", &format_version, 1);
  w.text(root, "program", meta.provenance.program);

  const std::array<hsize_t, 3> dims{static_cast<hsize_t>(grid.nz()),
                                    static_cast<hsize_t>(grid.ny()),
                                    static_cast<hsize_t>(grid.nx())};
  const std::array<hsize_t, 3> chunk_dims{static_cast<hsize_t>(s.chunk[0]),
                                          static_cast<hsize_t>(s.chunk[1]),
                                          static_cast<hsize_t>(s.chunk[2])};
  Handle dcpl(failure.id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  failure.status(H5Pset_chunk(dcpl.get(), 3, chunk_dims.data()), "H5Pset_chunk");
  failure.status(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  if (s.gzip_level > 0) {
    if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0)
      failure.invalid("this HDF5 library has no deflate (gzip) filter");
    failure.status(H5Pset_shuffle(dcpl.get()), "H5Pset_shuffle");
    failure.status(H5Pset_deflate(dcpl.get(), static_cast<unsigned>(s.gzip_level)),
                   "H5Pset_deflate");
  } else {
    failure.status(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  }
  const Handle space = w.space({dims[0], dims[1], dims[2]});
  s.dataset = Handle(failure.id(H5Dcreate2(root, "potential", H5T_IEEE_F32LE, space.get(),
                                           H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
                                "H5Dcreate2(potential)"),
                     H5Dclose);
  h5::write_potential_attributes(s.dataset.get(), meta, w);
  step("layout");
  if (defer_atoms) {
    s.deferred_atoms = &system;
  } else {
    h5::write_atoms(root, system, w);
    step("atoms");
  }

  // /resume: flags and plane statistics in contiguous storage allocated now, zero-filled, so
  // that their bytes can be updated in place without touching HDF5's metadata.
  const Handle resume = w.group(root, "resume");
  w.text(resume.get(), "input_sha256", key.input_sha256);
  w.text(resume.get(), "settings", settings_text(key));
  w.int64s(resume.get(), "chunk_depth", &s.chunk[0], 1);
  w.text(resume.get(), "description",
         "Partial map: plane_done[k] = 1 once plane k of /potential and plane_stats[k] (min, "
         "max, sum, sum of squares, count, non-finite count) are on stable storage.");
  Handle flat(failure.id(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  failure.status(H5Pset_layout(flat.get(), H5D_CONTIGUOUS), "H5Pset_layout");
  failure.status(H5Pset_alloc_time(flat.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time");
  failure.status(H5Pset_fill_time(flat.get(), H5D_FILL_TIME_ALLOC), "H5Pset_fill_time");
  {
    const Handle done_space = w.space({dims[0]});
    const Handle done_set(
        failure.id(H5Dcreate2(resume.get(), "plane_done", H5T_STD_U8LE, done_space.get(),
                              H5P_DEFAULT, flat.get(), H5P_DEFAULT),
                   "H5Dcreate2(plane_done)"),
        H5Dclose);
    const Handle stats_space = w.space({dims[0], kStatFields});
    const Handle stats_set(
        failure.id(H5Dcreate2(resume.get(), "plane_stats", H5T_IEEE_F64LE, stats_space.get(),
                              H5P_DEFAULT, flat.get(), H5P_DEFAULT),
                   "H5Dcreate2(plane_stats)"),
        H5Dclose);
  }
  step("resume datasets");
  failure.status(H5Fflush(root, H5F_SCOPE_LOCAL), "H5Fflush");
  step("flush");
  s.read_resume_addresses();
  if (s.gzip_level == 0) {
    s.read_chunk_addresses();
    step("chunk addresses");
    s.close_hdf5();
    step("close");
  }
  s.open_fd();
  s.done.assign(static_cast<std::size_t>(grid.nz()), 0);
  s.stats.assign(static_cast<std::size_t>(grid.nz()), StatsAccum{});
  step("descriptor");
  log().debug("{} created in {:.1f} ms ({}); {}", partial_path,
              std::chrono::duration<double, std::milli>(last - start).count(), steps,
              s.writes ? fmt::format("{} writer{}", s.writes->writers(),
                                     s.writes->writers() == 1 ? "" : "s")
                       : std::string("one writer (compressed)"));
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

void MapStore::Impl::open_existing(const MapMetadata& meta, const ResumeKey& key,
                                   unsigned n_threads, bool verify) {
  Impl& s = *this;
  const std::string& partial_path = lock.path();
  s.path = partial_path;
  s.grid = meta.grid;
  s.threads = store_threads(n_threads);
  s.failure = Failure(partial_path, /*reading=*/true);
  const QuietErrors quiet;
  const Handle fapl = h5::file_access_plist(failure);
  s.file = Handle(failure.id(H5Fopen(partial_path.c_str(), H5F_ACC_RDWR, fapl.get()),
                             "H5Fopen (the partial file is damaged)"),
                  H5Fclose);
  s.lock.check_same_file();
  const Handle resume(failure.id(H5Gopen2(s.file.get(), "resume", H5P_DEFAULT), "H5Gopen2(resume)"),
                      H5Gclose);

  h5::check_resume_key(resume.get(), key, failure);
  // A run stopped before it wrote its deferred atoms left no done plane: start afresh.
  if (H5Lexists(s.file.get(), "atoms", H5P_DEFAULT) <= 0)
    throw UnusablePartial(partial_path, 0, "holds no atoms (its run stopped before any slab)");

  s.dataset =
      Handle(failure.id(H5Dopen2(s.file.get(), "/potential", H5P_DEFAULT), "H5Dopen2(/potential)"),
             H5Dclose);
  const Handle plist(failure.id(H5Dget_create_plist(s.dataset.get()), "H5Dget_create_plist"),
                     H5Pclose);
  std::array<hsize_t, 3> stored_chunk{};
  if (H5Pget_chunk(plist.get(), 3, stored_chunk.data()) != 3)
    failure.invalid("/potential is not chunked");
  s.set_chunk_geometry(static_cast<std::int64_t>(stored_chunk[0]));
  if (s.chunk[1] != static_cast<std::int64_t>(stored_chunk[1]) ||
      s.chunk[2] != static_cast<std::int64_t>(stored_chunk[2]))
    failure.invalid("/potential has an unexpected chunk shape");
  const int filters = H5Pget_nfilters(plist.get());
  if (filters < 0) failure.raise("H5Pget_nfilters");
  s.gzip_level = 0;
  for (int f = 0; f < filters; ++f) {
    unsigned flags = 0, values[4] = {};
    std::size_t n_values = 4;
    const H5Z_filter_t id = H5Pget_filter2(plist.get(), static_cast<unsigned>(f), &flags, &n_values,
                                           values, 0, nullptr, nullptr);
    if (id == H5Z_FILTER_DEFLATE) s.gzip_level = n_values > 0 ? static_cast<int>(values[0]) : 6;
  }
  s.failure = Failure(partial_path, /*reading=*/false);
  s.read_resume_addresses();
  if (s.gzip_level == 0) s.read_chunk_addresses();
  s.open_fd();
  s.load_resume_state();
  if (verify) s.verify_done_planes();
  if (s.gzip_level == 0) s.close_hdf5();
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

void MapStore::before_first_slab() { impl_->write_deferred_atoms(); }

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

void MapStore::sync() {
  Impl& s = *impl_;
  if (!s.finished) throw InternalError("MapStore::sync() before finish()");
  if (s.synced) return;
  {
    const QuietErrors quiet;
    s.dataset.close(s.failure, "H5Dclose(potential)");
    s.file.close(s.failure, "H5Fclose");  // flushes: a full disk shows here
  }
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
