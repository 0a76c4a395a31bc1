// SHA-256 checksums for provenance: the HDF5 output records the digest of the input file so that
// a map can be traced back to the exact bytes it was computed from.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace dcs::io {

/// Incremental SHA-256 (OpenSSL's EVP interface): for a digest computed while the bytes are
/// read for another purpose, so that a file is read once.
class Sha256 {
 public:
  Sha256();  ///< throws dcs::Error when OpenSSL cannot set up a digest
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(const void* data, std::size_t size);
  /// Lowercase hexadecimal digest of everything passed to update(); call once.
  std::string hex();

 private:
  struct Context;
  std::unique_ptr<Context> context_;
};

/// Lowercase hexadecimal SHA-256 (64 characters) of a file's bytes as stored on disk (for a
/// .gz file: of the compressed bytes). Reads the file in blocks; blocks the caller until done.
/// Throws dcs::IoError naming the file if it cannot be opened or read.
std::string sha256_file(const std::string& path);

/// Lowercase hexadecimal SHA-256 of a byte string.
std::string sha256_hex(std::string_view bytes);

}  // namespace dcs::io
