// read_atoms() on files: the hand-made files of tests/data/pqr, gzip input written here with
// zlib, file-level errors, and the SHA-256 recorded for provenance.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include "dcs/io/checksum.hpp"
#include "dcs/io/pqr.hpp"
#include "pqr_test_util.hpp"

namespace {

using dcs::test::data_file;
using dcs::test::expect_ids;
using dcs::test::expect_input_error;
using dcs::test::read_bytes;
using dcs::test::ScratchDir;
using dcs::test::write_bytes;

// `sha256sum tests/data/pqr/fixed_columns.pqr`, computed when the file was written.
constexpr const char* kFixedColumnsSha256 =
    "f74c02a4205b7f5622729338ba31b81e87fb779130e58f30ab3aef30f7594d7d";
// `sha256sum tests/data/pqr/sample.xyzq`.
constexpr const char* kSampleXyzqSha256 =
    "763f6891d09e4cb44d842d7113ba65153ec659a114e43452780b0230a1bb7f70";

std::string gzip_bytes(const std::string& text, const ScratchDir& dir) {
  const std::string path = dir.file("scratch.gz");
  gzFile out = gzopen(path.c_str(), "wb9");
  EXPECT_NE(out, nullptr);
  if (out == nullptr) return {};
  EXPECT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  EXPECT_EQ(gzclose(out), Z_OK);
  return read_bytes(path);
}

void expect_same_atoms(const dcs::System& a, const dcs::System& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a.atoms[i].position, b.atoms[i].position) << "atom " << i;
    EXPECT_EQ(a.atoms[i].charge, b.atoms[i].charge) << "atom " << i;
    EXPECT_EQ(a.atoms[i].radius, b.atoms[i].radius) << "atom " << i;
    EXPECT_EQ(a.atoms[i].serial, b.atoms[i].serial) << "atom " << i;
    EXPECT_EQ(a.atoms[i].name, b.atoms[i].name) << "atom " << i;
    EXPECT_EQ(a.atoms[i].res_name, b.atoms[i].res_name) << "atom " << i;
    EXPECT_EQ(a.atoms[i].chain, b.atoms[i].chain) << "atom " << i;
    EXPECT_EQ(a.atoms[i].res_seq, b.atoms[i].res_seq) << "atom " << i;
    EXPECT_EQ(a.atoms[i].hetatm, b.atoms[i].hetatm) << "atom " << i;
  }
}

// ----------------------------------------------------------------------------------------------
// The hand-made files.

TEST(ReadAtoms, FixedColumnsFileWithEveryFusedField) {
  const std::string path = data_file("fixed_columns.pqr");
  const dcs::System system = dcs::io::read_atoms(path);
  EXPECT_EQ(system.source_path, path);
  EXPECT_EQ(system.source_format, "pqr");
  EXPECT_EQ(system.source_sha256, kFixedColumnsSha256);

  struct Expected {
    long long serial;
    const char* name;
    const char* res_name;
    const char* chain;
    long long res_seq;
    bool hetatm;
    double x, y, z, q, r;
  };
  const Expected expected[] = {
      {1, "N", "GLY", "A", 1, false, 1.0, 2.0, 3.0, -0.3, 1.824},
      {2, "CA", "GLY", "A", 1, false, -45.751, -100.406, -123.456, 0.33, 1.908},
      {10000, "OH2", "TIP3", "W", 1000, true, 12.5, -7.25, 0.125, -0.834, 1.7683},
      {4, "HD21", "NASN", "B", 52, false, 0.0, 0.0, -0.001, 0.4, 0.6},
      {5, "HH11", "ARG", "B", -1, false, -123.5, 1000.25, 2000.5, 0.25, 12.0},
      {6, "CZ", "ARG", "B", -1, false, -1.5, 2.5, 12.345, -0.5, 10.5},
      {7, "NE", "ARG", "B", -1, false, 3.0, -4.0, 12.345, -10.0, 1.5},
      {100000, "N", "LYS", "C", 7, false, -5.0, 5.0, -5.0, 0.3, 1.824},
      {100001, "CA", "LYS", "C", 7, false, 6.0, -6.0, 6.0, 0.0166, 1.908},
  };
  ASSERT_EQ(system.size(), std::size(expected));
  for (std::size_t i = 0; i < system.size(); ++i) {
    SCOPED_TRACE("atom " + std::to_string(i));
    const dcs::Atom& atom = system.atoms[i];
    const Expected& e = expected[i];
    expect_ids(atom, e.serial, e.name, e.res_name, e.chain, e.res_seq);
    EXPECT_EQ(atom.hetatm, e.hetatm);
    EXPECT_DOUBLE_EQ(atom.position[0], e.x);
    EXPECT_DOUBLE_EQ(atom.position[1], e.y);
    EXPECT_DOUBLE_EQ(atom.position[2], e.z);
    EXPECT_DOUBLE_EQ(atom.charge, e.q);
    EXPECT_DOUBLE_EQ(atom.radius, e.r);
  }
  EXPECT_NEAR(system.total_charge(), -10.3374, 1e-12);
}

TEST(ReadAtoms, WhitespaceFile) {
  const dcs::System system = dcs::io::read_atoms(data_file("whitespace.pqr"));
  ASSERT_EQ(system.size(), 9u);
  EXPECT_EQ(system.atoms[1].chain, "A");  // the tab-separated line
  EXPECT_DOUBLE_EQ(system.atoms[1].position[2], 6.0);
  EXPECT_EQ(system.atoms[3].serial, 100000);
  EXPECT_DOUBLE_EQ(system.atoms[3].position[0], 10.0);   // 1e1
  EXPECT_DOUBLE_EQ(system.atoms[3].position[1], -0.25);  // -2.5E-1
  EXPECT_EQ(system.atoms[4].res_name, "TIP3");
  EXPECT_EQ(system.atoms[4].radius, 0.0);
  EXPECT_EQ(system.atoms[6].serial, 100001);  // HETATM100001
  EXPECT_TRUE(system.atoms[6].hetatm);
  EXPECT_DOUBLE_EQ(system.atoms[6].position[2], 1.0e-5);
  EXPECT_EQ(system.atoms[8].serial, 9);
  EXPECT_DOUBLE_EQ(system.total_charge(),
                   0.1 - 0.2 + 2.0 - 0.834 + 0.417 + 0.0 + 0.0 + 0.0 - 0.117);
}

TEST(ReadAtoms, CrlfFile) {
  const dcs::System system = dcs::io::read_atoms(data_file("crlf.pqr"));
  ASSERT_EQ(system.size(), 3u);
  EXPECT_DOUBLE_EQ(system.atoms[1].position[2], -3.0);
  EXPECT_DOUBLE_EQ(system.atoms[1].radius, 1.908);
  EXPECT_DOUBLE_EQ(system.atoms[2].radius, 1.908);
  EXPECT_NEAR(system.total_charge(), 0.2153, 1e-12);
}

TEST(ReadAtoms, MultiModelFileKeepsTheFirstModel) {
  const dcs::System system = dcs::io::read_atoms(data_file("multimodel.pqr"));
  ASSERT_EQ(system.size(), 2u);
  EXPECT_EQ(system.atoms[0].position[2], 0.0);
  EXPECT_EQ(system.atoms[1].position[2], 0.0);
  EXPECT_EQ(system.total_charge(), 0.0);
}

TEST(ReadAtoms, XyzqFile) {
  const std::string path = data_file("sample.xyzq");
  const dcs::System system = dcs::io::read_atoms(path);
  EXPECT_EQ(system.source_format, "xyzq");
  EXPECT_EQ(system.source_sha256, kSampleXyzqSha256);
  ASSERT_EQ(system.size(), 3u);
  EXPECT_EQ(system.atoms[0].position, (dcs::Vec3{0.0, 0.0, 0.0}));
  EXPECT_EQ(system.atoms[1].position, (dcs::Vec3{1.5, -2.5, 3.25}));
  EXPECT_EQ(system.atoms[2].position, (dcs::Vec3{-1e-3, 200.0, 0.5}));
  EXPECT_EQ(system.atoms[2].charge, 0.25);
  EXPECT_EQ(system.atoms[2].radius, 0.0);
  EXPECT_EQ(system.atoms[2].serial, 3);
  EXPECT_DOUBLE_EQ(system.total_charge(), 0.75);
}

TEST(ReadAtoms, MalformedFileNamesPathAndLine) {
  const std::string path = data_file("bad_charge.pqr");
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 4,
                     {"charge '0.59x3' is not a number"});
}

TEST(ReadAtoms, EmptyFile) {
  const std::string path = data_file("empty.pqr");
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"empty file"});
}

TEST(ReadAtoms, FileWithoutAtoms) {
  const std::string path = data_file("no_atoms.pqr");
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0,
                     {"no ATOM or HETATM records"});
}

TEST(ReadAtoms, MissingFile) {
  const std::string path = data_file("does_not_exist.pqr");
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"no such file"});
}

TEST(ReadAtoms, DirectoryInsteadOfFile) {
  ScratchDir dir;
  const std::string path = dir.file("folder.pqr");
  std::filesystem::create_directory(path);
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"is a directory"});
}

TEST(ReadAtoms, UnreadableFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: file permissions do not apply";
  ScratchDir dir;
  const std::string path = dir.file("secret.pqr");
  write_bytes(path, "ATOM 1 N ALA 1 1 2 3 0.5 1.5\n");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"cannot open"});
}

// Each name, as an existing file holding one atom, is refused at line 0 for `parts`.
void expect_name_refused(std::initializer_list<std::string> names,
                         std::initializer_list<std::string> parts) {
  ScratchDir dir;
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const std::string path = dir.file(name);
    write_bytes(path, "ATOM 1 N ALA 1 1 2 3 1.00 20.00\n");
    expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, parts);
  }
}

TEST(ReadAtoms, UnknownExtensionListsTheSupportedOnes) {
  expect_name_refused({"mol.txt", "mol", "mol.gz", "mol.pqr.bz2", ".pqr"},
                      {"unknown atom file type", ".pqr, .pqr.gz, .xyzq, .xyzq.gz"});
}

TEST(ReadAtoms, AStructureFileIsToldToGoThroughPdb2pqr) {
  expect_name_refused({"mol.pdb", "1ABC.ENT", "mol.cif", "mol.mmcif", "pdb1abc.ent.gz"},
                      {"no atomic charges and radii", "pdb2pqr --ff=AMBER in.pdb out.pqr",
                       ".pqr, .pqr.gz, .xyzq, .xyzq.gz"});
}

TEST(ReadAtoms, AMissingFileIsReportedBeforeItsExtension) {
  for (const std::string name : {"no-such-dir/mol.pdb", "no-such-dir/mol.txt", "no-such.pqr"}) {
    SCOPED_TRACE(name);
    expect_input_error([&] { (void)dcs::io::read_atoms(name); }, name, 0, {"no such file"});
  }
}

TEST(ReadAtoms, ExtensionsAreCaseInsensitive) {
  ScratchDir dir;
  const std::string path = dir.file("MOL.PQR");
  write_bytes(path, "ATOM 1 N ALA 1 1 2 3 0.5 1.5\n");
  EXPECT_EQ(dcs::io::read_atoms(path).size(), 1u);
}

TEST(ReadAtoms, BundledDemoMolecule) {
  // data/2lzt.pqr: lysozyme from apbs-data (see data/README.md, which records this digest).
  const dcs::System system = dcs::io::read_atoms(std::string(DCS_SOURCE_DIR) + "/data/2lzt.pqr");
  EXPECT_EQ(system.size(), 1960u);
  EXPECT_NEAR(system.total_charge(), 8.0, 1e-9);
  EXPECT_EQ(system.source_sha256,
            "151c1d46b147f6b1a62a90aad4d128e66958df628cf53dcc9c92acd379a70c10");
}

// ----------------------------------------------------------------------------------------------
// gzip.

TEST(ReadAtomsGzip, PqrGzGivesTheSameAtomsAsThePlainFile) {
  ScratchDir dir;
  const std::string plain_path = data_file("fixed_columns.pqr");
  const std::string gz_path = dir.file("fixed_columns.pqr.gz");
  const std::string compressed = gzip_bytes(read_bytes(plain_path), dir);
  write_bytes(gz_path, compressed);

  const dcs::System plain = dcs::io::read_atoms(plain_path);
  const dcs::System gz = dcs::io::read_atoms(gz_path);
  expect_same_atoms(plain, gz);
  EXPECT_EQ(gz.source_format, "pqr");
  EXPECT_EQ(gz.source_path, gz_path);
  // The checksum is of the bytes as stored, i.e. of the compressed file.
  EXPECT_EQ(gz.source_sha256, dcs::io::sha256_hex(compressed));
  EXPECT_NE(gz.source_sha256, plain.source_sha256);
}

TEST(ReadAtomsGzip, LargeFileStreamsAcrossBlocks) {
  // More than one 128 KiB zlib block of text, with lines split across block boundaries.
  std::string text = "REMARK   1 generated\n";
  const int count = 20000;
  for (int i = 0; i < count; ++i) {
    text += "ATOM " + std::to_string(i + 1) + " C LIG " + std::to_string(i / 10 + 1) + " " +
            std::to_string(i) + ".5 -" + std::to_string(i) + ".25 0.125 " +
            (i % 2 == 0 ? "0.5" : "-0.5") + " 1.7\n";
  }
  ScratchDir dir;
  const std::string path = dir.file("big.pqr.gz");
  write_bytes(path, gzip_bytes(text, dir));
  const dcs::System system = dcs::io::read_atoms(path);
  ASSERT_EQ(system.size(), static_cast<std::size_t>(count));
  for (int i = 0; i < count; i += 997) {
    EXPECT_DOUBLE_EQ(system.atoms[static_cast<std::size_t>(i)].position[0], i + 0.5);
    EXPECT_DOUBLE_EQ(system.atoms[static_cast<std::size_t>(i)].position[1], -(i + 0.25));
  }
  EXPECT_DOUBLE_EQ(system.atoms.back().position[0], count - 1 + 0.5);
  EXPECT_EQ(system.total_charge(), 0.0);
}

TEST(ReadAtomsGzip, XyzqGz) {
  ScratchDir dir;
  const std::string path = dir.file("points.xyzq.gz");
  write_bytes(path, gzip_bytes("# two charges\n0 0 0 1\n1 2 3 -1\n", dir));
  const dcs::System system = dcs::io::read_atoms(path);
  EXPECT_EQ(system.source_format, "xyzq");
  ASSERT_EQ(system.size(), 2u);
  EXPECT_EQ(system.atoms[1].position, (dcs::Vec3{1.0, 2.0, 3.0}));
}

TEST(ReadAtomsGzip, MalformedLineInGzNamesTheLine) {
  ScratchDir dir;
  const std::string path = dir.file("bad.pqr.gz");
  write_bytes(
      path, gzip_bytes("REMARK\nATOM 1 N ALA 1 1 2 3 0.5 1.5\nATOM 2 N ALA 1 1 2 3 nan 1\n", dir));
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 3,
                     {"charge 'nan' is not a finite number"});
}

std::string many_atoms_text() {
  std::string text;
  for (int i = 0; i < 5000; ++i) {
    text += "ATOM " + std::to_string(i + 1) + " C LIG 1 " + std::to_string(i % 97) + ".125 " +
            std::to_string(i % 89) + ".5 " + std::to_string(i % 83) + ".75 0.01 1.7\n";
  }
  return text;
}

TEST(ReadAtomsGzip, CorruptDataIsAnInputError) {
  ScratchDir dir;
  std::string compressed = gzip_bytes(many_atoms_text(), dir);
  ASSERT_GT(compressed.size(), 200u);
  for (std::size_t i = compressed.size() / 3; i < compressed.size() / 3 + 64; ++i) {
    compressed[i] = static_cast<char>(compressed[i] ^ 0x5a);
  }
  const std::string path = dir.file("corrupt.pqr.gz");
  write_bytes(path, compressed);
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"corrupt gzip data"});
}

TEST(ReadAtomsGzip, BadChecksumIsAnInputError) {
  ScratchDir dir;
  std::string compressed = gzip_bytes(many_atoms_text(), dir);
  // The gzip trailer: CRC-32 then length. A wrong CRC means the data are not what was written.
  compressed[compressed.size() - 8] = static_cast<char>(compressed[compressed.size() - 8] ^ 1);
  const std::string path = dir.file("badcrc.pqr.gz");
  write_bytes(path, compressed);
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"corrupt gzip data"});
}

TEST(ReadAtomsGzip, TruncatedDataIsAnInputError) {
  ScratchDir dir;
  const std::string compressed = gzip_bytes(many_atoms_text(), dir);
  const std::string path = dir.file("truncated.pqr.gz");
  write_bytes(path, compressed.substr(0, compressed.size() / 2));
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"truncated gzip data"});
}

TEST(ReadAtomsGzip, PlainTextNamedGzIsAnInputError) {
  ScratchDir dir;
  const std::string path = dir.file("plain.pqr.gz");
  write_bytes(path, "ATOM 1 N ALA 1 1 2 3 0.5 1.5\n");
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0,
                     {"not gzip-compressed data"});
}

TEST(ReadAtomsGzip, EmptyGzFileIsAnInputError) {
  ScratchDir dir;
  const std::string path = dir.file("empty.pqr.gz");
  write_bytes(path, "");
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"empty file"});
}

TEST(ReadAtomsGzip, CompressedEmptyTextIsAnEmptyFile) {
  ScratchDir dir;
  const std::string path = dir.file("nothing.pqr.gz");
  write_bytes(path, gzip_bytes("", dir));
  expect_input_error([&] { (void)dcs::io::read_atoms(path); }, path, 0, {"empty file"});
}

}  // namespace
