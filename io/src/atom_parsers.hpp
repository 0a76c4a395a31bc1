// The parsers behind read_atoms(), read_models(), parse_pqr*() and parse_xyzq(): each reads the
// lines of one LineSource.
#pragma once

#include <string>
#include <vector>

#include "dcs/types.hpp"
#include "line_source.hpp"

namespace dcs::io::detail {

/// How a PQR file's models are read.
struct ModelRead {
  bool all = false;         ///< every model, MODEL/ENDMDL pairing checked; else the first only
  bool same_atoms = false;  ///< all: every model must repeat the first one's atoms
};

/// The models of PQR text (one System when !how.all). See pqr.hpp, Models.
std::vector<System> parse_pqr_lines(LineSource& source, const std::string& name,
                                    const ModelRead& how);

/// Why `system`, read from a .pqr file, is evidently a PDB file (occupancies as charges,
/// B-factors as radii); "" when it may be a PQR file. See pdb_check.cpp.
std::string pdb_like(const System& system);

/// "x y z q" text.
System parse_xyzq_lines(LineSource& source, const std::string& name);

}  // namespace dcs::io::detail
