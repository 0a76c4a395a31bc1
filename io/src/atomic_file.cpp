#include "dcs/io/atomic_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/log.hpp"
#include "fd_io.hpp"

namespace dcs::io {
namespace {

// --- Registry of live temporaries ------------------------------------------------------------
// Fixed storage and atomics only, so that a signal handler can walk it. A slot moves
// free -> filling (owner copies the path) -> live -> free (owner unregisters), or
// live -> removing -> removed (remove_pending_temporaries() unlinked it) -> free (owner).
// Inside a CommitGroup a commit moves it live -> committing (the final path is copied in first)
// -> committed (renamed; the group owns it now) -> free (seal) or -> removing -> free (roll back),
// and remove_pending_temporaries() removes committing and committed files too (-> removing ->
// removed-committed -> free when the group closes).

constexpr int kSlotCount = 64;
constexpr std::size_t kMaxPathBytes = 4096;

enum SlotState : int {
  kFree = 0,
  kFilling = 1,
  kLive = 2,
  kRemoving = 3,
  kRemoved = 4,
  kCommitting = 5,
  kCommitted = 6,
  kRemovedCommitted = 7  ///< a committing or committed file removed: the group frees the slot
};

struct Slot {
  std::atomic<int> state{kFree};
  char path[kMaxPathBytes];        ///< the temporary (absolute)
  char final_path[kMaxPathBytes];  ///< committing, committed: where it is renamed to (absolute)
};

Slot g_slots[kSlotCount];
std::atomic<bool> g_commit_group{false};  ///< a CommitGroup is open

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

/// "dir" part of a path, "." when there is none.
std::filesystem::path directory_of(const std::filesystem::path& path) {
  std::filesystem::path dir = path.parent_path();
  return dir.empty() ? std::filesystem::path(".") : dir;
}

/// "a character device", "a FIFO (named pipe)", ...: what a non-regular file is, for messages.
const char* file_kind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

/// Temporaries are named ".<name>.tmp.<host>.<pid>.<8 hex digits>": the host (sanitised, at
/// most 40 characters) and pid say whose they are, so a later run can tell a stale one (its
/// process is gone) from one being written now, also on a file system shared between nodes.
constexpr std::size_t kMaxStemBytes = 180;  // the whole name stays under NAME_MAX (255)
constexpr std::size_t kMaxHostBytes = 40;

const std::string& host_tag() {
  static const std::string tag = [] {
    char buffer[256] = {};
    std::string host = ::gethostname(buffer, sizeof buffer - 1) == 0 ? buffer : "";
    for (char& c : host)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    if (host.empty()) host = "unknown";
    if (host.size() > kMaxHostBytes) host.resize(kMaxHostBytes);
    return host;
  }();
  return tag;
}

std::string temporary_stem(const std::filesystem::path& final_path) {
  std::string stem = final_path.filename().string();
  if (stem.size() > kMaxStemBytes) stem.resize(kMaxStemBytes);
  return stem;
}

/// The pid of a temporary name "<prefix><pid>.<8 hex digits>", or -1 when `name` is not one.
long temporary_pid(const std::string& name, const std::string& prefix) {
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  const std::string rest = name.substr(prefix.size());
  const std::size_t dot = rest.find('.');
  if (dot == std::string::npos || dot == 0 || dot > 10 || rest.size() - dot - 1 != 8) return -1;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    const auto c = static_cast<unsigned char>(rest[i]);
    if (i < dot ? !std::isdigit(c) : i > dot && !std::isxdigit(c)) return -1;
  }
  return std::stol(rest.substr(0, dot));
}

std::string random_hex() {
  static thread_local std::mt19937_64 engine = [] {
    std::random_device device;
    std::seed_seq seed{device(), device(), device(), device()};
    return std::mt19937_64(seed);
  }();
  return fmt::format("{:08x}", static_cast<std::uint32_t>(engine()));
}

/// Renames the registered temporary `temp` (registry slot `slot`) onto `final_path`: with
/// `force` after check_output_path(final_path, true), else refusing to replace anything
/// (RENAME_NOREPLACE); then fsyncs the directory (best effort). Outside a CommitGroup the slot is
/// freed; inside one it stays registered under the final name (committed) and belongs to the
/// group. On failure the slot stays live (the caller removes the temporary) and IoError is thrown.
void rename_registered(int slot, const std::string& temp, const std::string& final_path,
                       bool force) {
  if (force) check_output_path(final_path, true);
  const bool in_group = g_commit_group.load(std::memory_order_acquire) && slot >= 0;
  if (in_group) {
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(final_path, ec).string();
    if (ec || absolute.size() >= kMaxPathBytes)
      throw IoError(fmt::format("cannot write {}: cannot resolve the path", final_path));
    std::memcpy(g_slots[slot].final_path, absolute.c_str(), absolute.size() + 1);
    int expected = kLive;
    if (!g_slots[slot].state.compare_exchange_strong(expected, kCommitting,
                                                     std::memory_order_acq_rel))
      throw InterruptedError(fmt::format("interrupted before {} was committed", final_path));
  }
  int rc = 0;
  if (force) {
    rc = ::rename(temp.c_str(), final_path.c_str());
  } else {
    rc = ::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, final_path.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP)) {
      // A file system without RENAME_NOREPLACE: check, then rename (a small race remains).
      struct stat info {};
      if (::lstat(final_path.c_str(), &info) == 0) {
        errno = EEXIST;
        rc = -1;
      } else {
        rc = ::rename(temp.c_str(), final_path.c_str());
      }
    }
  }
  if (rc != 0) {
    const int error = errno;
    if (in_group) {
      int expected = kCommitting;
      g_slots[slot].state.compare_exchange_strong(expected, kLive, std::memory_order_acq_rel);
    }
    if (error == EEXIST)
      throw IoError(fmt::format("{} exists; use --force to overwrite", final_path));
    throw IoError(
        fmt::format("cannot rename the temporary file onto {}: {}", final_path, errno_text(error)));
  }
  if (in_group) {
    int expected = kCommitting;  // fails only when a signal handler is removing it right now
    g_slots[slot].state.compare_exchange_strong(expected, kCommitted, std::memory_order_acq_rel);
  } else {
    unregister_temporary(slot);
  }
  // Make the rename itself durable. Best effort: the file is complete either way.
  const std::filesystem::path dir = std::filesystem::path(temp).parent_path();
  const int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    (void)::close(dir_fd);
  }
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
    if (S_ISLNK(info.st_mode)) {
      std::error_code ec;
      const std::filesystem::path link_target = std::filesystem::read_symlink(target, ec);
      throw IoError(fmt::format(
          "cannot write {}: it is a symbolic link{}; dcs never writes through a symbolic link, "
          "even with --force: name the file it points to, or remove the link",
          path, ec ? std::string() : fmt::format(" (to {})", link_target.string())));
    }
    if (S_ISDIR(info.st_mode))
      throw IoError(fmt::format("cannot write {}: it is a directory", path));
    if (!S_ISREG(info.st_mode))
      throw IoError(
          fmt::format("cannot write {}: it is {}, not a regular file; dcs replaces only "
                      "regular files, even with --force",
                      path, file_kind(info.st_mode)));
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
  for (const std::string& stale : remove_stale_temporaries(final_path_))
    log().info(
        "removed {}, a temporary file of {} left by an earlier dcs run that ended "
        "without cleaning up (killed, or its machine stopped)",
        stale, final_path_);

  const std::string prefix = temporary_prefix(target);
  for (int attempt = 0; attempt < 16; ++attempt) {
    const std::string name =
        fmt::format("{}{}.{}", prefix, static_cast<long>(::getpid()), random_hex());
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

void AtomicFile::sync() {
  if (synced_) return;
  if (committed_ || fd_ < 0)
    throw IoError(fmt::format("cannot sync {}: already committed or discarded", final_path_));
  try {
    if (::fsync(fd_) != 0)
      throw IoError(
          fmt::format("error writing {}: fsync failed: {}", final_path_, errno_text(errno)));
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0)
      throw IoError(
          fmt::format("error writing {}: close failed: {}", final_path_, errno_text(errno)));
  } catch (...) {
    discard();
    throw;
  }
  synced_ = true;
}

void AtomicFile::commit() {
  if (committed_ || (fd_ < 0 && !synced_))
    throw IoError(fmt::format("cannot commit {}: already committed or discarded", final_path_));
  sync();
  try {
    rename_registered(registry_slot_, temp_path_, final_path_, force_);
  } catch (...) {
    discard();
    throw;
  }
  committed_ = true;
  registry_slot_ = -1;  // freed, or handed to the open CommitGroup
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

std::string temporary_prefix(const std::string& final_path) {
  return "." + temporary_stem(final_path) + ".tmp." + host_tag() + ".";
}

std::vector<std::string> remove_stale_temporaries(const std::string& final_path) {
  std::vector<std::string> removed;
  const std::filesystem::path target(final_path);
  if (!target.has_filename()) return removed;
  const std::string prefix = temporary_prefix(target);
  const long self = static_cast<long>(::getpid());
  std::error_code ec;
  std::filesystem::directory_iterator entries(directory_of(target), ec);
  if (ec) return removed;  // check_output_path() reports what is wrong with the directory
  for (const std::filesystem::directory_entry& entry : entries) {
    const std::string name = entry.path().filename().string();
    const long pid = temporary_pid(name, prefix);
    if (pid <= 0 || pid == self) continue;
    // Alive (or another user's): not stale. ESRCH: no such process on this host.
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
    struct stat info {};
    if (::lstat(entry.path().c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    if (::unlink(entry.path().c_str()) == 0) removed.push_back(entry.path().string());
  }
  std::sort(removed.begin(), removed.end());
  return removed;
}

std::size_t remove_pending_temporaries() noexcept {
  std::size_t removed = 0;
  for (Slot& slot : g_slots) {
    int state = slot.state.load(std::memory_order_acquire);
    if (state != kLive && state != kCommitting && state != kCommitted) continue;
    if (!slot.state.compare_exchange_strong(state, kRemoving, std::memory_order_acq_rel)) continue;
    if (state == kLive) {
      if (::unlink(slot.path) == 0) ++removed;
    } else if (state == kCommitting) {
      // The rename may have happened (another thread): then the file is under its final name.
      if (::unlink(slot.path) == 0) ++removed;
      else if (errno == ENOENT && ::unlink(slot.final_path) == 0) ++removed;
    } else if (::unlink(slot.final_path) == 0) {  // committed in an open CommitGroup
      ++removed;
    }
    slot.state.store(state == kLive ? kRemoved : kRemovedCommitted, std::memory_order_release);
  }
  return removed;
}

PendingFile::PendingFile(std::string path) {
  std::error_code ec;
  path_ = std::filesystem::absolute(path, ec).string();
  if (ec) throw IoError(fmt::format("cannot resolve {}: {}", path, ec.message()));
  slot_ = register_temporary(path_);
  if (slot_ < 0)
    throw IoError(
        fmt::format("cannot register {}: too many pending output files, or the path "
                    "is longer than {} bytes",
                    path_, kMaxPathBytes - 1));
}

PendingFile::~PendingFile() {
  if (slot_ < 0) return;
  (void)::unlink(path_.c_str());
  unregister_temporary(slot_);
}

void PendingFile::commit(const std::string& final_path, bool force) {
  if (slot_ < 0) throw IoError(fmt::format("cannot commit {}: already committed", path_));
  rename_registered(slot_, path_, final_path, force);
  slot_ = -1;
}

void PendingFile::release() noexcept {
  unregister_temporary(slot_);
  slot_ = -1;
}

CommitGroup::CommitGroup() {
  bool expected = false;
  if (!g_commit_group.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
    throw InternalError("a commit group is open already (one map's outputs at a time)");
}

CommitGroup::~CommitGroup() {
  if (open_) (void)roll_back();
}

std::size_t CommitGroup::committed() const noexcept {
  std::size_t count = 0;
  for (const Slot& slot : g_slots)
    if (slot.state.load(std::memory_order_acquire) == kCommitted) ++count;
  return count;
}

void CommitGroup::seal() noexcept {
  if (!open_) return;
  for (Slot& slot : g_slots) {
    int expected = kCommitted;
    if (slot.state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel)) continue;
    expected = kRemovedCommitted;
    slot.state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel);
  }
  g_commit_group.store(false, std::memory_order_release);
  open_ = false;
}

std::size_t CommitGroup::roll_back() noexcept {
  if (!open_) return 0;
  std::size_t removed = 0;
  for (Slot& slot : g_slots) {
    int expected = kRemovedCommitted;  // removed by remove_pending_temporaries() already
    if (slot.state.compare_exchange_strong(expected, kFree, std::memory_order_acq_rel)) continue;
    expected = kCommitted;
    if (!slot.state.compare_exchange_strong(expected, kRemoving, std::memory_order_acq_rel))
      continue;
    if (::unlink(slot.final_path) == 0) ++removed;
    slot.state.store(kFree, std::memory_order_release);
  }
  g_commit_group.store(false, std::memory_order_release);
  open_ = false;
  return removed;
}

std::size_t pending_temporary_count() noexcept {
  std::size_t count = 0;
  for (const Slot& slot : g_slots)
    if (slot.state.load(std::memory_order_acquire) == kLive) ++count;
  return count;
}

}  // namespace dcs::io
