// The memory query (dcs/sysinfo.hpp) against fake /proc and /sys/fs/cgroup trees: cgroup v2,
// v1, hybrid hosts, nested limits, containers without a cgroup namespace, and the memory check
// of grid.hpp refusing what a cgroup limit would OOM-kill.
#include <stdlib.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/grid.hpp"
#include "dcs/sysinfo.hpp"

namespace dcs::test {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kGiB = std::size_t{1} << 30;
constexpr std::size_t kMiB = std::size_t{1} << 20;

const char* kV2Mountinfo =
    "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
    "30 22 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 "
    "rw,nsdelegate\n";

/// A fake root directory: tests write proc/ and sys/ files below it.
class FakeRoot {
 public:
  FakeRoot() {
    std::string pattern = (fs::temp_directory_path() / "dcs-sysinfo-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
  }
  ~FakeRoot() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeRoot(const FakeRoot&) = delete;
  FakeRoot& operator=(const FakeRoot&) = delete;

  void write(const std::string& relative, const std::string& text) const {
    const fs::path path = root_ / relative;
    fs::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  void meminfo(std::size_t total, std::size_t available) const {
    write("proc/meminfo", "MemTotal:       " + std::to_string(total / 1024) +
                              " kB\nMemFree:        1000 kB\nMemAvailable:   " +
                              std::to_string(available / 1024) + " kB\nBuffers:  12 kB\n");
  }
  /// A cgroup v2 host (the unified hierarchy at /sys/fs/cgroup) with this process in `group`.
  void cgroup_v2(const std::string& group) const {
    write("proc/self/mountinfo", kV2Mountinfo);
    write("proc/self/cgroup", "0::" + group + "\n");
  }
  /// The cgroup v2 memory.max and memory.current of the group at `dir` (below the mount point).
  void cgroup_v2_memory(const std::string& dir, const std::string& max,
                        const std::string& current) const {
    write("sys/fs/cgroup/" + dir + "memory.max", max);
    write("sys/fs/cgroup/" + dir + "memory.current", current);
  }
  const fs::path& path() const { return root_; }

 private:
  fs::path root_;
};

/// No cgroup limit: available and limit are meminfo's.
void expect_meminfo_only(const MemoryInfo& info, std::size_t total, std::size_t available) {
  EXPECT_FALSE(info.cgroup_limit);
  EXPECT_EQ(info.available(), available);
  EXPECT_EQ(info.limit(), total);
}

TEST(MemoryInfo, MeminfoOnlyWithoutAnyCgroup) {
  FakeRoot root;
  root.meminfo(64 * kGiB, 40 * kGiB);
  const MemoryInfo info = read_memory_info(root.path());
  EXPECT_EQ(info.mem_total, 64 * kGiB);
  EXPECT_EQ(info.mem_available, 40 * kGiB);
  expect_meminfo_only(info, 64 * kGiB, 40 * kGiB);
}

TEST(MemoryInfo, CgroupV2LimitMinusUsageNotCountingInactiveCache) {
  FakeRoot root;
  root.meminfo(512 * kGiB, 500 * kGiB);
  root.cgroup_v2("/user.slice/job.scope");
  root.cgroup_v2_memory("user.slice/job.scope/", std::to_string(2 * kGiB) + "\n",
                        std::to_string(kGiB) + "\n");
  root.write("sys/fs/cgroup/user.slice/job.scope/memory.stat",
             "anon 123\ninactive_file " + std::to_string(256 * kMiB) + "\nactive_file 5\n");
  root.write("sys/fs/cgroup/user.slice/memory.max", "max\n");
  const MemoryInfo info = read_memory_info(root.path());
  EXPECT_EQ(info.cgroup_limit, 2 * kGiB);
  EXPECT_EQ(info.cgroup_available, 2 * kGiB - (kGiB - 256 * kMiB));
  EXPECT_EQ(info.limit(), 2 * kGiB);
  EXPECT_EQ(info.available(), kGiB + 256 * kMiB);
  EXPECT_NE(info.cgroup_dir.find("job.scope"), std::string::npos) << info.cgroup_dir;
}

TEST(MemoryInfo, CgroupV2AncestorWithTheTighterLimitWins) {
  FakeRoot root;
  root.meminfo(512 * kGiB, 500 * kGiB);
  root.cgroup_v2("/batch/job42/step0");
  root.cgroup_v2_memory("batch/job42/step0/", "max\n", "1000\n");
  root.cgroup_v2_memory("batch/job42/", std::to_string(8 * kGiB), std::to_string(7 * kGiB));
  root.cgroup_v2_memory("batch/", std::to_string(16 * kGiB),
                        std::to_string(15 * kGiB + 512 * kMiB));
  const MemoryInfo info = read_memory_info(root.path());
  EXPECT_EQ(info.cgroup_limit, 8 * kGiB);        // the job's limit
  EXPECT_EQ(info.cgroup_available, 512 * kMiB);  // but the parent has less left
  // The real machine's: two reads moments apart, so the free memory may have moved a little
  // between them (other processes run); the same reading, not the same bytes.
  const double live = static_cast<double>(available_memory_bytes());
  const double again = static_cast<double>(read_memory_info().available());
  EXPECT_NEAR(live, again, 0.02 * again + 64.0 * kMiB);
}

TEST(MemoryInfo, CgroupV2UnlimitedIsNoLimit) {
  FakeRoot root;
  root.meminfo(16 * kGiB, 10 * kGiB);
  root.cgroup_v2("/");
  root.cgroup_v2_memory("", "max\n", "123456\n");
  expect_meminfo_only(read_memory_info(root.path()), 16 * kGiB, 10 * kGiB);
}

TEST(MemoryInfo, ContainerWithoutCgroupNamespaceUsesTheMountPoint) {
  // /proc/self/cgroup shows the host's path, which does not exist inside the container's
  // /sys/fs/cgroup; the container's own limit is at the mount point.
  FakeRoot root;
  root.meminfo(256 * kGiB, 200 * kGiB);
  root.cgroup_v2("/system.slice/docker-abc.scope");
  root.cgroup_v2_memory("", std::to_string(2 * kGiB), std::to_string(100 * kMiB));
  const MemoryInfo info = read_memory_info(root.path());
  EXPECT_EQ(info.cgroup_limit, 2 * kGiB);
  EXPECT_EQ(info.available(), 2 * kGiB - 100 * kMiB);
}

TEST(MemoryInfo, CgroupV1HybridHostWithEscapedMountPoint) {
  // The layout of a cgroup v1 host (this is what the CI machine shows), with the memory
  // hierarchy mounted at a path containing a space (mountinfo writes it as \040).
  FakeRoot root;
  root.meminfo(24 * kGiB, 23 * kGiB);
  root.write("proc/self/mountinfo",
             "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
             "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
             "35 31 0:32 / /sys/fs/cgroup/mem\\040ory rw,relatime - cgroup cgroup rw,memory\n"
             "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n");
  root.write("proc/self/cgroup", "9:name=systemd:/\n4:memory:/jobs/a1\n1:cpu:/\n0::/\n");
  root.write("sys/fs/cgroup/mem ory/jobs/a1/memory.limit_in_bytes", std::to_string(3 * kGiB));
  root.write("sys/fs/cgroup/mem ory/jobs/a1/memory.usage_in_bytes", std::to_string(kGiB));
  root.write("sys/fs/cgroup/mem ory/jobs/a1/memory.stat",
             "cache 5\ninactive_file 7\ntotal_inactive_file " + std::to_string(512 * kMiB) + "\n");
  root.write("sys/fs/cgroup/mem ory/jobs/memory.limit_in_bytes", "9223372036854771712\n");
  root.write("sys/fs/cgroup/mem ory/memory.limit_in_bytes", "9223372036854771712\n");
  // The unified (v2) hierarchy of a hybrid host has no memory controller files.
  root.write("sys/fs/cgroup/unified/cgroup.controllers", "\n");
  const MemoryInfo info = read_memory_info(root.path());
  EXPECT_EQ(info.cgroup_limit, 3 * kGiB);
  EXPECT_EQ(info.cgroup_available, 3 * kGiB - (kGiB - 512 * kMiB));
  EXPECT_EQ(info.limit(), 3 * kGiB);
}

TEST(MemoryInfo, CgroupV1UnlimitedSentinelAndUsualPathsWithoutMountinfo) {
  FakeRoot root;
  root.meminfo(8 * kGiB, 6 * kGiB);
  root.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  root.write("sys/fs/cgroup/memory/memory.usage_in_bytes", "1000\n");
  EXPECT_FALSE(read_memory_info(root.path()).cgroup_limit);
  root.write("sys/fs/cgroup/memory/memory.limit_in_bytes", std::to_string(kGiB));
  const MemoryInfo info = read_memory_info(root.path());
  EXPECT_EQ(info.cgroup_limit, kGiB);
  EXPECT_EQ(info.available(), kGiB - 1000);
}

TEST(MemoryInfo, GarbageFilesMeanUnknownNotZero) {
  FakeRoot root;
  root.write("proc/meminfo", "MemTotal: lots\nMemAvailable:\n");
  root.write("proc/self/mountinfo", "garbage\n- - -\n");
  root.write("proc/self/cgroup", "nonsense\n");
  const MemoryInfo info = read_memory_info(root.path());
  EXPECT_FALSE(info.mem_total);
  EXPECT_FALSE(info.mem_available);
  EXPECT_FALSE(info.cgroup_limit);
  EXPECT_EQ(info.available(), 0u);
  EXPECT_NO_THROW(check_fits_in_memory(std::size_t{1} << 50, "the map", info));
}

TEST(MemoryInfo, ThisMachine) {
  const std::size_t available = available_memory_bytes();
  const std::size_t limit = memory_limit_bytes();
  EXPECT_GT(available, 0u);
  EXPECT_GT(limit, 0u);
  EXPECT_LE(available, limit);
}

TEST(MemoryCheck, RefusesWhatTheCgroupLimitWouldOomKill) {
  // 512 GiB machine, 2 GiB container: a 4 GiB map must be refused, naming the cgroup limit.
  MemoryInfo info;
  info.mem_total = 512 * kGiB;
  info.mem_available = 500 * kGiB;
  info.cgroup_limit = 2 * kGiB;
  info.cgroup_available = 2 * kGiB - 100 * kMiB;
  info.cgroup_dir = "/sys/fs/cgroup/job";
  EXPECT_NO_THROW(check_fits_in_memory(kGiB, "the map", info));
  try {
    check_fits_in_memory(4 * kGiB, "the 10^9-point map", info);
    FAIL() << "no exception";
  } catch (const UsageError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("the 10^9-point map needs 4.0 GiB"), std::string::npos) << message;
    EXPECT_NE(message.find("cgroup memory limit is 2.0 GiB"), std::string::npos) << message;
  }
  // Just above what is left (limit minus usage) is refused too.
  EXPECT_THROW(check_fits_in_memory(2 * kGiB - 50 * kMiB, "the map", info), UsageError);
}

}  // namespace
}  // namespace dcs::test
