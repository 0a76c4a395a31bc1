// One PQR ATOM/HETATM record. Accepted variations, all seen in real files:
// - whitespace-delimited fields (any mix of spaces and tabs) and pdb2pqr's fixed columns
//   (serial 7-11, name 13-16, resName 17-20, chain 22, resSeq 23-26, insertion code 27);
// - no chain ID; insertion codes ("52A"); 4-letter residue names, also when fixed columns fuse
//   them with the atom name ("OH2TIP3"); a chain ID fused with the residue number ("A1000");
// - serial numbers of any size, also fused with the record name ("HETATM10000", "ATOM100000")
//   or shifted into the record's padding ("ATOM 100000  N"); lower-case record names;
// - numbers fused by a minus sign ("-45.751-100.406": pdb2pqr's %8.3f leaves no blank for
//   values <= -100 Å). "1e-5" is one number. Two numbers fused without a sign ("0.500010.0000",
//   a radius >= 10 Å in a 7-column field) are split so that both have the same number of
//   decimals, since every known writer prints adjacent fields of one kind with one format.
// Charge and radius are the last two numbers of a record and x y z the three before them.
#include "pqr_record.hpp"

#include <algorithm>
#include <array>
#include <charconv>

#include "atom_parsers.hpp"
#include "dcs/error.hpp"

namespace dcs::io::detail {
namespace {

constexpr std::array<const char*, 5> kTailNames = {"x coordinate", "y coordinate", "z coordinate",
                                                   "charge", "radius"};
constexpr const char* kIdFields = "serial name resName [chainID] resSeq";
constexpr std::size_t kMinPqrFields = 9;  // without the optional chain ID

}  // namespace

Atom PqrLineParser::parse(std::string_view line, std::size_t record_begin, std::size_t record_end,
                          std::uint64_t line_number, bool hetatm) {
  line_number_ = line_number;
  Atom atom;
  atom.hetatm = hetatm;
  const std::string_view record = line.substr(record_begin, record_end - record_begin);
  split_fields(line, record_end, line.size(), fields_);

  // The numeric tail, taken from the end: radius, charge, z, y, x.
  std::array<double, 5> values{};
  std::size_t needed = values.size();
  std::size_t id_end = record_end;
  bool tail_done = false;
  for (std::size_t f = fields_.size(); f-- > 0 && !tail_done;) {
    split_fused(fields_[f], pieces_);
    for (std::size_t p = pieces_.size(); p-- > 0;) {
      const std::size_t slot = needed - 1;
      double value = 0.0;
      switch (parse_double(pieces_[p].text, value)) {
        case NumberStatus::kOk: break;
        case NumberStatus::kNotFinite:
          fail(std::string(kTailNames[slot]) + " " + quote(pieces_[p].text) +
               " is not a finite number");
        case NumberStatus::kNotNumber:
          if (const std::string pdb = pdb_atom_record(line); !pdb.empty()) fail(pdb);
          if (count_fields() < kMinPqrFields) fail_too_few(record);
          fail(std::string(kTailNames[slot]) + " " + quote(fields_[f].text) +
               " is not a number (expected " + kPqrFields + ")");
      }
      values[slot] = value;
      --needed;
      if (needed == 0) {
        id_end = pieces_[p].pos;
        tail_done = true;
        break;
      }
    }
  }
  if (!tail_done) fail_too_few(record);
  const std::string range = out_of_range(values.data(), values.size());
  if (values[4] < 0.0 || !range.empty()) {
    // With a column missing, the tail takes the serial or residue number as x and the charge
    // as the radius: say what is missing, not what the shifted values look like.
    Atom probe;
    if (count_fields() < kMinPqrFields &&
        !parse_columns(line, record_begin, record_end, id_end, probe))
      fail_too_few(record);
    if (values[4] < 0.0) fail("negative radius " + format_value(values[4]));
    fail(range);
  }
  atom.position = {values[0], values[1], values[2]};
  atom.charge = values[3];
  atom.radius = values[4];

  if (!parse_columns(line, record_begin, record_end, id_end, atom)) {
    parse_id_fields(line, record, record_end, id_end, atom);
  }
  return atom;
}

void PqrLineParser::fail(const std::string& reason) const {
  throw InputError(file_, line_number_, reason);
}

void PqrLineParser::fail_too_few(std::string_view record) {
  fail("too few fields: found " + std::to_string(count_fields()) + " after " + upper(record) +
       ", expected " + kPqrFields);
}

std::string PqrLineParser::format_value(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return quote(std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer)));
}

// Fields after the record name, counting the numbers of a fused field separately.
std::size_t PqrLineParser::count_fields() {
  std::size_t count = 0;
  std::vector<Field> pieces;
  for (const Field& field : fields_) {
    split_fused(field, pieces);
    bool numeric = pieces.size() > 1;
    for (const Field& piece : pieces) {
      double value = 0.0;
      if (parse_double(piece.text, value) == NumberStatus::kNotNumber) numeric = false;
    }
    count += numeric ? pieces.size() : 1;
  }
  return count;
}

// pdb2pqr's fixed columns (0-based): serial [6,11), name [12,16), resName [16,20), chain 21,
// resSeq [22,26), insertion code 26. Used only when the line visibly has that layout, because
// only columns can separate what fixed-width writing fuses ("OH2TIP3", "A1000").
bool PqrLineParser::parse_columns(std::string_view line, std::size_t record_begin,
                                  std::size_t record_end, std::size_t id_end, Atom& atom) {
  if (record_begin != 0 || record_end > 6 || id_end < 27) return false;
  if (line.substr(0, id_end).find('\t') != std::string_view::npos) return false;
  if (!all_blank(line.substr(record_end, 6 - record_end))) return false;
  if (line[11] != ' ' || line[20] != ' ' || !all_blank(line.substr(27, id_end - 27))) {
    return false;
  }
  long long serial = 0;
  long long res_seq = 0;
  if (!parse_integer(trim(line.substr(6, 5)), serial)) return false;
  if (!parse_integer(trim(line.substr(22, 4)), res_seq)) return false;
  const std::string_view name = trim(line.substr(12, 4));
  const std::string_view res_name = trim(line.substr(16, 4));
  if (name.empty() || res_name.empty() || has_blank(name) || has_blank(res_name)) return false;
  const char insertion = line[26];
  if (insertion != ' ' && !is_alpha(insertion) && !is_digit(insertion)) return false;
  atom.serial = serial;
  atom.name = name;
  atom.res_name = res_name;
  atom.chain = line[21] == ' ' ? std::string() : std::string(1, line[21]);
  atom.res_seq = res_seq;
  return true;
}

void PqrLineParser::parse_id_fields(std::string_view line, std::string_view record,
                                    std::size_t record_end, std::size_t id_end, Atom& atom) {
  split_fields(line, record_end, id_end, id_fields_);
  const std::size_t count = id_fields_.size();
  if (count < 4) fail_too_few(record);  // the tail took 5 numbers, so fewer than 9 in all
  if (count > 5) {
    fail("too many fields before the coordinates: found " + std::to_string(count) + " after " +
         upper(record) + ", expected " + kIdFields + " (first extra field " +
         quote(id_fields_[5].text) + ")");
  }
  if (!parse_integer(id_fields_[0].text, atom.serial)) {
    fail("serial number " + quote(id_fields_[0].text) + " is not an integer");
  }
  atom.name = id_fields_[1].text;
  atom.res_name = id_fields_[2].text;
  std::string_view res_seq = id_fields_[count - 1].text;
  if (count == 5) {
    atom.chain = id_fields_[3].text;
  } else if (res_seq.size() > 1 && is_alpha(res_seq[0]) &&
             (is_digit(res_seq[1]) || res_seq[1] == '-')) {
    // A one-letter chain ID fused with the residue number ("A1000").
    atom.chain = res_seq.substr(0, 1);
    res_seq.remove_prefix(1);
  }
  if (!parse_residue_number(res_seq, atom.res_seq)) {
    fail("residue number " + quote(id_fields_[count - 1].text) + " is not an integer (expected " +
         kPqrFields + ")");
  }
}

bool is_known_record(std::string_view letters) {
  static constexpr std::array<std::string_view, 47> kRecords = {
      "ANISOU", "AUTHOR", "CAVEAT", "CISPEP", "COMPND", "CONECT", "CRYST",  "DBREF",
      "END",    "ENDMDL", "EXPDTA", "FORMUL", "HEADER", "HELIX",  "HET",    "HETNAM",
      "HETSYN", "JRNL",   "KEYWDS", "LINK",   "LINKR",  "MASTER", "MDLTYP", "MODEL",
      "MODRES", "MTRIX",  "NUMMDL", "OBSLTE", "ORIGX",  "REMARK", "REVDAT", "SCALE",
      "SEQADV", "SEQRES", "SHEET",  "SIGATM", "SIGUIJ", "SITE",   "SOURCE", "SPLIT",
      "SPRSDE", "SSBOND", "TER",    "TITLE",  "TVECT",  "USER",   "ATOM"};
  return std::find(kRecords.begin(), kRecords.end(), letters) != kRecords.end();
}

}  // namespace dcs::io::detail
