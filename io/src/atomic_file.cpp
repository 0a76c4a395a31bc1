#include "dcs/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "dcs/error.hpp"

namespace dcs::io {
namespace {

// --- Registry of live temporaries ------------------------------------------------------------
// Fixed storage and atomics only, so that a signal handler can walk it. A slot moves
// free -> filling (owner copies the path) -> live -> free (owner unregisters), or
// live -> removing -> removed (remove_pending_temporaries() unlinked it) -> free (owner).

constexpr int kSlotCount = 64;
constexpr std::size_t kMaxPathBytes = 4096;

enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2, kRemoving = 3, kRemoved = 4 };

struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPathBytes];
};

Slot g_slots[kSlotCount];

static_assert(std::atomic<int>::is_always_lock_free, "the registry needs lock-free atomics");

int register_temporary(const std::string& path) noexcept {
  if (path.size() >= kMaxPathBytes) return -1;
  for (int index = 0; index < kSlotCount; ++index) {
    int expected = kFree;
    if (g_slots[index].state.compare_exchange_strong(expected, kFilling,
                                                     std::memory_order_acq_rel)) {
      std::memcpy(g_slots[index].path, path.c_str(), path.size() + 1);
      g_slots[index].state.store(kLive, std::memory_order_release);
      return index;
    }
  }
  return -1;
}

void unregister_temporary(int slot) noexcept {
  if (slot < 0) return;
  int expected = kLive;
  if (g_slots[slot].state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel))
    return;
  // Already unlinked by remove_pending_temporaries(): free the slot. A slot still in kRemoving
  // (the remover runs right now in another thread) is left alone; the process is ending.
  expected = kRemoved;
  g_slots[slot].state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel);
}

std::string errno_text(int error) { return std::strerror(error); }

/// "dir" part of a path, "." when there is none.
std::filesystem::path directory_of(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

std::string random_hex() {
  static thread_local std::mt19937_64 engine = [] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }();
  return fmt::format("{:08x}", static_cast<std::uint32_t>(engine()));
}

}  // namespace

void check_output_path(const std::string& path, bool force) {
  if (path.empty()) throw IoError("the output path is empty");
  const std::filesystem::path target(path);
  if (!target.has_filename())
    throw IoError(fmt::format("cannot write {}: the path names a directory, not a file", path));

  const std::filesystem::path dir = directory_of(target);
  struct stat dir_info {};
  if (::stat(dir.c_str(), &dir_info) != 0) {
    const int error = errno;
    if (error == ENOENT)
      throw IoError(
          fmt::format("cannot write {}: directory {} does not exist", path, dir.string()));
    throw IoError(fmt::format("cannot write {}: cannot access directory {}: {}", path, dir.string(),
                              errno_text(error)));
  }
  if (!S_ISDIR(dir_info.st_mode))
    throw IoError(fmt::format("cannot write {}: {} is not a directory", path, dir.string()));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw IoError(fmt::format("cannot write {}: directory {} is not writable: {}", path,
                              dir.string(), errno_text(errno)));

  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode))
      throw IoError(fmt::format("cannot write {}: it is a directory", path));
    if (!force) throw IoError(fmt::format("{} exists; use --force to overwrite", path));
  } else if (errno != ENOENT) {
    throw IoError(fmt::format("cannot write {}: {}", path, errno_text(errno)));
  }
}

AtomicFile::AtomicFile(std::string final_path, bool force)
    : final_path_(std::move(final_path)), force_(force) {
  check_output_path(final_path_, force_);

  std::error_code ec;
  const std::filesystem::path target(final_path_);
  std::filesystem::path dir = std::filesystem::absolute(directory_of(target), ec);
  if (ec)
    throw IoError(fmt::format("cannot write {}: cannot resolve its directory: {}", final_path_,
                              ec.message()));
  // Keep the temporary's name under NAME_MAX (255) even for long final names.
  std::string stem = target.filename().string();
  if (stem.size() > 200) stem.resize(200);

  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string name =
        fmt::format(".{}.tmp.{}.{}", stem, static_cast<long>(::getpid()), random_hex());
    std::string candidate = (dir / name).string();
    // Register before creating, so that an interrupt between the two cannot leak the file.
    const int slot = register_temporary(candidate);
    if (slot < 0)
      throw IoError(
          fmt::format("cannot write {}: too many pending output files, or the path is "
                      "longer than {} bytes",
                      final_path_, kMaxPathBytes - 1));
    const int fd = ::open(candidate.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      fd_ = fd;
      registry_slot_ = slot;
      temp_path_ = std::move(candidate);
      return;
    }
    const int error = errno;
    unregister_temporary(slot);
    if (error != EEXIST)
      throw IoError(fmt::format("cannot write {}: cannot create a temporary file in {}: {}",
                                final_path_, dir.string(), errno_text(error)));
  }
  throw IoError(
      fmt::format("cannot write {}: no free temporary name in {}", final_path_, dir.string()));
}

AtomicFile::~AtomicFile() { discard(); }

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (fd_ < 0)
    throw IoError(fmt::format("cannot write {}: the file is already closed", final_path_));
  const char* cursor = static_cast<const char*>(data);
  while (bytes > 0) {
    const ::ssize_t written = ::write(fd_, cursor, bytes);
    if (written < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("error writing {}: {}", final_path_, errno_text(errno)));
    }
    cursor += written;
    bytes -= static_cast<std::size_t>(written);
  }
}

void AtomicFile::commit() {
  if (committed_ || fd_ < 0)
    throw IoError(fmt::format("cannot commit {}: already committed or discarded", final_path_));
  try {
    if (::fsync(fd_) != 0)
      throw IoError(
          fmt::format("error writing {}: fsync failed: {}", final_path_, errno_text(errno)));
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      throw IoError(
          fmt::format("error writing {}: close failed: {}", final_path_, errno_text(errno)));

    int rc = 0;
    if (force_) {
      rc = ::rename(temp_path_.c_str(), final_path_.c_str());
    } else {
      rc = ::renameat2(AT_FDCWD, temp_path_.c_str(), AT_FDCWD, final_path_.c_str(),
                       RENAME_NOREPLACE);
      if (rc != 0 && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
        // A file system without RENAME_NOREPLACE: check, then rename (a small race remains).
        struct stat info {};
        if (::lstat(final_path_.c_str(), &info) == 0) {
          errno = EEXIST;
          rc = -1;
        } else {
          rc = ::rename(temp_path_.c_str(), final_path_.c_str());
        }
      }
    }
    if (rc != 0) {
      const int error = errno;
      if (error == EEXIST)
        throw IoError(fmt::format("{} exists; use --force to overwrite", final_path_));
      throw IoError(fmt::format("cannot rename the temporary file onto {}: {}", final_path_,
                                errno_text(error)));
    }
  } catch (...) {
    discard();
    throw;
  }
  committed_ = true;
  unregister_temporary(registry_slot_);
  registry_slot_ = -1;

  // Make the rename itself durable. Best effort: the file is complete either way.
  const std::filesystem::path dir = std::filesystem::path(temp_path_).parent_path();
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    (void)::close(dir_fd);
  }
}

void AtomicFile::discard() noexcept {
  if (fd_ >= 0) {
    (void)::close(fd_);
    fd_ = -1;
  }
  if (!committed_ && registry_slot_ >= 0) {
    (void)::unlink(temp_path_.c_str());
    unregister_temporary(registry_slot_);
    registry_slot_ = -1;
  }
}

std::size_t remove_pending_temporaries() noexcept {
  std::size_t removed = 0;
  for (Slot& slot : g_slots) {
    int expected = kLive;
    if (slot.state.compare_exchange_strong(expected, kRemoving, std::memory_order_acq_rel)) {
      if (::unlink(slot.path) == 0) ++removed;
      slot.state.store(kRemoved, std::memory_order_release);
    }
  }
  return removed;
}

std::size_t pending_temporary_count() noexcept {
  std::size_t count = 0;
  for (const Slot& slot : g_slots)
    if (slot.state.load(std::memory_order_acquire) == kLive) ++count;
  return count;
}

}  // namespace dcs::io
