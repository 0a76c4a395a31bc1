// The map store: the HDF5 file a map is streamed into, slab by slab, under a partial name beside
// its final name ("<final>.partial"), resumable after an interruption and renamed onto the final
// name when complete. Every run writes its map through one (when HDF5 is not wanted as an
// output, the store is a scratch file that the other outputs are read back from).
//
// Layout while partial: the final file's layout (see dcs/io/hdf5.hpp), with
//   /potential        chunked (cz, cy, cx) with cz = the chunk depth (<= 16), cy, cx <= 64: whole
//                     chunk rows serve z-slab writes, 64-wide chunk columns serve the x-slab reads
//                     of the OpenDX writer.
//   /resume           attrs input_sha256, settings ("name = value" lines of every setting that
//                     changes values), chunk_depth; datasets plane_done uint8[nz] and
//                     plane_stats float64[nz][6] (min, max, sum, sum_sq, count, nonfinite).
// /statistics, /validation, /provenance and the viewer views are written by finish(), which also
// removes /resume.
//
// Uncompressed maps: every chunk is allocated when the file is created and its file address
// read once; slabs are then written with pwrite() from several threads, so HDF5's metadata never
// changes while values stream in (the file stays valid if the process is killed at any moment)
// and writing runs at the speed of the file system. A slab's chunk rows are one contiguous range
// of the file, whose writeback a small pool of writers starts as soon as it is written and
// waits for at a checkpoint (MapStoreOptions::writers): the disk is fed by several threads, not
// by one fdatasync(). Compressed maps (gzip level 1-9): chunks
// are shuffled and deflated on several threads (libdeflate, zlib format, exactly HDF5's
// shuffle + deflate filters) and stored with H5Dwrite_chunk; any HDF5 reader decompresses them
// with the standard filters.
//
// Ownership: a partial file is one run's. PartialLock holds a kernel lock on it (an open file
// description lock, dropped by the kernel when the process dies, kill -9 included) from before it
// is created, replaced or resumed until the run ends; a second run on the same output is refused
// (or waits). The store writes through the locked description, and checks that the path still
// names that file wherever it must reopen it by name (HDF5), before renaming and before removing.
//
// Durability: write_slab() records its planes as pending; checkpoint() makes them durable in
// order: values and plane statistics are written, the file is fdatasync()ed, and only then are
// the planes flagged done. A resumed run trusts only flagged planes.
//
// Thread safety: one thread calls a store (the pipeline's writer thread); the store uses its own
// threads inside write_slab(). Debian's HDF5 is not thread-safe: no other HDF5 calls may run
// concurrently in the process.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/io/map_extras.hpp"
#include "dcs/map.hpp"
#include "dcs/stats.hpp"
#include "dcs/types.hpp"

namespace dcs::io {

/// What a partial file must match to be resumed.
struct ResumeKey {
  std::string input_sha256;
  /// Every setting that changes values, as (name, value) text, in a fixed order.
  std::vector<std::pair<std::string, std::string>> settings;
};

struct MapStoreOptions {
  int gzip_level = 0;             ///< 0: uncompressed; 1-9: shuffle + deflate
  std::int64_t chunk_depth = 16;  ///< z-planes per chunk (1..16); slabs of compressed maps must
                                  ///< start and end on multiples of it (or at nz)
  unsigned threads = 0;           ///< packing / compression threads (0: all hardware threads)
  /// Uncompressed maps: threads writing the values back to the disk (0: DCS_WRITERS, else
  /// min(4, cores / 2); see parallel_writes.hpp). The file's bytes do not depend on it.
  unsigned writers = 0;
  bool force = false;  ///< replace a file at the partial path that is not a dcs
                       ///< partial file (otherwise refused, see PartialLock::inspect())
  /// Leave /atoms for before_first_slab() (or finish()): 10^6 atoms take ~0.2 s to write, time
  /// the first slab's computation can hide. The System must outlive the store's writes.
  bool defer_atoms = false;
};

/// Upper bound of the size of the store's file for a map on `grid` with `atoms` atoms whose
/// name, residue name and chain together take up to `atom_text_bytes` bytes (within a few
/// percent for uncompressed maps). Chunks are allocated whole, so the values take
/// ceil(nz / cz) * ceil(ny / 64) * ceil(nx / 64) chunks of cz * 64 * 64 floats (129^3: 144 x
/// 192 x 192 floats, 21.2 MB for 8.6 MB of values); the atoms take 57 bytes each plus their text;
/// /resume 49 bytes a plane; the metadata, the viewer views (links, no copy of the values) and
/// HDF5's own structures under 64 KiB. Compressed maps: the worst case (incompressible chunks).
std::uint64_t store_file_bytes(const GridSpec& grid, std::size_t atoms, std::size_t atom_text_bytes,
                               const MapStoreOptions& options);
/// store_file_bytes() for `system`'s atoms.
std::uint64_t store_file_bytes(const GridSpec& grid, const System& system,
                               const MapStoreOptions& options);

/// What is found at a partial path before it is replaced or resumed.
enum class PartialKind {
  kEmpty,      ///< no bytes (a run stopped before writing any)
  kDamaged,    ///< starts like an HDF5 file but HDF5 cannot open it, or its creation was
               ///< not complete (a run stopped while creating it, a file size limit)
  kResumable,  ///< a dcs partial map with its /resume group
  kFinished,   ///< a dcs map file without /resume (finished, not yet renamed)
  kForeign,    ///< anything else: not made by dcs, never replaced without --force
};

/// Makes a partial file this run's: an open file description of it with an OFD write lock
/// (fcntl F_OFD_SETLK) on it, held until release() or destruction. HDF5's own flock() does not
/// conflict with it, and closing other descriptors of the file does not drop it.
class PartialLock {
 public:
  /// Takes `path` for this run. Nothing there: creates an empty file under a temporary name
  /// beside it, locks it and links it in place without replacing anything (of two runs
  /// starting together, one wins). A file there: opens and locks it, then checks that the path
  /// still names it (retrying if it was replaced meanwhile). Held by another process: IoError
  /// "<path> is in use by another dcs run (pid N)", or, with `wait`, waits for it. Refuses what
  /// check_output_path(path, true) refuses (links, devices); other failures are IoError with the
  /// system's reason (permission denied, ...).
  static PartialLock acquire(const std::string& path, bool wait);

  PartialLock() = default;
  PartialLock(PartialLock&& other) noexcept;
  PartialLock& operator=(PartialLock&& other) noexcept;
  PartialLock(const PartialLock&) = delete;
  PartialLock& operator=(const PartialLock&) = delete;
  ~PartialLock();

  bool held() const noexcept { return fd_ >= 0; }
  const std::string& path() const noexcept { return path_; }
  /// The locked open file description (read-write); dup() it to write the file.
  int fd() const noexcept { return fd_; }
  /// The file did not exist: acquire() made it, empty.
  bool created() const noexcept { return created_; }
  /// Throws IoError unless the path still names the locked file (someone removed, renamed or
  /// replaced it, or a program that ignores the lock).
  void check_same_file() const;
  /// check_same_file() as a bool; never throws.
  bool same_file() const noexcept;
  /// What the locked file is, and a few words saying so ("not an HDF5 file", "an HDF5 file
  /// without dcs's /resume group", ...).
  std::pair<PartialKind, std::string> inspect() const;
  /// Drops the lock and closes the description. Idempotent.
  void release() noexcept;

 private:
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
};

/// Thrown by MapStore::open_partial() when the file at the partial path is dcs's but holds no
/// usable checkpoint (empty, truncated, no /resume group): the run may start afresh.
class UnusablePartial : public InputError {
 public:
  using InputError::InputError;
};

/// The settings as "name = value" lines, as stored in /resume and /provenance.
std::string settings_text(const ResumeKey& key);

/// "<final>.partial": where the map of `final_path` is built and kept when interrupted.
std::string partial_path_for(const std::string& final_path);

/// Thrown by MapStore::open_partial() when the partial file belongs to another computation; the
/// message says what differs.
class ResumeMismatch : public UsageError {
 public:
  using UsageError::UsageError;
};

/// Where the slab engine (dcs/pipeline/engine.hpp) puts finished slabs: MapStore in one
/// process, ParallelStore (dcs/io/parallel_store.hpp) when MPI ranks share one map.
class SlabStore {
 public:
  virtual ~SlabStore() = default;
  /// Per plane: 1 once flagged done (by an earlier run or a checkpoint of this one).
  virtual const std::vector<std::uint8_t>& plane_done() const noexcept = 0;
  /// Per plane: its statistics (valid where plane_done or written in this run).
  virtual const std::vector<StatsAccum>& plane_stats() const noexcept = 0;
  /// Writes the planes of `slab` (x fastest) and their statistics; they become done at the
  /// next checkpoint.
  virtual void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) = 0;
  /// Called by the writer between slabs when a checkpoint is due.
  virtual void checkpoint() = 0;
  /// Called once by the writer as the workers start, before it waits for the first slab: what
  /// need not hold up their start (MapStore: atoms whose writing was deferred).
  virtual void before_first_slab() {}
  /// Called once after this process's last slab: makes everything written durable.
  virtual void finish_writes() { checkpoint(); }
  /// Reads planes of the map back (x fastest).
  virtual void read_planes(const Slab& slab, float* out) = 0;
};

class MapStore final : public SlabStore {
 public:
  /// Creates (or replaces) the partial file at `partial_path` with the map's layout, grid and
  /// physics attributes and `system`'s atoms; allocates /potential. Throws IoError.
  /// Takes the path with PartialLock::acquire(partial_path, false) first.
  static MapStore create(const std::string& partial_path, const MapMetadata& meta,
                         const System& system, const ResumeKey& key,
                         const MapStoreOptions& options);
  /// create() on a path this run holds. A file there that is not dcs's (PartialKind::kForeign)
  /// is refused (IoError naming what it is) unless options.force. The store keeps the lock; on
  /// failure `lock` is left as it was (held).
  static MapStore create(PartialLock&& lock, const MapMetadata& meta, const System& system,
                         const ResumeKey& key, const MapStoreOptions& options);
  /// Opens an existing partial file to continue it (PartialLock::acquire(partial_path, false)
  /// first). Throws ResumeMismatch when its grid, input checksum or settings differ from
  /// `meta`/`key` (naming them), UnusablePartial when it is dcs's but holds nothing to resume,
  /// IoError when it is not dcs's, InputError when it is damaged otherwise.
  /// With `verify`, every plane flagged done is read back and its statistics recomputed: a plane
  /// whose values are not finite or whose statistics differ from its stored row (beyond the
  /// rounding of another summation order) is flagged not done again (a warning names them).
  static MapStore open_partial(const std::string& partial_path, const MapMetadata& meta,
                               const ResumeKey& key, unsigned threads = 0, bool verify = true);
  /// open_partial() on a path this run holds; on failure `lock` is left held.
  static MapStore open_partial(PartialLock&& lock, const MapMetadata& meta, const ResumeKey& key,
                               unsigned threads = 0, bool verify = true);

  MapStore(MapStore&&) noexcept;
  MapStore& operator=(MapStore&&) noexcept;
  ~MapStore() override;  ///< closes the file; keeps it (see discard())

  const std::string& path() const noexcept;
  int gzip_level() const noexcept;
  std::int64_t chunk_depth() const noexcept;
  const std::vector<std::uint8_t>& plane_done() const noexcept override;
  const std::vector<StatsAccum>& plane_stats() const noexcept override;
  std::int64_t planes_done() const noexcept;

  /// Writes the planes of `slab` (x fastest) and their statistics; they become done at the next
  /// checkpoint(). Throws IoError for a non-finite value (naming the grid point) or a failed write.
  void write_slab(const Slab& slab, const float* values, const StatsAccum* plane_stats) override;
  /// Makes every written plane durable and flags it done.
  void checkpoint() override;
  /// Writes /atoms if create() deferred them (MapStoreOptions::defer_atoms); else nothing.
  void before_first_slab() override;

  void read_planes(const Slab& slab, float* out) override;
  /// Reads the x-columns [x_begin, x_begin + count) of every (y, z): out[k][j][i - x_begin].
  void read_x_columns(std::int64_t x_begin, std::int64_t count, float* out);
  /// The x-width that reads whole chunks (the chunk's x extent).
  std::int64_t x_chunk() const noexcept;

  /// Checkpoints, then writes statistics, validation, provenance, the colour range and the
  /// viewer views of `meta`, the group of `extras` (if any) and drops /resume. Reading stays
  /// possible until commit().
  void finish(const MapMetadata& meta, const MapExtras* extras = nullptr);
  /// After finish(): closes and fsyncs the file (the slow part of commit(); nothing can be read
  /// afterwards). Idempotent. The file keeps its partial name: commit() renames it, or the caller
  /// does (io::PendingFile, to rename a run's outputs together in an io::CommitGroup).
  void sync();
  /// sync()s unless done and renames the file onto `final_path` (refusing to replace an
  /// existing file unless `force`), then fsyncs the directory.
  void commit(const std::string& final_path, bool force);
  /// Checkpoints what was written and closes the file, keeping it for a later resume. After a
  /// failed write or checkpoint nothing more is flagged done: the file keeps its last good
  /// checkpoint (what was flagged before the failure).
  void close_keeping() noexcept;
  /// close_keeping(), handing the lock back instead of releasing it (MPI: the ranks write the
  /// file in between, then rank 0 opens it again with open_partial()).
  PartialLock close_keeping_locked() noexcept;
  /// Throws IoError unless the partial path still names this store's file.
  void check_same_file() const;
  /// Closes and removes the partial file (unless the path no longer names it). Never throws.
  void discard() noexcept;

 private:
  struct Impl;
  explicit MapStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Settings and input checksum stored in a finished dcs file (/provenance), for `--resume` to
/// recognise an output that is already complete. Empty strings when absent or unreadable.
ResumeKey read_completed_key(const std::string& path);

}  // namespace dcs::io
