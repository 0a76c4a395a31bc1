// A map's values written past the page cache (direct_writes.hpp).
#include "direct_writes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "fd_io.hpp"

namespace dcs::io {

bool direct_writes_wanted() {
  const char* text = std::getenv("DCS_DIRECT_WRITES");
  return text != nullptr && std::strcmp(text, "1") == 0;
}

DirectWrites::DirectWrites(int fd, std::uint64_t begin, std::uint64_t end, const std::string& path)
    : fd_(fd), path_(path) {
  if (!direct_writes_wanted() || end <= begin) return;
  // Space allocated now makes the direct writes overwrites, which ext4 runs under a shared
  // lock (writes into holes take it alone). KEEP_SIZE: the file's size and bytes stay as they
  // are. A refusal (no space, no fallocate) only costs speed: the writes still allocate.
  (void)::fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(begin),
                    static_cast<off_t>(end - begin));
  // The same file, whatever its name has become since: reopened through the descriptor.
  const std::string self = fmt::format("/proc/self/fd/{}", fd);
  const int direct = ::open(self.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (direct < 0) return;  // no O_DIRECT here (or no /proc): the page cache, as before
  struct stat a {
  }, b{};
  if (::fstat(fd, &a) != 0 || ::fstat(direct, &b) != 0 || a.st_dev != b.st_dev ||
      a.st_ino != b.st_ino) {
    ::close(direct);
    return;
  }
  direct_fd_ = direct;
  active_.store(true, std::memory_order_relaxed);
}

DirectWrites::~DirectWrites() {
  if (direct_fd_ >= 0) ::close(direct_fd_);
}

void DirectWrites::Free::operator()(char* p) const noexcept { std::free(p); }

DirectWrites::Buffer DirectWrites::buffer(std::size_t bytes) {
  void* p = nullptr;
  if (::posix_memalign(&p, kPage, bytes + kPage) != 0) throw std::bad_alloc();
  return Buffer(static_cast<char*>(p));
}

void DirectWrites::write(const char* data, std::size_t bytes, std::uint64_t offset) {
  const std::uint64_t end = offset + bytes;
  const std::uint64_t lo = (offset + kPage - 1) / kPage * kPage;  // the aligned middle
  const std::uint64_t hi = end / kPage * kPage;
  if (!active() || hi <= lo) {
    write_at(fd_, data, bytes, offset, path_);
    return;
  }
  if (lo > offset) write_at(fd_, data, static_cast<std::size_t>(lo - offset), offset, path_);
  if (end > hi) write_at(fd_, data + (hi - offset), static_cast<std::size_t>(end - hi), hi, path_);
  const char* middle = data + (lo - offset);
  std::uint64_t at = lo;
  while (at < hi) {
    const ssize_t n = ::pwrite(direct_fd_, middle + (at - lo), static_cast<std::size_t>(hi - at),
                               static_cast<off_t>(at));
    if (n > 0 && static_cast<std::uint64_t>(n) % kPage == 0) {
      at += static_cast<std::uint64_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EINVAL)
      throw IoError(fmt::format("error writing {}: {}", path_, errno_text()));
    // EINVAL (alignment this file system does not take) or a short, unaligned write (the
    // device nearly full): the rest through the page cache, and, for EINVAL, from now on.
    if (n < 0) active_.store(false, std::memory_order_relaxed);
    if (n > 0) at += static_cast<std::uint64_t>(n);
    write_at(fd_, middle + (at - lo), static_cast<std::size_t>(hi - at), at, path_);
    return;
  }
}

}  // namespace dcs::io
