// The first checks of every input path, shared by the readers (atom files, topologies,
// trajectories): it exists and is not a directory; names compared case-insensitively.
#pragma once

#include <string>

namespace dcs::io::detail {

/// InputError "<path>: no such file" / "cannot access the file: ..." / "<path>: is a directory,
/// not <kind>" (kind: "an atom file", "a trajectory file", ...).
void check_input_exists(const std::string& path, const char* kind);

/// The file exists, is a regular file and can be opened (topologies and trajectories, checked
/// before a path is handed to a reader library); InputError otherwise.
void check_readable(const std::string& path);

/// The path's file name in lower case: extensions compare case-insensitively.
std::string lower_file_name(const std::string& path);

/// Whether the file name ends in .gz (any case): the text formats are read through gzip.
bool gzipped_name(const std::string& path);

}  // namespace dcs::io::detail
