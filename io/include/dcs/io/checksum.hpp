// SHA-256 checksums for provenance: the HDF5 output records the digest of the input file so that
// a map can be traced back to the exact bytes it was computed from.
#pragma once

#include <string>
#include <string_view>

namespace dcs::io {

/// Lowercase hexadecimal SHA-256 (64 characters) of a file's bytes as stored on disk (for a
/// .gz file: of the compressed bytes). Reads the file in blocks; blocks the caller until done.
/// Throws dcs::IoError naming the file if it cannot be opened or read.
std::string sha256_file(const std::string& path);

/// Lowercase hexadecimal SHA-256 of a byte string.
std::string sha256_hex(std::string_view bytes);

}  // namespace dcs::io
