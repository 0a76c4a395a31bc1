// Inputs that are not what a reader expects: endless or one-line files, FIFOs (read once, hashed
// in the same pass, interruptible while waiting for a writer), PDB files named .pqr, and the
// messages a newcomer gets.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "dcs/interrupt.hpp"
#include "dcs/io/checksum.hpp"
#include "dcs/io/pqr.hpp"
#include "pqr_test_util.hpp"

namespace dcs::test {
namespace {

const std::string kAtom = "ATOM      1  N   ALA A   1       1.000   2.000   3.000  0.5000 1.8240\n";

std::string gzip_file_of(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string plain = dir.file(name);
  write_bytes(plain, text);
  const std::string command = "gzip -n -f '" + plain + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
  return plain + ".gz";
}

// --- line bound ----------------------------------------------------------------------------

TEST(LineBound, ALineLongerThanTheBoundIsRefusedAtItsLine) {
  ScratchDir dir;
  const std::string text = kAtom + "REMARK " + std::string(io::kMaxLineBytes, 'x') + "\n" + kAtom;
  const std::string path = dir.file("long.pqr");
  write_bytes(path, text);
  expect_input_error([&] { (void)io::read_atoms(path); }, path, 2,
                     {"line longer than 65536 bytes"});
  const std::string gz = gzip_file_of(dir, "long2.pqr", text);
  expect_input_error([&] { (void)io::read_atoms(gz); }, gz, 2, {"line longer than 65536 bytes"});
  const std::string xyzq = dir.file("long.xyzq");
  write_bytes(xyzq, "1 2 3 4\n" + std::string(io::kMaxLineBytes + 1, ' ') + "\n");
  expect_input_error([&] { (void)io::read_atoms(xyzq); }, xyzq, 2, {"line longer than"});
}

TEST(LineBound, ALineOfExactlyTheBoundIsRead) {
  ScratchDir dir;
  const std::string path = dir.file("edge.pqr");
  write_bytes(path, "REMARK " + std::string(io::kMaxLineBytes - 7, 'x') + "\r\n" + kAtom);
  EXPECT_EQ(io::read_atoms(path).size(), 1u);
}

TEST(LineBound, DevZeroNamedPqrFailsFast) {
  ScratchDir dir;
  const std::string path = dir.file("z.pqr");
  std::filesystem::create_symlink("/dev/zero", path);
  const auto start = std::chrono::steady_clock::now();
  expect_input_error([&] { (void)io::read_atoms(path); }, path, 1, {"line longer than"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(LineBound, UnknownRecordTypesAreCountedInBoundedMemory) {
  std::string text = kAtom;
  for (int i = 0; i < 200; ++i)
    text += "XY" + std::string(1, static_cast<char>('A' + i % 26)) +
            std::string(1, static_cast<char>('A' + i / 26)) + " 1\n";
  LogCapture log;
  EXPECT_EQ(pqr_from_text(text).size(), 1u);
  const std::string warnings = log.text();
  EXPECT_NE(warnings.find("ignored 168 record(s) of further unknown types"), std::string::npos)
      << warnings;
  EXPECT_EQ(std::count(warnings.begin(), warnings.end(), '\n'), 33);
}

// --- FIFOs and the same-pass checksum ------------------------------------------------------

TEST(SamePassChecksum, TheDigestIsThatOfTheStoredBytes) {
  ScratchDir dir;
  const std::string text = "REMARK x\n" + kAtom;
  const std::string path = dir.file("a.pqr");
  write_bytes(path, text);
  EXPECT_EQ(io::read_atoms(path).source_sha256, io::sha256_file(path));
  const std::string gz = gzip_file_of(dir, "b.pqr", text);
  EXPECT_EQ(io::read_atoms(gz).source_sha256, io::sha256_file(gz));
  EXPECT_EQ(io::read_models(gz).front().source_sha256, io::sha256_file(gz));
}

// In a child with a deadline: a reader that opened the FIFO again for its checksum would wait
// for a second writer forever.
TEST(SamePassChecksum, AFifoIsReadOnceAndHashed) {
  ScratchDir dir;
  const std::string path = dir.file("in.pqr");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  const std::string text = "REMARK fifo\n" + kAtom;
  EXPECT_EXIT(
      {
        ::alarm(5);  // SIGALRM's default action ends a child that hangs
        std::thread writer([&] {
          const int fd = ::open(path.c_str(), O_WRONLY);
          if (fd >= 0) {
            (void)!::write(fd, text.data(), text.size());
            ::close(fd);
          }
        });
        const System system = io::read_atoms(path);
        writer.join();
        std::_Exit(system.size() == 1 && system.source_sha256 == io::sha256_hex(text) ? 42 : 1);
      },
      ::testing::ExitedWithCode(42), "");
}

extern "C" void request_interrupt_on_signal(int) { request_interrupt(); }

// Runs in a child: request_interrupt() cannot be undone.
TEST(SamePassChecksum, OpeningAFifoWithoutWriterIsInterruptible) {
  ScratchDir dir;
  const std::string path = dir.file("lonely.pqr");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EXIT(
      {
        struct sigaction action {};
        action.sa_handler = request_interrupt_on_signal;  // no SA_RESTART, like apps/dcs
        sigemptyset(&action.sa_mask);
        sigaction(SIGALRM, &action, nullptr);
        ::alarm(1);
        try {
          (void)io::read_atoms(path);
        } catch (const InterruptedError&) {
          std::_Exit(42);
        } catch (...) {
          std::_Exit(1);
        }
        std::_Exit(2);
      },
      ::testing::ExitedWithCode(42), "");
}

// --- PDB files named .pqr -------------------------------------------------------------------

std::string pdb_line(int serial, double occupancy, double b_factor) {
  char line[100];
  std::snprintf(line, sizeof line, "ATOM  %5d  CA  ALA A%4d    %8.3f%8.3f%8.3f%6.2f%6.2f\n", serial,
                serial, 1.5 * serial, 2.0, -3.0, occupancy, b_factor);
  return line;
}

TEST(PdbCheck, APdbFileNamedPqrIsRefusedUnlessTheChargesAreMeant) {
  ScratchDir dir;
  std::string text = "HEADER    HYDROLASE\n";
  for (int i = 1; i <= 40; ++i) text += pdb_line(i, i == 7 ? 0.5 : 1.0, 10.0 + i);
  const std::string path = dir.file("1abc.pqr");
  write_bytes(path, text);
  expect_input_error([&] { (void)io::read_atoms(path); }, path, 0,
                     {"looks like a PDB file", "pdb2pqr", "--charges-as-given"});
  expect_input_error([&] { (void)io::read_models(path); }, path, 0, {"looks like a PDB file"});
  EXPECT_EQ(io::read_atoms(path, io::ReadOptions{.charges_as_given = true}).size(), 40u);
  EXPECT_EQ(
      io::read_models(path, io::ModelCheck::kStructure, io::ReadOptions{.charges_as_given = true})
          .size(),
      1u);
}

TEST(PdbCheck, ANmrPdbFileWithZeroBFactorsIsRefused) {
  ScratchDir dir;
  std::string text;
  for (int i = 1; i <= 12; ++i) text += pdb_line(i, 1.0, 0.0);
  const std::string path = dir.file("nmr.pqr");
  write_bytes(path, text);
  expect_input_error([&] { (void)io::read_atoms(path); }, path, 0, {"are all 0", "pdb2pqr"});
}

TEST(PdbCheck, HydrogensWithZeroBFactorsDoNotHideTheBFactorsOfTheOthers) {
  // An MD setup's PDB file: hydrogens added with B = 0, more than half of the atoms, so the
  // median of all "radii" is 0; the heavy atoms keep their crystal B-factors.
  ScratchDir dir;
  std::string text;
  for (int i = 1; i <= 40; ++i) text += pdb_line(i, 1.0, i % 5 == 0 ? 10.0 + i : 0.0);
  const std::string path = dir.file("md.pqr");
  write_bytes(path, text);
  expect_input_error([&] { (void)io::read_atoms(path); }, path, 0,
                     {"looks like a PDB file", "are 0 for 32 atoms", "median of 35.00"});
  // Point charges (radius 0) among ions with ionic radii: a plausible PQR file, read.
  std::string ions;
  for (int i = 1; i <= 40; ++i) ions += pdb_line(i, 1.0, i % 5 == 0 ? 1.87 : 0.0);
  const std::string cloud = dir.file("ions_and_points.pqr");
  write_bytes(cloud, ions);
  EXPECT_EQ(io::read_atoms(cloud).size(), 40u);
}

TEST(PdbCheck, RealPdbFilesOfApbsDataAreRefused) {
  ScratchDir dir;
  for (const char* name :
       {"examples/ion-protein/UHBD/small491.pdb", "examples/actin-dimer/UHBD/prot3.pdb"}) {
    const std::string source = std::string(DCS_APBS_DATA_DIR) + "/" + name;
    if (!std::filesystem::exists(source)) GTEST_SKIP() << source << " missing (apbs-data)";
    const std::string path = dir.file(std::filesystem::path(name).stem().string() + ".pqr");
    std::filesystem::copy_file(source, path);
    expect_input_error([&] { (void)io::read_atoms(path); }, path, 0, {"looks like a PDB file"});
  }
}

TEST(PdbCheck, SmallOrPlausibleUnitChargesAreAccepted) {
  ScratchDir dir;
  // APBS's point-charge and ion examples: one or two unit charges, radius 0 or 2.
  std::string two = pdb_line(1, 1.0, 0.0) + pdb_line(2, 1.0, 0.0);
  const std::string small = dir.file("pair.pqr");
  write_bytes(small, two);
  EXPECT_EQ(io::read_atoms(small).size(), 2u);
  // A cloud of 50 monovalent ions with ionic radii.
  std::string ions;
  for (int i = 1; i <= 50; ++i) ions += pdb_line(i, 1.0, 1.87);
  const std::string cloud = dir.file("ions.pqr");
  write_bytes(cloud, ions);
  EXPECT_EQ(io::read_atoms(cloud).size(), 50u);
  // The repository's own PQR file.
  EXPECT_EQ(io::read_atoms(std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr").size(), 1960u);
}

// --- newcomer messages -----------------------------------------------------------------------

TEST(NewcomerMessages, AMissingRadiusIsAMissingFieldNotANegativeRadius) {
  expect_input_error([] { pqr_from_text("ATOM 1 N ALA 1 1.0 2.0 3.0 -0.3\n"); }, "test.pqr", 1,
                     {"too few fields: found 8 after ATOM"});
  expect_input_error([] { pqr_from_text("ATOM 1 N ALA 1 1.0 2.0 3.0 -0.3 -1.5\n"); }, "test.pqr", 1,
                     {"negative radius"});
}

}  // namespace
}  // namespace dcs::test
