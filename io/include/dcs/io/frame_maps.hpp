// Every frame's map of a trajectory run (--frame-maps): an HDF5 file beside the output,
// "<stem>.frames.h5", whose /frame_maps is a float32 dataset [frame][z][y][x] on the map's grid.
//
// The dataset is contiguous and allocated when the file is made; the file is then closed, and
// the frames' planes are written into it with pwrite() at their offsets. HDF5's metadata never
// changes after creation, so the file stays valid if the run is killed at any moment, MPI ranks
// write their own planes of it without a parallel HDF5, and a resumed run writes only the
// frames its checkpoints lack. Built under "<final>.partial" and renamed when the run commits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dcs/grid.hpp"
#include "dcs/io/file_descriptor.hpp"
#include "dcs/io/frame_accumulators.hpp"

namespace dcs::io {

class FrameMapsFile {
 public:
  /// The partial file at `path` for `grid` and `frames` (their trajectory indices), made anew,
  /// or, with `resume`, kept when it holds the same `key` (text naming the computation) and
  /// shape. `units` is the map's unit. IoError for failures; a file there that is not such a
  /// file is refused unless `replace`.
  static FrameMapsFile open(const std::string& path, const GridSpec& grid,
                            const std::vector<std::int64_t>& frames, const std::string& units,
                            const std::string& key, bool resume, bool replace);
  /// The file rank 0 made (MPI): its dataset's offset read back, opened for writing.
  static FrameMapsFile open_made(const std::string& path, const GridSpec& grid, std::size_t frames);

  FrameMapsFile(FrameMapsFile&&) noexcept = default;
  FrameMapsFile& operator=(FrameMapsFile&&) noexcept = default;

  const std::string& path() const noexcept { return path_; }
  /// open() kept an earlier run's file (its frames up to the checkpoints are there).
  bool reused() const noexcept { return reused_; }
  /// A kept file (reused()) against the frame statistics it goes with: every plane's maps of
  /// the frames its checkpoint counts are added up again, in order, and must give the
  /// checkpoint's statistics bit for bit. The planes that do not (a map changed or damaged
  /// since: a NaN, a flipped bit) are forgotten in `stats`, with a warning, so that the run
  /// computes them again.
  void verify(FrameAccumulatorFile& stats);
  /// Writes planes [z_begin, z_begin + z_count) of listed frame k (x fastest).
  void write(std::size_t k, std::int64_t z_begin, std::int64_t z_count, const float* values);
  /// fdatasync(): what was written survives a crash.
  void sync();
  /// Syncs, closes and renames the file onto `final_path` (refusing to replace a file there
  /// unless `force`), then syncs the directory.
  void commit(const std::string& final_path, bool force);
  /// Bytes the file takes for `frames` frames of `grid` (the dataset plus under 64 KiB).
  static std::uint64_t file_bytes(const GridSpec& grid, std::size_t frames);

 private:
  FrameMapsFile() = default;
  std::string path_;
  FileDescriptor fd_;
  std::uint64_t offset_ = 0;  ///< file offset of /frame_maps[0][0][0][0]
  std::uint64_t plane_bytes_ = 0;
  std::int64_t nz_ = 0;
  std::size_t frames_ = 0;
  bool reused_ = false;
};

}  // namespace dcs::io
