// One PQR ATOM/HETATM record: the numeric tail (x y z charge radius) taken from the end of the
// line, the identification fields from pdb2pqr's fixed columns when the line has that layout,
// otherwise as whitespace-delimited fields.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "atom_text.hpp"
#include "dcs/types.hpp"

namespace dcs::io::detail {

inline constexpr const char* kPqrFields =
    "serial name resName [chainID] resSeq x y z charge radius";

class PqrLineParser {
 public:
  explicit PqrLineParser(const std::string& file) : file_(file) {}

  /// `line` holds one ATOM/HETATM record whose name occupies [record_begin, record_end).
  /// Throws InputError naming `line_number` when the record is malformed.
  Atom parse(std::string_view line, std::size_t record_begin, std::size_t record_end,
             std::uint64_t line_number, bool hetatm);

 private:
  [[noreturn]] void fail(const std::string& reason) const;
  [[noreturn]] void fail_too_few(std::string_view record);
  static std::string format_value(double value);
  std::size_t count_fields();
  static bool parse_columns(std::string_view line, std::size_t record_begin, std::size_t record_end,
                            std::size_t id_end, Atom& atom);
  void parse_id_fields(std::string_view line, std::string_view record, std::size_t record_end,
                       std::size_t id_end, Atom& atom);

  const std::string& file_;
  std::uint64_t line_number_ = 0;
  std::vector<Field> fields_;
  std::vector<Field> pieces_;
  std::vector<Field> id_fields_;
};

/// Record names of the PDB format (letters only: "CRYST1" is read as "CRYST"), plus USER
/// (MolProbity/Reduce) and LINKR (Refmac). They are skipped without a word.
bool is_known_record(std::string_view letters);

}  // namespace dcs::io::detail
