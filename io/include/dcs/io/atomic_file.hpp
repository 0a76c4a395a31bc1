// Write-then-rename output files: a map is either complete under its final name or absent.
//
// An AtomicFile writes to a temporary file in the target directory, named
// ".<final name>.tmp.<host>.<pid>.<8 random hex digits>" (the final name cut to 180 bytes, the
// host name to 40, characters other than letters, digits, '-' and '_' as '_'), and renames it
// onto the final name only in commit(), after fsync. Until then the final name is untouched; if
// the writer throws, the destructor removes the temporary. Because the temporary lives in the same
// directory, the rename is atomic (same file system) and never copies data.
//
// Interrupts. A process-wide registry records every live temporary. The application's SIGINT /
// SIGTERM handler calls remove_pending_temporaries(), which only unlink()s the registered paths
// and is async-signal-safe, then re-raises or _exit()s:
//
//   extern "C" void on_signal(int sig) {
//     dcs::io::remove_pending_temporaries();
//     std::signal(sig, SIG_DFL);
//     std::raise(sig);                  // or _exit(130)
//   }
//
// A file that was already renamed onto its final name is complete and is not removed, unless it
// was committed in a CommitGroup that is still open: the outputs of one map are renamed together
// and stay removable until the group is sealed, so an interruption between the first rename and
// the last leaves none of them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dcs::io {

/// Checks, before any expensive work, that a map can later be written to `path`: the directory
/// part must exist, be a directory and be writable, and `path` must not exist unless `force`.
/// Throws IoError naming the path ("<path> exists; use --force to overwrite", "cannot write
/// <path>: directory <dir> does not exist", ...).
///
/// What is never replaced, even with `force`:
///  - anything but a regular file: a directory, a character or block device (`-o /dev/null
///    --force` as root would otherwise put a regular file in place of the device), a FIFO, a
///    socket;
///  - a symbolic link, whatever it points to: dcs never writes through a link in the last
///    component of an output path, and never replaces the link itself (rename() would), so a
///    link planted under an output's name cannot redirect a run into a file the user did not
///    name. The directory part is resolved as usual: a directory that is a link (or lies under
///    one) is fine, because the user named it.
/// AtomicFile::commit() repeats the check with `force` just before its rename.
void check_output_path(const std::string& path, bool force);

/// One output file in the making. Not copyable or movable: one owner keeps the life cycle of
/// the temporary obvious. One AtomicFile is used from one thread; several may live in different
/// threads at once (the registry is lock-free).
class AtomicFile {
 public:
  /// Runs check_output_path(final_path, force), then creates the temporary (mode 0666 less the
  /// umask, O_EXCL) and registers it for remove_pending_temporaries(). Throws IoError.
  AtomicFile(std::string final_path, bool force);
  /// Removes the temporary unless commit() succeeded. Never throws.
  ~AtomicFile();

  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  AtomicFile(AtomicFile&&) = delete;
  AtomicFile& operator=(AtomicFile&&) = delete;

  const std::string& final_path() const noexcept { return final_path_; }
  /// Absolute path of the temporary. Libraries that open files by name (HDF5) may open and
  /// truncate it; the file stays registered and is removed on failure like any other.
  const std::string& temp_path() const noexcept { return temp_path_; }
  /// Open descriptor of the temporary (O_WRONLY), or -1 after commit()/discard().
  int fd() const noexcept { return fd_; }

  /// Writes all `bytes` to the temporary, retrying short writes and EINTR. Blocks. Throws IoError
  /// with the final path and errno text (e.g. "No space left on device").
  void write(const void* data, std::size_t bytes);

  /// fsync()s and closes the temporary: the slow part of commit(), which then only renames (so
  /// that a run's outputs can be renamed close together). Idempotent. Throws IoError (and removes
  /// the temporary).
  void sync();

  /// sync()s the temporary unless done, and renames it onto the final name. Without `force` the
  /// rename refuses to replace a file that appeared meanwhile (RENAME_NOREPLACE); with it the
  /// final name is checked again (check_output_path()). Then fsyncs the directory (best effort:
  /// some file systems refuse to). Inside a CommitGroup the file stays this run's until the group
  /// is sealed. Throws IoError; on failure the temporary is removed and the final name is
  /// untouched. Calling it twice is an error.
  void commit();

  /// Closes and removes the temporary now. Idempotent; never throws.
  void discard() noexcept;

  bool committed() const noexcept { return committed_; }

 private:
  std::string final_path_;
  std::string temp_path_;
  bool force_ = false;
  int fd_ = -1;
  int registry_slot_ = -1;
  bool synced_ = false;
  bool committed_ = false;
};

/// A file another writer made and closed (the HDF5 store's finished <output>.partial), registered
/// like an AtomicFile's temporary: remove_pending_temporaries() removes it, and so does the
/// destructor unless commit() or release() ran. Not copyable or movable.
class PendingFile {
 public:
  /// Registers `path` (made absolute). Throws IoError when the registry is full.
  explicit PendingFile(std::string path);
  ~PendingFile();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  /// Renames the file onto `final_path` as AtomicFile::commit() does (the same checks, the same
  /// CommitGroup rules). Throws IoError; the file then stays pending (the destructor removes it).
  void commit(const std::string& final_path, bool force);
  /// Unregisters the file and leaves it where it is.
  void release() noexcept;

 private:
  std::string path_;
  int slot_ = -1;
};

/// The outputs of one map made visible together. While a group is open, each AtomicFile or
/// PendingFile committed stays registered under its final name: remove_pending_temporaries()
/// (the second SIGINT/SIGTERM's handler) removes those files too, and the group's destructor
/// removes them unless seal() ran first (a failure or an interruption between the first rename
/// and the last leaves no output). seal() makes them the run's finished outputs. One group at a
/// time per process (IoError otherwise); committing from several threads at once is fine.
///
///   io::CommitGroup group;
///   store_file.commit(h5, force);          // renamed, still this run's
///   for (auto& sink : sinks) sink->commit();
///   if (interrupt_requested()) throw InterruptedError(...);  // ~CommitGroup removes them all
///   group.seal();
class CommitGroup {
 public:
  CommitGroup();
  ~CommitGroup();
  CommitGroup(const CommitGroup&) = delete;
  CommitGroup& operator=(const CommitGroup&) = delete;

  /// Files committed in the group so far (still removable).
  std::size_t committed() const noexcept;
  /// The committed files are final; the group closes. Idempotent.
  void seal() noexcept;
  /// Removes every file committed in the group and closes it; returns how many were removed.
  std::size_t roll_back() noexcept;

 private:
  bool open_ = true;
};

/// ".<name>.tmp.<host>.": how this host's temporaries of `final_path` begin (the pid, a dot and 8
/// hex digits follow).
std::string temporary_prefix(const std::string& final_path);

/// Removes the temporaries of `final_path` that an earlier process on this host left behind
/// (SIGKILL, a crash, a lost node): entries of its directory named like this process's
/// temporaries of that path (".<name>.tmp.<host>.<pid>.<hex>", this host) whose pid is not a
/// running process (kill(pid, 0) fails with ESRCH), that are regular files. Nothing else is
/// touched: other outputs' temporaries, other hosts' (a shared file system), live processes'.
/// Returns the paths removed. AtomicFile's constructor calls it (and logs each at info).
std::vector<std::string> remove_stale_temporaries(const std::string& final_path);

/// Unlinks every registered temporary that has not been committed or discarded, and the files
/// committed in an open CommitGroup. Uses only atomics and unlink(2): safe to call from a signal
/// handler. Returns how many unlink() calls
/// succeeded. The registry holds up to 64 temporaries of up to 4095 bytes each (absolute paths);
/// AtomicFile throws IoError when it cannot register.
std::size_t remove_pending_temporaries() noexcept;

/// Number of registered temporaries (for tests and diagnostics).
std::size_t pending_temporary_count() noexcept;

}  // namespace dcs::io
