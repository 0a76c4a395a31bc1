// The parallel atom reader (ReadOptions::threads != 1) against the serial one (threads = 1):
// the same atoms (every field, bit for bit), models, SHA-256, warnings, and the same first
// error (message with file:line, and type), on every PQR/xyzq file of the repository and
// apbs-data and on hostile files, with thread counts and chunk sizes that move the chunk
// boundaries onto every line.
//
// Under the sanitizers (DCS_TEST_SANITIZED=1, set by the "sanitize" test preset) the corpus
// files above kSmallFileBytes are read by the parallel reader with one of the 15 thread-count x
// chunk-size combinations per call instead of all 15 (a different one per file and call, so each
// combination still runs on many large files); every file, small or large, is still read with
// every call, and the files up to kSmallFileBytes and the hostile files with every combination.
// The full matrix on the large files costs 394 s under ASan, 12 s without.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dcs/error.hpp"
#include "dcs/io/pqr.hpp"
#include "pqr_test_util.hpp"

namespace {

namespace fs = std::filesystem;
using dcs::test::LogCapture;
using dcs::test::ScratchDir;

enum class Call { kFirstModel, kModels, kSameAtoms };

/// Everything a read gives, as text: atoms with their doubles' bits, or the error.
std::string outcome(const std::string& path, Call call, unsigned threads, std::size_t chunk) {
  const dcs::io::ReadOptions options{
      .charges_as_given = false, .threads = threads, .chunk_bytes = chunk};
  const LogCapture log;
  std::string out;
  try {
    std::vector<dcs::System> models;
    if (call == Call::kFirstModel) {
      models.push_back(dcs::io::read_atoms(path, options));
    } else {
      models = dcs::io::read_models(path,
                                    call == Call::kSameAtoms ? dcs::io::ModelCheck::kSameAtoms
                                                             : dcs::io::ModelCheck::kStructure,
                                    options);
    }
    for (const dcs::System& model : models) {
      out += model.source_path + " " + model.source_format + " " + model.source_sha256 + " " +
             std::to_string(model.model) + "/" + std::to_string(model.model_count) + "\n";
      for (const dcs::Atom& atom : model.atoms) {
        const double values[] = {atom.position[0], atom.position[1], atom.position[2], atom.charge,
                                 atom.radius};
        char bits[sizeof values];
        std::memcpy(bits, values, sizeof values);
        out.append(bits, sizeof bits);
        out += std::to_string(atom.serial) + " " + atom.name + " " + atom.res_name + " " +
               atom.chain + " " + atom.segment + " " + std::to_string(atom.res_seq) +
               (atom.hetatm ? " H\n" : "\n");
      }
    }
  } catch (const dcs::InputError& error) {
    out = std::string("InputError line ") + std::to_string(error.line()) + ": " + error.what();
  } catch (const dcs::Error& error) {
    out = std::string("Error: ") + error.what();
  }
  // Warnings, without spdlog's time stamps.
  std::string warnings = log.text();
  std::string kept;
  for (std::size_t begin = 0; begin < warnings.size();) {
    std::size_t end = warnings.find('\n', begin);
    if (end == std::string::npos) end = warnings.size();
    const std::string line = warnings.substr(begin, end - begin);
    const std::size_t bracket = line.find("] ");
    kept += (bracket == std::string::npos ? line : line.substr(bracket + 2)) + "\n";
    begin = end + 1;
  }
  return out + "log:\n" + kept;
}

/// Files up to this size get every thread count and chunk size under the sanitizers too.
constexpr std::size_t kSmallFileBytes = 16 * 1024;

/// The sanitized build's test run (the "sanitize" test preset sets DCS_TEST_SANITIZED=1).
bool sanitized_run() {
  const char* value = std::getenv("DCS_TEST_SANITIZED");
  return value != nullptr && std::string(value) == "1";
}

/// Serial and parallel reads of `path` agree for each call, thread count and chunk size. Given
/// `only` (0 to 14), each call checks the one combination (only + 5 * call) % 15 of the 3 thread
/// counts x 5 chunk sizes: rotating `only` over files covers all 15 for every call.
void expect_same(const std::string& path, std::optional<std::size_t> only = std::nullopt) {
  const std::size_t size = fs::file_size(path);
  for (const Call call : {Call::kFirstModel, Call::kModels, Call::kSameAtoms}) {
    const std::string serial = outcome(path, call, 1, 0);
    std::size_t combination = 0;
    for (const unsigned threads : {2u, 3u, 7u}) {
      // 1 byte: a chunk per line; then sizes that cut through lines at varying places.
      for (const std::size_t chunk :
           {std::size_t{1}, std::size_t{37}, std::size_t{200}, size / 3 + 1, std::size_t{0}}) {
        const std::size_t index = combination++;
        if (only && index != (*only + 5 * static_cast<std::size_t>(call)) % 15) continue;
        SCOPED_TRACE(path + " call " + std::to_string(static_cast<int>(call)) + " threads " +
                     std::to_string(threads) + " chunk " + std::to_string(chunk));
        EXPECT_EQ(outcome(path, call, threads, chunk), serial);
      }
    }
  }
}

std::vector<std::string> corpus() {
  std::vector<std::string> files;
  const std::string source = DCS_SOURCE_DIR;
  for (const std::string& dir :
       {source + "/data", source + "/fuzz/seeds/pqr", source + "/fuzz/seeds/xyzq",
        std::string(DCS_TEST_DATA_DIR), std::string(DCS_APBS_DATA_DIR)}) {
    if (!fs::exists(dir)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(dir)) {
      const std::string name = entry.path().string();
      if (entry.is_regular_file() && (name.ends_with(".pqr") || name.ends_with(".xyzq")))
        files.push_back(name);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ParallelReader, SameAsSerialOnEveryCorpusFile) {
  const std::vector<std::string> files = corpus();
  ASSERT_GT(files.size(), 10u);
  const bool sanitized = sanitized_run();
  std::size_t large = 0;
  for (const std::string& file : files) {
    if (sanitized && fs::file_size(file) > kSmallFileBytes) {
      expect_same(file, large++ % 15);
    } else {
      expect_same(file);
    }
  }
  if (sanitized)
    std::printf("sanitized run: %zu of %zu files with one combination per call\n", large,
                files.size());
}

std::string atom_line(int serial, double x, double charge = 0.25) {
  char line[128];
  std::snprintf(line, sizeof line, "ATOM  %5d  CA  ALA A%4d    %8.3f%8.3f%8.3f %7.4f %6.4f", serial,
                serial, x, -1.5, 2.25, charge, 1.7);
  return line;
}

/// Writes `text` as name in `dir` and checks serial against parallel.
void check_text(const ScratchDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  expect_same(path);
}

TEST(ParallelReader, SameAsSerialOnHostileFiles) {
  const ScratchDir dir;
  std::string atoms;
  for (int i = 1; i <= 40; ++i) atoms += atom_line(i, i * 0.5) + "\n";
  check_text(dir, "plain.pqr", atoms);
  check_text(dir, "no_final_newline.pqr", atoms + atom_line(41, 3.0));
  check_text(dir, "error_last_line.pqr", atoms + "ATOM      1  CA  ALA A   1  x y z 0.1 1.0\n");
  check_text(dir, "error_last_line_no_newline.pqr", atoms + "ATOM 1 CA ALA 1 1 2 3 nan 1");
  std::string two_errors = atoms;
  two_errors.insert(two_errors.size() / 2, "ATOM 2 CA ALA 1 1 2 3 4 -1\n");
  check_text(dir, "two_errors.pqr", two_errors + "bad line\n");
  std::string crlf;
  for (int i = 1; i <= 40; ++i) crlf += atom_line(i, i) + (i % 3 == 0 ? "\r" : "\r\n");
  check_text(dir, "crlf_and_lone_cr.pqr", crlf);
  check_text(dir, "lone_cr_only.pqr", [&] {
    std::string text;
    for (int i = 1; i <= 40; ++i) text += atom_line(i, i) + "\r";
    return text + "\r\r\n\n";
  }());
  check_text(dir, "huge_line.pqr",
             atoms + "REMARK " + std::string(dcs::io::kMaxLineBytes, 'x') + "\n" + atoms);
  check_text(dir, "longest_line.pqr",
             "REMARK" + std::string(dcs::io::kMaxLineBytes - 6, 'y') + "\n" + atoms);
  check_text(dir, "huge_line_at_end.pqr", atoms + std::string(3 * dcs::io::kMaxLineBytes, 'z'));
  // Binary data and text without line endings go to the serial reader (checked on the first
  // 64 KiB + 1 bytes): the same error either way.
  check_text(dir, "nul_bytes.pqr", atoms + std::string(100, '\0') + atoms);
  check_text(dir, "no_line_end.pqr", std::string(dcs::io::kMaxLineBytes + 10, 'A'));
  check_text(dir, "blank_only.pqr", "\n \r\n\t\n");
  check_text(dir, "empty.pqr", "");
  check_text(dir, "records_only.pqr", "REMARK one\nEND\n");
  std::string models;
  for (int m = 1; m <= 6; ++m) {
    models += "MODEL " + std::to_string(m) + "\n";
    for (int i = 1; i <= 7; ++i) models += atom_line(i, m + i * 0.125, 0.1 * m) + "\n";
    models += "ENDMDL\n";
  }
  check_text(dir, "models.pqr", models + "END\n");
  check_text(dir, "models_unclosed.pqr", models + "MODEL 7\n" + atom_line(1, 1.0) + "\n");
  check_text(dir, "models_duplicate.pqr", models + "MODEL 3\n" + atom_line(1, 1.0) + "\nENDMDL\n");
  check_text(dir, "models_atom_between.pqr", models + atom_line(1, 1.0) + "\nMODEL 9\nENDMDL\n");
  check_text(dir, "models_atom_before.pqr", atom_line(1, 1.0) + "\n" + models);
  check_text(dir, "models_endmdl_alone.pqr", "ENDMDL\n" + models);
  check_text(dir, "models_differ.pqr", models + "MODEL 8\n" + atom_line(1, 1.0) + "\nENDMDL\n");
  // A state error (duplicate model) before a line error: the state error is first.
  check_text(dir, "state_then_line_error.pqr",
             models + "MODEL 2\n" + atom_line(1, 1.0) + "\nENDMDL\n" + "ATOM x\n");
  std::string unknown;
  for (int i = 0; i < 50; ++i)
    unknown += "FOO" + std::string(1, static_cast<char>('A' + i % 26)) + "X 1 2\n";
  check_text(dir, "unknown_records.pqr", unknown + atoms + "AT0M 1 CA ALA 1 1 2 3 4 1\n");
  std::string xyzq;
  for (int i = 0; i < 60; ++i) xyzq += std::to_string(i) + " 1.5 -2 0.125 # c\n";
  check_text(dir, "plain.xyzq", xyzq);
  check_text(dir, "comments.xyzq", "# only\n\n# comments\n");
  check_text(dir, "error_end.xyzq", xyzq + "1 2 3\n");
  check_text(dir, "crlf.xyzq", "1 2 3 4\r\n5 6 7 8\r9 10 11 12\n");
}

// A PDB-like file (occupancies as charges) is refused with the same message.
TEST(ParallelReader, SameRefusalOfPdbLikeFile) {
  const ScratchDir dir;
  std::string text;
  for (int i = 1; i <= 30; ++i) {
    char line[128];
    std::snprintf(line, sizeof line, "ATOM  %5d  CA  ALA A%4d    %8.3f%8.3f%8.3f  1.00 %5.2f", i, i,
                  i * 1.0, 2.0, 3.0, 10.0 + i);
    text += std::string(line) + "\n";
  }
  check_text(dir, "pdb_like.pqr", text);
}

}  // namespace
