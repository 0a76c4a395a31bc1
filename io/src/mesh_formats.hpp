// Private to the mesh readers and writers (mesh*.cpp): a cursor over a file's bytes that reads
// text lines, blank-separated tokens and big- or little-endian binary values, and names the
// line (text) or byte offset (binary) of every error; the checks every format shares; a
// buffered writer onto an AtomicFile; one parse and one write function per format.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/error.hpp"
#include "dcs/io/atomic_file.hpp"
#include "dcs/io/colour_map.hpp"
#include "dcs/io/mesh.hpp"

namespace dcs::io::detail {

class MeshCursor {
 public:
  MeshCursor(std::string_view data, const std::string& name) : data_(data), name_(name) {}

  const std::string& name() const noexcept { return name_; }
  std::size_t pos() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return data_.size() - pos_; }
  bool at_end() const noexcept { return pos_ >= data_.size(); }

  /// The next line without its ending ("\n", "\r\n" or "\r"); false at the end. Marks the
  /// line's start for text errors. Lines over kMaxLineBytes are refused.
  bool line(std::string_view& out);
  /// The next blank-separated token, across line ends; empty at the end of the data.
  std::string_view token();
  /// Skips blanks and line ends (between text and binary sections).
  void skip_space() noexcept;
  /// Whether the bytes at the cursor begin with `prefix`, letters compared without case.
  bool looking_at(std::string_view prefix) const noexcept;
  /// `n` raw bytes; InputError "truncated: <what> needs N bytes, M left" at the current offset.
  const char* bytes(std::size_t n, const char* what);

  /// Binary scalars of `size` bytes (1, 2, 4, 8), swapped when `big_endian` differs from the host.
  template <class T>
  T binary(bool big_endian, const char* what) {
    T value;
    std::memcpy(&value, bytes(sizeof(T), what), sizeof(T));
    if (big_endian != (std::endian::native == std::endian::big)) value = byteswap(value);
    return value;
  }

  /// "<file>:<line of the last token or line>: reason".
  [[noreturn]] void fail_text(const std::string& reason) const;
  /// "<file>: byte <offset>: reason".
  [[noreturn]] void fail_at(std::size_t offset, const std::string& reason) const;
  std::uint64_t line_number_at(std::size_t offset) const noexcept;
  std::size_t mark() const noexcept { return mark_; }

 private:
  template <class T>
  static T byteswap(T value) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(raw[i], raw[sizeof(T) - 1 - i]);
    std::memcpy(&value, raw, sizeof(T));
    return value;
  }

  std::string_view data_;
  const std::string& name_;
  std::size_t pos_ = 0;
  std::size_t mark_ = 0;  ///< start of the last line or token
};

/// Checks one vertex (finite, within kMaxGridCoordinate); "" when fine, else the reason.
std::string vertex_problem(const Vec3& v, std::size_t index);
/// Checks one normal (finite); "" when fine.
std::string normal_problem(const Vec3& n, std::size_t index);

/// A number for a message: "1e+12" style for large, shortest otherwise.
std::string number_text(double value);

Mesh parse_ply(std::string_view bytes, const std::string& name);
Mesh parse_obj(std::string_view bytes, const std::string& name);
Mesh parse_vtk(std::string_view bytes, const std::string& name);

/// Bytes for an AtomicFile, written in blocks of about 1 MiB.
class OutputBuffer {
 public:
  explicit OutputBuffer(AtomicFile& file) : file_(file) { text_.reserve(kBlock + 4096); }
  void put(std::string_view s) {
    text_.append(s);
    if (text_.size() >= kBlock) flush();
  }
  void put(char c) { text_.push_back(c); }
  /// Shortest text that reads back to the same float.
  void put_float(float value);
  void put_uint(std::uint64_t value);
  template <class T>
  void put_binary(T value, bool big_endian) {
    unsigned char raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));
    if (big_endian != (std::endian::native == std::endian::big))
      for (std::size_t i = 0; i < sizeof(T) / 2; ++i) std::swap(raw[i], raw[sizeof(T) - 1 - i]);
    text_.append(reinterpret_cast<const char*>(raw), sizeof(T));
    if (text_.size() >= kBlock) flush();
  }
  void flush() {
    file_.write(text_.data(), text_.size());
    text_.clear();
  }

 private:
  static constexpr std::size_t kBlock = std::size_t{1} << 20;
  AtomicFile& file_;
  std::string text_;
};

/// What the writers of every format share.
struct MeshOutput {
  const Mesh& mesh;
  const std::vector<float>& values;
  const ColourMap& colours;
  const MeshWriteMeta& meta;
  std::vector<Rgb> rgb;       ///< one per vertex
  std::vector<Vec3> normals;  ///< mesh.normals as unit vectors (zero stays zero), or empty
};

void write_ply(OutputBuffer& out, const MeshOutput& what);
void write_obj(OutputBuffer& out, const MeshOutput& what);
void write_vtk(OutputBuffer& out, const MeshOutput& what);

/// Comment lines every writer puts in its header (without the comment marker).
std::vector<std::string> header_comments(const MeshOutput& what, bool has_value_field);

}  // namespace dcs::io::detail
