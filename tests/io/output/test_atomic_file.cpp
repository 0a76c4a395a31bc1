// AtomicFile: nothing under the final name until commit(), no temporary left behind on any
// failure, --force semantics, and the signal-handler cleanup.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "output_test_util.hpp"

namespace dcs::io {
namespace {

using test::ScratchDir;

std::string error_text(const std::function<void()>& action) {
  try {
    action();
  } catch (const IoError& error) {
    return error.what();
  }
  return "(no IoError)";
}

TEST(AtomicFile, FinalNameAppearsOnlyAtCommit) {
  ScratchDir dir;
  const std::string path = dir.file("map.dx");
  AtomicFile file(path, false);
  file.write("hello ", 6);
  file.write("world", 5);
  const std::vector<std::string> during = dir.entries();
  ASSERT_EQ(during.size(), 1u);
  const std::string prefix = ".map.dx.tmp." + std::to_string(::getpid()) + ".";
  EXPECT_EQ(during[0].rfind(prefix, 0), 0u) << during[0];
  EXPECT_EQ(file.temp_path(), dir.file(during[0]));
  EXPECT_EQ(pending_temporary_count(), 1u);

  file.commit();
  EXPECT_TRUE(file.committed());
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"map.dx"});
  EXPECT_EQ(test::read_bytes(path), "hello world");
  EXPECT_EQ(pending_temporary_count(), 0u);
  EXPECT_NE(error_text([&] { file.commit(); }), "(no IoError)");
}

TEST(AtomicFile, DestructorRemovesUncommittedTemporary) {
  ScratchDir dir;
  {
    AtomicFile file(dir.file("map.h5"), false);
    file.write("partial", 7);
    EXPECT_EQ(dir.entries().size(), 1u);
  }
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_EQ(pending_temporary_count(), 0u);
}

TEST(AtomicFile, FinalFileHasUsualPermissions) {
  ScratchDir dir;
  const mode_t old_mask = ::umask(022);
  {
    AtomicFile file(dir.file("perm.dx"), false);
    file.commit();
  }
  ::umask(old_mask);
  struct stat info {};
  ASSERT_EQ(::stat(dir.file("perm.dx").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0644u);
}

TEST(AtomicFile, RefusesExistingFileWithoutForce) {
  ScratchDir dir;
  const std::string path = dir.file("map.dx");
  test::write_bytes(path, "old");
  EXPECT_EQ(error_text([&] { AtomicFile file(path, false); }),
            path + " exists; use --force to overwrite");
  EXPECT_EQ(test::read_bytes(path), "old");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"map.dx"});

  AtomicFile file(path, true);
  file.write("new", 3);
  EXPECT_EQ(test::read_bytes(path), "old") << "replaced before commit";
  file.commit();
  EXPECT_EQ(test::read_bytes(path), "new");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"map.dx"});
}

TEST(AtomicFile, DoesNotClobberAFileThatAppearedMeanwhile) {
  ScratchDir dir;
  const std::string path = dir.file("race.dx");
  AtomicFile file(path, false);
  file.write("ours", 4);
  test::write_bytes(path, "theirs");
  EXPECT_EQ(error_text([&] { file.commit(); }), path + " exists; use --force to overwrite");
  EXPECT_EQ(test::read_bytes(path), "theirs");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"race.dx"}) << "temporary left behind";
}

TEST(AtomicFile, ChecksTheTargetDirectoryUpFront) {
  ScratchDir dir;
  const std::string missing = dir.file("absent/map.dx");
  EXPECT_EQ(error_text([&] { check_output_path(missing, false); }),
            "cannot write " + missing + ": directory " + dir.file("absent") + " does not exist");

  test::write_bytes(dir.file("plain"), "x");
  const std::string under_file = dir.file("plain/map.dx");
  EXPECT_EQ(error_text([&] { AtomicFile file(under_file, false); }),
            "cannot write " + under_file + ": " + dir.file("plain") + " is not a directory");

  std::filesystem::create_directory(dir.file("sub"));
  EXPECT_NE(error_text([&] { AtomicFile file(dir.file("sub"), true); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(
      error_text([&] { check_output_path(dir.file("sub") + "/", true); }).find("names a directory"),
      std::string::npos);
  EXPECT_NE(error_text([&] { check_output_path("", false); }).find("empty"), std::string::npos);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"plain", "sub"}));
}

TEST(AtomicFile, UnwritableDirectoryIsReported) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: directory permissions do not apply";
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("ro"));
  std::filesystem::permissions(
      dir.file("ro"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  const std::string text = error_text([&] { AtomicFile file(dir.file("ro/map.dx"), false); });
  EXPECT_NE(text.find("is not writable"), std::string::npos) << text;
  EXPECT_NE(text.find(dir.file("ro")), std::string::npos) << text;
}

/// Lowers RLIMIT_FSIZE for the scope (SIGXFSZ ignored, so write() fails with EFBIG instead of
/// killing the process): an honest "disk full" that works even as root.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    saved_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, saved_handler_);
  }
  FileSizeLimit(const FileSizeLimit&) = delete;
  FileSizeLimit& operator=(const FileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  void (*saved_handler_)(int) = SIG_DFL;
};

TEST(AtomicFile, WriteErrorIsReportedAndLeavesNothing) {
  ScratchDir dir;
  const std::string path = dir.file("big.dx");
  const std::string block(64 * 1024, 'x');
  std::string text;
  {
    const FileSizeLimit limit(16 * 1024);
    text = error_text([&] {
      AtomicFile file(path, false);
      file.write(block.data(), block.size());
      file.commit();
    });
  }
  EXPECT_NE(text.find("error writing " + path), std::string::npos) << text;
  EXPECT_NE(text.find("File too large"), std::string::npos) << text;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(AtomicFile, RemovePendingTemporariesUnlinksLiveOnes) {
  ScratchDir dir;
  AtomicFile first(dir.file("a.dx"), false);
  AtomicFile second(dir.file("b.dx"), false);
  {
    AtomicFile done(dir.file("c.dx"), false);
    done.commit();
  }
  EXPECT_EQ(pending_temporary_count(), 2u);
  EXPECT_EQ(remove_pending_temporaries(), 2u);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"c.dx"}) << "committed file must stay";
  EXPECT_EQ(pending_temporary_count(), 0u);
  EXPECT_EQ(remove_pending_temporaries(), 0u);
  // The owners can still be destroyed, and their slots are reusable afterwards.
  first.discard();
  second.discard();
  AtomicFile third(dir.file("d.dx"), false);
  EXPECT_EQ(pending_temporary_count(), 1u);
}

extern "C" void remove_and_exit(int /*signal*/) {
  remove_pending_temporaries();
  ::_exit(130);
}

TEST(AtomicFile, SigintHandlerLeavesNoFile) {
  // A child process writes, is interrupted by SIGINT, and its handler cleans up.
  ScratchDir dir;
  const std::string path = dir.file("interrupted.h5");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGINT, remove_and_exit);
    AtomicFile file(path, false);
    file.write("partial data", 12);
    ::raise(SIGINT);
    ::_exit(1);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace dcs::io
