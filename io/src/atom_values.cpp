// Atoms for viewers: with a value each, as PDB records with the value in the B-factor column,
// or as PQR records with their charges and radii (dcs/io/atom_values.hpp).
#include "dcs/io/atom_values.hpp"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <string_view>

#include <fmt/format.h>

#include "atom_text.hpp"
#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"

namespace dcs::io {
namespace {

/// Hybrid-36 (wwPDB): decimal while it fits `width` digits, then A000.. and a000.. in base 36.
std::string hybrid36(long long value, int width) {
  long long decimal_limit = 1;
  for (int k = 0; k < width; ++k) decimal_limit *= 10;
  if (value > -decimal_limit / 10 && value < decimal_limit)
    return fmt::format("{:>{}}", value, width);
  long long block = 26;
  for (int k = 1; k < width; ++k) block *= 36;  // 26 * 36^(width-1)
  const long long shift = block / 26 * 10;      // 10 * 36^(width-1): skips "0..." to "A..."
  long long rest = value - decimal_limit;
  const char* digits = nullptr;
  if (rest >= 0 && rest < block) {
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  } else if (rest >= block && rest < 2 * block) {
    rest -= block;
    digits = "0123456789abcdefghijklmnopqrstuvwxyz";
  } else {
    return std::string(static_cast<std::size_t>(width), '*');
  }
  rest += shift;
  std::string out(static_cast<std::size_t>(width), '0');
  for (int k = width - 1; k >= 0; --k) {
    out[static_cast<std::size_t>(k)] = digits[rest % 36];
    rest /= 36;
  }
  return out;
}

/// PDB columns 13-16: names shorter than 4 start in column 14 (the element's second letter
/// lines up), as PDB writers do.
std::string atom_name(const std::string& name) {
  std::string out = name.size() >= 4 ? name.substr(0, 4) : " " + name;
  out.resize(4, ' ');
  return out;
}

std::string coordinate(double value, const std::string& path, const Atom& atom) {
  std::string text = fmt::format("{:8.3f}", value);
  if (text.size() != 8 || !std::isfinite(value))
    throw UsageError(fmt::format(
        "{}: atom {} at coordinate {} does not fit the PDB format's columns (-999.999 to "
        "9999.999 Å); write the values as a table (CSV or HDF5) instead",
        path, atom.serial, value));
  return text;
}

void check_name(const std::string& path) {
  std::string name = detail::upper(std::filesystem::path(path).filename().string());
  const auto ends_with = [&](std::string_view suffix) {
    return name.size() > suffix.size() && name.ends_with(suffix);
  };
  if (ends_with(".PDB") || ends_with(".ENT")) return;
  if (ends_with(".PQR"))
    throw UsageError(
        path +
        ": a PQR file cannot carry a value per atom (its last columns are the charge "
        "and the radius, and no viewer reads a column after them); write .pdb: the "
        "value goes into the B-factor column, which PyMOL, VMD and ChimeraX colour by");
  throw UsageError(path + ": atoms with values are written as PDB; the name must end in .pdb");
}

/// `text` as REMARK lines of at most 80 columns, broken at blanks.
void remark(std::string& out, std::string_view text) {
  constexpr std::size_t kWidth = 69;  // 80 columns less "REMARK 999 " ... kept short
  while (!text.empty()) {
    std::size_t cut = text.size();
    if (cut > kWidth) {
      cut = text.rfind(' ', kWidth);
      if (cut == std::string_view::npos || cut == 0) cut = kWidth;
    }
    std::string piece(text.substr(0, cut));
    for (char& c : piece)
      if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    out += "REMARK 250 " + piece + "\n";
    text.remove_prefix(cut);
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  }
}

/// A radius for a viewer's surface by the element the atom's name starts with (Bondi 1964).
double guessed_radius(const std::string& name) {
  for (const char c : name) {
    switch (c) {
      case 'H':
      case 'h': return 1.2;
      case 'C':
      case 'c': return 1.7;
      case 'N':
      case 'n': return 1.55;
      case 'O':
      case 'o': return 1.52;
      case 'S':
      case 's':
      case 'P':
      case 'p': return 1.8;
      default: break;
    }
    if (std::isalpha(static_cast<unsigned char>(c))) break;  // "1HB": the digit is skipped
  }
  return 1.5;
}

}  // namespace

std::string pqr_records(const System& system, const std::string& path, std::size_t& guessed) {
  std::string body;
  body.reserve(system.size() * 82);
  guessed = 0;
  for (const Atom& atom : system.atoms) {
    std::string res_name = atom.res_name.substr(0, 4);
    res_name.resize(4, ' ');
    const char chain = atom.chain.empty() ? ' ' : atom.chain.front();
    const double radius = atom.radius > 0.0 ? atom.radius : guessed_radius(atom.name);
    if (!(atom.radius > 0.0)) ++guessed;
    body += fmt::format(
        "{:<6}{} {} {}{}{}    {}{}{} {:7.4f} {:6.4f}\n", atom.hetatm ? "HETATM" : "ATOM",
        hybrid36(atom.serial, 5), atom_name(atom.name), res_name, chain, hybrid36(atom.res_seq, 4),
        coordinate(atom.position[0], path, atom), coordinate(atom.position[1], path, atom),
        coordinate(atom.position[2], path, atom), atom.charge, radius);
  }
  return body;
}

std::string b_factor_field(double value, int& decimals) {
  if (std::isnan(value)) {
    decimals = -1;
    return "  0.00";
  }
  for (int d = 2; d >= 0; --d) {
    std::string text = fmt::format("{:6.{}f}", value, d);
    if (text.size() == 6) {
      decimals = d;
      return text;
    }
  }
  decimals = -1;
  return fmt::format("{:6.0f}", value < 0 ? kMinBFactor : kMaxBFactor);
}

void write_atoms_with_values(const std::string& path, const System& system,
                             const std::vector<float>& values, const AtomValuesMeta& meta) {
  check_name(path);
  if (values.size() != system.size())
    throw InternalError(fmt::format("write_atoms_with_values: {} values for {} atoms",
                                    values.size(), system.size()));
  std::string body;
  body.reserve(system.size() * 81);
  std::size_t fewer_decimals = 0;
  std::size_t clamped = 0;
  for (std::size_t i = 0; i < system.size(); ++i) {
    const Atom& atom = system.atoms[i];
    int decimals = 2;
    const std::string b = b_factor_field(values[i], decimals);
    if (decimals < 0) ++clamped;
    else if (decimals < 2) ++fewer_decimals;
    std::string res_name = atom.res_name.substr(0, 4);
    res_name.resize(4, ' ');
    const char chain = atom.chain.empty() ? ' ' : atom.chain.front();
    // Columns: record 1-6, serial 7-11, name 13-16, resName 18-21, chain 22, resSeq 23-26,
    // x y z 31-54, occupancy 55-60, B-factor 61-66.
    body += fmt::format(
        "{:<6}{} {} {}{}{}    {}{}{}{:6.2f}{}          \n", atom.hetatm ? "HETATM" : "ATOM",
        hybrid36(atom.serial, 5), atom_name(atom.name), res_name, chain, hybrid36(atom.res_seq, 4),
        coordinate(atom.position[0], path, atom), coordinate(atom.position[1], path, atom),
        coordinate(atom.position[2], path, atom), 1.0, b);
  }
  std::string head;
  remark(head, "dcs: electrostatic potential at each atom centre in the B-factor column" +
                   (meta.unit.empty() ? std::string() : " (" + meta.unit + ")") +
                   "; occupancy 1.00");
  for (const std::string& line : meta.remarks) remark(head, line);
  if (fewer_decimals + clamped > 0)
    remark(head, fmt::format("{} values shown with fewer than 2 decimals and {} clamped to "
                             "[{}, {}] (the B-factor column has 6 characters); the exact values "
                             "are in {}",
                             fewer_decimals, clamped, kMinBFactor, kMaxBFactor,
                             meta.values_table.empty() ? std::string("the table written with it")
                                                       : meta.values_table));
  AtomicFile file(path, meta.force);
  file.write(head.data(), head.size());
  file.write(body.data(), body.size());
  file.write("END\n", 4);
  file.commit();
}

}  // namespace dcs::io
