// The MD readers (dcs/io/topology.hpp, dcs/io/trajectory.hpp): PRMTOP parsing of small
// hand-made texts, formats by extension, and the trajectory reader's errors on real files of
// MDAnalysisTests (truncated, other atom counts, concatenated), which skip where the venv of
// scripts/setup-md.sh is absent. md_readers_check.py compares the values with MDAnalysis.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "../io/scratch_dir.hpp"
#include "dcs/error.hpp"
#include "dcs/io/topology.hpp"
#include "dcs/io/trajectory.hpp"

namespace {

using dcs::InputError;
using dcs::UsageError;
using dcs::io::TrajectoryFrame;
using dcs::io::TrajectoryReader;
namespace fs = std::filesystem;

// A two-residue PRMTOP: 5 atoms, charges in AMBER units (e × 18.2223).
constexpr const char* kGoodPrmtop =
    "%VERSION  VERSION_STAMP = V0001.000  DATE = 01/01/24  00:00:00\n"
    "%FLAG TITLE\n"
    "%FORMAT(20a4)\n"
    "tiny\n"
    "%FLAG POINTERS\n"
    "%FORMAT(10I8)\n"
    "       5       2       0       0       0       0       0       0       0       0\n"
    "       0       2       0       0       0       0       0       0       0       0\n"
    "       0       0       0       0       0       0       0       0       0       0\n"
    "       0\n"
    "%FLAG ATOM_NAME\n"
    "%COMMENT a comment line inside a section\n"
    "%FORMAT(20a4)\n"
    "N   H1  CA  O   OXT \n"
    "%FLAG CHARGE\n"
    "%FORMAT(5E16.8)\n"
    "  1.82223000E+01 -1.82223000E+01  9.11115000E+00 -9.11115000E+00  0.00000000E+00\n"
    "%FLAG RESIDUE_LABEL\n"
    "%FORMAT(20a4)\n"
    "ALA GLY \n"
    "%FLAG RESIDUE_POINTER\n"
    "%FORMAT(10I8)\n"
    "       1       4\n"
    "%FLAG MASS\n"
    "%FORMAT(5E16.8)\n"
    "  1.40100000E+01  1.00800000E+00  1.20100000E+01  1.60000000E+01  1.60000000E+01\n";

dcs::System parse(const std::string& text) {
  std::istringstream in(text);
  return dcs::io::parse_prmtop(in, "tiny.prmtop");
}

/// The InputError parse() throws for `text` (fails the test if none).
InputError parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& error) {
    return error;
  }
  ADD_FAILURE() << "no InputError";
  return InputError("", 0, "");
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(Prmtop, ReadsNamesChargesResidues) {
  const dcs::System s = parse(kGoodPrmtop);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s.source_format, "prmtop");
  EXPECT_EQ(s.atoms[0].name, "N");
  EXPECT_EQ(s.atoms[4].name, "OXT");
  EXPECT_NEAR(s.atoms[0].charge, 1.0, 1e-12);
  EXPECT_NEAR(s.atoms[1].charge, -1.0, 1e-12);
  EXPECT_NEAR(s.atoms[2].charge, 0.5, 1e-12);
  EXPECT_EQ(s.atoms[2].res_name, "ALA");
  EXPECT_EQ(s.atoms[2].res_seq, 1);
  EXPECT_EQ(s.atoms[3].res_name, "GLY");
  EXPECT_EQ(s.atoms[4].res_seq, 2);
  EXPECT_EQ(s.atoms[4].serial, 5);
  EXPECT_EQ(s.atoms[4].position, (dcs::Vec3{0, 0, 0}));
}

TEST(Prmtop, CrlfReadsAlike) {
  std::string crlf;
  for (char c : std::string(kGoodPrmtop))
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(parse(crlf).atoms[3].name, "O");
}

TEST(Prmtop, MissingChargeSection) {
  std::string text = kGoodPrmtop;
  text = replaced(text, "%FLAG CHARGE", "%FLAG CHARGES_OF_NOTHING");
  const InputError e = parse_error(text);
  EXPECT_EQ(e.line(), 0u);
  EXPECT_NE(std::string(e.what()).find("no %FLAG CHARGE section"), std::string::npos) << e.what();
}

TEST(Prmtop, CountMismatchNamesTheSectionLine) {
  const InputError e =
      parse_error(replaced(kGoodPrmtop, "N   H1  CA  O   OXT ", "N   H1  CA  O   "));
  EXPECT_EQ(e.line(), 11u) << e.what();  // the %FLAG ATOM_NAME line
  EXPECT_NE(std::string(e.what()).find("holds 4 values, but POINTERS gives 5"), std::string::npos)
      << e.what();
}

TEST(Prmtop, NonNumericCharge) {
  const InputError e = parse_error(replaced(kGoodPrmtop, " -1.82223000E+01", "    abcdefghijkl"));
  EXPECT_EQ(e.line(), 17u) << e.what();
  EXPECT_NE(std::string(e.what()).find("not a number"), std::string::npos) << e.what();
}

TEST(Prmtop, NanCharge) {
  const InputError e = parse_error(replaced(kGoodPrmtop, " -1.82223000E+01", "             nan"));
  EXPECT_EQ(e.line(), 17u);
  EXPECT_NE(std::string(e.what()).find("not a finite number"), std::string::npos) << e.what();
}

TEST(Prmtop, NonNumericPointer) {
  const InputError e = parse_error(replaced(kGoodPrmtop, "       5       2", "       x       2"));
  EXPECT_EQ(e.line(), 7u);
  EXPECT_NE(std::string(e.what()).find("not an integer"), std::string::npos) << e.what();
}

TEST(Prmtop, HugeChargeRefused) {
  const InputError e = parse_error(replaced(kGoodPrmtop, "  1.82223000E+01", "  1.00000000E+99"));
  EXPECT_EQ(e.line(), 17u);
}

TEST(Prmtop, ResiduePointersMustIncrease) {
  const InputError e =
      parse_error(replaced(kGoodPrmtop, "       1       4\n", "       1       1\n"));
  EXPECT_EQ(e.line(), 23u) << e.what();
}

TEST(Prmtop, LineLongerThanFormat) {
  const InputError e =
      parse_error(replaced(kGoodPrmtop, "ALA GLY \n", "ALA GLY " + std::string(80, 'X') + "\n"));
  EXPECT_EQ(e.line(), 20u) << e.what();
}

TEST(Prmtop, OldFormatAndEmptyRefused) {
  EXPECT_NE(std::string(parse_error("TITLE\n   5   2\n").what()).find("%FLAG"), std::string::npos);
  EXPECT_NE(std::string(parse_error("").what()).find("empty"), std::string::npos);
  EXPECT_NE(std::string(parse_error("%FLAG POINTERS\n%FORMAT(10Q8)\n").what()).find("format"),
            std::string::npos);
}

TEST(Topology, ByExtension) {
  dcs::test::ScratchDir dir;
  const std::string path = dir.file("tiny.PARM7");
  std::ofstream(path) << kGoodPrmtop;
  const dcs::System s = dcs::io::read_topology(path);
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ(s.source_format, "prmtop");
  EXPECT_EQ(s.source_path, path);
  EXPECT_EQ(s.source_sha256.size(), 64u);

  const std::string pqr = dir.file("one.pqr");
  std::ofstream(pqr) << "ATOM      1  N   ALA A   1       1.000   2.000   3.000  0.5000 1.5000\n";
  const dcs::System p = dcs::io::read_topology(pqr);
  EXPECT_EQ(p.source_format, "pqr");
  EXPECT_EQ(p.atoms[0].position, (dcs::Vec3{1, 2, 3}));
}

TEST(Topology, UnknownExtensionListsTheKnownOnes) {
  try {
    dcs::io::read_topology("system.gro");
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(dcs::io::topology_formats()), std::string::npos)
        << e.what();
  }
}

TEST(Topology, MissingFile) {
  EXPECT_THROW(dcs::io::read_topology("/nonexistent/x.psf"), InputError);
  EXPECT_THROW(dcs::io::read_topology("/nonexistent/x.prmtop"), InputError);
}

TEST(Topology, GarbagePsfAndTprRefused) {
  dcs::test::ScratchDir dir;
  for (const char* name : {"bad.psf", "bad.tpr"}) {
    std::ofstream(dir.file(name)) << "this is no topology\n";
    EXPECT_THROW(dcs::io::read_topology(dir.file(name)), InputError) << name;
  }
}

// --- Trajectories: real files of MDAnalysisTests ---------------------------------------

fs::path md_data(const std::string& name) { return fs::path(DCS_MD_DATA_DIR) / name; }

#define REQUIRE_MD_DATA()                                                        \
  do {                                                                           \
    if (std::string(DCS_MD_DATA_DIR).empty() || !fs::exists(md_data("adk.psf"))) \
      GTEST_SKIP() << "MDAnalysisTests not installed (scripts/setup-md.sh)";     \
  } while (0)

/// Skips a test whose file is missing where DCS_MD_DATA holds only part of MDAnalysisTests
/// (the GPU machine's carried copy: adk.psf, adk_dims.dcd, adk_oplsaa.tpr/.xtc).
#define REQUIRE_MD_FILE(name)                                             \
  do {                                                                    \
    if (!fs::exists(md_data(name)))                                       \
      GTEST_SKIP() << md_data(name).string()                              \
                   << " is not here (a partial copy of MDAnalysisTests)"; \
  } while (0)

constexpr std::size_t kAdkAtoms = 3341;
constexpr std::size_t kTprAtoms = 47681;

/// `source` cut to `bytes` in `dir`, named `name`.
std::string truncated_copy(const dcs::test::ScratchDir& dir, const fs::path& source,
                           const std::string& name, std::uintmax_t bytes) {
  const std::string path = dir.file(name);
  fs::copy_file(source, path);
  fs::resize_file(path, bytes);
  return path;
}

#if defined(__SANITIZE_ADDRESS__)
#define DCS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DCS_UNDER_ASAN 1
#endif
#endif

// Found by fuzzing read_topology: one length byte of cobrotoxin_2024_4.tpr's string table
// zeroed makes chemfiles ask for an 8e18-byte string. Refused as a damaged file (exit 3), not
// reported as "out of memory".
TEST(Topology, TprDeclaringAnImpossibleSizeIsADamagedFile) {
  REQUIRE_MD_DATA();
  REQUIRE_MD_FILE("cobrotoxin_2024_4.tpr");
#ifdef DCS_UNDER_ASAN
  GTEST_SKIP() << "AddressSanitizer reports the impossible allocation itself, before chemfiles' "
                  "new can throw";
#endif
  dcs::test::ScratchDir dir;
  const std::string path = dir.file("damaged.tpr");
  fs::copy_file(md_data("cobrotoxin_2024_4.tpr"), path);
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(13725);
  file.put('\0');
  file.close();
  try {
    dcs::io::read_topology(path);
    FAIL() << "a damaged TPR file was read";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("damaged"), std::string::npos) << error.what();
  }
}

TEST(Trajectory, ReadsDcdFrames) {
  REQUIRE_MD_DATA();
  const dcs::System adk = dcs::io::read_topology(md_data("adk.psf").string());
  ASSERT_EQ(adk.size(), kAdkAtoms);
  EXPECT_NEAR(adk.total_charge(), -4.0, 1e-4);
  TrajectoryReader reader({md_data("adk_dims.dcd").string()}, adk.size(), "adk.psf");
  EXPECT_EQ(reader.frames(), 98);
  TrajectoryFrame frame;
  reader.read(97, frame);
  EXPECT_EQ(frame.index, 97);
  EXPECT_EQ(frame.positions.size(), kAdkAtoms);
  reader.read(0, frame);
  EXPECT_EQ(frame.index, 0);
  EXPECT_NEAR(frame.time_ps, 1.0, 1e-6);  // MDAnalysis: 0.99999991 ps
}

TEST(Trajectory, ConcatenatedFilesContinueTheIndex) {
  REQUIRE_MD_DATA();
  REQUIRE_MD_FILE("adk_oplsaa.trr");
  const std::string xtc = md_data("adk_oplsaa.xtc").string();
  const std::string trr = md_data("adk_oplsaa.trr").string();
  TrajectoryReader one({xtc}, kTprAtoms, "adk_oplsaa.tpr");
  TrajectoryReader both({xtc, trr}, kTprAtoms, "adk_oplsaa.tpr");
  ASSERT_EQ(one.frames(), 10);
  ASSERT_EQ(both.frames(), 20);
  TrajectoryFrame a, b;
  one.read(3, a);
  both.read(13, b);  // frame 3 of the TRR: the same run, stored at full precision
  EXPECT_EQ(b.index, 13);
  EXPECT_EQ(a.time_ps, b.time_ps);
  for (std::size_t i = 0; i < kTprAtoms; i += 997)
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(a.positions[i][k], b.positions[i][k], 0.01);
  both.read(9, b);  // back into the first file
  EXPECT_EQ(b.index, 9);
}

TEST(Trajectory, AnotherReaderReadsTheSameFramesOnItsOwnThread) {
  REQUIRE_MD_DATA();
  const std::string xtc = md_data("adk_oplsaa.xtc").string();
  const TrajectoryReader first({xtc}, kTprAtoms, "adk_oplsaa.tpr");
  // Each thread its own reader, the frames interleaved; each frame as one reader alone reads it.
  std::vector<TrajectoryFrame> frames(static_cast<std::size_t>(first.frames()));
  std::vector<std::thread> threads;
  for (std::int64_t t = 0; t < 3; ++t)
    threads.emplace_back([&first, &frames, t] {
      TrajectoryReader mine = first.another();
      for (std::int64_t k = t; k < mine.frames(); k += 3)
        mine.read(k, frames[static_cast<std::size_t>(k)]);
    });
  for (std::thread& thread : threads) thread.join();
  TrajectoryReader alone({xtc}, kTprAtoms, "adk_oplsaa.tpr");
  TrajectoryFrame want;
  for (std::int64_t k = 0; k < alone.frames(); ++k) {
    alone.read(k, want);
    const TrajectoryFrame& got = frames[static_cast<std::size_t>(k)];
    EXPECT_EQ(got.index, k);
    EXPECT_EQ(got.positions, want.positions) << "frame " << k;
    EXPECT_EQ(got.cell, want.cell) << "frame " << k;
    EXPECT_EQ(got.time_ps, want.time_ps) << "frame " << k;
  }
}

TEST(Trajectory, IndexOutOfRangeIsUsageError) {
  REQUIRE_MD_DATA();
  TrajectoryReader reader({md_data("adk_dims.dcd").string()}, kAdkAtoms, "adk.psf");
  TrajectoryFrame frame;
  EXPECT_THROW(reader.read(98, frame), UsageError);
  EXPECT_THROW(reader.read(-1, frame), UsageError);
}

TEST(Trajectory, AtomCountMismatch) {
  REQUIRE_MD_DATA();
  REQUIRE_MD_FILE("Amber/bala.ncdf");
  REQUIRE_MD_FILE("adk_oplsaa.trr");
  for (const char* file : {"adk_dims.dcd", "adk_oplsaa.xtc", "adk_oplsaa.trr", "Amber/bala.ncdf"}) {
    try {
      TrajectoryReader reader({md_data(file).string()}, 1234, "top.psf");
      ADD_FAILURE() << file << ": no InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("atoms per frame, but the topology top.psf has 1234"),
                std::string::npos)
          << e.what();
      EXPECT_EQ(e.file(), md_data(file).string());
    }
  }
}

TEST(Trajectory, TruncatedDcdNamesFileAndFrame) {
  REQUIRE_MD_DATA();
  dcs::test::ScratchDir dir;
  const fs::path source = md_data("adk_dims.dcd");
  // Half of the last frame cut off: the header says 98 frames.
  const std::uintmax_t size = fs::file_size(source);
  const std::uintmax_t frame_bytes = 3 * (kAdkAtoms * 4 + 8) + 56;  // xyz records + unit cell
  const std::string path = truncated_copy(dir, source, "cut.dcd", size - frame_bytes / 2);
  try {
    TrajectoryReader reader({path}, kAdkAtoms, "adk.psf");
    TrajectoryFrame frame;
    for (std::int64_t i = 0; i < reader.frames(); ++i) reader.read(i, frame);
    FAIL() << "the truncated DCD read through (" << reader.frames() << " frames)";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find("frame 97"), std::string::npos) << e.what();
  }
}

TEST(Trajectory, TruncatedXtcNamesFileAndFrame) {
  REQUIRE_MD_DATA();
  dcs::test::ScratchDir dir;
  const fs::path source = md_data("adk_oplsaa.xtc");
  const std::string path = truncated_copy(dir, source, "cut.xtc", fs::file_size(source) - 1000);
  try {
    TrajectoryReader reader({path}, kTprAtoms, "adk_oplsaa.tpr");
    TrajectoryFrame frame;
    for (std::int64_t i = 0; i < reader.frames(); ++i) reader.read(i, frame);
    FAIL() << "the truncated XTC read through";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find("frame 9"), std::string::npos) << e.what();
  }
}

TEST(Trajectory, TruncatedNetcdfNamesFileAndFrame) {
  REQUIRE_MD_DATA();
  REQUIRE_MD_FILE("Amber/bala.ncdf");
  dcs::test::ScratchDir dir;
  const fs::path source = md_data("Amber/bala.ncdf");
  const std::string path = truncated_copy(dir, source, "cut.ncdf", fs::file_size(source) - 100);
  try {
    TrajectoryReader reader({path}, 2661, "bala.prmtop");
    FAIL() << "the truncated NetCDF file was opened";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_NE(std::string(e.what()).find("frame 29: truncated"), std::string::npos) << e.what();
  }
}

TEST(Trajectory, UnknownExtensionEmptyAndMissing) {
  dcs::test::ScratchDir dir;
  EXPECT_THROW(TrajectoryReader({"run.gro"}, 10, "t.psf"), UsageError);
  EXPECT_THROW(TrajectoryReader({}, 10, "t.psf"), UsageError);
  EXPECT_THROW(TrajectoryReader({dir.file("none.dcd")}, 10, "t.psf"), InputError);
  std::ofstream(dir.file("empty.xtc")).flush();
  EXPECT_THROW(TrajectoryReader({dir.file("empty.xtc")}, 10, "t.psf"), InputError);
  std::ofstream(dir.file("junk.nc")) << "CDF\x01 not really";
  EXPECT_THROW(TrajectoryReader({dir.file("junk.nc")}, 10, "t.psf"), InputError);
}

TEST(Trajectory, MoveKeepsTheReader) {
  REQUIRE_MD_DATA();
  REQUIRE_MD_FILE("Amber/bala.ncdf");
  TrajectoryReader reader({md_data("Amber/bala.ncdf").string()}, 2661, "bala.prmtop");
  TrajectoryReader moved = std::move(reader);
  EXPECT_EQ(moved.frames(), 30);
  TrajectoryFrame frame;
  moved.read(29, frame);
  EXPECT_EQ(frame.positions.size(), 2661u);
}

}  // namespace
