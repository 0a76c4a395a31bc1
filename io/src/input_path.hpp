// The first check of every input path, shared by the readers (atom files, topologies,
// trajectories): it exists and is not a directory.
#pragma once

#include <string>

namespace dcs::io::detail {

/// InputError "<path>: no such file" / "cannot access the file: ..." / "<path>: is a directory,
/// not <kind>" (kind: "an atom file", "a trajectory file", ...).
void check_input_exists(const std::string& path, const char* kind);

}  // namespace dcs::io::detail
