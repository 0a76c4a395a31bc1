// The running statistics of a map over trajectory frames (mean, spread, minimum and maximum of
// every point), kept per z-plane in a scratch file beside the output
// ("<output>.frames.partial"), so that a trajectory run killed at any moment (kill -9 included)
// continues from its last checkpoint with the same bits.
//
// Layout (native byte order; a file made elsewhere is refused by its header):
//   header: magic "DCSFRAC1", version, nx ny nz, key length, key text ("name = value" lines),
//     rounded up to a multiple of 4096 bytes (4096 unless the key is longer than 4048 bytes)
//   per plane z, two slots (A, B) of slot_bytes() each:
//     slot header, 32 bytes: magic, z, frames added, CRC-32 of the rest of the slot
//     mean[nx*ny] float64, m2[nx*ny] float64 (Welford's sum of squared deviations),
//     min[nx*ny] float32, max[nx*ny] float32
// A plane is stored into the slot it was not last read from or stored to, so the previous
// checkpoint of the plane stays intact while the new one is written; load() takes the valid slot
// (checksum matching) with the most frames. A torn write therefore loses at most the frames
// since the previous checkpoint, never the plane. Slots are at fixed offsets: MPI ranks store
// their own planes into one file with plain pwrite(), no parallel I/O library needed.
//
// Why not HDF5: the overwritten-in-place checkpoints must survive a kill in mid-write (HDF5
// metadata can be left inconsistent by one) and several ranks write one file without MPI-IO.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/io/file_descriptor.hpp"

namespace dcs::io {

/// Running statistics of one z-plane over the frames added so far, in frame order.
struct PlaneAccumulator {
  std::int64_t frames = 0;  ///< frames added
  std::vector<double> mean;
  std::vector<double> m2;  ///< sum of squared deviations from the mean (Welford)
  std::vector<float> min, max;

  /// Empty statistics (no frames) for `points` points.
  void reset(std::size_t points);
  /// Adds one frame's values of the plane (Welford's update, float64). The result depends only
  /// on the values and the order of the frames.
  void add(const float* values);
};

class FrameAccumulatorFile {
 public:
  /// Opens the file at `path` for `grid` and `key` (text naming the computation: inputs and
  /// settings, "name = value" lines). A file whose key or grid differ is refused
  /// (ResumeMismatch naming the lines that differ) when `resume`, else started afresh; one that is
  /// not such a file is refused (IoError) unless `replace_foreign`. `create` false: the file must
  /// exist (MPI ranks open the file rank 0 made). IoError for system failures.
  static FrameAccumulatorFile open(const std::string& path, const GridSpec& grid,
                                   const std::string& key, bool resume, bool replace_foreign,
                                   bool create = true);

  FrameAccumulatorFile(FrameAccumulatorFile&&) noexcept = default;
  FrameAccumulatorFile& operator=(FrameAccumulatorFile&&) noexcept = default;

  const std::string& path() const noexcept { return path_; }
  /// True when open() found an earlier run's checkpoints (same key).
  bool resumed() const noexcept { return resumed_; }
  /// Frames the last valid checkpoint of plane z holds (0: none).
  std::int64_t frames_done(std::int64_t z);
  /// The last valid checkpoint of plane z into `out` (reset to no frames when there is none).
  void load(std::int64_t z, PlaneAccumulator& out);
  /// Drops plane z's checkpoints (both slots cleared, synced): its frames are added again.
  void forget(std::int64_t z);
  /// Drops every plane's checkpoints (synced once): the run starts afresh (a kept file whose
  /// frames another scratch file lacks); resumed() is false afterwards.
  void forget_all();
  /// Writes `acc` as plane z's next checkpoint; durable after sync().
  void store(std::int64_t z, const PlaneAccumulator& acc);
  /// Forgets which checkpoints it has read: later reads see what other processes (MPI ranks)
  /// stored since (the leader's verify() on --resume read every plane before they ran).
  void reread() noexcept { std::fill(known_.begin(), known_.end(), false); }
  /// fdatasync(): every store() before it survives a crash.
  void sync();
  /// Removes the file (after its map is committed). Never throws.
  void remove() noexcept;

  /// Bytes of the file for `grid` and a key of `key_bytes` (two slots per plane plus the
  /// header), for the disk check.
  static std::uint64_t file_bytes(const GridSpec& grid, std::size_t key_bytes);

 private:
  FrameAccumulatorFile() = default;
  std::uint64_t slot_offset(std::int64_t z, int slot) const;
  /// Reads slot headers of plane z and picks the valid one with the most frames (-1: none).
  int best_slot(std::int64_t z, std::int64_t* frames);

  std::string path_;
  FileDescriptor fd_;
  GridSpec grid_;
  std::uint64_t slot_bytes_ = 0;
  std::uint64_t header_bytes_ = 0;
  bool resumed_ = false;
  std::vector<std::int8_t> last_slot_;  ///< per plane: the slot of its newest checkpoint, -1 none
  std::vector<std::int64_t> frames_;    ///< per plane: frames of that checkpoint
  std::vector<bool> known_;             ///< per plane: best_slot() ran
};

}  // namespace dcs::io
