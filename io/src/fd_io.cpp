// Whole reads and writes at an offset (fd_io.hpp).
#include "fd_io.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "dcs/io/file_descriptor.hpp"

namespace dcs::io {

std::string errno_text(int error) {
  return error == EFBIG ? "file size limit (ulimit -f) reached" : std::strerror(error);
}

std::string errno_text() { return errno_text(errno); }

void write_at(int fd, const void* data, std::size_t bytes, std::uint64_t offset,
              const std::string& path) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("error writing {}: {}", path, errno_text()));
    }
    p += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void read_at(int fd, void* data, std::size_t bytes, std::uint64_t offset, const std::string& path) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::pread(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw IoError(fmt::format("error reading {}: {}", path, n < 0 ? errno_text() : "short file"));
    p += n;
    bytes -= static_cast<std::size_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

void data_sync(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0 && errno != EINVAL)
    throw IoError(fmt::format("error writing {}: fdatasync: {}", path, errno_text()));
}

void FileDescriptor::reset() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace dcs::io
