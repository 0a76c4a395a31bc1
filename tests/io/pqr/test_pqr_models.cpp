// Multi-model PQR files (NMR ensembles, MD snapshots): read_models()/parse_pqr_models() return
// every model with its number, refuse a broken MODEL/ENDMDL structure naming the line, and with
// ModelCheck::kSameAtoms refuse models whose atoms differ at the first difference;
// average_models() merges them with charges / M; read_atoms() keeps reading the first model.
#include <zlib.h>

#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "pqr_test_util.hpp"

namespace {

using dcs::io::ModelCheck;
using dcs::test::expect_input_error;
using dcs::test::LogCapture;
using dcs::test::ScratchDir;

std::vector<dcs::System> models_from_text(const std::string& text,
                                          ModelCheck check = ModelCheck::kStructure,
                                          const std::string& name = "ens.pqr") {
  std::istringstream in(text);
  return dcs::io::parse_pqr_models(in, name, check);
}

// Three models of one ion pair, moved along z; line numbers are those of the comments.
const char* const kEnsemble =
    "REMARK ensemble\n"                                                        // 1
    "MODEL        1\n"                                                         // 2
    "ATOM      1  NA  ION     1       0.000   0.000   0.000  1.0000 1.1000\n"  // 3
    "ATOM      2  CL  ION     2       3.000   0.000   0.000 -1.0000 1.7000\n"  // 4
    "ENDMDL\n"                                                                 // 5
    "MODEL        2\n"                                                         // 6
    "ATOM      1  NA  ION     1       0.000   0.000   0.500  0.5000 1.1000\n"  // 7
    "ATOM      2  CL  ION     2       3.000   0.000   0.500 -1.0000 1.7000\n"  // 8
    "ENDMDL\n"                                                                 // 9
    "MODEL        3\n"                                                         // 10
    "ATOM      1  NA  ION     1       0.000   0.000   1.000  1.0000 1.1000\n"  // 11
    "ATOM      2  CL  ION     2       3.000   0.000   1.000 -0.5000 1.7000\n"  // 12
    "ENDMDL\n"                                                                 // 13
    "END\n";

TEST(PqrModels, EveryModelWithItsNumber) {
  const std::vector<dcs::System> models = models_from_text(kEnsemble);
  ASSERT_EQ(models.size(), 3u);
  for (std::size_t m = 0; m < 3; ++m) {
    const dcs::System& model = models[m];
    EXPECT_EQ(model.model, static_cast<long long>(m + 1));
    EXPECT_EQ(model.model_count, 3u);
    EXPECT_EQ(model.source_path, "ens.pqr");
    EXPECT_EQ(model.source_format, "pqr");
    ASSERT_EQ(model.size(), 2u);
    EXPECT_EQ(model.atoms[0].name, "NA");
    EXPECT_EQ(model.atoms[1].name, "CL");
    EXPECT_EQ(model.atoms[0].position[2], 0.5 * static_cast<double>(m));
  }
  EXPECT_EQ(models[1].atoms[0].charge, 0.5);
  EXPECT_EQ(models[2].atoms[1].charge, -0.5);
  // The same atoms in order: also accepted when they must be identical.
  EXPECT_EQ(models_from_text(kEnsemble, ModelCheck::kSameAtoms).size(), 3u);
}

TEST(PqrModels, NumbersComeFromTheModelRecordOrTheOrdinal) {
  const std::vector<dcs::System> models = models_from_text(
      "MODEL       10\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\n"
      "MODEL 0\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n"
      "MODEL\nATOM 1 NA ION 1 0 0 2 1 1\nENDMDL\n"
      "model 7 extra words\nATOM 1 NA ION 1 0 0 3 1 1\nendmdl\n");
  ASSERT_EQ(models.size(), 4u);
  EXPECT_EQ(models[0].model, 10);
  EXPECT_EQ(models[1].model, 0);
  EXPECT_EQ(models[2].model, 3);  // no number: the ordinal
  EXPECT_EQ(models[3].model, 7);
}

TEST(PqrModels, AFileWithoutModelRecordsIsOneModel) {
  const std::vector<dcs::System> models = models_from_text(
      "REMARK x\nATOM 1 NA ION 1 0 0 0 1 1\nATOM 2 CL ION 2 3 0 0 -1 1\nTER\nEND\n");
  ASSERT_EQ(models.size(), 1u);
  EXPECT_EQ(models[0].model, 1);
  EXPECT_EQ(models[0].model_count, 1u);
  EXPECT_EQ(models[0].size(), 2u);
  const std::vector<dcs::System> one =
      models_from_text("MODEL 4\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\n");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].model, 4);
}

TEST(PqrModels, EachAcceptsModelsWithDifferentAtoms) {
  const std::vector<dcs::System> models = models_from_text(
      "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nATOM 2 CL ION 2 3 0 0 -1 1\nENDMDL\n"
      "MODEL 2\nATOM 1 K ION 1 0 0 0 1 1\nENDMDL\n");
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].size(), 2u);
  EXPECT_EQ(models[1].size(), 1u);
  EXPECT_EQ(models[1].atoms[0].name, "K");
}

struct StructureCase {
  const char* label;
  const char* text;
  std::uint64_t line;
  std::vector<std::string> parts;
};

void PrintTo(const StructureCase& c, std::ostream* out) { *out << c.label; }

/// expect_input_error() for ens.pqr with the reason's parts in a vector.
void expect_error_at(const std::function<void()>& call, std::uint64_t line,
                     const std::vector<std::string>& parts) {
  expect_input_error(call, "ens.pqr", line, {});
  try {
    call();
  } catch (const dcs::InputError& error) {
    for (const std::string& part : parts)
      EXPECT_NE(error.reason().find(part), std::string::npos)
          << "reason '" << error.reason() << "' lacks '" << part << "'";
  }
}

class PqrModelStructure : public ::testing::TestWithParam<StructureCase> {};

TEST_P(PqrModelStructure, IsAnInputErrorNamingTheLine) {
  const StructureCase& c = GetParam();
  expect_error_at([&] { (void)models_from_text(c.text); }, c.line, c.parts);
}

const StructureCase kStructureCases[] = {
    {"model_inside_model",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nMODEL 2\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n",
     3,
     {"MODEL record inside model 1", "line 1", "ENDMDL is missing"}},
    {"endmdl_without_model", "ATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\n", 2, {"ENDMDL without MODEL"}},
    {"second_endmdl",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nENDMDL\n",
     4,
     {"ENDMDL without MODEL", "previous model ended at line 3"}},
    {"atoms_between_models",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nHETATM 2 CL ION 2 3 0 0 -1 1\nMODEL 2\n",
     4,
     {"HETATM record between ENDMDL (line 3) and the next MODEL"}},
    {"atoms_before_the_first_model",
     "REMARK\nATOM 1 NA ION 1 0 0 0 1 1\nMODEL 1\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n",
     2,
     {"before the first MODEL (line 3)"}},
    {"empty_model",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nMODEL 2\nENDMDL\n",
     5,
     {"model 2 (MODEL at line 4) has no ATOM or HETATM records"}},
    {"number_used_twice",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nMODEL 1\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n",
     4,
     {"model 1 appears twice", "line 1"}},
    {"ordinal_collides_with_a_number",
     "MODEL 2\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nMODEL\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n",
     4,
     {"model 2 appears twice"}},
    {"bad_serial",
     "MODEL one\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\n",
     1,
     {"MODEL serial number 'one' is not a non-negative integer"}},
    {"negative_serial",
     "MODEL -3\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\n",
     1,
     {"'-3' is not a non-negative integer"}},
    {"file_ends_inside_a_model",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nMODEL 2\nATOM 1 NA ION 1 0 0 1 1 1\n",
     4,
     {"model 2 has no ENDMDL", "truncated"}},
    {"malformed_atom_in_a_later_model",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nMODEL 2\nATOM 1 NA ION 1 0 0 1 1\nENDMDL\n",
     5,
     {"too few fields"}},
    {"no_atoms", "REMARK nothing\nEND\n", 0, {"no ATOM or HETATM records"}},
    {"empty", "", 0, {"empty file"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, PqrModelStructure, ::testing::ValuesIn(kStructureCases),
                         [](const ::testing::TestParamInfo<StructureCase>& param_info) {
                           return std::string(param_info.param.label);
                         });

class PqrModelDifferences : public ::testing::TestWithParam<StructureCase> {};

TEST_P(PqrModelDifferences, AreRefusedForTheAverageOnlyAtTheFirstDifference) {
  const StructureCase& c = GetParam();
  EXPECT_NO_THROW((void)models_from_text(c.text, ModelCheck::kStructure)) << c.label;
  expect_error_at([&] { (void)models_from_text(c.text, ModelCheck::kSameAtoms); }, c.line, c.parts);
}

const StructureCase kDifferenceCases[] = {
    {"fewer_atoms",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nATOM 2 CL ION 2 3 0 0 -1 1\nENDMDL\n"
     "MODEL 2\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n",
     7,
     {"model 2 ends after 1 atoms but model 1 has 2", "--models average"}},
    {"more_atoms",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\n"
     "MODEL 2\nATOM 1 NA ION 1 0 0 1 1 1\nATOM 2 CL ION 2 3 0 0 -1 1\nENDMDL\n",
     6,
     {"model 2 has more atoms than model 1 (1)"}},
    {"other_name",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nATOM 2 CL ION 2 3 0 0 -1 1\nENDMDL\n"
     "MODEL 2\nATOM 1 NA ION 1 0 0 1 1 1\nATOM 2 BR ION 2 3 0 0 -1 1\nENDMDL\n",
     7,
     {"atom 2 of model 2 is 'BR ION 2'", "atom 2 of model 1 (line 3) is 'CL ION 2'"}},
    {"other_residue_name",
     "MODEL 5\nATOM 1 N ALA 1 0 0 0 1 1\nENDMDL\nMODEL 9\nATOM 1 N GLY 1 0 0 0 1 1\nENDMDL\n",
     5,
     {"atom 1 of model 9 is 'N GLY 1'", "model 5 (line 2) is 'N ALA 1'"}},
    {"other_residue_number",
     "MODEL 1\nATOM 1 N ALA 1 0 0 0 1 1\nENDMDL\nMODEL 2\nATOM 1 N ALA 2 0 0 0 1 1\nENDMDL\n",
     5,
     {"'N ALA 2'", "'N ALA 1'"}},
    {"third_model_differs",
     "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\nMODEL 2\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n"
     "MODEL 3\nATOM 1 K ION 1 0 0 2 1 1\nENDMDL\n",
     8,
     {"atom 1 of model 3 is 'K ION 1'"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, PqrModelDifferences, ::testing::ValuesIn(kDifferenceCases),
                         [](const ::testing::TestParamInfo<StructureCase>& param_info) {
                           return std::string(param_info.param.label);
                         });

TEST(PqrModels, SameAtomsMayDifferInCoordinatesChargesSerialsAndChains) {
  const std::vector<dcs::System> models = models_from_text(
      "MODEL 1\nATOM 1 N ALA A 1 0 0 0 0.5 1\nENDMDL\nMODEL 2\nATOM 7 N ALA B 1 4 5 6 -0.5 "
      "2\nENDMDL\n",
      ModelCheck::kSameAtoms);
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[1].atoms[0].charge, -0.5);
}

TEST(PqrModels, AverageMergesEveryModelWithChargesDividedByTheCount) {
  const std::vector<dcs::System> models = models_from_text(kEnsemble, ModelCheck::kSameAtoms);
  const dcs::System merged = dcs::io::average_models(models);
  ASSERT_EQ(merged.size(), 6u);
  EXPECT_EQ(merged.model, 0);
  EXPECT_EQ(merged.model_count, 3u);
  EXPECT_EQ(merged.source_path, "ens.pqr");
  for (std::size_t m = 0; m < 3; ++m) {
    for (std::size_t i = 0; i < 2; ++i) {
      const dcs::Atom& atom = merged.atoms[2 * m + i];
      const dcs::Atom& original = models[m].atoms[i];
      EXPECT_EQ(atom.position, original.position);
      EXPECT_EQ(atom.charge, original.charge / 3.0);  // float64 division, exactly
      EXPECT_EQ(atom.name, original.name);
      EXPECT_EQ(atom.radius, original.radius);
    }
  }
  EXPECT_NEAR(merged.total_charge(), (0.0 - 0.5 + 0.5) / 3.0, 1e-15);
  EXPECT_THROW((void)dcs::io::average_models({}), dcs::Error);
}

// The first-model reader keeps its lenient behaviour and now says which model it read and how
// many there are.
TEST(PqrModels, FirstModelReaderRecordsTheModelNumberAndCount) {
  LogCapture capture;
  std::istringstream in(std::string("MODEL 7\n") + "ATOM 1 NA ION 1 0 0 0 1 1\nENDMDL\n" +
                        "MODEL 8\nATOM 1 NA ION 1 0 0 1 1 1\nENDMDL\n" +
                        "MODEL 9\nATOM 1 NA ION 1 0 0 2 1 1\nENDMDL\n");
  const dcs::System system = dcs::io::parse_pqr(in, "first.pqr");
  EXPECT_EQ(system.size(), 1u);
  EXPECT_EQ(system.model, 7);
  EXPECT_EQ(system.model_count, 3u);
  EXPECT_NE(capture.text().find("--models each or --models average"), std::string::npos)
      << capture.text();
  std::istringstream plain("ATOM 1 NA ION 1 0 0 0 1 1\n");
  const dcs::System one = dcs::io::parse_pqr(plain, "plain.pqr");
  EXPECT_EQ(one.model, 1);
  EXPECT_EQ(one.model_count, 1u);
}

TEST(ReadModels, FilesPlainAndGzipCarryTheFileChecksum) {
  const std::string path = dcs::test::data_file("multimodel.pqr");
  const dcs::System first = dcs::io::read_atoms(path);
  EXPECT_EQ(first.model, 1);
  EXPECT_EQ(first.model_count, 3u);
  const std::vector<dcs::System> models = dcs::io::read_models(path, ModelCheck::kSameAtoms);
  ASSERT_EQ(models.size(), 3u);
  for (std::size_t m = 0; m < models.size(); ++m) {
    EXPECT_EQ(models[m].model, static_cast<long long>(m + 1));
    EXPECT_EQ(models[m].source_sha256, first.source_sha256);
    EXPECT_EQ(models[m].source_path, path);
    EXPECT_EQ(models[m].atoms[0].position[2], 0.5 * static_cast<double>(m));
  }
  EXPECT_EQ(models[0].atoms[0].position, first.atoms[0].position);

  ScratchDir dir;
  const std::string gz = dir.file("multimodel.pqr.gz");
  {
    gzFile out = gzopen(gz.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    const std::string text = dcs::test::read_bytes(path);
    ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    ASSERT_EQ(gzclose(out), Z_OK);
  }
  const std::vector<dcs::System> unzipped = dcs::io::read_models(gz);
  ASSERT_EQ(unzipped.size(), 3u);
  EXPECT_EQ(unzipped[2].atoms[1].position, models[2].atoms[1].position);
  EXPECT_NE(unzipped[0].source_sha256, models[0].source_sha256);  // of the bytes as stored

  const std::vector<dcs::System> xyzq = dcs::io::read_models(dcs::test::data_file("sample.xyzq"));
  ASSERT_EQ(xyzq.size(), 1u);
  EXPECT_EQ(xyzq[0].model, 1);
  EXPECT_EQ(xyzq[0].model_count, 1u);
}

TEST(ReadModels, StructureErrorsNameTheFileAndLine) {
  ScratchDir dir;
  const std::string path = dir.file("broken.pqr");
  dcs::test::write_bytes(path, "MODEL 1\nATOM 1 NA ION 1 0 0 0 1 1\nMODEL 2\n");
  expect_input_error([&] { (void)dcs::io::read_models(path); }, path, 3,
                     {"MODEL record inside model 1"});
  EXPECT_EQ(dcs::io::read_atoms(path).size(), 1u);  // the first-model reader stays lenient
  expect_input_error([&] { (void)dcs::io::read_models(dir.file("missing.pqr")); },
                     dir.file("missing.pqr"), 0, {"no such file"});
}

}  // namespace
