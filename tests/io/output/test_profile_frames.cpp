// The per-frame plane sums of --profile (dcs/io/profile_frames.hpp): records read back as
// written, a kept file only for the same key and shape, a missing or damaged record named on
// read and its plane forgotten in the frame statistics by verify(), a foreign file refused.
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../scratch_dir.hpp"
#include "dcs/error.hpp"
#include "dcs/io/frame_accumulators.hpp"
#include "dcs/io/profile_frames.hpp"

namespace dcs::io::profile_frames_test {
namespace {

constexpr std::int64_t kPlanes = 4;
constexpr std::size_t kFrames = 3;
constexpr std::size_t kWidth = 2;

/// Frame k's sums of plane z: distinct values.
std::vector<double> sums_of(std::size_t k, std::int64_t z_begin, std::int64_t count) {
  std::vector<double> out;
  for (std::int64_t z = z_begin; z < z_begin + count; ++z)
    for (std::size_t i = 0; i < kWidth; ++i)
      out.push_back(100.0 * static_cast<double>(k) + 10.0 * static_cast<double>(z) +
                    static_cast<double>(i) + 0.125);
  return out;
}

ProfileFramesFile open_file(const std::string& path, const std::string& key, bool resume) {
  return ProfileFramesFile::open(path, kPlanes, kFrames, kWidth, 0, key, resume, false);
}

TEST(ProfileFrames, RecordsReadBackAsWrittenAndKeptOnlyForTheSameKey) {
  test::ScratchDir dir;
  const std::string path = dir.file("m.h5.profile.partial");
  {
    ProfileFramesFile file = open_file(path, "a = 1\n", false);
    EXPECT_FALSE(file.reused());
    for (std::size_t k = 0; k < kFrames; ++k) {  // two blocks of planes, as two ranks write
      file.write(k, 0, 1, sums_of(k, 0, 1).data());
      file.write(k, 1, 3, sums_of(k, 1, 3).data());
    }
    file.sync();
  }
  ProfileFramesFile kept = open_file(path, "a = 1\n", true);
  EXPECT_TRUE(kept.reused());
  for (std::size_t k = 0; k < kFrames; ++k) EXPECT_EQ(kept.read(k), sums_of(k, 0, kPlanes));
  EXPECT_TRUE(ProfileFramesFile::open(path, kPlanes, kFrames, kWidth, 0, "a = 1\n", true, false,
                                      /*create=*/false)
                  .reused());
  // Another key or shape: made anew (its records gone).
  ProfileFramesFile other = open_file(path, "a = 2\n", true);
  EXPECT_FALSE(other.reused());
  EXPECT_THROW(other.read(0), IoError);
  EXPECT_THROW(ProfileFramesFile::open(path, kPlanes, kFrames, kWidth, 1, "a = 2\n", true, false,
                                       /*create=*/false),
               IoError);
}

TEST(ProfileFrames, AMissingOrDamagedRecordIsNamedAndItsPlaneComputedAgain) {
  test::ScratchDir dir;
  const std::string path = dir.file("m.h5.profile.partial");
  GridSpec grid;
  grid.counts = {2, 2, kPlanes};
  grid.spacing = {1.0, 1.0, 1.0};
  FrameAccumulatorFile stats =
      FrameAccumulatorFile::open(dir.file("m.h5.frames.partial"), grid, "k\n", false, false);
  PlaneAccumulator plane;
  const std::vector<float> values(4, 1.0f);
  for (std::int64_t z = 0; z < kPlanes; ++z) {  // every plane holds two frames
    plane.reset(4);
    plane.add(values.data());
    plane.add(values.data());
    stats.store(z, plane);
  }
  stats.sync();
  {
    ProfileFramesFile file = open_file(path, "k\n", false);
    for (std::size_t k = 0; k < 2; ++k) file.write(k, 0, kPlanes, sums_of(k, 0, kPlanes).data());
    file.write(1, 2, 1, sums_of(1, 2, 1).data());
    file.sync();
  }
  {  // one byte of frame 1, plane 2 flipped
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    const std::streamoff record = static_cast<std::streamoff>(kWidth * 8 + 8);
    f.seekp(4096 + (1 * kPlanes + 2) * record + 3);
    f.put('\x5a');
  }
  ProfileFramesFile kept = open_file(path, "k\n", true);
  ASSERT_TRUE(kept.reused());
  EXPECT_EQ(kept.read(0), sums_of(0, 0, kPlanes));
  try {
    kept.read(1);
    ADD_FAILURE() << "a damaged record was read";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("listed frame 1, plane 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kept.read(2), IoError);  // never written (no plane counts it yet)
  kept.verify(stats);
  for (std::int64_t z = 0; z < kPlanes; ++z)
    EXPECT_EQ(stats.frames_done(z), z == 2 ? 0 : 2) << "plane " << z;
}

TEST(ProfileFrames, AForeignFileIsRefusedUnlessReplaced) {
  test::ScratchDir dir;
  const std::string path = dir.file("m.h5.profile.partial");
  test::write_bytes(path, "not ours");
  EXPECT_THROW(open_file(path, "k\n", true), IoError);
  EXPECT_FALSE(
      ProfileFramesFile::open(path, kPlanes, kFrames, kWidth, 0, "k\n", true, /*replace=*/true)
          .reused());
}

}  // namespace
}  // namespace dcs::io::profile_frames_test
