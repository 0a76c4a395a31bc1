// A map's bytes written and made durable by a small pool of writers (issue 36 item 3). One
// thread flushing a file's dirty pages (fdatasync, or the kernel's flusher) writes at one
// writer's speed: 2lzt x 1700^3 took 16.2 s where four `dd conv=fdatasync` of the same bytes
// took 11.6 s. Here each writer pwrite()s its piece of a slab's contiguous byte range and
// starts that piece's writeback itself (sync_file_range), so the disk is fed by several threads
// from the first slab on; a checkpoint then waits for the pieces on as many threads, and the
// caller's fdatasync() is left with the metadata and the device's cache.
//
// Durability is unchanged: sync_file_range() is only a way to do fdatasync()'s work in parallel;
// the caller still calls fdatasync() before anything is recorded as done. Where a file system
// does not support sync_file_range(), the writers only write and fdatasync() does the rest. An
// error a writer sees (a write, a writeback) is an IoError naming the file and its reason.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "dcs/io/map_writers.hpp"
#include "dcs/parallel.hpp"
#include "direct_writes.hpp"

namespace dcs::io {

class ParallelWrites {
 public:
  /// `writers` threads (0: map_writers()), the calling thread among them.
  explicit ParallelWrites(unsigned writers = 0);

  unsigned writers() const noexcept { return pool_.size(); }

  /// pwrite()s `bytes` at `offset` in up to writers() contiguous pieces at once, each piece's
  /// writeback started once it is written. Returns when every byte is in the page cache. With
  /// an active `direct` (same file), each piece goes through it instead, copied in page-aligned
  /// blocks of up to 1 MiB into an aligned buffer: on the device when this returns, but for
  /// the partial pages at both ends.
  void write(int fd, const void* data, std::size_t bytes, std::uint64_t offset,
             const std::string& path, DirectWrites* direct = nullptr);
  /// Starts the writeback of the bytes [begin, end) in up to writers() pieces at once.
  void start_writeback(int fd, std::uint64_t begin, std::uint64_t end, const std::string& path);
  /// Waits until the bytes [begin, end) are written back, up to writers() pieces at once. The
  /// caller's fdatasync() makes them durable (metadata, device cache).
  void write_back(int fd, std::uint64_t begin, std::uint64_t end, const std::string& path);

 private:
  /// Calls body(piece_begin, piece_end) for the pieces of [begin, end) on the pool's threads:
  /// page-aligned cuts, at least 1 MiB a piece.
  void for_pieces(std::uint64_t begin, std::uint64_t end,
                  const std::function<void(std::uint64_t, std::uint64_t)>& body);
  /// sync_file_range() of [begin, end) with `flags`; nothing once the file system refused it.
  void sync_range(int fd, std::uint64_t begin, std::uint64_t end, unsigned flags,
                  const std::string& path);

  ThreadPool pool_;
  std::atomic<bool> ranges_supported_{true};
};

}  // namespace dcs::io
