// The bounds every atom must keep before it is computed (dcs/limits.hpp says why), for atoms
// that come from somewhere other than a text parser with its own line numbers: topologies and
// the arrays of a library caller (the Python package).
#pragma once

#include <string>

#include "dcs/types.hpp"

namespace dcs {

/// Throws InputError("<source>: atom N: ...") for no atoms, or for the first atom whose charge
/// or coordinate is not finite or beyond the limits (1e6 e, 1e6 Å).
void check_atoms(const System& system, const std::string& source);

}  // namespace dcs
