// The frames' running statistics file (frame_accumulators.hpp).
#include "dcs/io/frame_accumulators.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/map_store.hpp"
#include "fd_io.hpp"

namespace dcs::io {
namespace {

constexpr char kMagic[8] = {'D', 'C', 'S', 'F', 'R', 'A', 'C', '1'};
constexpr std::uint64_t kSlotMagic = 0x3154'4f4c'5343'4644ull;  // "DFCSLOT1"
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderAlign = 4096;
constexpr std::size_t kSlotHeaderBytes = 32;
/// Far above any key a command line can make (selections included): a bound for reading the
/// key of a damaged or foreign file.
constexpr std::size_t kMaxKeyBytes = std::size_t{64} << 20;

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t key_bytes;
  std::int64_t nx, ny, nz;
  std::uint8_t reserved[8];
};
static_assert(sizeof(FileHeader) == 48);

/// The header and its key, rounded up to 4096 bytes (4096 for keys of up to 4048 bytes).
std::uint64_t header_bytes(std::uint64_t key_bytes) {
  return (sizeof(FileHeader) + key_bytes + kHeaderAlign - 1) / kHeaderAlign * kHeaderAlign;
}

struct SlotHeader {
  std::uint64_t magic;
  std::int64_t z;
  std::int64_t frames;
  std::uint32_t crc;
  std::uint32_t reserved;
};
static_assert(sizeof(SlotHeader) == kSlotHeaderBytes);

std::uint64_t data_bytes(std::size_t points) {
  return static_cast<std::uint64_t>(points) * (2 * sizeof(double) + 2 * sizeof(float));
}

/// CRC-32 of the slot's header fields (z, frames) and its data.
std::uint32_t slot_crc(const SlotHeader& h, const unsigned char* data, std::uint64_t bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  crc = crc32(crc, reinterpret_cast<const Bytef*>(&h.z), sizeof h.z + sizeof h.frames);
  while (bytes > 0) {  // crc32() takes a uInt length
    const auto part = static_cast<uInt>(std::min<std::uint64_t>(bytes, 1u << 30));
    crc = crc32(crc, data, part);
    data += part;
    bytes -= part;
  }
  return static_cast<std::uint32_t>(crc);
}

std::string grid_text(std::int64_t nx, std::int64_t ny, std::int64_t nz) {
  return fmt::format("{}x{}x{}", nx, ny, nz);
}

/// The "name = value" lines of a key, in order.
std::vector<std::pair<std::string, std::string>> key_lines(const std::string& key) {
  std::vector<std::pair<std::string, std::string>> lines;
  for (std::size_t at = 0; at < key.size();) {
    const std::size_t end = std::min(key.find('\n', at), key.size());
    const std::string line = key.substr(at, end - at);
    const std::size_t eq = line.find(" = ");
    if (eq == std::string::npos) lines.emplace_back(line, "");
    else lines.emplace_back(line.substr(0, eq), line.substr(eq + 3));
    at = end + 1;
  }
  return lines;
}

std::string shortened(const std::string& value) {
  return value.size() <= 100 ? value : value.substr(0, 97) + "...";
}

/// What differs between the key a file was made with and this run's, in words: each line whose
/// value changed ("<name> changed: <then> then, <now> now"), appeared or went.
std::string key_differences(const std::string& then, const std::string& now) {
  const auto old_lines = key_lines(then);
  const auto new_lines = key_lines(now);
  std::vector<std::string> differences;
  for (const auto& [name, value] : new_lines) {
    const auto found = std::find_if(old_lines.begin(), old_lines.end(),
                                    [&n = name](const auto& line) { return line.first == n; });
    if (found == old_lines.end())
      differences.push_back(fmt::format("{} ({}) is not in it", name, shortened(value)));
    else if (found->second != value)
      differences.push_back(fmt::format("{} changed: {} then, {} now", name,
                                        shortened(found->second), shortened(value)));
  }
  for (const auto& [name, value] : old_lines)
    if (std::none_of(new_lines.begin(), new_lines.end(),
                     [&n = name](const auto& line) { return line.first == n; }))
      differences.push_back(
          fmt::format("it has {} ({}), this run has not", name, shortened(value)));
  std::string text = "it was made from other inputs or with other settings";
  for (std::size_t i = 0; i < differences.size() && i < 4; ++i)
    text += (i == 0 ? ": " : "; ") + differences[i];
  if (differences.size() > 4) text += fmt::format("; and {} more", differences.size() - 4);
  return text;
}

}  // namespace

void PlaneAccumulator::reset(std::size_t points) {
  frames = 0;
  mean.assign(points, 0.0);
  m2.assign(points, 0.0);
  min.assign(points, std::numeric_limits<float>::infinity());
  max.assign(points, -std::numeric_limits<float>::infinity());
}

void PlaneAccumulator::add(const float* values) {
  const double n = static_cast<double>(frames + 1);
  const std::size_t points = mean.size();
  for (std::size_t i = 0; i < points; ++i) {
    const double x = values[i];
    const double delta = x - mean[i];
    mean[i] += delta / n;
    m2[i] += delta * (x - mean[i]);
    min[i] = std::min(min[i], values[i]);
    max[i] = std::max(max[i], values[i]);
  }
  ++frames;
}

std::uint64_t FrameAccumulatorFile::file_bytes(const GridSpec& grid, std::size_t key_bytes) {
  return header_bytes(key_bytes) + static_cast<std::uint64_t>(grid.nz()) * 2 *
                                       (kSlotHeaderBytes + data_bytes(grid.plane_points()));
}

FrameAccumulatorFile FrameAccumulatorFile::open(const std::string& path, const GridSpec& grid,
                                                const std::string& key, bool resume,
                                                bool replace_foreign, bool create) {
  if (key.size() > kMaxKeyBytes)
    throw InternalError(fmt::format("frame statistics key of {} bytes", key.size()));
  FrameAccumulatorFile file;
  file.path_ = path;
  file.grid_ = grid;
  file.slot_bytes_ = kSlotHeaderBytes + data_bytes(grid.plane_points());
  file.header_bytes_ = header_bytes(key.size());
  const auto nz = static_cast<std::size_t>(grid.nz());
  file.last_slot_.assign(nz, -1);
  file.frames_.assign(nz, 0);
  file.known_.assign(nz, false);
  file.fd_ =
      FileDescriptor(::open(path.c_str(), O_RDWR | O_CLOEXEC | (create ? O_CREAT : 0), 0644));
  if (!file.fd_.is_open()) throw IoError(fmt::format("cannot open {}: {}", path, errno_text()));
  struct stat st {};
  if (::fstat(file.fd_.get(), &st) != 0) throw IoError(fmt::format("{}: {}", path, errno_text()));
  if (!S_ISREG(st.st_mode)) throw IoError(fmt::format("{} is not a regular file", path));

  bool fresh = true;
  if (st.st_size > 0) {
    FileHeader h{};
    std::string found_key;
    const bool ours =
        static_cast<std::uint64_t>(st.st_size) >= kHeaderAlign &&
        (read_at(file.fd_.get(), &h, sizeof h, 0, path), std::memcmp(h.magic, kMagic, 8) == 0);
    if (!ours) {
      if (!replace_foreign)
        throw IoError(fmt::format(
            "{} is not a dcs frame statistics file; remove it or use --force to replace it", path));
    } else {
      const bool whole_key = h.key_bytes <= kMaxKeyBytes &&
                             header_bytes(h.key_bytes) <= static_cast<std::uint64_t>(st.st_size);
      if (whole_key) {
        found_key.resize(h.key_bytes);
        read_at(file.fd_.get(), found_key.data(), found_key.size(), sizeof h, path);
      }
      // The key first: a changed input or setting is the cause of a changed grid.
      std::string differs;
      if (h.version != kVersion) differs = fmt::format("version {}", h.version);
      else if (!whole_key)
        differs = fmt::format("its header is damaged (a {}-byte key)", h.key_bytes);
      else if (found_key != key) differs = key_differences(found_key, key);
      else if (h.nx != grid.nx() || h.ny != grid.ny() || h.nz != grid.nz())
        differs = fmt::format("its grid is {}, this run's {}", grid_text(h.nx, h.ny, h.nz),
                              grid_text(grid.nx(), grid.ny(), grid.nz()));
      if (differs.empty()) {
        fresh = false;
      } else if (resume) {
        throw ResumeMismatch(
            fmt::format("{} cannot be resumed: {}; use --force to start afresh", path, differs));
      }
    }
  }
  if (!create && fresh)
    throw IoError(fmt::format("{}: the frame statistics file is not ready", path));
  if (fresh) {
    if (::ftruncate(file.fd_.get(), 0) != 0 ||
        ::ftruncate(file.fd_.get(), static_cast<off_t>(file_bytes(grid, key.size()))) != 0)
      throw IoError(fmt::format("error writing {}: {}", path, errno_text()));
    std::vector<unsigned char> header(file.header_bytes_, 0);
    FileHeader h{};
    std::memcpy(h.magic, kMagic, 8);
    h.version = kVersion;
    h.key_bytes = static_cast<std::uint32_t>(key.size());
    h.nx = grid.nx();
    h.ny = grid.ny();
    h.nz = grid.nz();
    std::memcpy(header.data(), &h, sizeof h);
    std::memcpy(header.data() + sizeof h, key.data(), key.size());
    write_at(file.fd_.get(), header.data(), header.size(), 0, path);
    file.sync();
  }
  file.resumed_ = !fresh;
  return file;
}

std::uint64_t FrameAccumulatorFile::slot_offset(std::int64_t z, int slot) const {
  return header_bytes_ +
         (static_cast<std::uint64_t>(z) * 2 + static_cast<std::uint64_t>(slot)) * slot_bytes_;
}

int FrameAccumulatorFile::best_slot(std::int64_t z, std::int64_t* frames) {
  const auto zi = static_cast<std::size_t>(z);
  if (!known_[zi]) {
    std::vector<unsigned char> data(slot_bytes_ - kSlotHeaderBytes);
    int best = -1;
    std::int64_t best_frames = 0;
    for (int slot = 0; slot < 2; ++slot) {
      SlotHeader h{};
      read_at(fd_.get(), &h, sizeof h, slot_offset(z, slot), path_);
      if (h.magic != kSlotMagic || h.z != z || h.frames <= 0 || h.frames <= best_frames) continue;
      read_at(fd_.get(), data.data(), data.size(), slot_offset(z, slot) + kSlotHeaderBytes, path_);
      if (slot_crc(h, data.data(), data.size()) != h.crc) continue;  // torn or damaged
      best = slot;
      best_frames = h.frames;
    }
    last_slot_[zi] = static_cast<std::int8_t>(best);
    frames_[zi] = best_frames;
    known_[zi] = true;
  }
  *frames = frames_[zi];
  return last_slot_[zi];
}

std::int64_t FrameAccumulatorFile::frames_done(std::int64_t z) {
  std::int64_t frames = 0;
  best_slot(z, &frames);
  return frames;
}

void FrameAccumulatorFile::load(std::int64_t z, PlaneAccumulator& out) {
  const std::size_t points = grid_.plane_points();
  std::int64_t frames = 0;
  const int slot = best_slot(z, &frames);
  out.reset(points);
  if (slot < 0) return;
  std::uint64_t at = slot_offset(z, slot) + kSlotHeaderBytes;
  read_at(fd_.get(), out.mean.data(), points * sizeof(double), at, path_);
  at += points * sizeof(double);
  read_at(fd_.get(), out.m2.data(), points * sizeof(double), at, path_);
  at += points * sizeof(double);
  read_at(fd_.get(), out.min.data(), points * sizeof(float), at, path_);
  at += points * sizeof(float);
  read_at(fd_.get(), out.max.data(), points * sizeof(float), at, path_);
  out.frames = frames;
}

void FrameAccumulatorFile::forget(std::int64_t z) {
  const SlotHeader cleared{};
  for (int slot = 0; slot < 2; ++slot)
    write_at(fd_.get(), &cleared, sizeof cleared, slot_offset(z, slot), path_);
  sync();
  const auto zi = static_cast<std::size_t>(z);
  last_slot_[zi] = -1;
  frames_[zi] = 0;
  known_[zi] = true;
}

void FrameAccumulatorFile::forget_all() {
  const SlotHeader cleared{};
  for (std::int64_t z = 0; z < grid_.nz(); ++z) {
    for (int slot = 0; slot < 2; ++slot)
      write_at(fd_.get(), &cleared, sizeof cleared, slot_offset(z, slot), path_);
    const auto zi = static_cast<std::size_t>(z);
    last_slot_[zi] = -1;
    frames_[zi] = 0;
    known_[zi] = true;
  }
  sync();
  resumed_ = false;
}

void FrameAccumulatorFile::store(std::int64_t z, const PlaneAccumulator& acc) {
  const std::size_t points = grid_.plane_points();
  std::int64_t frames = 0;
  const int current = best_slot(z, &frames);
  const int slot = current == 0 ? 1 : 0;
  std::vector<unsigned char> data(slot_bytes_);
  unsigned char* p = data.data() + kSlotHeaderBytes;
  std::memcpy(p, acc.mean.data(), points * sizeof(double));
  std::memcpy(p + points * sizeof(double), acc.m2.data(), points * sizeof(double));
  std::memcpy(p + 2 * points * sizeof(double), acc.min.data(), points * sizeof(float));
  std::memcpy(p + 2 * points * sizeof(double) + points * sizeof(float), acc.max.data(),
              points * sizeof(float));
  SlotHeader h{kSlotMagic, z, acc.frames, 0, 0};
  h.crc = slot_crc(h, p, slot_bytes_ - kSlotHeaderBytes);
  std::memcpy(data.data(), &h, sizeof h);
  write_at(fd_.get(), data.data(), data.size(), slot_offset(z, slot), path_);
  const auto zi = static_cast<std::size_t>(z);
  last_slot_[zi] = static_cast<std::int8_t>(slot);
  frames_[zi] = acc.frames;
}

void FrameAccumulatorFile::sync() { data_sync(fd_.get(), path_); }

void FrameAccumulatorFile::remove() noexcept {
  fd_.reset();
  ::unlink(path_.c_str());
}

}  // namespace dcs::io
