// What the chemfiles-based readers (topology.cpp, trajectory.cpp) share: chemfiles' warnings
// routed to dcs's log, and file checks made before a path is handed to chemfiles. chemfiles
// headers stay in io/src: no public header includes them.
#pragma once

#include <string>

namespace dcs::io::detail {

/// Sends chemfiles' warnings (e.g. "unknown unit for time") to dcs::log() at warn level, once
/// per process; call before any chemfiles use.
void route_chemfiles_warnings();

/// The file exists and is a regular file (or a FIFO, which chemfiles cannot read either but
/// should refuse itself); InputError "no such file" / "is a directory" otherwise.
void check_readable(const std::string& path);

/// `name` with its extension compared case-insensitively: lower-case file name.
std::string lower_file_name(const std::string& path);

}  // namespace dcs::io::detail
