// Whole reads and writes at an offset of a file descriptor (the store's values and chunks),
// with errors that name the file and say when the file size limit was reached.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dcs::io {

/// strerror(error), or what EFBIG means here: RLIMIT_FSIZE (SIGXFSZ is ignored to see it).
std::string errno_text(int error);
/// errno_text(errno).
std::string errno_text();

/// pwrite() all of `bytes`, retrying short writes and EINTR; IoError naming `path`.
void write_at(int fd, const void* data, std::size_t bytes, std::uint64_t offset,
              const std::string& path);

/// pread() all of `bytes`, retrying EINTR; IoError naming `path` (also for a short file).
void read_at(int fd, void* data, std::size_t bytes, std::uint64_t offset, const std::string& path);

/// fdatasync(): what was written to `fd` survives a crash; IoError naming `path` (EINVAL, a
/// file that cannot be synced such as a pipe, passes).
void data_sync(int fd, const std::string& path);

}  // namespace dcs::io
