// The writers of a map's file (io/src/parallel_writes.hpp): the bytes do not depend on how many
// write them, a write error in one of them is an IoError naming the file and the reason, and
// DCS_WRITERS is read as documented.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/mrc.hpp"
#include "output_test_util.hpp"
#include "parallel_writes.hpp"

namespace dcs::io {
namespace {

using test::error_text;
using test::FileSizeLimit;
using test::ScratchDir;

/// Sets DCS_WRITERS for the scope (unset: nullptr).
struct WritersVariable : test::EnvVariable {
  explicit WritersVariable(const char* value) : EnvVariable("DCS_WRITERS", value) {}
};

// 5 MiB and a few bytes at an odd offset: five 1 MiB pieces over 1 to 7 writers, cut at page
// boundaries of the file, each written back; the file holds the bytes of one write.
TEST(ParallelWrites, PiecesGiveTheBytesOfOneWrite) {
  const std::string bytes = test::byte_pattern((5u << 20) + 1234);
  const std::uint64_t offset = 1031;
  for (const unsigned writers : {1u, 2u, 3u, 4u, 7u}) {
    ScratchDir dir;
    const std::string path = dir.file("map.bin");
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    ParallelWrites writes(writers);
    EXPECT_EQ(writes.writers(), writers);
    writes.write(fd, bytes.data(), bytes.size(), offset, path);
    writes.write_back(fd, 0, offset + bytes.size(), path);
    ::close(fd);
    const std::string file = test::read_bytes(path);
    ASSERT_EQ(file.size(), offset + bytes.size()) << writers << " writers";
    EXPECT_EQ(file.substr(0, offset), std::string(offset, '\0')) << writers << " writers";
    EXPECT_TRUE(file.substr(offset) == bytes) << writers << " writers: the bytes differ";
  }
}

// The file size limit in the middle: the writers past it fail, the others succeed; the caller
// gets one IoError with the file and the reason, not a crash or a silent short file.
TEST(ParallelWrites, AFailedWriterIsAnIoErrorNamingTheFile) {
  ScratchDir dir;
  const std::string path = dir.file("map.bin");
  const std::string bytes = test::byte_pattern(4u << 20);
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ParallelWrites writes(4);
  std::string message;
  {
    const FileSizeLimit limit(2u << 20);
    message = error_text([&] { writes.write(fd, bytes.data(), bytes.size(), 0, path); });
  }
  ::close(fd);
  EXPECT_NE(message.find("error writing " + path + ": file size limit (ulimit -f) reached"),
            std::string::npos)
      << message;
}

TEST(ParallelWrites, WritersComeFromTheRequestThenDcsWritersThenTheCores) {
  {
    const WritersVariable unset(nullptr);
    EXPECT_EQ(map_writers(5), 5u);
    EXPECT_GE(map_writers(), 1u);
    EXPECT_LE(map_writers(), 4u);
  }
  {
    const WritersVariable three("3");
    EXPECT_EQ(map_writers(), 3u);
    EXPECT_EQ(map_writers(2), 2u);
    EXPECT_EQ(ParallelWrites().writers(), 3u);
  }
  for (const char* bad : {"0", "65", "four", "2x", "-1"}) {
    const WritersVariable variable(bad);
    try {
      (void)map_writers();
      ADD_FAILURE() << "DCS_WRITERS=" << bad << " was accepted";
    } catch (const UsageError& error) {
      EXPECT_NE(std::string(error.what()).find(std::string("DCS_WRITERS='") + bad + "'"),
                std::string::npos)
          << error.what();
    }
  }
}

// An MRC map in slabs of 1.6 MB (two writer pieces each) and a last short one: the same bytes
// from one writer and from four.
TEST(MrcWriter, TheSameBytesFromAnyNumberOfWriters) {
  MapMetadata meta;
  meta.grid = test::asymmetric_grid(300, 170, 21);
  const std::vector<float> values = test::index_map(meta.grid);
  const std::size_t plane = meta.grid.plane_points();
  std::vector<std::string> files;
  for (const unsigned writers : {1u, 4u}) {
    ScratchDir dir;
    const std::string path = dir.file("map.mrc");
    MrcWriter writer(path, false, writers);
    writer.begin(meta);
    for (std::int64_t z = 0; z < meta.grid.nz(); z += 8) {
      const std::int64_t count = std::min<std::int64_t>(8, meta.grid.nz() - z);
      writer.write_slab(z, count, values.data() + static_cast<std::size_t>(z) * plane);
    }
    writer.finish(finalize(cpu_statistics(values.data(), values.size())));
    writer.commit();
    files.push_back(test::read_bytes(path));
  }
  ASSERT_EQ(files[0].size(), kMrcHeaderBytes + values.size() * sizeof(float));
  EXPECT_TRUE(files[0] == files[1]) << "1 and 4 writers wrote different MRC files";
  EXPECT_EQ(
      std::memcmp(files[0].data() + kMrcHeaderBytes, values.data(), values.size() * sizeof(float)),
      0);
}

}  // namespace
}  // namespace dcs::io
