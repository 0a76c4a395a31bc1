// The partial file of a map store (dcs/io/map_store.hpp): whose it is (PartialLock), what it is
// (PartialLock::inspect()) and how large it grows (store_file_bytes()).
#include <dirent.h>
#include <fcntl.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/log.hpp"
#include "fd_io.hpp"
#include "hdf5_support.hpp"

namespace dcs::io {
namespace {

/// A whole-file write lock on the open file description `fd` (F_OFD_SETLK, or F_OFD_SETLKW when
/// waiting). Returns 0 or the errno of the failure (EAGAIN: someone else holds it).
int lock_description(int fd, bool wait) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 0;  // to the end of the file, however it grows
  while (::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock) != 0) {
    if (errno == EINTR && wait && !interrupt_requested()) continue;
    if (errno == ENOSYS || errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL) {
      // A file system without locks (Lustre mounted without flock, say): the run goes on, as
      // it did before partial files had owners, and says so once.
      static std::atomic<bool> warned{false};
      if (!warned.exchange(true))
        log().warn(
            "the file system does not lock files ({}): two dcs runs writing the same "
            "output are not kept apart",
            errno_text(errno));
      return 0;
    }
    return errno == EACCES ? EAGAIN : errno;
  }
  return 0;
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/// The process that holds an OFD lock on the file (dev, ino), found through /proc (the lock
/// itself does not record it): a descriptor of that file whose fdinfo lists a write lock. -1
/// when not found (another user's process, another host).
long lock_holder(const struct stat& file) {
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return -1;
  long found = -1;
  const long self = static_cast<long>(::getpid());
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != '\0' || pid == self) continue;
    std::error_code ec;
    const std::filesystem::path fds = fmt::format("/proc/{}/fd", pid);
    for (const auto& fd : std::filesystem::directory_iterator(fds, ec)) {
      struct stat info {};
      if (::stat(fd.path().c_str(), &info) != 0 || !same_inode(info, file)) continue;
      std::ifstream fdinfo(fmt::format("/proc/{}/fdinfo/{}", pid, fd.path().filename().string()));
      std::string line;
      while (found < 0 && std::getline(fdinfo, line))
        if (line.starts_with("lock:") && line.find("WRITE") != std::string::npos) found = pid;
    }
    if (found >= 0) break;
  }
  ::closedir(proc);
  return found;
}

/// Creates an empty file beside `path`, locked, and links it in place unless something is there
/// already. Returns the locked descriptor, or -1 when `path` appeared meanwhile.
int create_locked(const std::string& path) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.parent_path().empty() ? "." : target.parent_path();
  // Named like an AtomicFile's temporary, so that remove_stale_temporaries() cleans up after a
  // run killed between open() and unlink().
  static std::atomic<std::uint32_t> counter{0};
  const auto tag =
      static_cast<std::uint32_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
      (counter.fetch_add(1) << 24);
  const std::string temp =
      (dir / fmt::format("{}{}.{:08x}", temporary_prefix(path), static_cast<long>(::getpid()), tag))
          .string();
  const int fd = ::open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) throw IoError(fmt::format("cannot create {}: {}", path, errno_text(errno)));
  const int locked = lock_description(fd, false);  // a fresh file: nobody else can hold it
  const int linked = locked == 0 ? ::link(temp.c_str(), path.c_str()) : -1;
  const int error = errno;
  (void)::unlink(temp.c_str());
  if (locked == 0 && linked == 0) return fd;
  ::close(fd);
  if (locked != 0) throw IoError(fmt::format("cannot lock {}: {}", path, errno_text(locked)));
  if (error == EEXIST) return -1;
  throw IoError(fmt::format("cannot create {}: {}", path, errno_text(error)));
}

constexpr std::array<unsigned char, 8> kHdf5Signature{0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};

}  // namespace

PartialLock PartialLock::acquire(const std::string& path, bool wait) {
  check_output_path(path, /*force=*/true);  // never a link, a device or a directory
  (void)remove_stale_temporaries(path);     // create_locked()'s, of a run killed right there
  PartialLock owner;
  owner.path_ = path;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT) {
      owner.fd_ = create_locked(path);
      if (owner.fd_ < 0) continue;  // another run linked its own first: lock that one
      owner.created_ = true;
      return owner;
    }
    if (fd < 0) throw IoError(fmt::format("cannot open {}: {}", path, errno_text(errno)));
    owner.fd_ = fd;
    int error = lock_description(fd, false);
    if (error == EAGAIN && wait) {
      log().info("{} is in use by another dcs run; waiting for it (--wait-lock)", path);
      error = lock_description(fd, true);
      if (error == EINTR) {
        owner.release();
        throw InterruptedError(fmt::format("interrupted while waiting for {}", path));
      }
    }
    if (error == EAGAIN) {
      struct stat info {};
      const long pid = ::fstat(fd, &info) == 0 ? lock_holder(info) : -1;
      owner.release();
      throw IoError(fmt::format(
          "{} is in use by another dcs run{} writing the same output; wait for it to end, use "
          "--wait-lock to wait, or choose another output",
          path, pid > 0 ? fmt::format(" (pid {})", pid) : std::string()));
    }
    if (error != 0) {
      owner.release();
      throw IoError(fmt::format("cannot lock {}: {}", path, errno_text(error)));
    }
    if (owner.same_file()) return owner;
    owner.release();  // replaced or removed while we waited: take what is there now
  }
  throw IoError(fmt::format("cannot lock {}: it keeps being replaced", path));
}

PartialLock::PartialLock(PartialLock&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), created_(other.created_) {}

PartialLock& PartialLock::operator=(PartialLock&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    created_ = other.created_;
  }
  return *this;
}

PartialLock::~PartialLock() { release(); }

void PartialLock::release() noexcept {
  if (fd_ >= 0) ::close(fd_);  // the last descriptor of the description: the lock goes with it
  fd_ = -1;
}

bool PartialLock::same_file() const noexcept {
  struct stat mine {};
  struct stat there {};
  return fd_ >= 0 && ::fstat(fd_, &mine) == 0 && ::lstat(path_.c_str(), &there) == 0 &&
         same_inode(mine, there);
}

void PartialLock::check_same_file() const {
  if (same_file()) return;
  throw IoError(
      fmt::format("{} was removed or replaced by someone else while this run was "
                  "writing it; nothing of it is used",
                  path_));
}

std::pair<PartialKind, std::string> PartialLock::inspect() const {
  struct stat info {};
  if (::fstat(fd_, &info) != 0)
    throw IoError(fmt::format("cannot read {}: {}", path_, errno_text(errno)));
  if (info.st_size == 0) return {PartialKind::kEmpty, "an empty file"};
  std::array<unsigned char, 8> head{};
  const ssize_t got = ::pread(fd_, head.data(), head.size(), 0);
  if (got < 0) throw IoError(fmt::format("cannot read {}: {}", path_, errno_text(errno)));
  const auto compared = static_cast<std::size_t>(got);
  if (!std::equal(head.begin(), head.begin() + static_cast<std::ptrdiff_t>(compared),
                  kHdf5Signature.begin()))
    return {PartialKind::kForeign, "not an HDF5 file"};
  if (compared < head.size()) return {PartialKind::kDamaged, "a truncated HDF5 file"};
  h5::prepare_library();
  const h5::QuietErrors quiet;
  const h5::Failure failure(path_, true);
  const h5::Handle fapl = h5::file_access_plist(failure);
  const hid_t file = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (file < 0) return {PartialKind::kDamaged, "an HDF5 file that HDF5 cannot open (truncated?)"};
  const h5::Handle owner(file, H5Fclose);
  std::string format;
  const bool has_format = H5Aexists(file, "format") > 0;
  if (has_format) {
    try {
      format = h5::read_string_attribute(file, "format", failure);
    } catch (const Error&) {
    }
  }
  if (format != "dcs potential map") {
    // Bytes past the end of allocation its superblock records (HDF5 writes the superblock
    // last when it flushes; a closed file ends there), and a format attribute HDF5 cannot
    // read or nothing in its root group: a run of dcs killed while it created the file,
    // before its first flush was complete. It holds nothing to keep.
    haddr_t eoa = HADDR_UNDEF;
    H5G_info_t root{};
    if (H5Fget_eoa(file, &eoa) >= 0 && eoa != HADDR_UNDEF &&
        static_cast<std::uint64_t>(info.st_size) > eoa &&
        (has_format || H5Gget_info(file, &root) < 0 || root.nlinks == 0))
      return {PartialKind::kDamaged, "an HDF5 file whose creation was not complete"};
    return {PartialKind::kForeign, "an HDF5 file that dcs did not write"};
  }
  if (H5Lexists(file, "resume", H5P_DEFAULT) > 0)
    return {PartialKind::kResumable, "a dcs partial map"};
  return {PartialKind::kFinished, "a dcs map without /resume (finished, not renamed)"};
}

std::uint64_t store_file_bytes(const GridSpec& grid, std::size_t atoms, std::size_t atom_text_bytes,
                               const MapStoreOptions& options) {
  const auto edge = static_cast<std::uint64_t>(h5::kStoreChunkEdge);
  const auto nx = static_cast<std::uint64_t>(grid.nx());
  const auto ny = static_cast<std::uint64_t>(grid.ny());
  const auto nz = static_cast<std::uint64_t>(grid.nz());
  const std::uint64_t cz = std::clamp<std::uint64_t>(
      static_cast<std::uint64_t>(std::max<std::int64_t>(options.chunk_depth, 1)), 1, nz);
  const std::uint64_t cy = std::min(edge, ny);
  const std::uint64_t cx = std::min(edge, nx);
  const std::uint64_t chunks = (nz + cz - 1) / cz * ((ny + cy - 1) / cy) * ((nx + cx - 1) / cx);
  std::uint64_t chunk_bytes = cz * cy * cx * sizeof(float);
  // Compressed: deflate's bound for incompressible input, and the chunk index (v1 B-tree).
  if (options.gzip_level > 0) chunk_bytes += chunk_bytes / 1000 + 64 + 96;
  const std::uint64_t atom_bytes = atoms * (57 + atom_text_bytes);
  constexpr std::uint64_t kMetadata = std::uint64_t{64} << 10;
  return chunks * chunk_bytes + atom_bytes + nz * (1 + h5::kPlaneStatFields * 8) + kMetadata;
}

std::uint64_t store_file_bytes(const GridSpec& grid, const System& system,
                               const MapStoreOptions& options) {
  std::size_t name = 1, res_name = 1, chain = 1;  // fixed-width columns of the longest entry
  for (const Atom& atom : system.atoms) {
    name = std::max(name, atom.name.size());
    res_name = std::max(res_name, atom.res_name.size());
    chain = std::max(chain, atom.chain.size());
  }
  return store_file_bytes(grid, system.atoms.size(), name + res_name + chain, options);
}

}  // namespace dcs::io
