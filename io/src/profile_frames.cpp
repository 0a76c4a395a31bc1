// The per-frame plane sums of --profile (profile_frames.hpp).
#include "dcs/io/profile_frames.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "fd_io.hpp"

namespace dcs::io {
namespace {

constexpr char kProfileFramesMagic[8] = {'D', 'C', 'S', 'P', 'R', 'O', 'F', '1'};
constexpr std::uint32_t kProfileRecordMagic = 0x3146'5250u;  // "PRF1"
constexpr std::uint32_t kProfileFramesVersion = 1;
constexpr std::uint64_t kProfileHeaderAlign = 4096;
constexpr std::size_t kProfileMaxKeyBytes = std::size_t{64} << 20;

struct ProfileFramesHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t key_bytes;
  std::int64_t nz;
  std::int64_t frames;
  std::int64_t width;
  std::int32_t grid_axis;
  std::uint32_t reserved;
};
static_assert(sizeof(ProfileFramesHeader) == 48);

std::uint64_t profile_header_bytes(std::uint64_t key_bytes) {
  return (sizeof(ProfileFramesHeader) + key_bytes + kProfileHeaderAlign - 1) / kProfileHeaderAlign *
         kProfileHeaderAlign;
}

std::uint64_t profile_record_bytes(std::size_t width) { return width * sizeof(double) + 8; }

/// CRC-32 of the record's frame, plane and sums.
std::uint32_t profile_record_crc(std::uint64_t k, std::int64_t z, const double* sums,
                                 std::size_t width) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(&k), sizeof k);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(&z), sizeof z);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(sums), static_cast<uInt>(width * sizeof(double)));
  return static_cast<std::uint32_t>(crc);
}

/// Copies the sums of `record` (frame k, plane z) into `sums`; whether its CRC and magic hold.
bool take_profile_record(const unsigned char* record, std::uint64_t k, std::int64_t z,
                         std::size_t width, double* sums) {
  std::memcpy(sums, record, width * sizeof(double));
  std::uint32_t tail[2];
  std::memcpy(tail, record + width * sizeof(double), sizeof tail);
  return tail[1] == kProfileRecordMagic && tail[0] == profile_record_crc(k, z, sums, width);
}

/// The header and key of an existing file; false when it is not one of ours (or too short).
bool read_profile_header(int fd, const std::string& path, ProfileFramesHeader& h,
                         std::string& key) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw IoError(fmt::format("{}: {}", path, errno_text()));
  if (static_cast<std::uint64_t>(st.st_size) < kProfileHeaderAlign) return false;
  read_at(fd, &h, sizeof h, 0, path);
  if (std::memcmp(h.magic, kProfileFramesMagic, 8) != 0 || h.key_bytes > kProfileMaxKeyBytes ||
      profile_header_bytes(h.key_bytes) > static_cast<std::uint64_t>(st.st_size))
    return false;
  key.resize(h.key_bytes);
  read_at(fd, key.data(), key.size(), sizeof h, path);
  return true;
}

}  // namespace

std::uint64_t ProfileFramesFile::file_bytes(std::int64_t nz, std::size_t frames, std::size_t width,
                                            std::size_t key_bytes) {
  return profile_header_bytes(key_bytes) +
         static_cast<std::uint64_t>(nz) * frames * profile_record_bytes(width);
}

ProfileFramesFile ProfileFramesFile::open(const std::string& path, std::int64_t nz,
                                          std::size_t frames, std::size_t width, int grid_axis,
                                          const std::string& key, bool resume, bool replace,
                                          bool create) {
  if (key.size() > kProfileMaxKeyBytes)
    throw InternalError(fmt::format("profile frames key of {} bytes", key.size()));
  ProfileFramesFile file;
  file.path_ = path;
  file.nz_ = nz;
  file.frames_ = frames;
  file.width_ = width;
  file.grid_axis_ = grid_axis;
  file.header_bytes_ = profile_header_bytes(key.size());
  file.fd_ =
      FileDescriptor(::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644));
  if (!file.fd_.is_open()) throw IoError(fmt::format("cannot open {}: {}", path, errno_text()));
  struct stat st {};
  if (::fstat(file.fd_.get(), &st) != 0) throw IoError(fmt::format("{}: {}", path, errno_text()));
  if (!S_ISREG(st.st_mode)) throw IoError(fmt::format("{} is not a regular file", path));
  ProfileFramesHeader h{};
  std::string found_key;
  const bool ours = read_profile_header(file.fd_.get(), path, h, found_key);
  if (!ours && st.st_size > 0 && !replace && create)
    throw IoError(fmt::format(
        "{} is not a dcs profile frames file; remove it or use --force to replace it", path));
  const bool same = ours && h.version == kProfileFramesVersion && found_key == key && h.nz == nz &&
                    h.frames == static_cast<std::int64_t>(frames) &&
                    h.width == static_cast<std::int64_t>(width) && h.grid_axis == grid_axis;
  if (!create) {
    if (!same) throw IoError(fmt::format("{}: the profile frames file is not ready", path));
    file.reused_ = true;
    return file;
  }
  if (resume && same) {
    file.reused_ = true;
    return file;
  }
  if (::ftruncate(file.fd_.get(), 0) != 0 ||
      ::ftruncate(file.fd_.get(), static_cast<off_t>(file_bytes(nz, frames, width, key.size()))) !=
          0)
    throw IoError(fmt::format("error writing {}: {}", path, errno_text()));
  std::vector<unsigned char> header(file.header_bytes_, 0);
  h = ProfileFramesHeader{};
  std::memcpy(h.magic, kProfileFramesMagic, 8);
  h.version = kProfileFramesVersion;
  h.key_bytes = static_cast<std::uint32_t>(key.size());
  h.nz = nz;
  h.frames = static_cast<std::int64_t>(frames);
  h.width = static_cast<std::int64_t>(width);
  h.grid_axis = grid_axis;
  std::memcpy(header.data(), &h, sizeof h);
  std::memcpy(header.data() + sizeof h, key.data(), key.size());
  write_at(file.fd_.get(), header.data(), header.size(), 0, path);
  file.sync();
  return file;
}

std::uint64_t ProfileFramesFile::record_offset(std::size_t k, std::int64_t z) const {
  return header_bytes_ + (static_cast<std::uint64_t>(k) * static_cast<std::uint64_t>(nz_) +
                          static_cast<std::uint64_t>(z)) *
                             profile_record_bytes(width_);
}

void ProfileFramesFile::write(std::size_t k, std::int64_t z_begin, std::int64_t z_count,
                              const double* sums) {
  if (k >= frames_ || z_begin < 0 || z_count < 0 || z_begin + z_count > nz_)
    throw InternalError(
        fmt::format("{}: frame {}, planes {}+{} out of range", path_, k, z_begin, z_count));
  const std::uint64_t bytes = profile_record_bytes(width_);
  std::vector<unsigned char> data(static_cast<std::size_t>(bytes) *
                                  static_cast<std::size_t>(z_count));
  for (std::int64_t q = 0; q < z_count; ++q) {
    const double* plane = sums + static_cast<std::size_t>(q) * width_;
    unsigned char* record = data.data() + static_cast<std::size_t>(q) * bytes;
    std::memcpy(record, plane, width_ * sizeof(double));
    const std::uint32_t tail[2] = {profile_record_crc(k, z_begin + q, plane, width_),
                                   kProfileRecordMagic};
    std::memcpy(record + width_ * sizeof(double), tail, sizeof tail);
  }
  write_at(fd_.get(), data.data(), data.size(), record_offset(k, z_begin), path_);
}

std::int64_t ProfileFramesFile::read_frame(std::size_t k, std::vector<double>& out) {
  const std::uint64_t bytes = profile_record_bytes(width_);
  std::vector<unsigned char> data(static_cast<std::size_t>(bytes) * static_cast<std::size_t>(nz_));
  read_at(fd_.get(), data.data(), data.size(), record_offset(k, 0), path_);
  out.resize(static_cast<std::size_t>(nz_) * width_);
  std::int64_t bad = -1;
  for (std::int64_t z = 0; z < nz_; ++z) {
    const unsigned char* record = data.data() + static_cast<std::size_t>(z) * bytes;
    double* plane = out.data() + static_cast<std::size_t>(z) * width_;
    if (!take_profile_record(record, k, z, width_, plane) && bad < 0) bad = z;
  }
  return bad;
}

std::vector<double> ProfileFramesFile::read(std::size_t k) {
  std::vector<double> out;
  const std::int64_t bad = read_frame(k, out);
  if (bad >= 0)
    throw IoError(
        fmt::format("{}: the plane sums of listed frame {}, plane {} are missing or "
                    "damaged; run again without --resume",
                    path_, k, bad));
  return out;
}

void ProfileFramesFile::verify(FrameAccumulatorFile& stats) {
  std::vector<std::int64_t> held(static_cast<std::size_t>(nz_));
  std::int64_t most = 0;
  for (std::int64_t z = 0; z < nz_; ++z) {
    held[static_cast<std::size_t>(z)] = stats.frames_done(z);
    most = std::max(most, held[static_cast<std::size_t>(z)]);
  }
  std::vector<bool> damaged(static_cast<std::size_t>(nz_), false);
  std::vector<double> sums(width_);
  const std::uint64_t bytes = profile_record_bytes(width_);
  std::vector<unsigned char> data(static_cast<std::size_t>(bytes) * static_cast<std::size_t>(nz_));
  for (std::size_t k = 0; k < frames_ && static_cast<std::int64_t>(k) < most; ++k) {
    read_at(fd_.get(), data.data(), data.size(), record_offset(k, 0), path_);
    for (std::int64_t z = 0; z < nz_; ++z)
      if (held[static_cast<std::size_t>(z)] > static_cast<std::int64_t>(k) &&
          !take_profile_record(data.data() + static_cast<std::size_t>(z) * bytes, k, z, width_,
                               sums.data()))
        damaged[static_cast<std::size_t>(z)] = true;
  }
  std::size_t count = 0;
  for (std::int64_t z = 0; z < nz_; ++z)
    if (damaged[static_cast<std::size_t>(z)]) {
      stats.forget(z);
      ++count;
    }
  if (count > 0)
    log().warn(
        "{}: {} plane(s) lack the plane sums of frames their checkpoints count: they are "
        "computed again",
        path_, count);
}

void ProfileFramesFile::sync() { data_sync(fd_.get(), path_); }

void ProfileFramesFile::remove() noexcept {
  fd_.reset();
  ::unlink(path_.c_str());
}

}  // namespace dcs::io
