// The map store's partial file: one run's (PartialLock), never someone else's file, verified on
// resume, a checkpoint that survives a failed write, and the size it takes on disk.
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/io/map_store.hpp"
#include "dcs/stats.hpp"
#include "output_test_util.hpp"

namespace dcs::io {
namespace {

using test::ScratchDir;

using test::Sample;
using test::sample;

std::vector<StatsAccum> plane_stats_of(const Sample& s) {
  std::vector<StatsAccum> planes(static_cast<std::size_t>(s.grid.nz()));
  plane_statistics(s.values.data(), s.grid.plane_points(), planes.size(), 1, planes.data());
  return planes;
}

/// Writes planes [z0, z0 + count) of `s` into `store`.
void write_planes(MapStore& store, const Sample& s, std::int64_t z0, std::int64_t count) {
  const std::vector<StatsAccum> planes = plane_stats_of(s);
  store.write_slab(Slab{z0, count},
                   s.values.data() + static_cast<std::size_t>(z0) * s.grid.plane_points(),
                   planes.data() + z0);
}

MapStoreOptions depth(std::int64_t chunk_depth, int gzip_level = 0) {
  MapStoreOptions options;
  options.chunk_depth = chunk_depth;
  options.gzip_level = gzip_level;
  return options;
}

/// A new store on `partial` (2-plane chunks) holding the first `planes` planes of `s`.
MapStore started(const std::string& partial, const Sample& s, std::int64_t planes) {
  MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, depth(2));
  write_planes(store, s, 0, planes);
  return store;
}

std::string message_of(const std::function<void()>& step) {
  try {
    step();
  } catch (const Error& error) {
    return error.what();
  }
  return {};
}

/// What MapStore::create() on `partial` says when it refuses (empty when it does not).
std::string create_refusal(const std::string& partial, const Sample& s) {
  return message_of(
      [&] { (void)MapStore::create(partial, s.meta, s.system, ResumeKey{}, depth(2)); });
}

/// A child process that takes the lock on `path`, says so through a pipe and sleeps for
/// `seconds` (then exits, releasing it). Returns its pid once it holds the lock.
pid_t hold_in_child(const std::string& path, double seconds) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    try {
      PartialLock lock = PartialLock::acquire(path, false);
      (void)!::write(fds[1], "1", 1);
      std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  char byte = 0;
  (void)!::read(fds[0], &byte, 1);
  ::close(fds[0]);
  return pid;
}

TEST(PartialLock, MadeUnderATemporaryNameAndLinkedInPlace) {
  ScratchDir dir;
  const std::string path = dir.file("m.h5.partial");
  PartialLock lock = PartialLock::acquire(path, false);
  EXPECT_TRUE(lock.held());
  EXPECT_TRUE(lock.created());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.h5.partial"});  // no temporary left
  EXPECT_EQ(std::filesystem::file_size(path), 0u);
  EXPECT_EQ(lock.inspect().first, PartialKind::kEmpty);
}

TEST(PartialLock, AnotherProcessIsRefusedWithItsPidAndKillNineReleasesIt) {
  ScratchDir dir;
  const std::string path = dir.file("m.h5.partial");
  const pid_t child = hold_in_child(path, 60.0);
  ASSERT_GT(child, 0);
  const std::string message = message_of([&] { (void)PartialLock::acquire(path, false); });
  EXPECT_NE(
      message.find(path + " is in use by another dcs run (pid " + std::to_string(child) + ")"),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("--wait-lock"), std::string::npos) << message;
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const PartialLock lock = PartialLock::acquire(path, false);
  EXPECT_TRUE(lock.held());
  EXPECT_FALSE(lock.created());
}

TEST(PartialLock, WaitTakesItWhenTheOtherRunEnds) {
  ScratchDir dir;
  const std::string path = dir.file("m.h5.partial");
  const pid_t child = hold_in_child(path, 0.3);
  ASSERT_GT(child, 0);
  const PartialLock lock = PartialLock::acquire(path, true);
  EXPECT_TRUE(lock.held());
  int status = 0;
  ::waitpid(child, &status, 0);
}

TEST(PartialLock, TwoDescriptionsInOneProcessConflictToo) {
  ScratchDir dir;
  const std::string path = dir.file("m.h5.partial");
  PartialLock first = PartialLock::acquire(path, false);
  EXPECT_THROW((void)PartialLock::acquire(path, false), IoError);
  first.release();
  EXPECT_NO_THROW((void)PartialLock::acquire(path, false));
}

TEST(PartialLock, NoticesAPathReplacedBehindItsBack) {
  ScratchDir dir;
  const std::string path = dir.file("m.h5.partial");
  const PartialLock lock = PartialLock::acquire(path, false);
  test::write_bytes(dir.file("other"), "someone else's");
  std::filesystem::rename(dir.file("other"), path);
  EXPECT_FALSE(lock.same_file());
  const std::string message = message_of([&] { lock.check_same_file(); });
  EXPECT_NE(message.find(path + " was removed or replaced"), std::string::npos) << message;
}

TEST(PartialLock, ReportsPermissionErrorsAsSuch) {
  ScratchDir dir;
  const std::string path = dir.file("m.h5.partial");
  test::write_bytes(path, "");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  const bool root = ::geteuid() == 0;
  const std::string message = message_of([&] { (void)PartialLock::acquire(path, false); });
  if (root) GTEST_SKIP() << "root ignores file permissions (tests/hostile covers it as nobody)";
  EXPECT_NE(message.find("cannot open " + path + ": Permission denied"), std::string::npos)
      << message;
  EXPECT_EQ(message.find("damaged"), std::string::npos) << message;
}

/// Every stored chunk of /potential in file order: its offset in the map, its address and size
/// in the file, and its compressed bytes.
std::vector<std::string> raw_chunks(const std::string& path) {
  std::vector<std::string> chunks;
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t set = H5Dopen2(file, "potential", H5P_DEFAULT);
  const hid_t space = H5Dget_space(set);  // HDF5 1.10 takes no H5S_ALL here
  hsize_t count = 0;
  H5Dget_num_chunks(set, space, &count);
  for (hsize_t i = 0; i < count; ++i) {
    std::array<hsize_t, 3> offset{};
    unsigned mask = 0;
    haddr_t address = 0;
    hsize_t size = 0;
    H5Dget_chunk_info(set, space, i, offset.data(), &mask, &address, &size);
    std::string bytes(size, '\0');
    std::uint32_t filters = 0;
    H5Dread_chunk(set, H5P_DEFAULT, offset.data(), &filters, bytes.data());
    chunks.push_back(std::to_string(offset[0]) + "," + std::to_string(offset[1]) + "," +
                     std::to_string(offset[2]) + " @" + std::to_string(address) + " " +
                     std::to_string(size) + " " + bytes);
  }
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(file);
  return chunks;
}

// Compression runs on a pool while the calling thread writes finished chunks in order: the
// file holds the same chunks at the same addresses whatever the number of threads.
TEST(MapStore, CompressedChunksAreTheSameOnAnyNumberOfThreads) {
  const Sample s = sample(150, 130, 9);  // 3 x 3 chunks a row, 5 rows (the last one plane)
  std::vector<std::vector<std::string>> results;
  for (const unsigned threads : {1u, 3u, 7u, 16u}) {
    ScratchDir dir;
    MapStoreOptions options = depth(2, 4);
    options.threads = threads;
    MapStore store =
        MapStore::create(dir.file("m.h5.partial"), s.meta, s.system, ResumeKey{}, options);
    write_planes(store, s, 0, 4);
    write_planes(store, s, 4, 4);
    write_planes(store, s, 8, 1);
    store.finish(s.meta);
    store.commit(dir.file("m.h5"), false);
    results.push_back(raw_chunks(dir.file("m.h5")));
    EXPECT_EQ(results.back().size(), 45u);
    EXPECT_EQ(results.back(), results.front()) << threads << " threads";
  }
}

// Uncompressed slabs are written back by a pool of writers (MapStoreOptions::writers), a chunk
// row of 1.6 MB in two pieces: the same chunks at the same addresses for any number of them.
TEST(MapStore, UncompressedChunksAreTheSameForAnyNumberOfWriters) {
  const Sample s = sample(300, 260, 11);  // 5 x 5 chunks a row, 3 rows (the last one plane)
  std::vector<std::vector<std::string>> results;
  for (const unsigned writers : {1u, 2u, 4u}) {
    ScratchDir dir;
    MapStoreOptions options = depth(4);
    options.writers = writers;
    MapStore store =
        MapStore::create(dir.file("m.h5.partial"), s.meta, s.system, ResumeKey{}, options);
    write_planes(store, s, 0, 5);
    store.checkpoint();
    write_planes(store, s, 5, 6);
    store.finish(s.meta);
    store.commit(dir.file("m.h5"), false);
    results.push_back(raw_chunks(dir.file("m.h5")));
    EXPECT_EQ(results.back().size(), 75u);
    EXPECT_EQ(results.back(), results.front()) << writers << " writers";
  }
}

TEST(MapStore, ASecondStoreOnTheSamePartialIsRefusedAndTheFirstCommits) {
  ScratchDir dir;
  const Sample s = sample(5, 6, 7);
  const std::string partial = dir.file("m.h5.partial");
  MapStore store = started(partial, s, 3);
  const std::string message = create_refusal(partial, s);
  EXPECT_NE(message.find("in use by another dcs run"), std::string::npos) << message;
  EXPECT_THROW((void)MapStore::open_partial(partial, s.meta, ResumeKey{}), IoError);
  write_planes(store, s, 3, 4);
  store.finish(s.meta);
  store.commit(dir.file("m.h5"), false);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.h5"});
}

TEST(MapStore, AReplacedPartialIsNeitherReopenedNorRemoved) {
  ScratchDir dir;
  const Sample s = sample(5, 6, 7);
  const std::string partial = dir.file("m.h5.partial");
  MapStore store = started(partial, s, 7);
  test::write_bytes(dir.file("other"), "another run's file");
  std::filesystem::rename(dir.file("other"), partial);
  const std::string message = message_of([&] { store.finish(s.meta); });
  EXPECT_NE(message.find("was removed or replaced"), std::string::npos) << message;
  store.discard();
  EXPECT_EQ(test::read_bytes(partial), "another run's file");
}

TEST(MapStore, AFileThatIsNotDcsIsReplacedOnlyWithForce) {
  ScratchDir dir;
  const Sample s = sample(5, 6, 7);
  const std::string partial = dir.file("x.h5.partial");
  test::write_bytes(partial, "my notes, named oddly");
  std::string message = create_refusal(partial, s);
  EXPECT_NE(message.find(partial + " exists and is not a dcs partial file (not an HDF5 file)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("--force"), std::string::npos) << message;
  message = message_of([&] { (void)MapStore::open_partial(partial, s.meta, ResumeKey{}); });
  EXPECT_NE(message.find("is not a dcs partial file"), std::string::npos) << message;
  EXPECT_EQ(test::read_bytes(partial), "my notes, named oddly");
  {  // an HDF5 file of someone else's
    const hid_t file = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    H5Fclose(file);
  }
  message = create_refusal(partial, s);
  EXPECT_NE(message.find("(an HDF5 file that dcs did not write)"), std::string::npos) << message;
  MapStoreOptions forced = depth(2);
  forced.force = true;
  MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, forced);
  store.discard();
  EXPECT_TRUE(dir.entries().empty());
}

TEST(MapStore, APartialWithNothingToResumeIsUnusableNotDamaged) {
  ScratchDir dir;
  const Sample s = sample(5, 6, 7);
  const std::string partial = dir.file("m.h5.partial");
  test::write_bytes(partial, "");
  EXPECT_THROW((void)MapStore::open_partial(partial, s.meta, ResumeKey{}), UnusablePartial);
  {
    MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, depth(2));
    store.close_keeping();
  }
  std::filesystem::resize_file(partial, 48);  // what a file size limit left
  const std::string message =
      message_of([&] { (void)MapStore::open_partial(partial, s.meta, ResumeKey{}); });
  EXPECT_NE(message.find("holds no usable checkpoint (an HDF5 file that HDF5 cannot open"),
            std::string::npos)
      << message;
  // Unusable but dcs's: replaced without --force.
  MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, depth(2));
  store.discard();
}

/// Sets value `v` at (0, 0, z) of /potential through HDF5, as a user with h5py would.
void poke(const std::string& path, std::int64_t z, float v) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t set = H5Dopen2(file, "/potential", H5P_DEFAULT);
  const hid_t space = H5Dget_space(set);
  const hsize_t start[3] = {static_cast<hsize_t>(z), 1, 2};
  const hsize_t count[3] = {1, 1, 1};
  H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
  const hid_t memory = H5Screate_simple(3, count, nullptr);
  EXPECT_GE(H5Dwrite(set, H5T_NATIVE_FLOAT, memory, space, H5P_DEFAULT, &v), 0);
  H5Sclose(memory);
  H5Sclose(space);
  H5Dclose(set);
  H5Fclose(file);
}

void damaged_planes_are_computed_again(int gzip_level) {
  ScratchDir dir;
  const Sample s = sample(70, 6, 9);
  const std::string partial = dir.file("m.h5.partial");
  {
    MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, depth(2, gzip_level));
    write_planes(store, s, 0, 9);
    store.close_keeping();
  }
  poke(partial, 2, std::numeric_limits<float>::quiet_NaN());
  poke(partial, 5, 3.4e38f);
  poke(partial, 8, s.values[s.grid.index(2, 1, 8)] * 1.000001f);
  MapStore store = MapStore::open_partial(partial, s.meta, ResumeKey{});
  // Compressed chunks (2 planes deep) are rewritten whole: the whole chunk row is not done.
  const std::vector<std::uint8_t> expected =
      gzip_level == 0 ? std::vector<std::uint8_t>{1, 1, 0, 1, 1, 0, 1, 1, 0}
                      : std::vector<std::uint8_t>{1, 1, 0, 0, 0, 0, 1, 1, 0};
  EXPECT_EQ(store.plane_done(), expected);
  store.close_keeping();
  // The flags in the file say so too.
  store = MapStore::open_partial(partial, s.meta, ResumeKey{}, 0, /*verify=*/false);
  EXPECT_EQ(store.plane_done(), expected);
  if (gzip_level == 0) {
    for (const std::int64_t z : {2, 5, 8}) write_planes(store, s, z, 1);
  } else {
    write_planes(store, s, 2, 4);
    write_planes(store, s, 8, 1);
  }
  store.finish(s.meta);
  std::vector<float> back(s.values.size());
  store.read_planes(Slab{0, 9}, back.data());
  EXPECT_EQ(back, s.values);
  store.discard();
}

TEST(MapStore, DonePlanesThatDoNotMatchTheirStatisticsAreComputedAgain) {
  damaged_planes_are_computed_again(0);
}

TEST(MapStore, CompressedDonePlanesAreVerifiedToo) { damaged_planes_are_computed_again(3); }

TEST(MapStore, StatisticsSummedInAnotherOrderAreAccepted) {
  ScratchDir dir;
  const Sample s = sample(33, 17, 4);
  const std::string partial = dir.file("m.h5.partial");
  std::vector<StatsAccum> planes(4);
  for (std::size_t z = 0; z < 4; ++z) {  // as a GPU would: pairs, then the pairs' sums
    const float* v = s.values.data() + z * s.grid.plane_points();
    StatsAccum even, odd;
    for (std::size_t i = 0; i < s.grid.plane_points(); ++i) (i % 2 ? odd : even).add(v[i]);
    planes[z] = StatsAccum::combine(odd, even);
  }
  {
    MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, depth(2));
    store.write_slab(Slab{0, 4}, s.values.data(), planes.data());
    store.close_keeping();
  }
  MapStore store = MapStore::open_partial(partial, s.meta, ResumeKey{});
  EXPECT_EQ(store.planes_done(), 4);
  store.discard();
}

void failed_write_keeps_the_last_checkpoint(int gzip_level) {
  ScratchDir dir;
  const Sample s = sample(256, 64, 6);  // 4 chunks a plane
  const std::string partial = dir.file("m.h5.partial");
  {
    MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, depth(1, gzip_level));
    write_planes(store, s, 0, 2);
    store.checkpoint();
    write_planes(store, s, 2, 1);  // written, not yet flagged
    rlimit saved{};
    ::getrlimit(RLIMIT_FSIZE, &saved);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved;
    // Uncompressed: below the chunks (allocated at creation); compressed: at the file's end.
    // Compressed: a few chunks more fit, the rest and HDF5's metadata for them do not.
    limit.rlim_cur = gzip_level == 0 ? 4096 : std::filesystem::file_size(partial) + 5000;
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::string message = message_of([&] { write_planes(store, s, 3, 1); });
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, old_handler);
    EXPECT_NE(message.find("error writing " + partial + ": "), std::string::npos) << message;
    EXPECT_NE(message.find("file size limit (ulimit -f) reached"), std::string::npos) << message;
    store.close_keeping();
  }
  MapStore store = MapStore::open_partial(partial, s.meta, ResumeKey{});
  EXPECT_EQ(store.plane_done(), (std::vector<std::uint8_t>{1, 1, 0, 0, 0, 0}));
  store.discard();
}

TEST(MapStore, AFailedWriteKeepsTheLastCheckpointAndFlagsNothingMore) {
  failed_write_keeps_the_last_checkpoint(0);
}

TEST(MapStore, AFailedCompressedWriteKeepsTheLastCheckpoint) {
  failed_write_keeps_the_last_checkpoint(1);
}

TEST(MapStore, FileSizeIsBoundedByTheEstimate) {
  for (const auto& [n, atoms] : std::vector<std::pair<std::int64_t, std::size_t>>{
           {97, 10}, {129, 2000}, {150, 50000}, {200, 100}}) {
    ScratchDir dir;
    Sample s = sample(n, n - 3, n + 2);
    s.system.atoms.resize(atoms, s.system.atoms.front());
    const std::string partial = dir.file("m.h5.partial");
    MapStoreOptions options = depth(16);
    MapStore store = MapStore::create(partial, s.meta, s.system, ResumeKey{}, options);
    write_planes(store, s, 0, s.grid.nz());
    store.finish(s.meta);
    store.sync();
    const auto size = static_cast<double>(std::filesystem::file_size(partial));
    const auto estimate = static_cast<double>(store_file_bytes(s.grid, s.system, options));
    EXPECT_GE(estimate, size) << n << "^3";
    EXPECT_LE(estimate, size * 1.03) << n << "^3: " << size << " bytes, estimated " << estimate;
    store.discard();
  }
}

}  // namespace
}  // namespace dcs::io
