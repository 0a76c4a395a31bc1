// One value per atom (the potential at each atom centre, from the other atoms) as a PDB file
// that molecular viewers colour by: the value goes into the B-factor column, which PyMOL
// (`spectrum b, red_white_blue`), VMD (colouring method Beta) and ChimeraX (`color byattribute
// bfactor palette red:white:blue`) all read.
//
// Why PDB and not PQR: a PQR record's last two columns are the charge and the radius, and no
// viewer reads a column after them, so a PQR cannot carry a value without losing what makes it
// a PQR. A name ending in .pqr is therefore refused (UsageError saying so); the atoms' names,
// residues, chains and serials come from dcs::Atom as the PQR reader kept them.
//
// The B-factor column is 6 characters wide (columns 61-66), so "%6.2f" holds only -99.99 to
// 999.99: larger values are written with 1 decimal (to -999.9 / 9999.9), then none (to -99999 /
// 999999); values beyond (or not finite: written as 0.00) are clamped. A REMARK line says how
// many values were rounded to fewer decimals or clamped, and that the exact values are in the
// table (write_point_csv / write_point_hdf5). Serials above 99999 and residue numbers above
// 9999 use hybrid-36 (as gemmi, PyMOL and the wwPDB tools read them).
#pragma once

#include <string>
#include <vector>

#include "dcs/types.hpp"

namespace dcs::io {

/// The range the B-factor column holds (with 0 decimals).
inline constexpr double kMinBFactor = -99999.0;
inline constexpr double kMaxBFactor = 999999.0;

struct AtomValuesMeta {
  std::string unit;                  ///< e.g. "kT/e"
  std::vector<std::string> remarks;  ///< REMARK lines (physics, input); one line each
  std::string values_table;          ///< the table with the exact values, if any
  bool force = false;                ///< replace an existing file (check_output_path())
};

/// Writes `system`'s atoms with `values` (one per atom, in meta.unit) in the B-factor column,
/// occupancy 1.00. Coordinates must fit PDB's %8.3f columns (-999.999 to 9999.999 Å);
/// UsageError otherwise, and for a name that does not end in .pdb or .ent. The file is written
/// under a temporary name and renamed when complete. Throws IoError; InternalError when
/// values.size() != system.size().
void write_atoms_with_values(const std::string& path, const System& system,
                             const std::vector<float>& values, const AtomValuesMeta& meta);

/// `system`'s atoms as PQR records in pdb2pqr's fixed columns (those of a PDB file up to the
/// coordinates, then the charge and the radius), for viewers: an atom's radius where it has one,
/// else one by the element its name starts with (Bondi's van der Waals radii: H 1.2, C 1.7,
/// N 1.55, O 1.52, S and P 1.8, others 1.5 Å); `guessed` receives how many radii were guessed.
/// UsageError for a coordinate beyond the columns (as write_atoms_with_values()).
std::string pqr_records(const System& system, const std::string& path, std::size_t& guessed);

/// The B-factor field (6 characters) of `value`: "%6.2f", else "%6.1f", else "%6.0f", else the
/// clamped limit ("0.00" for NaN). `decimals` receives 2, 1, 0, or -1 when clamped.
std::string b_factor_field(double value, int& decimals);

}  // namespace dcs::io
