// MapStore::Impl (map_store.hpp), shared by the files of the resumable HDF5 map store:
// hdf5_store.cpp (lifecycle: create, resume, commit), hdf5_store_layout.cpp (the file's layout
// and addresses), hdf5_store_write.cpp (slabs and checkpoints), hdf5_store_read.cpp (reading
// back and resume state) and hdf5_store_finish.cpp (the groups written at the end).
#pragma once

#include <hdf5.h>
#include <unistd.h>

#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dcs/io/atomic_file.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/parallel.hpp"
#include "direct_writes.hpp"
#include "hdf5_support.hpp"
#include "parallel_writes.hpp"

namespace dcs::io {

static_assert(std::endian::native == std::endian::little,
              "the store writes little-endian float32/float64 bytes directly");

using h5::Failure;
using h5::Handle;
using h5::QuietErrors;
using h5::Writer;

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
  // Uncompressed: the chunks' values written past the page cache (direct_writes.hpp).
  std::unique_ptr<DirectWrites> direct;
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

  static constexpr std::int64_t kChunkEdge = h5::kStoreChunkEdge;
  static constexpr std::size_t kStatFields = h5::kPlaneStatFields;

  /// Packing and compression threads: those asked for, else every hardware thread (deflate of
  /// a slab's chunks is CPU-bound and its chunks are independent).
  static unsigned store_threads(unsigned requested) { return resolve_threads(requested); }

  ~Impl() { close_handles(); }

  /// Creates the file's layout (MapStore::create()).
  void build(const MapMetadata& meta, const System& system, const ResumeKey& key, bool defer_atoms);
  /// The /resume group of a new file, its flags and statistics allocated (hdf5_store_layout.cpp).
  Handle create_resume(hid_t root, const ResumeKey& key, const Writer& w);
  /// Opens the locked partial file to continue it (MapStore::open_partial()).
  void open_existing(const MapMetadata& meta, const ResumeKey& key, unsigned n_threads,
                     bool verify);

  void close_handles() noexcept {
    const QuietErrors quiet;
    dataset = Handle();
    file = Handle();
    direct.reset();
    if (fd >= 0) ::close(fd);
    fd = -1;
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

  // hdf5_store_layout.cpp
  /// Uncompressed maps keep HDF5 closed while values stream in (pwrite through fd): a process
  /// killed then leaves a cleanly closed file. Reopened here for reading back and finishing.
  void ensure_open();
  void close_hdf5();
  /// /atoms, if create() left them for later (see the definition).
  void write_deferred_atoms();
  /// The store writes through the locked description: always the file it holds.
  void open_fd();
  /// Uncompressed: the direct writes of the chunks' range (after open_fd()).
  void open_direct();
  void set_chunk_geometry(std::int64_t depth);
  haddr_t chunk_address_at(std::int64_t zc, std::int64_t yc, std::int64_t xc) const;
  void read_chunk_addresses();
  void read_resume_addresses();
  /// Compressed: throws UnusablePartial unless the whole chunk index reads (see the definition).
  void check_chunk_index();

  // hdf5_store_write.cpp
  /// Copies the planes [p0, p1) of chunk (zc, yc, xc) from a slab starting at plane s0 into
  /// `out` (chunk layout, zero-padded at the grid's edges), checking that values are finite.
  void pack(const float* slab_values, std::int64_t s0, std::int64_t p0, std::int64_t p1,
            std::int64_t yc, std::int64_t xc, float* out) const;
  void write_uncompressed(const Slab& slab, const float* values);
  void write_compressed(const Slab& slab, const float* values);
  void checkpoint();

  // hdf5_store_read.cpp
  /// Reads every plane flagged done back and checks it against its stored statistics; those
  /// that fail are flagged not done (in the file too) and named in a warning.
  void verify_done_planes();
  void load_resume_state();
  Handle open_dataset_for_reading(hid_t from) const;
  void read_box(const std::array<hsize_t, 3>& start, const std::array<hsize_t, 3>& count,
                float* out);
};

}  // namespace dcs::io
