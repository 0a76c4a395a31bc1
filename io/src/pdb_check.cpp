// A PDB file renamed to .pqr parses as PQR: its occupancy column is read as the charges and its
// B-factor column as the radii, and the map comes out with a total charge of about +1 e per atom.
// The check is conservative: it never refuses a pdb2pqr or APBS file (every PQR of Debian's
// apbs-data and data/*.pqr pass, tests/io/pqr/test_apbs_corpus.cpp). It refuses a file only
// when all of these hold:
// - at least kMinAtoms atoms (APBS's point-charge and ion examples have one or two, charge +1);
// - every charge lies in [0, 1] and at least 90% are exactly 1 (occupancies: 1.00, alternate
//   conformations 0.50 ...), so the total charge is nearly the atom count;
// - the radii look like B-factors: median above 3 Å (force-field radii of the atoms of a
//   molecule are about 1-2.3 Å; B-factors of X-ray structures 5-80 Å²), all exactly 0 (NMR and
//   modelled PDB files), or some exactly 0 and the median of the others above 3 Å (hydrogens
//   added with B = 0 to a crystal structure, as MD setups write them: when they are half of the
//   atoms, the median of all is 0).
// A PDB file with element symbols (columns 77-78) does not even parse as PQR: the line that
// fails is recognised by its columns and named as PDB, instead of "radius 'N' is not a number".
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "atom_parsers.hpp"
#include "atom_text.hpp"

namespace dcs::io::detail {
namespace {

constexpr std::size_t kMinAtoms = 10;
constexpr double kMinOnesFraction = 0.9;
constexpr double kMaxMedianRadius = 3.0;  // Å

}  // namespace

std::string pdb_like(const System& system) {
  const std::size_t count = system.atoms.size();
  if (count < kMinAtoms) return {};
  std::size_t ones = 0;
  for (const Atom& atom : system.atoms) {
    if (atom.charge < 0.0 || atom.charge > 1.0) return {};
    if (atom.charge == 1.0) ++ones;
  }
  if (static_cast<double>(ones) < kMinOnesFraction * static_cast<double>(count)) return {};
  std::vector<double> radii;  // the non-zero ones
  radii.reserve(count);
  for (const Atom& atom : system.atoms)
    if (atom.radius != 0.0) radii.push_back(atom.radius);
  const std::size_t zeros = count - radii.size();
  const bool all_zero = radii.empty();
  double median = 0.0;
  if (!all_zero) {
    std::nth_element(radii.begin(), radii.begin() + static_cast<std::ptrdiff_t>(radii.size() / 2),
                     radii.end());
    median = radii[radii.size() / 2];
  }
  if (!all_zero && median <= kMaxMedianRadius) return {};
  const std::string radii_text =
      all_zero    ? std::string("are all 0")
      : zeros > 0 ? fmt::format("are 0 for {} atoms and have a median of {:.2f} Å for the others",
                                zeros, median)
                  : fmt::format("have a median of {:.2f} Å", median);
  return fmt::format(
      "looks like a PDB file, not PQR: {} of the {} charges are exactly 1 and none lies outside "
      "0..1 (total charge {:+.2f} e), as PDB occupancies do, and the radii {} as PDB B-factors "
      "do; dcs needs atomic charges and radii: make a PQR file with pdb2pqr (e.g. pdb2pqr "
      "--ff=AMBER in.pdb out.pqr), or pass --charges-as-given if these charges are meant",
      ones, count, system.total_charge(), radii_text);
}

std::string pdb_atom_record(std::string_view line) {
  // 0-based: record [0, 6), x y z [30, 54) as %8.3f, occupancy [54, 60) and B [60, 66) as
  // %6.2f, blanks [66, 72), segment [72, 76), element [76, 78) right-justified letters.
  if (line.size() < 73 || (line.substr(0, 6) != "ATOM  " && line.substr(0, 6) != "HETATM"))
    return {};
  for (const std::size_t point : {34u, 42u, 50u, 57u, 63u})
    if (line[point] != '.') return {};
  double value = 0.0;
  for (const std::size_t begin : {30u, 38u, 46u})
    if (parse_double(trim(line.substr(begin, 8)), value) != NumberStatus::kOk) return {};
  for (const std::size_t begin : {54u, 60u})
    if (parse_double(trim(line.substr(begin, 6)), value) != NumberStatus::kOk) return {};
  if (!trim(line.substr(66, 6)).empty()) return {};
  const std::string_view segment = trim(line.substr(72, 4));
  const std::string_view element = line.size() > 76 ? trim(line.substr(76, 2)) : "";
  const auto letters = [](std::string_view text) {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); });
  };
  if ((segment.empty() && element.empty()) || !letters(element)) return {};
  std::string after;
  if (!segment.empty()) after += fmt::format(", segment '{}' in 73-76", segment);
  if (!element.empty()) after += fmt::format(", element '{}' in 77-78", element);
  return fmt::format(
      "looks like a PDB file, not PQR: occupancy {} and B-factor {} in PDB's columns 55-66{}; "
      "dcs needs atomic charges and radii: make a PQR file with pdb2pqr (e.g. pdb2pqr "
      "--ff=AMBER in.pdb out.pqr)",
      trim(line.substr(54, 6)), trim(line.substr(60, 6)), after);
}

}  // namespace dcs::io::detail
