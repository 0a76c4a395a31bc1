// AMBER PRMTOP (parm7) reader: our own, since chemfiles has none. The file is a sequence of
// sections, each "%FLAG NAME", then "%FORMAT(<count><type><width>[.<decimals>])" (Fortran: e.g.
// 20a4, 10I8, 5E16.8), then data lines of up to <count> fields of <width> columns each.
// "%COMMENT" lines may appear anywhere and "%VERSION" heads the file. Only the sections dcs
// needs are kept; the others are read over (their lines still obey kMaxLineBytes).
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "atom_text.hpp"
#include "dcs/error.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/io/topology.hpp"
#include "dcs/limits.hpp"
#include "line_source.hpp"
#include "prmtop_lines.hpp"

namespace dcs::io {
namespace {

using detail::LineSource;
using detail::quote;

/// AMBER stores charges in units of e·sqrt(kcal/mol·Å) (e × 18.2223); AMBER's own tools and
/// MDAnalysis divide by this factor.
constexpr double kAmberChargeFactor = 18.2223;

/// POINTERS entries dcs uses (0-based positions in AMBER's list).
constexpr std::size_t kPointerNatom = 0;
constexpr std::size_t kPointerNres = 11;

struct FortranFormat {
  std::size_t count = 0;  ///< fields per line
  char type = 0;          ///< 'a', 'i', 'e' (E, F, D, G read alike)
  std::size_t width = 0;  ///< columns per field
};

/// One kept section: its fields as text (trimmed numbers; names with trailing blanks removed),
/// with the line each came from.
struct Section {
  std::uint64_t flag_line = 0;
  std::optional<FortranFormat> format;
  std::vector<std::string> fields;
  std::vector<std::uint64_t> lines;
};

/// "%FORMAT(10I8)" → {10, 'i', 8}; nullopt for anything else.
std::optional<FortranFormat> parse_format(std::string_view text) {
  text = detail::trim(text);
  if (!text.starts_with("%FORMAT(") || !text.ends_with(")")) return std::nullopt;
  text = text.substr(8, text.size() - 9);
  FortranFormat format;
  std::size_t pos = 0;
  const auto number = [&](std::size_t& out) {
    const std::size_t begin = pos;
    while (pos < text.size() && detail::is_digit(text[pos]) && pos - begin < 6) ++pos;
    if (pos == begin || (pos < text.size() && detail::is_digit(text[pos]))) return false;
    out = static_cast<std::size_t>(std::stoul(std::string(text.substr(begin, pos - begin))));
    return true;
  };
  if (!number(format.count)) format.count = 1, pos = 0;
  if (pos >= text.size()) return std::nullopt;
  switch (text[pos++]) {
    case 'a':
    case 'A': format.type = 'a'; break;
    case 'i':
    case 'I': format.type = 'i'; break;
    case 'e':
    case 'E':
    case 'f':
    case 'F':
    case 'd':
    case 'D':
    case 'g':
    case 'G': format.type = 'e'; break;
    default: return std::nullopt;
  }
  if (!number(format.width)) return std::nullopt;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::size_t decimals = 0;
    if (!number(decimals)) return std::nullopt;
  }
  if (pos != text.size() || format.count == 0 || format.width == 0 ||
      format.count * format.width > kMaxLineBytes)
    return std::nullopt;
  return format;
}

/// The sections we keep, by %FLAG name.
bool kept(std::string_view flag) {
  return flag == "POINTERS" || flag == "ATOM_NAME" || flag == "CHARGE" || flag == "RESIDUE_LABEL" ||
         flag == "RESIDUE_POINTER" || flag == "BONDS_INC_HYDROGEN" ||
         flag == "BONDS_WITHOUT_HYDROGEN";
}

std::map<std::string, Section> read_sections(LineSource& source, const std::string& name) {
  std::map<std::string, Section> sections;
  std::string line;
  Section* current = nullptr;  // a kept section, or nullptr while reading over another
  bool any_flag = false;
  bool awaiting_format = false;
  std::uint64_t lines = 0;
  while (source.next(line)) {
    const std::uint64_t n = source.line_number();
    ++lines;
    if (line.starts_with("%VERSION") || line.starts_with("%COMMENT")) continue;
    if (line.starts_with("%FLAG")) {
      if (awaiting_format) throw InputError(name, n, "%FLAG without a %FORMAT line before it");
      const std::string flag(detail::trim(std::string_view(line).substr(5)));
      if (flag.empty()) throw InputError(name, n, "%FLAG without a section name");
      any_flag = true;
      awaiting_format = true;
      current = nullptr;
      if (kept(flag)) {
        if (sections.contains(flag)) throw InputError(name, n, "a second %FLAG " + flag);
        current = &sections[flag];
        current->flag_line = n;
      }
      continue;
    }
    if (line.starts_with("%FORMAT")) {
      const std::optional<FortranFormat> format = parse_format(line);
      if (!format) throw InputError(name, n, "unreadable Fortran format " + quote(line));
      if (!awaiting_format) throw InputError(name, n, "%FORMAT without a %FLAG line before it");
      awaiting_format = false;
      if (current) current->format = format;
      continue;
    }
    if (line.starts_with("%"))
      throw InputError(name, n, "unknown directive " + quote(line.substr(0, 40)));
    if (!any_flag) {
      throw InputError(name, n,
                       "not an AMBER PRMTOP file: data before the first %FLAG line (the format "
                       "of AMBER 6 and older, without %FLAG sections, is not read)");
    }
    if (awaiting_format) throw InputError(name, n, "data line before the %FORMAT line");
    if (!current) continue;
    const FortranFormat& format = *current->format;
    std::string_view rest(line);
    if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
    if (rest.size() > format.count * format.width)
      throw InputError(name, n,
                       "line longer than the " + std::to_string(format.count) + " fields of " +
                           std::to_string(format.width) + " columns its %FORMAT allows");
    for (std::size_t pos = 0; pos < rest.size(); pos += format.width) {
      std::string_view field = rest.substr(pos, format.width);
      if (format.type == 'a') {
        while (!field.empty() && detail::is_blank(field.back())) field.remove_suffix(1);
        while (!field.empty() && detail::is_blank(field.front())) field.remove_prefix(1);
      } else {
        field = detail::trim(field);
        // A short last line ends with its last value; blank fields inside a line are not values.
        if (field.empty()) {
          if (detail::all_blank(rest.substr(pos))) break;
          throw InputError(name, n, "blank field among the numbers");
        }
      }
      current->fields.emplace_back(field);
      current->lines.push_back(n);
    }
  }
  if (lines == 0) throw InputError(name, 0, "empty file");
  if (awaiting_format) throw InputError(name, source.line_number(), "%FLAG without %FORMAT");
  return sections;
}

// `flag` is a C string so that callers pass no temporary (GCC 13's -Wdangling-reference takes a
// reference returned from a call with a temporary argument for a dangling one).
const Section& section(const std::map<std::string, Section>& sections, const char* flag, char type,
                       const std::string& name) {
  const auto found = sections.find(flag);
  if (found == sections.end())
    throw InputError(name, 0, std::string("no %FLAG ") + flag + " section");
  const Section& s = found->second;
  const bool numeric_ok = type == 'e' ? s.format->type != 'a' : s.format->type == type;
  if (!numeric_ok)
    throw InputError(
        name, s.flag_line,
        std::string("%FLAG ") + flag + " has a %FORMAT of the wrong type for its values");
  return s;
}

void check_count(const Section& s, const std::string& flag, std::size_t expected, const char* what,
                 const std::string& name) {
  if (s.fields.size() != expected)
    throw InputError(name, s.flag_line,
                     "%FLAG " + flag + " holds " + std::to_string(s.fields.size()) +
                         " values, but POINTERS gives " + std::to_string(expected) + " " + what);
}

long long integer_at(const Section& s, std::size_t i, const std::string& flag,
                     const std::string& name) {
  long long value = 0;
  if (!detail::parse_integer(s.fields[i], value))
    throw InputError(name, s.lines[i], "%FLAG " + flag + ": not an integer: " + quote(s.fields[i]));
  return value;
}

/// BONDS_INC_HYDROGEN and BONDS_WITHOUT_HYDROGEN, where present: triplets (3·i, 3·j, type) of
/// 0-based coordinate offsets, i.e. atoms i and j; type is the bond parameter's index.
void read_bonds(const std::map<std::string, Section>& sections, std::size_t atoms,
                const std::string& name, System& system) {
  for (const char* flag : {"BONDS_INC_HYDROGEN", "BONDS_WITHOUT_HYDROGEN"}) {
    if (sections.find(flag) == sections.end()) continue;
    const Section& s = section(sections, flag, 'i', name);
    if (s.fields.size() % 3 != 0)
      throw InputError(name, s.flag_line,
                       std::string("%FLAG ") + flag + " holds " + std::to_string(s.fields.size()) +
                           " values, not whole triplets (atom, atom, type)");
    for (std::size_t b = 0; b < s.fields.size(); b += 3) {
      std::array<std::size_t, 2> pair{};
      for (std::size_t k = 0; k < 2; ++k) {
        const long long offset = integer_at(s, b + k, flag, name);
        if (offset < 0 || offset % 3 != 0 || static_cast<unsigned long long>(offset / 3) >= atoms)
          throw InputError(name, s.lines[b + k],
                           std::string("%FLAG ") + flag + ": " + std::to_string(offset) +
                               " is not 3 times an atom index below NATOM");
        pair[k] = static_cast<std::size_t>(offset / 3);
      }
      if (pair[0] == pair[1])
        throw InputError(name, s.lines[b],
                         std::string("%FLAG ") + flag + ": an atom bonded to itself");
      if (pair[0] > pair[1]) std::swap(pair[0], pair[1]);
      system.bonds.push_back(pair);
    }
  }
}

}  // namespace

namespace detail {

System parse_prmtop_lines(LineSource& source, const std::string& name) {
  const std::map<std::string, Section> sections = read_sections(source, name);

  const Section& pointers = section(sections, "POINTERS", 'i', name);
  if (pointers.fields.size() <= kPointerNres)
    throw InputError(name, pointers.flag_line,
                     "%FLAG POINTERS holds " + std::to_string(pointers.fields.size()) +
                         " values, fewer than the 12 up to NRES");
  const long long natom = integer_at(pointers, kPointerNatom, "POINTERS", name);
  const long long nres = integer_at(pointers, kPointerNres, "POINTERS", name);
  if (natom <= 0)
    throw InputError(name, pointers.lines[kPointerNatom],
                     "no atoms (NATOM = " + std::to_string(natom) + ")");
  if (nres <= 0 || nres > natom)
    throw InputError(
        name, pointers.lines[kPointerNres],
        "NRES = " + std::to_string(nres) + " is not in [1, NATOM = " + std::to_string(natom) + "]");
  const auto atoms = static_cast<std::size_t>(natom);
  const auto residues = static_cast<std::size_t>(nres);

  const Section& names = section(sections, "ATOM_NAME", 'a', name);
  const Section& charges = section(sections, "CHARGE", 'e', name);
  const Section& labels = section(sections, "RESIDUE_LABEL", 'a', name);
  const Section& starts = section(sections, "RESIDUE_POINTER", 'i', name);
  check_count(names, "ATOM_NAME", atoms, "atoms (NATOM)", name);
  check_count(charges, "CHARGE", atoms, "atoms (NATOM)", name);
  check_count(labels, "RESIDUE_LABEL", residues, "residues (NRES)", name);
  check_count(starts, "RESIDUE_POINTER", residues, "residues (NRES)", name);

  System system;
  system.source_path = name;
  system.source_format = "prmtop";
  system.atoms.resize(atoms);
  for (std::size_t i = 0; i < atoms; ++i) {
    Atom& atom = system.atoms[i];
    atom.serial = static_cast<long long>(i) + 1;
    atom.name = names.fields[i];
    double q = 0.0;
    switch (detail::parse_double(charges.fields[i], q)) {
      case detail::NumberStatus::kNotNumber:
        throw InputError(name, charges.lines[i],
                         "%FLAG CHARGE: not a number: " + quote(charges.fields[i]));
      case detail::NumberStatus::kNotFinite:
        throw InputError(name, charges.lines[i],
                         "%FLAG CHARGE: not a finite number: " + quote(charges.fields[i]));
      case detail::NumberStatus::kOk: break;
    }
    atom.charge = q / kAmberChargeFactor;
    if (std::fabs(atom.charge) > limits::kMaxCharge)
      throw InputError(name, charges.lines[i],
                       "%FLAG CHARGE: charge " + quote(charges.fields[i]) + " / 18.2223 beyond " +
                           "the limit of 1e6 e");
  }
  // RESIDUE_POINTER: the 1-based first atom of each residue, 1 for the first, increasing.
  for (std::size_t r = 0; r < residues; ++r) {
    const long long first = integer_at(starts, r, "RESIDUE_POINTER", name);
    const long long previous = r == 0 ? 0 : integer_at(starts, r - 1, "RESIDUE_POINTER", name);
    if ((r == 0 && first != 1) || (r > 0 && first <= previous) || first > natom)
      throw InputError(name, starts.lines[r],
                       "%FLAG RESIDUE_POINTER: residue " + std::to_string(r + 1) +
                           " starts at atom " + std::to_string(first) +
                           (r == 0 ? ", not 1" : ", not after the previous residue's start") +
                           (first > natom ? " (beyond NATOM)" : ""));
    const auto end = r + 1 < residues
                         ? static_cast<std::size_t>(std::min(
                               integer_at(starts, r + 1, "RESIDUE_POINTER", name), natom + 1))
                         : atoms + 1;
    for (auto i = static_cast<std::size_t>(first); i < end; ++i) {
      system.atoms[i - 1].res_name = labels.fields[r];
      system.atoms[i - 1].res_seq = static_cast<long long>(r) + 1;
    }
  }
  read_bonds(sections, atoms, name, system);
  return system;
}

}  // namespace detail

System parse_prmtop(std::istream& in, const std::string& name) {
  detail::StreamLineSource source(in, name);
  return detail::parse_prmtop_lines(source, name);
}

}  // namespace dcs::io
