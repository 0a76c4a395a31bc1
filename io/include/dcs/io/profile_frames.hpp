// The per-frame plane sums of a trajectory run with --profile, kept in a scratch file beside
// the output ("<output>.profile.partial") until the map is committed, so that each frame's
// profile (dcs/profile.hpp) is made from that frame's exact map without holding the frames' maps,
// and a run killed at any moment resumes with the same bits.
//
// Layout (native byte order; a file made elsewhere is refused by its header):
//   header: magic "DCSPROF1", version, nz, frames, sums per plane, the profile's grid axis, key
//     length, key text ("name = value" lines, the frame statistics' key), rounded up to 4096
//   per listed frame k, per plane z (z fastest): a record of the plane's plane_sums() (float64)
//     and 8 bytes: CRC-32 of (k, z, sums), magic
// A record is written before the frame statistics' checkpoint that counts the frame for its
// plane (synced first), at a fixed offset: MPI ranks write their own planes with plain
// pwrite(). A record never written or torn fails its CRC: verify() has such planes computed again.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dcs/io/file_descriptor.hpp"
#include "dcs/io/frame_accumulators.hpp"

namespace dcs::io {

class ProfileFramesFile {
 public:
  /// The file at `path` for `frames` listed frames of `nz` planes of `width` sums each along
  /// grid axis `grid_axis`, made anew or, with `resume`, kept when it holds the same `key` and
  /// shape (reused()). A file there that is not such a file is refused (IoError) unless
  /// `replace`. `create` false: the file must exist with that key and shape (MPI ranks open the
  /// file rank 0 made).
  static ProfileFramesFile open(const std::string& path, std::int64_t nz, std::size_t frames,
                                std::size_t width, int grid_axis, const std::string& key,
                                bool resume, bool replace, bool create = true);

  ProfileFramesFile(ProfileFramesFile&&) noexcept = default;
  ProfileFramesFile& operator=(ProfileFramesFile&&) noexcept = default;

  const std::string& path() const noexcept { return path_; }
  bool reused() const noexcept { return reused_; }
  int grid_axis() const noexcept { return grid_axis_; }
  std::size_t width() const noexcept { return width_; }

  /// Writes the sums of planes [z_begin, z_begin + z_count) of listed frame k (`sums`:
  /// z_count x width, z order).
  void write(std::size_t k, std::int64_t z_begin, std::int64_t z_count, const double* sums);
  /// Every plane's sums of listed frame k (nz x width, z order); IoError naming the frame and
  /// plane when a record is missing or damaged.
  std::vector<double> read(std::size_t k);
  /// A kept file (reused()) against the frame statistics it goes with: the planes whose
  /// checkpoint counts a frame without a valid record here are forgotten in `stats`, with a
  /// warning, so that the run computes them again.
  void verify(FrameAccumulatorFile& stats);
  /// fdatasync(): what was written survives a crash.
  void sync();
  /// Removes the file (after its map is committed). Never throws.
  void remove() noexcept;
  /// Bytes of the file (the header for `key_bytes` and every record), for the disk check.
  static std::uint64_t file_bytes(std::int64_t nz, std::size_t frames, std::size_t width,
                                  std::size_t key_bytes);

 private:
  ProfileFramesFile() = default;
  std::uint64_t record_offset(std::size_t k, std::int64_t z) const;
  /// The sums of the records of frame k read into `out` (nz x width); -1 when all are valid,
  /// else the first plane whose record is not.
  std::int64_t read_frame(std::size_t k, std::vector<double>& out);

  std::string path_;
  FileDescriptor fd_;
  std::int64_t nz_ = 0;
  std::size_t frames_ = 0;
  std::size_t width_ = 0;
  int grid_axis_ = 0;
  std::uint64_t header_bytes_ = 0;
  bool reused_ = false;
};

}  // namespace dcs::io
