// Checks of a trajectory file's headers made before chemfiles opens it (trajectory.cpp).
// chemfiles trusts the sizes it reads: the atom count of a DCD header or of any XTC/TRR frame
// sizes a buffer (a corrupt count of 2^31 asks for 24 GB), as do the lengths of XDR strings and
// of NetCDF names and attributes. These checks walk the same headers first, the way chemfiles
// will, and refuse a file whose atom count differs from the topology's or whose sizes exceed the
// file, so that what chemfiles allocates is bounded by the file size and the atom count.
#pragma once

#include <cstddef>
#include <string>

#include "xtc_check.hpp"

namespace dcs::io::detail {

enum class TrajectoryKind { kDcd, kXtc, kTrr, kNetcdf };

/// Throws InputError "<path>: <N><mismatch>" when a header states N != `atoms` atoms, and
/// InputError "<path>: [frame K: ]reason" for a header that is truncated or inconsistent.
/// For XTC, returns the frame offsets that check_xtc_frame() needs (empty for the others).
XtcFrames guard_trajectory_file(const std::string& path, TrajectoryKind kind, std::size_t atoms,
                                const std::string& mismatch);

}  // namespace dcs::io::detail
