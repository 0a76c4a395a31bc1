// Writes past the page cache (io/src/direct_writes.hpp): the file holds exactly the bytes
// written, whatever the offsets' place within a page and however many threads write; the
// allocation made beforehand keeps the file's size; only DCS_DIRECT_WRITES=1 turns them on; a
// write past the file size limit is an IoError naming the file and the reason.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "direct_writes.hpp"
#include "output_test_util.hpp"

namespace dcs::io {
namespace {

using test::error_text;
using test::FileSizeLimit;
using test::ScratchDir;

/// Sets DCS_DIRECT_WRITES for the scope (nullptr: unset).
struct DirectVariable : test::EnvVariable {
  explicit DirectVariable(const char* value) : EnvVariable("DCS_DIRECT_WRITES", value) {}
};

/// A file of `size` bytes of `fill` (the metadata before and after the chunks), open for
/// writing.
int make_file(const std::string& path, std::size_t size, char fill) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const std::string bytes(size, fill);
  if (fd >= 0 && ::pwrite(fd, bytes.data(), size, 0) != static_cast<ssize_t>(size)) return -1;
  return fd;
}

/// 40 chunks of 16 KiB after `first` bytes of metadata, written by 4 threads in interleaved
/// order (neighbours share a partial page), each from a buffer at lead(offset); then the last
/// chunk's first half again (a short write). Returns the file's bytes; `active` says whether
/// direct writes were on.
std::string write_chunks(const std::string& path, std::uint64_t first, bool& active) {
  constexpr std::size_t kChunk = 16 << 10, kChunks = 40;
  const std::size_t size = first + kChunks * kChunk + 777;
  const int fd = make_file(path, size, '\x5a');
  EXPECT_GE(fd, 0);
  std::string expected(size, '\x5a');
  {
    DirectWrites direct(fd, first, first + kChunks * kChunk, path);
    active = direct.active();
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        const DirectWrites::Buffer buffer = DirectWrites::buffer(kChunk);
        for (std::size_t c = t; c < kChunks; c += 4) {
          const std::uint64_t offset = first + c * kChunk;
          const std::string bytes = test::byte_pattern(kChunk, static_cast<std::uint32_t>(c + 1));
          char* at = buffer.get() + DirectWrites::lead(offset);
          std::memcpy(at, bytes.data(), bytes.size());
          direct.write(at, bytes.size(), offset);
        }
      });
    for (std::thread& thread : threads) thread.join();
    for (std::size_t c = 0; c < kChunks; ++c)
      expected.replace(first + c * kChunk, kChunk,
                       test::byte_pattern(kChunk, static_cast<std::uint32_t>(c + 1)));
    const DirectWrites::Buffer buffer = DirectWrites::buffer(kChunk);
    const std::uint64_t offset = first + (kChunks - 1) * kChunk;
    const std::string half = test::byte_pattern(kChunk / 2, 99);
    std::memcpy(buffer.get() + DirectWrites::lead(offset), half.data(), half.size());
    direct.write(buffer.get() + DirectWrites::lead(offset), half.size(), offset);
    expected.replace(offset, half.size(), half);
  }
  EXPECT_EQ(::fdatasync(fd), 0);
  ::close(fd);
  const std::string file = test::read_bytes(path);
  EXPECT_EQ(file.size(), size);
  EXPECT_TRUE(file == expected) << "first chunk at " << first << ": the bytes differ";
  return file;
}

// Chunks at offsets with every kind of place in a page (none, odd, 4-byte, a page exactly):
// the same file with direct writes on and off.
TEST(DirectWrites, TheFileHoldsTheBytesWrittenAtAnyOffset) {
  for (const std::uint64_t first : {0ull, 1031ull, 2048ull, 4096ull, 4095ull, 12289ull}) {
    ScratchDir dir;
    bool on = false, off = true;
    const std::string direct = [&] {
      const DirectVariable variable("1");
      return write_chunks(dir.file("direct.bin"), first, on);
    }();
    const std::string buffered = [&] {
      const DirectVariable variable(nullptr);  // the default: the page cache
      return write_chunks(dir.file("buffered.bin"), first, off);
    }();
    EXPECT_FALSE(off) << "direct writes on without DCS_DIRECT_WRITES=1";
    EXPECT_TRUE(direct == buffered) << "first chunk at " << first;
    if (first == 0 && !on)
      std::printf("note: this file system refuses O_DIRECT; only the page-cache path ran\n");
  }
}

// The allocation beforehand (past the end here) leaves the file's size as it was.
TEST(DirectWrites, AllocatingKeepsTheFileSize) {
  const DirectVariable variable("1");
  ScratchDir dir;
  const std::string path = dir.file("map.bin");
  const int fd = make_file(path, 10000, 'x');
  ASSERT_GE(fd, 0);
  { const DirectWrites direct(fd, 5000, 1 << 20, path); }
  struct stat info {};
  ASSERT_EQ(::fstat(fd, &info), 0);
  ::close(fd);
  EXPECT_EQ(info.st_size, 10000);
  EXPECT_EQ(test::read_bytes(path), std::string(10000, 'x'));
}

// Past the file size limit: an IoError with the file and the reason, direct or not.
TEST(DirectWrites, AWriteBeyondTheSizeLimitIsAnIoErrorNamingTheFile) {
  for (const char* setting : {"1", "0"}) {
    const DirectVariable variable(setting);
    ScratchDir dir;
    const std::string path = dir.file("map.bin");
    const int fd = make_file(path, 0, 0);
    ASSERT_GE(fd, 0);
    constexpr std::size_t kBytes = 1 << 20;
    DirectWrites direct(fd, 0, kBytes, path);
    const DirectWrites::Buffer buffer = DirectWrites::buffer(kBytes);
    std::memset(buffer.get(), 7, kBytes);
    std::string message;
    {
      const FileSizeLimit limit(kBytes / 2 + 100);
      message = error_text([&] { direct.write(buffer.get(), kBytes, 0); });
    }
    ::close(fd);
    EXPECT_NE(message.find("error writing " + path + ": file size limit (ulimit -f) reached"),
              std::string::npos)
        << "DCS_DIRECT_WRITES=" << setting << ": " << message;
  }
}

}  // namespace
}  // namespace dcs::io
