// The topology formats read through chemfiles (topology_chemfiles.cpp), or refused in builds
// without the trajectory readers (no_chemfiles.cpp).
#pragma once

#include <string>

#include "dcs/types.hpp"

namespace dcs::io::detail {

/// PSF (plain or gzipped) or GROMACS TPR: names, residues, charges, bonds, and for TPR the
/// positions and the cell. InputError naming `path` for a file chemfiles cannot read.
System read_psf_or_tpr(const std::string& path, bool tpr);

}  // namespace dcs::io::detail
