// Every PQR file of Debian's apbs-data package (73 files under /usr/share/apbs), read with
// dcs::io::read_atoms and compared with an independent, deliberately naive reader. The naive
// reader (split on blanks, last five fields are x y z q r) is valid for this corpus because none
// of its lines has fused fields; the test checks that assumption on every line.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/io/pqr.hpp"
#include "pqr_test_util.hpp"

namespace {

constexpr std::size_t kApbsPqrFiles = 73;  // apbs-data 3.4.1

std::string apbs_dir() { return DCS_APBS_DATA_DIR; }

std::vector<std::string> find_apbs_pqr_files() {
  std::vector<std::string> files;
  std::error_code error;
  const std::filesystem::path root = apbs_dir();
  if (!std::filesystem::is_directory(root, error)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".pqr") {
      files.push_back(std::filesystem::relative(entry.path(), root).string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

const std::vector<std::string>& apbs_files() {
  static const std::vector<std::string> files = find_apbs_pqr_files();
  return files;
}

std::string full_path(const std::string& relative) { return apbs_dir() + "/" + relative; }

// The naive reference: one entry per ATOM/HETATM line.
struct NaiveAtom {
  double x, y, z, q, r;
  long long serial;
  std::string name, res_name, chain;
  long long res_seq;
};

std::vector<NaiveAtom> naive_read(const std::string& path) {
  std::ifstream in(path);
  std::vector<NaiveAtom> atoms;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words),
                               std::istream_iterator<std::string>()};
    if (w.empty() || (w[0] != "ATOM" && w[0] != "HETATM")) continue;
    // The corpus has 10 fields (no chain ID) or 11 (with one) on every atom line.
    EXPECT_TRUE(w.size() == 10 || w.size() == 11) << path << ":" << line_number;
    if (w.size() != 10 && w.size() != 11) continue;
    NaiveAtom atom{};
    const std::size_t n = w.size();
    atom.x = std::stod(w[n - 5]);
    atom.y = std::stod(w[n - 4]);
    atom.z = std::stod(w[n - 3]);
    atom.q = std::stod(w[n - 2]);
    atom.r = std::stod(w[n - 1]);
    atom.serial = std::stoll(w[1]);
    atom.name = w[2];
    atom.res_name = w[3];
    std::string res_seq = w[n - 6];
    if (n == 11) {
      atom.chain = w[4];
    } else if (!res_seq.empty() && std::isalpha(static_cast<unsigned char>(res_seq[0]))) {
      atom.chain = res_seq.substr(0, 1);  // pbsam-gly/gly_cg*.pqr: "A0" is chain A, residue 0
      res_seq = res_seq.substr(1);
    }
    atom.res_seq = std::stoll(res_seq);
    atoms.push_back(atom);
  }
  return atoms;
}

TEST(ApbsCorpus, AllPqrFilesOfApbsDataArePresent) {
  EXPECT_GE(apbs_files().size(), kApbsPqrFiles)
      << "found " << apbs_files().size() << " *.pqr files under " << apbs_dir()
      << "; install Debian's apbs-data package (the setup script does)";
}

class ApbsFile : public ::testing::TestWithParam<std::string> {};

// Files whose charges, as distributed, do not add up to an integer (measured with the naive
// reader; they come from older or hand-edited parameter sets). Every other file has
// pdb2pqr/force-field charges whose residues carry integer charges.
const std::set<std::string> kNonIntegerTotal = {
    "examples/FKBP/1d7h-dmso-complex.pqr",
    "examples/FKBP/1d7h-min.pqr",
    "examples/FKBP/1d7i-dss-complex.pqr",
    "examples/FKBP/1d7i-min.pqr",
    "examples/geoflow/imidazole_zap.pqr",
    "examples/ion-protein/complex.pqr",
    "examples/ion-protein/small491.pqr",
    "examples/misc/achbp.pqr",
    "examples/misc/fas2.pqr",
    "examples/misc/mache.pqr",
    "examples/pygbe/lys/lys1_charges.pqr",
};

TEST_P(ApbsFile, MatchesTheNaiveReaderAtomForAtom) {
  const std::string path = full_path(GetParam());
  const dcs::System system = dcs::io::read_atoms(path);
  const std::vector<NaiveAtom> expected = naive_read(path);

  ASSERT_EQ(system.size(), expected.size()) << "atom count differs from the ATOM/HETATM lines";
  EXPECT_EQ(system.source_format, "pqr");
  EXPECT_EQ(system.source_sha256.size(), 64u);
  double naive_total = 0.0;
  for (std::size_t i = 0; i < system.size(); ++i) {
    const dcs::Atom& atom = system.atoms[i];
    const NaiveAtom& e = expected[i];
    SCOPED_TRACE("atom " + std::to_string(i) + " (serial " + std::to_string(e.serial) + ")");
    for (const double value :
         {atom.position[0], atom.position[1], atom.position[2], atom.charge, atom.radius}) {
      ASSERT_TRUE(std::isfinite(value));
    }
    ASSERT_GE(atom.radius, 0.0);
    // Both readers turn the same decimal text into the nearest double: exact equality.
    dcs::test::expect_exact(atom, {e.x, e.y, e.z}, e.q, e.r);
    dcs::test::expect_ids(atom, e.serial, e.name, e.res_name, e.chain, e.res_seq);
    naive_total += e.q;
  }
  EXPECT_NEAR(system.total_charge(), naive_total, 1e-9);
  if (kNonIntegerTotal.count(GetParam()) == 0) {
    EXPECT_NEAR(system.total_charge(), std::round(system.total_charge()), 1e-3)
        << "total charge " << system.total_charge() << " e is not an integer";
  }
}

INSTANTIATE_TEST_SUITE_P(ApbsData, ApbsFile, ::testing::ValuesIn(apbs_files()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ApbsFile);  // AllPqrFilesOfApbsDataArePresent fails

// ----------------------------------------------------------------------------------------------
// Known molecules: net charges and exact values of a few atoms.

dcs::System read_apbs(const std::string& relative) {
  return dcs::io::read_atoms(full_path(relative));
}

TEST(ApbsCorpus, KnownNetCharges) {
  if (apbs_files().empty()) GTEST_SKIP() << "apbs-data missing (reported by another test)";
  // Lysozyme (2LZT) with Asp66 charged: +8 e, and +9 e with it protonated (ASH).
  EXPECT_NEAR(read_apbs("examples/bem-pKa/test_proteins/2LZT-ASP66.pqr").total_charge(), 8.0, 1e-9);
  EXPECT_NEAR(read_apbs("examples/bem-pKa/test_proteins/2LZT-ASH66.pqr").total_charge(), 9.0, 1e-9);
  // Barnase +2 e and barstar -5 e (PARSE charges as distributed with PB-SAM).
  EXPECT_NEAR(read_apbs("examples/pbsam-barn_bars/barnase.pqr").total_charge(), 2.0, 1e-9);
  EXPECT_NEAR(read_apbs("examples/pbsam-barn_bars/barstar.pqr").total_charge(), -5.0, 1e-9);
  // One actin monomer is -12 e.
  EXPECT_NEAR(read_apbs("examples/actin-dimer/mol1.pqr").total_charge(), -12.0, 1e-9);
}

// A complex file is its two partners written one after the other: counts and charges add up.
TEST(ApbsCorpus, ComplexesAreTheSumOfTheirParts) {
  if (apbs_files().empty()) GTEST_SKIP() << "apbs-data missing (reported by another test)";
  struct Triple {
    const char* complex;
    const char* a;
    const char* b;
  };
  const Triple triples[] = {
      {"examples/actin-dimer/complex.pqr", "examples/actin-dimer/mol1.pqr",
       "examples/actin-dimer/mol2.pqr"},
      {"examples/bem-binding-energy/test_proteins/1d30.pqr",
       "examples/bem-binding-energy/test_proteins/1d30_monomer1.pqr",
       "examples/bem-binding-energy/test_proteins/1d30_monomer2.pqr"},
      {"examples/hca-bind/complex.pqr", "examples/hca-bind/hca.pqr", "examples/hca-bind/acet.pqr"},
      {"examples/pka-lig/bx6_7_bin_apbs.pqr", "examples/pka-lig/bx6_7_apo_apbs.pqr",
       "examples/pka-lig/bx6_7_lig_apbs.pqr"},
      {"examples/FKBP/1d7h-dmso-complex.pqr", "examples/FKBP/1d7h-min.pqr",
       "examples/FKBP/dmso-min.pqr"},
      {"examples/ion-protein/complex.pqr", "examples/ion-protein/small491.pqr",
       "examples/ion-protein/491.pqr"},
  };
  for (const Triple& t : triples) {
    SCOPED_TRACE(t.complex);
    const dcs::System complex = read_apbs(t.complex);
    const dcs::System a = read_apbs(t.a);
    const dcs::System b = read_apbs(t.b);
    EXPECT_EQ(complex.size(), a.size() + b.size());
    EXPECT_NEAR(complex.total_charge(), a.total_charge() + b.total_charge(), 1e-9);
  }
  EXPECT_NEAR(read_apbs("examples/actin-dimer/complex.pqr").total_charge(), -24.0, 1e-9);
  EXPECT_NEAR(read_apbs("examples/bem-binding-energy/test_proteins/1d30.pqr").total_charge(), -20.0,
              1e-9);
}

TEST(ApbsCorpus, SpotChecksOfExactValues) {
  if (apbs_files().empty()) GTEST_SKIP() << "apbs-data missing (reported by another test)";
  {
    // "ATOM   1700  N    ALA B   1       0.439   8.268  18.275   0.1414  1.8240 "
    const dcs::System barnase = read_apbs("examples/pbsam-barn_bars/barnase.pqr");
    ASSERT_EQ(barnase.size(), 1730u);
    const dcs::Atom& first = barnase.atoms.front();
    dcs::test::expect_ids(first, 1700, "N", "ALA", "B", 1);
    dcs::test::expect_exact(first, {0.439, 8.268, 18.275}, 0.1414, 1.824);
    // "ATOM   1700  HB2  ARG A 110     -12.759  -2.523  -2.521   0.0371  1.4870 "
    const dcs::Atom& last = barnase.atoms.back();
    dcs::test::expect_ids(last, 1700, "HB2", "ARG", "A", 110);
    dcs::test::expect_exact(last, {-12.759, -2.523, -2.521}, 0.0371, 1.487);
  }
  {
    // "ATOM  16090  OT2 CTE   205      68.928  53.222  56.718 -0.817 1.661"
    const dcs::System achbp = read_apbs("examples/misc/achbp.pqr");
    ASSERT_EQ(achbp.size(), 16090u);
    const dcs::Atom& last = achbp.atoms.back();
    dcs::test::expect_ids(last, 16090, "OT2", "CTE", "", 205);
    dcs::test::expect_exact(last, {68.928, 53.222, 56.718}, -0.817, 1.661);
  }
  {
    // "ATOM    258  CA  CA   491     299.756 162.888  89.336  2.000 1.811"
    const dcs::System ion = read_apbs("examples/ion-protein/491.pqr");
    ASSERT_EQ(ion.size(), 1u);
    EXPECT_EQ(ion.atoms[0].position, (dcs::Vec3{299.756, 162.888, 89.336}));
    EXPECT_EQ(ion.atoms[0].charge, 2.0);
    EXPECT_EQ(ion.atoms[0].res_name, "CA");
  }
  {
    // CRLF file with REMARKs: "ATOM      1  N   ..." of a membrane helix.
    const dcs::System helix = read_apbs("examples/helix/Membrane-helix-0.pqr");
    EXPECT_EQ(helix.size(), 317u);
    EXPECT_EQ(helix.atoms.back().position, (dcs::Vec3{-1.461, 2.763, -15.489}));
    EXPECT_EQ(helix.atoms.back().name, "HA3");
  }
}

}  // namespace
