// AtomicFile: nothing under the final name until commit(), no temporary left behind on any
// failure, --force semantics, and the signal-handler cleanup.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "output_test_util.hpp"

namespace dcs::io {
namespace {

using test::error_text;
using test::FileSizeLimit;
using test::ScratchDir;

TEST(AtomicFile, FinalNameAppearsOnlyAtCommit) {
  ScratchDir dir;
  const std::string path = dir.file("map.dx");
  AtomicFile file(path, false);
  file.write("hello ", 6);
  file.write("world", 5);
  const std::vector<std::string> during = dir.entries();
  ASSERT_EQ(during.size(), 1u);
  const std::string prefix = temporary_prefix(path) + std::to_string(::getpid()) + ".";
  EXPECT_EQ(prefix.rfind(".map.dx.tmp.", 0), 0u) << prefix;
  EXPECT_EQ(during[0].rfind(prefix, 0), 0u) << during[0];
  EXPECT_EQ(during[0].size(), prefix.size() + 8) << during[0];
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

// --force never replaces a device, FIFO, socket or directory, and no output is ever
// written through (or in place of) a symbolic link; a linked directory is fine.
TEST(AtomicFile, NeverReplacesSymbolicLinksOrSpecialFiles) {
  ScratchDir dir;
  test::write_bytes(dir.file("target"), "keep");
  ASSERT_EQ(::symlink(dir.file("target").c_str(), dir.file("link.h5").c_str()), 0);
  ASSERT_EQ(::symlink(dir.file("nowhere").c_str(), dir.file("dangling.dx").c_str()), 0);
  ASSERT_EQ(::mkfifo(dir.file("fifo.dx").c_str(), 0600), 0);
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sock, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string sock_path = dir.file("sock.mrc");
  ASSERT_LT(sock_path.size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, sock_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  std::filesystem::create_directory(dir.file("adir"));
  for (const bool force : {false, true}) {
    const std::string link = error_text([&] { AtomicFile file(dir.file("link.h5"), force); });
    EXPECT_NE(link.find("it is a symbolic link (to " + dir.file("target") + ")"), std::string::npos)
        << link;
    EXPECT_NE(link.find("never writes through a symbolic link, even with --force"),
              std::string::npos)
        << link;
    EXPECT_NE(error_text([&] {
                check_output_path(dir.file("dangling.dx"), force);
              }).find("symbolic link"),
              std::string::npos);
    EXPECT_NE(error_text([&] {
                check_output_path(dir.file("fifo.dx"), force);
              }).find("it is a FIFO (named pipe), not a regular file"),
              std::string::npos);
    EXPECT_NE(error_text([&] {
                check_output_path(dir.file("sock.mrc"), force);
              }).find("it is a socket, not a regular file"),
              std::string::npos);
    EXPECT_NE(
        error_text([&] { check_output_path(dir.file("adir"), force); }).find("is a directory"),
        std::string::npos);
    EXPECT_NE(error_text([&] {
                check_output_path("/dev/null", force);
              }).find("it is a character device, not a regular file"),
              std::string::npos);
  }
  ::close(sock);
  EXPECT_EQ(test::read_bytes(dir.file("target")), "keep");
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("link.h5")));
  EXPECT_TRUE(std::filesystem::is_fifo(dir.file("fifo.dx")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("nowhere")));

  // A link that appears under the final name after the check is refused at commit, too.
  {
    AtomicFile file(dir.file("late.h5"), true);
    file.write("new", 3);
    ASSERT_EQ(::symlink(dir.file("target").c_str(), dir.file("late.h5").c_str()), 0);
    EXPECT_NE(error_text([&] { file.commit(); }).find("symbolic link"), std::string::npos);
  }
  EXPECT_TRUE(std::filesystem::is_symlink(dir.file("late.h5")));
  EXPECT_EQ(test::read_bytes(dir.file("target")), "keep");

  // The directory part may be a link: the user named it.
  std::filesystem::create_directory(dir.file("real"));
  ASSERT_EQ(::symlink(dir.file("real").c_str(), dir.file("linked").c_str()), 0);
  {
    AtomicFile file(dir.file("linked/map.dx"), false);
    file.write("ok", 2);
    file.commit();
  }
  EXPECT_EQ(test::read_bytes(dir.file("real/map.dx")), "ok");
  EXPECT_EQ(pending_temporary_count(), 0u);
}

// The temporaries of a run that was killed are removed by the next run that
// writes the same output, and nothing else is.
TEST(AtomicFile, StaleTemporariesOfDeadProcessesAreRemoved) {
  ScratchDir dir;
  const std::string path = dir.file("map.dx");
  const pid_t child = ::fork();  // a pid that is surely not running any more
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(child, nullptr, 0), child);
  const std::string dead = std::to_string(child), live = std::to_string(::getppid());
  const std::string mine = temporary_prefix(path);  // ".map.dx.tmp.<host>."
  const std::string stale = mine + dead + ".0123abcd";
  test::write_bytes(dir.file(stale), "left by kill -9");
  const std::vector<std::string> kept = {
      mine + live + ".0123abcd",                      // a running process's
      ".map.dx.tmp.otherhost." + dead + ".0123abcd",  // another node's (shared file system)
      temporary_prefix(dir.file("other.dx")) + dead + ".0123abcd",  // another output's
      mine + dead + ".0123abc",                                     // not the pattern: 7 hex digits
      mine + dead + ".0123abcg",                                    // not hex
      mine + "12x.0123abcd",                                        // not a pid
      "map.dx.tmp." + dead + ".0123abcd",                           // not hidden
  };
  for (const std::string& name : kept) test::write_bytes(dir.file(name), "keep");
  std::filesystem::create_directory(dir.file(mine + dead + ".ffffffff"));  // not a regular file

  EXPECT_EQ(remove_stale_temporaries(dir.file("unrelated.h5")), std::vector<std::string>{});
  {
    AtomicFile file(path, false);  // the next run writing map.dx
    file.write("new", 3);
    file.commit();
  }
  std::vector<std::string> expected = kept;
  expected.push_back(mine + dead + ".ffffffff");
  expected.push_back("map.dx");
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dir.entries(), expected);
  EXPECT_EQ(test::read_bytes(path), "new");
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
  EXPECT_NE(text.find("file size limit (ulimit -f) reached"), std::string::npos) << text;
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

// The outputs of one map are renamed together in a CommitGroup; until it is
// sealed, a failure (the destructor) or a second signal (remove_pending_temporaries()) removes
// those already renamed as well as the temporaries.
TEST(CommitGroup, UnsealedGroupRemovesWhatItCommitted) {
  ScratchDir dir;
  {
    AtomicFile a(dir.file("a.dx"), false), b(dir.file("b.mrc"), false);
    a.write("a", 1);
    b.write("b", 1);
    a.sync();  // durable, not yet visible
    EXPECT_EQ(dir.entries().size(), 2u);
    EXPECT_FALSE(std::filesystem::exists(dir.file("a.dx")));
    CommitGroup group;
    EXPECT_THROW(CommitGroup(), InternalError);  // one at a time: a second is a bug
    a.commit();
    b.commit();
    EXPECT_EQ(group.committed(), 2u);
    EXPECT_EQ(dir.entries(), (std::vector<std::string>{"a.dx", "b.mrc"}));
    EXPECT_EQ(pending_temporary_count(), 0u);
  }  // not sealed: rolled back
  EXPECT_TRUE(dir.entries().empty());
  {
    AtomicFile c(dir.file("c.dx"), false);
    CommitGroup group;
    c.commit();
    group.seal();
    EXPECT_EQ(group.committed(), 0u);
  }
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"c.dx"});
  EXPECT_EQ(remove_pending_temporaries(), 0u) << "a sealed output is final";
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"c.dx"});
}

TEST(CommitGroup, PendingTemporariesIncludeCommittedFilesWhileOpen) {
  ScratchDir dir;
  test::write_bytes(dir.file("map.h5.partial"), "finished store");
  AtomicFile dx(dir.file("map.dx"), false), mrc(dir.file("map.mrc"), false);
  PendingFile store(dir.file("map.h5.partial"));
  CommitGroup group;
  store.commit(dir.file("map.h5"), false);
  dx.commit();
  EXPECT_EQ(dir.entries().size(), 3u);  // map.h5, map.dx and mrc's temporary
  EXPECT_EQ(remove_pending_temporaries(), 3u);
  EXPECT_TRUE(dir.entries().empty());
  group.seal();
}

TEST(CommitGroup, PendingFileIsRemovedUnlessCommittedOrReleased) {
  ScratchDir dir;
  test::write_bytes(dir.file("x.partial"), "x");
  test::write_bytes(dir.file("y.partial"), "y");
  test::write_bytes(dir.file("z.partial"), "z");
  ASSERT_EQ(::symlink(dir.file("y.partial").c_str(), dir.file("link.h5").c_str()), 0);
  { PendingFile x(dir.file("x.partial")); }
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.partial")));
  {
    PendingFile y(dir.file("y.partial"));
    EXPECT_NE(error_text([&] { y.commit(dir.file("link.h5"), true); }).find("symbolic link"),
              std::string::npos);
    y.release();
  }
  EXPECT_EQ(test::read_bytes(dir.file("y.partial")), "y");
  {
    PendingFile z(dir.file("z.partial"));
    z.commit(dir.file("z.h5"), false);  // outside a group: final at once
  }
  EXPECT_EQ(test::read_bytes(dir.file("z.h5")), "z");
  EXPECT_EQ(pending_temporary_count(), 0u);
}

extern "C" void remove_and_exit_143(int /*signal*/) {
  remove_pending_temporaries();
  ::_exit(143);
}

TEST(CommitGroup, SecondSignalAfterTheFirstRenameLeavesNothing) {
  // A child renames the HDF5 file, then is "signalled again" before the DX file's rename.
  ScratchDir dir;
  test::write_bytes(dir.file("m.h5.partial"), "finished");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGTERM, remove_and_exit_143);
    AtomicFile dx(dir.file("m.dx"), false);
    dx.write("dx", 2);
    dx.sync();
    PendingFile store(dir.file("m.h5.partial"));
    CommitGroup group;
    store.commit(dir.file("m.h5"), false);
    ::raise(SIGTERM);
    ::_exit(1);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_TRUE(dir.entries().empty()) << dir.entries().front();
}

}  // namespace
}  // namespace dcs::io
