// PQR text parsing: every accepted quirk and every malformed case, on in-memory text.
#include <array>
#include <cmath>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include "dcs/io/pqr.hpp"
#include "dcs/log.hpp"
#include "pqr_test_util.hpp"

namespace {

using dcs::test::expect_ids;
using dcs::test::expect_input_error;
using dcs::test::LogCapture;
using dcs::test::pqr_from_text;

void expect_atom(const dcs::Atom& atom, double x, double y, double z, double charge,
                 double radius) {
  EXPECT_DOUBLE_EQ(atom.position[0], x);
  EXPECT_DOUBLE_EQ(atom.position[1], y);
  EXPECT_DOUBLE_EQ(atom.position[2], z);
  EXPECT_DOUBLE_EQ(atom.charge, charge);
  EXPECT_DOUBLE_EQ(atom.radius, radius);
}

struct Ids {
  long long serial;
  std::string name, res_name, chain;
  long long res_seq;
};

/// The atoms of `system`, in order, have these identification fields.
void expect_ids_of(const dcs::System& system, std::initializer_list<Ids> ids) {
  ASSERT_EQ(system.size(), ids.size());
  std::size_t i = 0;
  for (const Ids& id : ids) {
    SCOPED_TRACE("atom " + std::to_string(i));
    expect_ids(system.atoms[i++], id.serial, id.name, id.res_name, id.chain, id.res_seq);
  }
}

/// `text` holds one atom with these values (x y z charge radius) and identification fields.
dcs::Atom expect_one_atom(const std::string& text, const std::array<double, 5>& v, long long serial,
                          const std::string& name, const std::string& res_name,
                          const std::string& chain, long long res_seq) {
  const dcs::System system = pqr_from_text(text);
  EXPECT_EQ(system.size(), 1u) << text;
  if (system.size() != 1) return {};
  expect_atom(system.atoms[0], v[0], v[1], v[2], v[3], v[4]);
  expect_ids(system.atoms[0], serial, name, res_name, chain, res_seq);
  return system.atoms[0];
}

// ----------------------------------------------------------------------------------------------
// Accepted input.

TEST(PqrParse, WhitespaceDelimitedWithoutChain) {
  const dcs::System system = pqr_from_text("ATOM 1 N MET 1 -1.5 2.25 3.0 0.1 1.5\n", "a.pqr");
  ASSERT_EQ(system.size(), 1u);
  expect_atom(system.atoms[0], -1.5, 2.25, 3.0, 0.1, 1.5);
  expect_ids(system.atoms[0], 1, "N", "MET", "", 1);
  EXPECT_FALSE(system.atoms[0].hetatm);
  EXPECT_EQ(system.source_path, "a.pqr");
  EXPECT_EQ(system.source_format, "pqr");
  EXPECT_TRUE(system.source_sha256.empty());
}

TEST(PqrParse, WhitespaceDelimitedWithChain) {
  const dcs::Atom atom = expect_one_atom("HETATM 3 ZN ZN2 B 101 7.0 8.0 9.0 2.0 1.1\n",
                                         {7.0, 8.0, 9.0, 2.0, 1.1}, 3, "ZN", "ZN2", "B", 101);
  EXPECT_TRUE(atom.hetatm);
}

TEST(PqrParse, TabsAndMixedBlanks) {
  expect_one_atom("ATOM\t2\tCA\tMET\tA\t1\t4.0\t5.0 \t6.0\t-0.2\t1.7\t \n",
                  {4.0, 5.0, 6.0, -0.2, 1.7}, 2, "CA", "MET", "A", 1);
}

TEST(PqrParse, CrlfLineEndings) {
  const dcs::System system = pqr_from_text(
      "REMARK   1 DOS\r\nATOM      1  N   ALA     1       1.000   2.000   3.000 -0.4157 1.8240\r\n"
      "ATOM 2 CA ALA 1 4 5 6 0.5 2\r\nEND\r\n");
  ASSERT_EQ(system.size(), 2u);
  expect_atom(system.atoms[0], 1.0, 2.0, 3.0, -0.4157, 1.824);
  expect_ids(system.atoms[0], 1, "N", "ALA", "", 1);
  expect_atom(system.atoms[1], 4.0, 5.0, 6.0, 0.5, 2.0);
}

TEST(PqrParse, PdbToPqrFixedColumns) {
  expect_one_atom("ATOM      5  CA  GLY A  17      11.104   6.134  -6.504  0.0247 1.9080\n",
                  {11.104, 6.134, -6.504, 0.0247, 1.908}, 5, "CA", "GLY", "A", 17);
}

TEST(PqrParse, CoordinatesFusedByMinusSign) {
  // pdb2pqr's %8.3f leaves no blank before values <= -100 Å.
  const dcs::System system = pqr_from_text(
      "ATOM      2  CA  GLY A   1     -45.751-100.406-123.456  0.3300 1.9080\n"
      "ATOM 3 C GLY 1 -1.0-2.0 -3.0 0.1 1.0\n");
  ASSERT_EQ(system.size(), 2u);
  expect_atom(system.atoms[0], -45.751, -100.406, -123.456, 0.33, 1.908);
  expect_ids(system.atoms[0], 2, "CA", "GLY", "A", 1);
  expect_atom(system.atoms[1], -1.0, -2.0, -3.0, 0.1, 1.0);
  expect_ids(system.atoms[1], 3, "C", "GLY", "", 1);
}

TEST(PqrParse, ChargeFusedWithCoordinateByMinusSign) {
  expect_one_atom("ATOM      7  NE  ARG B  -1       3.000  -4.000  12.345-10.0000 1.5000\n",
                  {3.0, -4.0, 12.345, -10.0, 1.5}, 7, "NE", "ARG", "B", -1);
}

TEST(PqrParse, ChargeFusedWithRadiusWithoutSign) {
  // pdb2pqr writes the radius with %.4f in 7 columns: 10 Å and more touch the charge.
  const dcs::System system = pqr_from_text(
      "ATOM      6  CZ  ARG B  -1      -1.500   2.500  12.345 -0.500010.5000\n"
      "ATOM      8  CZ  ARG B  -1      -1.500   2.500  12.345  0.250012.0000\n");
  ASSERT_EQ(system.size(), 2u);
  expect_atom(system.atoms[0], -1.5, 2.5, 12.345, -0.5, 10.5);
  expect_atom(system.atoms[1], -1.5, 2.5, 12.345, 0.25, 12.0);
}

TEST(PqrParse, CoordinatesOfThousandsFusedWithoutSign) {
  expect_one_atom("ATOM      5 HH11 ARG B  -1    -123.5001000.2502000.500  0.2500 1.0000\n",
                  {-123.5, 1000.25, 2000.5, 0.25, 1.0}, 5, "HH11", "ARG", "B", -1);
}

TEST(PqrParse, ExponentsAreNotSplit) {
  const dcs::System system = pqr_from_text(
      "ATOM 1 O HOH W 5 1e1 -2.5E-1 +3.0 -0.834 1.7683\n"
      "ATOM 2 O HOH W 5 1.0e-05-2.0 3E-2 1e-5 0.0\n");
  ASSERT_EQ(system.size(), 2u);
  expect_atom(system.atoms[0], 10.0, -0.25, 3.0, -0.834, 1.7683);
  expect_atom(system.atoms[1], 1.0e-5, -2.0, 0.03, 1e-5, 0.0);
}

TEST(PqrParse, LargeSerialNumbers) {
  const dcs::System system = pqr_from_text(
      "ATOM 100000 O HOH W 5000 1 2 3 -0.834 1.7683\n"
      "ATOM  100001  N   LYS C   7      -5.000   5.000  -5.000  0.3000 1.8240\n"
      "ATOM 100002  CA  LYS C   7       6.000  -6.000   6.000  0.0166 1.9080\n"
      "HETATM10000  C1  LIG L   1       1.000   1.000   1.000  0.0000 1.7000\n"
      "HETATM123456 C2 LIG 1 1 1 1 0 1\n"
      "ATOM1234567 C3 LIG 1 1 1 1 0 1\n");
  expect_ids_of(system, {{100000, "O", "HOH", "W", 5000},
                         {100001, "N", "LYS", "C", 7},
                         {100002, "CA", "LYS", "C", 7},
                         {10000, "C1", "LIG", "L", 1},
                         {123456, "C2", "LIG", "", 1},
                         {1234567, "C3", "LIG", "", 1}});
  ASSERT_EQ(system.size(), 6u);
  expect_atom(system.atoms[1], -5.0, 5.0, -5.0, 0.3, 1.824);
  EXPECT_TRUE(system.atoms[3].hetatm);
  EXPECT_TRUE(system.atoms[4].hetatm);
  EXPECT_FALSE(system.atoms[5].hetatm);
}

TEST(PqrParse, FourLetterNamesFusedInFixedColumns) {
  const dcs::System system = pqr_from_text(
      "HETATM10000  OH2TIP3 W1000      12.500  -7.250   0.125 -0.8340 1.7683\n"
      "ATOM      4 HD21NASN B  52A      0.000   0.000  -0.001  0.4000 0.6000\n"
      "ATOM 5 HW1 TIP3 W 5000 10.5 -0.25 3.0 0.417 0\n");
  expect_ids_of(system, {{10000, "OH2", "TIP3", "W", 1000},
                         {4, "HD21", "NASN", "B", 52},
                         {5, "HW1", "TIP3", "W", 5000}});
  ASSERT_EQ(system.size(), 3u);
  expect_atom(system.atoms[0], 12.5, -7.25, 0.125, -0.834, 1.7683);
  expect_atom(system.atoms[1], 0.0, 0.0, -0.001, 0.4, 0.6);
}

TEST(PqrParse, ChainFusedWithResidueNumberAndInsertionCodes) {
  const dcs::System system = pqr_from_text(
      "ATOM 1 CA GLY A1000 1 2 3 0 1\n"
      "ATOM 2 CB ALA 52A 1 2 3 0 1\n"
      "ATOM 3 CB ALA B 52A 1 2 3 0 1\n"
      "ATOM      0  C   CHG A0          -3.743   1.181  -1.978 -0.1550  1.8700\n");
  expect_ids_of(system, {{1, "CA", "GLY", "A", 1000},
                         {2, "CB", "ALA", "", 52},
                         {3, "CB", "ALA", "B", 52},
                         {0, "C", "CHG", "A", 0}});
  ASSERT_EQ(system.size(), 4u);
  expect_atom(system.atoms[3], -3.743, 1.181, -1.978, -0.155, 1.87);
}

TEST(PqrParse, LeadingBlanksAndLowerCaseRecords) {
  const dcs::System system = pqr_from_text(
      "   ATOM  9  CG  ALA  A  52  -0.5  -0.5  -0.5  -0.117  1.9\n"
      "atom 7 C1 LIG 1 0 0 0 0 1\n"
      "hetatm 8 C2 LIG 1 0 0 0 0 1\n");
  ASSERT_EQ(system.size(), 3u);
  expect_ids(system.atoms[0], 9, "CG", "ALA", "A", 52);
  EXPECT_FALSE(system.atoms[1].hetatm);
  EXPECT_TRUE(system.atoms[2].hetatm);
}

TEST(PqrParse, OtherRecordsAndBlankLinesAreIgnored) {
  const dcs::System system = pqr_from_text(
      "HEADER    TEST\n"
      "TITLE     ALL RECORDS\n"
      "REMARK   1 PQR file generated by PDB2PQR\n"
      "CRYST1    1.000    1.000    1.000  90.00  90.00  90.00 P 1           1\n"
      "\n"
      "   \t  \n"
      "ATOM      1  N   ALA     1       1.000   2.000   3.000 -0.4157 1.8240\n"
      "ANISOU    1  N   ALA     1     1000   2000   3000      0      0      0\n"
      "SIGATM    1  N   ALA     1       0.010   0.010   0.010  0.00  0.00\n"
      "TER       2      ALA     1\n"
      "HELIX    1   1 ALA      1  ALA      1  1\n"
      "CONECT    1    2\n"
      "MASTER        0    0    0    0    0    0    0    0    1    0    1    0\n"
      "END\n");
  ASSERT_EQ(system.size(), 1u);
  expect_atom(system.atoms[0], 1.0, 2.0, 3.0, -0.4157, 1.824);
}

TEST(PqrParse, ResidueNumberFusedWithCoordinate) {
  const dcs::System system = pqr_from_text("ATOM 1 N ALA 7-100.5 2 3 0.5 1.5\n");
  ASSERT_EQ(system.size(), 1u);
  expect_ids(system.atoms[0], 1, "N", "ALA", "", 7);
  expect_atom(system.atoms[0], -100.5, 2.0, 3.0, 0.5, 1.5);
}

TEST(PqrParse, ZeroRadiusIsAccepted) {
  const dcs::System system = pqr_from_text("ATOM 1 H ALA 1 0 0 0 0.3 0.0000\n");
  ASSERT_EQ(system.size(), 1u);
  EXPECT_EQ(system.atoms[0].radius, 0.0);
}

TEST(PqrParse, NoTrailingNewline) {
  const dcs::System system = pqr_from_text("ATOM 1 H ALA 1 0 0 0 0.3 1.0");
  EXPECT_EQ(system.size(), 1u);
}

const char* const kThreeModels =
    "MODEL        1\n"
    "ATOM      1  NA  ION     1       0.000   0.000   0.000  1.0000 1.1000\n"
    "ATOM      2  CL  ION     2       3.000   0.000   0.000 -1.0000 1.7000\n"
    "ENDMDL\n"
    "MODEL        2\n"
    "ATOM      1  NA  ION     1       0.000   0.000   0.500  1.0000 1.1000\n"
    "ATOM      2  CL  ION     2       3.000   0.000   0.500 -1.0000 1.7000\n"
    "ENDMDL\n"
    "MODEL        3\n"
    "ATOM      1  NA  ION     1       0.000   0.000   1.000  1.0000 1.1000\n"
    "ENDMDL\n";

TEST(PqrParse, OnlyTheFirstModelIsReadAndTheRestIsReported) {
  LogCapture capture;
  const dcs::System system = pqr_from_text(kThreeModels, "models.pqr");
  ASSERT_EQ(system.size(), 2u);
  expect_atom(system.atoms[0], 0.0, 0.0, 0.0, 1.0, 1.1);
  expect_atom(system.atoms[1], 3.0, 0.0, 0.0, -1.0, 1.7);
  const std::string logged = capture.text();
  EXPECT_NE(logged.find("models.pqr"), std::string::npos) << logged;
  EXPECT_NE(logged.find("first model (2 atoms)"), std::string::npos) << logged;
  EXPECT_NE(logged.find("ignored 3 ATOM/HETATM record(s) in 2 later model(s)"), std::string::npos)
      << logged;
}

TEST(PqrParse, AtomsAfterEndmdlWithoutModelAreIgnored) {
  LogCapture capture;
  const dcs::System system =
      pqr_from_text("ATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nATOM 1 NA ION 1 0 0 5 1 1\n", "endmdl.pqr");
  ASSERT_EQ(system.size(), 1u);
  EXPECT_NE(capture.text().find("ignored 1 ATOM/HETATM record(s) in 1 later model(s)"),
            std::string::npos)
      << capture.text();
}

TEST(PqrParse, SingleModelLogsNothing) {
  LogCapture capture;
  const dcs::System system =
      pqr_from_text("MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nEND\n", "one.pqr");
  EXPECT_EQ(system.size(), 1u);
  EXPECT_EQ(capture.text(), "");
}

// ----------------------------------------------------------------------------------------------
// Malformed input: exception type, line number and message content.

struct MalformedCase {
  const char* label;
  const char* text;
  std::uint64_t line;
  std::vector<std::string> parts;
};

void PrintTo(const MalformedCase& c, std::ostream* out) { *out << c.label; }

class PqrMalformed : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(PqrMalformed, ThrowsInputErrorWithLineAndReason) {
  const MalformedCase& c = GetParam();
  try {
    (void)pqr_from_text(c.text, "bad.pqr");
    ADD_FAILURE() << "no exception for " << c.label;
  } catch (const dcs::InputError& error) {
    EXPECT_EQ(error.file(), "bad.pqr");
    EXPECT_EQ(error.line(), c.line) << error.what();
    const std::string prefix =
        c.line > 0 ? "bad.pqr:" + std::to_string(c.line) + ": " : std::string("bad.pqr: ");
    EXPECT_EQ(std::string(error.what()).rfind(prefix, 0), 0u) << error.what();
    for (const std::string& part : c.parts) {
      EXPECT_NE(error.reason().find(part), std::string::npos)
          << "reason '" << error.reason() << "' lacks '" << part << "'";
    }
  }
}

const MalformedCase kMalformed[] = {
    {"non_numeric_x",
     "ATOM 1 N ALA 1 abc 2.0 3.0 0.5 1.5\n",
     1,
     {"x coordinate 'abc' is not a number"}},
    {"non_numeric_y_fixed",
     "REMARK\nATOM      1  N   ALA     1       1.000   2.0o0   3.000 -0.4157 1.8240\n",
     2,
     {"y coordinate '2.0o0' is not a number"}},
    {"non_numeric_z",
     "ATOM 1 N ALA 1 1.0 2.0 3.0.0 0.5 1.5\n",
     1,
     {"z coordinate '3.0.0' is not a number"}},
    {"non_numeric_charge",
     "ATOM 1 N ALA 1 1.0 2.0 3.0 0.59x3 1.5\n",
     1,
     {"charge '0.59x3' is not a number"}},
    {"non_numeric_radius",
     "ATOM 1 N ALA 1 1.0 2.0 3.0 0.5 big\n",
     1,
     {"radius 'big' is not a number"}},
    {"pdb_line_with_element",
     "ATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.00  0.00           N\n",
     1,
     {"looks like a PDB file", "occupancy 1.00 and B-factor 0.00", "element 'N' in 77-78",
      "pdb2pqr"}},
    {"pdb_line_with_segment",  // as MDAnalysis writes a PSF system
     "ATOM      2  HT1 MET X   1      12.365   7.840 -10.835  1.00  0.00      4AKE    \n",
     1,
     {"looks like a PDB file", "segment '4AKE' in 73-76"}},
    {"pqr_line_with_a_word_after_it",  // not PDB's columns: the field is named
     "ATOM      1  N   ALA A   1      11.104   6.134  -6.504  1.0000 1.8240 N\n",
     1,
     {"radius 'N' is not a number"}},
    {"text_fused_to_number",
     "ATOM 1 N ALA 1 1.0-abc 2.0 3.0 0.5 1.5\n",
     1,
     {"'1.0-abc' is not a number"}},
    {"nan_charge",
     "ATOM 1 N ALA 1 1.0 2.0 3.0 nan 1.5\n",
     1,
     {"charge 'nan' is not a finite number"}},
    {"nan_radius",
     "ATOM 1 N ALA 1 1.0 2.0 3.0 0.5 NaN\n",
     1,
     {"radius 'NaN' is not a finite number"}},
    {"inf_x",
     "ATOM 1 N ALA 1 inf 2.0 3.0 0.5 1.5\n",
     1,
     {"x coordinate 'inf' is not a finite number"}},
    {"minus_infinity_y",
     "ATOM 1 N ALA 1 1.0 -infinity 3.0 0.5 1.5\n",
     1,
     {"y coordinate '-infinity' is not a finite number"}},
    {"overflow_z",
     "ATOM 1 N ALA 1 1.0 2.0 1e999 0.5 1.5\n",
     1,
     {"z coordinate '1e999' is not a finite number"}},
    {"missing_radius",
     "ATOM 1 N ALA 1 1.0 2.0 3.0 0.5\n",
     1,
     {"too few fields", "found 8", "serial name resName [chainID] resSeq x y z charge radius"}},
    {"record_only", "REMARK\n\nATOM\n", 3, {"too few fields", "found 0"}},
    {"missing_coordinate_with_chain",
     "ATOM 1 N ALA A 2.0 3.0 0.5 1.5\n",
     1,
     {"too few fields", "found 8"}},
    {"missing_residue_fields",
     "ATOM 1 N 1.0 2.0 3.0 0.5 1.5 2.0\n",
     1,
     {"too few fields", "found 8"}},
    {"too_many_fields",
     "ATOM 1 N ALA A 1 9.0 1.0 2.0 3.0 0.5 1.5\n",
     1,
     {"too many fields before the coordinates", "found 6", "'9.0'"}},
    {"negative_radius", "ATOM 1 N ALA 1 1.0 2.0 3.0 0.5 -1.5\n", 1, {"negative radius '-1.5'"}},
    {"negative_radius_fused",
     "ATOM      1  N   ALA     1       1.000   2.000   3.000-0.4157-1.8240\n",
     1,
     {"negative radius '-1.824'"}},
    {"bad_serial", "ATOM X1 N ALA 1 1 2 3 0.5 1.5\n", 1, {"serial number 'X1' is not an integer"}},
    {"bad_residue_number",
     "ATOM 1 N ALA A B 1 2 3 0.5 1.5\n",
     1,
     {"residue number 'B' is not an integer"}},
    {"not_a_record",
     "REMARK ok\nATOM 1 N ALA 1 1 2 3 0.5 1.5\n1.0 2.0 3.0 0.5\n",
     3,
     {"not a PDB record", "'1.0'"}},
    {"comment_line", "# comment\nATOM 1 N ALA 1 1 2 3 0.5 1.5\n", 1, {"not a PDB record", "'#'"}},
    {"line_numbers_count_blank_and_crlf_lines",
     "REMARK\r\n\r\n\r\nATOM 1 N ALA 1 1 2 3 0.5 1.5\r\nATOM 2 N ALA 1 1 2 x 0.5 1.5\r\n",
     5,
     {"z coordinate 'x'"}},
    {"binary_garbage_is_quoted_safely",
     "ATOM 1 N ALA 1 1 2 \x01\x02\xff 0.5 1.5\n",
     1,
     {"z coordinate '\?\?\?' is not a number"}},
    {"malformed_atom_in_ignored_model",
     "MODEL 1\nATOM 1 N ALA 1 1 2 3 0.5 1.5\nENDMDL\nMODEL 2\nATOM 1 N ALA 1 1 2 3 0.5\n",
     5,
     {"too few fields"}},
    {"empty_file", "", 0, {"empty file"}},
    {"blank_file", "\n  \n\t\r\n", 0, {"empty file"}},
    {"no_atoms", "REMARK   1 nothing\nTER\nEND\n", 0, {"no ATOM or HETATM records"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, PqrMalformed, ::testing::ValuesIn(kMalformed),
                         [](const ::testing::TestParamInfo<MalformedCase>& param_info) {
                           return std::string(param_info.param.label);
                         });

// Random corruption of valid records must end in a parsed system or an InputError, never in
// another exception or a crash (fixed seed, so a failure is reproducible).
TEST(PqrParse, RandomlyCorruptedRecordsGiveInputErrorsOnly) {
  const std::string original = dcs::test::read_bytes(dcs::test::data_file("fixed_columns.pqr"));
  ASSERT_FALSE(original.empty());
  const std::string alphabet = " \t-+.eE0123456789AZaz#\r\n\x01";
  std::mt19937 random(20240601u);
  int parsed = 0;
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string text = original;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = random() % text.size();
      const char c = alphabet[random() % alphabet.size()];
      switch (random() % 3) {
        case 0: text[at] = c; break;
        case 1: text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c); break;
        default: text.erase(at, 1); break;
      }
    }
    try {
      const dcs::System system = pqr_from_text(text, "fuzz.pqr");
      for (const dcs::Atom& atom : system.atoms) {
        ASSERT_TRUE(std::isfinite(atom.position[0]) && std::isfinite(atom.position[1]) &&
                    std::isfinite(atom.position[2]) && std::isfinite(atom.charge) &&
                    std::isfinite(atom.radius) && atom.radius >= 0.0)
            << text;
      }
      ++parsed;
    } catch (const dcs::InputError& error) {
      ASSERT_EQ(error.file(), "fuzz.pqr");
      ++rejected;
    }
  }
  // Both outcomes occur, so the test exercises both paths.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(rejected, 100);
}

}  // namespace
