// Write-then-rename output files: a map is either complete under its final name or absent.
//
// An AtomicFile writes to a temporary file in the target directory, named
// ".<final name>.tmp.<pid>.<random hex>", and renames it onto the final name only in commit(),
// after fsync. Until then the final name is untouched; if the writer throws, the destructor
// removes the temporary. Because the temporary lives in the same directory, the rename is atomic
// (same file system) and never copies data.
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
// A file that was already renamed onto its final name is complete and is not removed.
#pragma once

#include <cstddef>
#include <string>

namespace dcs::io {

/// Checks, before any expensive work, that a map can later be written to `path`: the directory
/// part must exist, be a directory and be writable, `path` must not be a directory, and it must
/// not exist unless `force`. Throws IoError naming the path ("<path> exists; use --force to
/// overwrite", "cannot write <path>: directory <dir> does not exist", ...).
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

  /// fsync()s the temporary, closes it and renames it onto the final name. Without `force` the
  /// rename refuses to replace a file that appeared meanwhile (RENAME_NOREPLACE). Then fsyncs the
  /// directory (best effort: some file systems refuse to). Throws IoError; on failure the
  /// temporary is removed and the final name is untouched. Calling it twice is an error.
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
  bool committed_ = false;
};

/// Unlinks every registered temporary that has not been committed or discarded. Uses only
/// atomics and unlink(2): safe to call from a signal handler. Returns how many unlink() calls
/// succeeded. The registry holds up to 64 temporaries of up to 4095 bytes each (absolute paths);
/// AtomicFile throws IoError when it cannot register.
std::size_t remove_pending_temporaries() noexcept;

/// Number of registered temporaries (for tests and diagnostics).
std::size_t pending_temporary_count() noexcept;

}  // namespace dcs::io
