// A map's bytes written and made durable by a small pool of writers (parallel_writes.hpp).
#include "parallel_writes.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "dcs/error.hpp"
#include "fd_io.hpp"

namespace dcs::io {
namespace {

constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kMinPiece = std::uint64_t{1} << 20;
constexpr unsigned kMaxWriters = 64;
constexpr std::uint64_t kDirectBlock = std::uint64_t{1} << 20;  // a direct write's most bytes

}  // namespace

unsigned map_writers(unsigned requested) {
  if (requested > 0) return std::min(requested, kMaxWriters);
  if (const char* text = std::getenv("DCS_WRITERS"); text != nullptr && *text != '\0') {
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text, &end, 10);
    if (*end != '\0' || errno != 0 || value < 1 || value > static_cast<long>(kMaxWriters))
      throw UsageError(
          fmt::format("DCS_WRITERS='{}': the number of threads writing a map's file is a "
                      "whole number from 1 to {}",
                      text, kMaxWriters));
    return static_cast<unsigned>(value);
  }
  return std::clamp(resolve_threads(0) / 2, 1u, 4u);
}

ParallelWrites::ParallelWrites(unsigned writers) : pool_(map_writers(writers)) {}

void ParallelWrites::for_pieces(std::uint64_t begin, std::uint64_t end,
                                const std::function<void(std::uint64_t, std::uint64_t)>& body) {
  if (end <= begin) return;
  const std::uint64_t bytes = end - begin;
  const std::uint64_t pieces =
      std::clamp<std::uint64_t>((bytes + kMinPiece - 1) / kMinPiece, 1, pool_.size());
  // Cut k at begin + k * bytes / pieces, moved down to a page boundary of the file (so two
  // writers never share a page), kept within [begin, end].
  const auto cut = [&](std::uint64_t k) {
    if (k == 0) return begin;
    if (k == pieces) return end;
    return std::clamp((begin + k * (bytes / pieces)) / kPage * kPage, begin, end);
  };
  pool_.parallel_for(static_cast<std::size_t>(pieces), [&](std::size_t first, std::size_t last) {
    for (std::size_t k = first; k < last; ++k) {
      const std::uint64_t lo = cut(k), hi = cut(k + 1);
      if (hi > lo) body(lo, hi);
    }
  });
}

void ParallelWrites::sync_range(int fd, std::uint64_t begin, std::uint64_t end, unsigned flags,
                                const std::string& path) {
  if (end <= begin || !ranges_supported_.load(std::memory_order_relaxed)) return;
  while (::sync_file_range(fd, static_cast<off64_t>(begin), static_cast<off64_t>(end - begin),
                           flags) != 0) {
    if (errno == EINTR) continue;
    if (errno == EINVAL || errno == ENOSYS || errno == ESPIPE || errno == EOPNOTSUPP) {
      ranges_supported_.store(false, std::memory_order_relaxed);  // fdatasync() does it all
      return;
    }
    // Any other error (EIO, ENOSPC) is the file's: a writeback that failed must not be
    // forgotten, and the kernel reports it to one caller only.
    throw IoError(fmt::format("error writing {}: {}", path, errno_text()));
  }
}

void ParallelWrites::write(int fd, const void* data, std::size_t bytes, std::uint64_t offset,
                           const std::string& path, DirectWrites* direct) {
  const auto* base = static_cast<const char*>(data);
  if (direct != nullptr && direct->active()) {
    for_pieces(offset, offset + bytes, [&](std::uint64_t lo, std::uint64_t hi) {
      const DirectWrites::Buffer buffer = DirectWrites::buffer(std::min(hi - lo, kDirectBlock));
      // Blocks end on the file's page boundaries (pieces start on one but for the first), so
      // only the piece's ends are partial pages.
      for (std::uint64_t at = lo; at < hi;) {
        const std::uint64_t end =
            std::min(hi, std::max(at + 1, (at + kDirectBlock) / kPage * kPage));
        char* const into = buffer.get() + DirectWrites::lead(at);
        std::memcpy(into, base + (at - offset), static_cast<std::size_t>(end - at));
        direct->write(into, static_cast<std::size_t>(end - at), at);
        at = end;
      }
    });
    return;
  }
  for_pieces(offset, offset + bytes, [&](std::uint64_t lo, std::uint64_t hi) {
    write_at(fd, base + (lo - offset), static_cast<std::size_t>(hi - lo), lo, path);
    sync_range(fd, lo, hi, SYNC_FILE_RANGE_WRITE, path);
  });
}

void ParallelWrites::start_writeback(int fd, std::uint64_t begin, std::uint64_t end,
                                     const std::string& path) {
  for_pieces(begin, end, [&](std::uint64_t lo, std::uint64_t hi) {
    sync_range(fd, lo, hi, SYNC_FILE_RANGE_WRITE, path);
  });
}

void ParallelWrites::write_back(int fd, std::uint64_t begin, std::uint64_t end,
                                const std::string& path) {
  for_pieces(begin, end, [&](std::uint64_t lo, std::uint64_t hi) {
    sync_range(fd, lo, hi,
               SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER,
               path);
  });
}

}  // namespace dcs::io
