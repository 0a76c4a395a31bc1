// Topologies of MD systems: the charges and identities of every atom, read from the files MD
// engines write (CHARMM/NAMD PSF, AMBER PRMTOP, GROMACS TPR) or from a PQR file. The positions
// of a trajectory come separately (dcs/io/trajectory.hpp). Each call reads its file
// synchronously on the calling thread; calls share no state.
//
// PSF and TPR are read by chemfiles (PSF through VMD's molfile plugin), PRMTOP by our own
// parser (chemfiles has none), PQR by read_atoms() (dcs/io/pqr.hpp).
#pragma once

#include <istream>
#include <string>

#include "dcs/types.hpp"

namespace dcs::io {

/// Charges and identities of an MD system, one Atom per atom in file order: name, res_name,
/// res_seq (PSF: the file's resid; PRMTOP and TPR: the 1-based residue ordinal over the system,
/// as MDAnalysis numbers them), chain, segment (PSF segid; empty for PRMTOP and TPR, whose
/// chemfiles reader does not report molecule blocks), serial (the 1-based index: chemfiles does not
/// report the file's numbers; PQR keeps its serials), charge in e (PRMTOP: the stored value
/// / 18.2223, as AMBER and MDAnalysis do). Positions are zero unless the format has them (TPR,
/// PQR). The format comes from the extension: .psf, .prmtop/.parm7, .tpr, .pqr/.pqr.gz
/// (case-insensitive). System::source_path, source_format ("psf", "prmtop", "tpr", "pqr") and
/// source_sha256 are set. Throws UsageError for an unknown extension (listing the known ones),
/// InputError
/// "<file>[:line]: reason" for bad content and for a missing or unreadable file (as
/// read_atoms() does: exit status 3): charges beyond dcs/limits.hpp, non-finite values, no atoms.
System read_topology(const std::string& path);

/// "PSF (.psf), AMBER PRMTOP (.prmtop, .parm7), GROMACS TPR (.tpr), PQR (.pqr, .pqr.gz)".
std::string topology_formats();

/// AMBER PRMTOP text (the %FLAG/%FORMAT layout of AMBER 7 and later): POINTERS (NATOM, NRES),
/// ATOM_NAME, CHARGE, RESIDUE_LABEL, RESIDUE_POINTER, and the bonds (BONDS_INC_HYDROGEN,
/// BONDS_WITHOUT_HYDROGEN) where present; the other sections are skipped. res_seq
/// is the 1-based residue ordinal. `name` is used in messages and as source_path; source_sha256
/// stays empty. Throws InputError "<name>:<line>: reason" (line 0 for a missing section).
System parse_prmtop(std::istream& in, const std::string& name);

}  // namespace dcs::io
