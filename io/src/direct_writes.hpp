// A map's values written past the page cache (O_DIRECT), several threads at once (issue 36
// item 3). Buffered pwrite()s into one file serialise in the kernel: each takes the inode's
// lock to copy into the page cache, and the copies of 16 threads ran at one writer's speed
// while four `dd` into four files did not. Direct writes of page-aligned ranges into space
// allocated beforehand (fallocate) run under a shared lock, so the disk sees as many requests
// in flight as there are writing threads.
//
// A range [offset, offset + bytes) is written as its page-aligned middle through a second,
// O_DIRECT description of the same file, and its partial first and last pages through the
// ordinary descriptor (the page cache): a page is always written one way, so the two never
// overlap. Durability is unchanged: direct writes have reached the device when they return and
// the caller's fdatasync() still commits the metadata and the device's cache before anything
// is flagged done. Where the file system refuses O_DIRECT (tmpfs, some network file systems)
// or DCS_DIRECT_WRITES=0, every byte goes through the page cache as before. The bytes of the
// file are the same either way.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dcs::io {

class DirectWrites {
 public:
  static constexpr std::uint64_t kPage = 4096;

  /// For the file behind `fd` (named `path` in errors): allocates [begin, end) now (best
  /// effort; the bytes read as before) and opens the O_DIRECT description, unless refused.
  DirectWrites(int fd, std::uint64_t begin, std::uint64_t end, const std::string& path);
  ~DirectWrites();
  DirectWrites(const DirectWrites&) = delete;
  DirectWrites& operator=(const DirectWrites&) = delete;

  /// Whether direct writes are on (false once the file system refused one).
  bool active() const noexcept { return active_.load(std::memory_order_relaxed); }

  /// Where data bound for file offset `offset` starts in a buffer from buffer(): the same
  /// offset within a page, so that the range's page-aligned middle is aligned in memory too.
  static std::size_t lead(std::uint64_t offset) noexcept { return offset % kPage; }

  /// A page-aligned buffer of `bytes` plus a page (room for lead()).
  struct Free {
    void operator()(char* p) const noexcept;
  };
  using Buffer = std::unique_ptr<char[], Free>;
  static Buffer buffer(std::size_t bytes);

  /// Writes data[0, bytes) at `offset`; `data` must lie at lead(offset) in a buffer from
  /// buffer(). Safe from several threads on disjoint ranges. IoError naming the file.
  void write(const char* data, std::size_t bytes, std::uint64_t offset);

 private:
  int fd_;
  int direct_fd_ = -1;
  std::string path_;
  std::atomic<bool> active_{false};
};

/// DCS_DIRECT_WRITES: "1" turns direct writes on; unset or anything else leaves them off (on the
/// H200 machine's disk they were slower than the page cache:
/// bench/results/gpu-check_2026-12-02_h200.md).
bool direct_writes_wanted();

}  // namespace dcs::io
