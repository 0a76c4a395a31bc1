// libFuzzer target: the PQR reader (io::parse_pqr, parse_pqr_models, average_models) on the
// input as the text of a .pqr file. Besides crashes, UB and exceptions other than InputError,
// it checks what the readers promise (io/pqr.hpp):
// - every System returned holds atoms within dcs/limits.hpp;
// - a file whose models all parse (parse_pqr_models) reads leniently (parse_pqr) to its first
//   model, with the same model number and model count; kSameAtoms success implies kStructure
//   success with the same models;
// - LF, CRLF and CR-only line endings read alike (same atoms, same error message);
// - the 128 KiB block boundary of the line reader does not change the reading (the input is
//   also read after REMARK lines that put the boundary inside it);
// - a line longer than io::kMaxLineBytes is refused;
// - the atoms then go through what run() does next (potential bound, grid placement).
#include <cstddef>
#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dcs/io/pqr.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::System;
using dcs::fuzz::Outcome;
using dcs::fuzz::require;
using dcs::fuzz::run_expecting;
using dcs::fuzz::TextReading;

constexpr const char* kName = "fuzz.pqr";

TextReading read_first_model(const std::string& text) {
  return dcs::fuzz::read_text("parse_pqr", text,
                              [](std::istream& in) { return dcs::io::parse_pqr(in, kName); });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);

  // The first model, leniently (read_atoms, --models first).
  const TextReading first = read_first_model(text);
  if (first.outcome == Outcome::kOk) {
    dcs::fuzz::check_system(first.system, "parse_pqr");
    require(first.system.source_format == "pqr", "parse_pqr: source_format not pqr");
    dcs::fuzz::use_atoms(first.system, "parse_pqr atoms");
  }

  // Every model, the structure checked (--models each).
  std::vector<System> models;
  std::string models_message;
  const Outcome each = run_expecting(
      "parse_pqr_models",
      [&] {
        std::istringstream in(text);
        models = dcs::io::parse_pqr_models(in, kName);
      },
      &models_message);
  require(each != Outcome::kUsageError, "parse_pqr_models threw UsageError: " + models_message);
  if (each == Outcome::kOk) {
    require(!models.empty(), "parse_pqr_models returned no models");
    std::set<long long> numbers;
    for (const System& model : models) {
      dcs::fuzz::check_system(model, "parse_pqr_models");
      require(model.model_count == models.size(), "parse_pqr_models: model_count != models");
      require(numbers.insert(model.model).second, "parse_pqr_models: a model number twice");
    }
    require(first.outcome == Outcome::kOk,
            "the models parse but the lenient first-model reading fails: " + first.message);
    require(dcs::fuzz::same_atoms(first.system, models.front()),
            "the lenient first model differs from parse_pqr_models' first model");
    require(first.system.model == models.front().model,
            "first model number " + std::to_string(first.system.model) + " (lenient) vs " +
                std::to_string(models.front().model));
    require(first.system.model_count == models.size(),
            "model count " + std::to_string(first.system.model_count) + " (lenient) vs " +
                std::to_string(models.size()));
  }

  // Every model repeating the first one's atoms (--models average).
  std::vector<System> same;
  std::string same_message;
  const Outcome average = run_expecting(
      "parse_pqr_models(kSameAtoms)",
      [&] {
        std::istringstream in(text);
        same = dcs::io::parse_pqr_models(in, kName, dcs::io::ModelCheck::kSameAtoms);
      },
      &same_message);
  require(average != Outcome::kUsageError, "kSameAtoms threw UsageError: " + same_message);
  if (average == Outcome::kOk) {
    require(each == Outcome::kOk, "kSameAtoms accepts what kStructure refuses: " + models_message);
    require(same.size() == models.size(), "kSameAtoms and kStructure: other model counts");
    std::size_t total = 0;
    for (std::size_t m = 0; m < same.size(); ++m) {
      require(dcs::fuzz::same_atoms(same[m], models[m]), "kSameAtoms and kStructure: other atoms");
      require(same[m].size() == same.front().size(), "kSameAtoms: models of other sizes");
      total += same[m].size();
    }
    const System merged = dcs::io::average_models(same);
    require(merged.size() == total && merged.model_count == same.size(),
            "average_models: wrong size or model count");
    dcs::fuzz::check_system(merged, "average_models");
    dcs::fuzz::use_atoms(merged, "average_models atoms");
  }

  dcs::fuzz::check_text_readings(data, size, first, "REMARK ", dcs::io::kMaxLineBytes,
                                 read_first_model);
  return 0;
}
