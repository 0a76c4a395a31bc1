// Mesh files: the format by extension, the whole file read once, normals, and the writers'
// shared parts (dcs/io/mesh.hpp). Each format's reader and writer is in mesh_<format>.cpp.
#include "dcs/io/mesh.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "atom_text.hpp"
#include "dcs/interrupt.hpp"
#include "dcs/io/pqr.hpp"
#include "dcs/limits.hpp"
#include "dcs/log.hpp"
#include "input_path.hpp"
#include "line_source.hpp"
#include "mesh_formats.hpp"

namespace dcs::io {
namespace detail {

bool MeshCursor::line(std::string_view& out) {
  if (at_end()) return false;
  mark_ = pos_;
  std::size_t end = pos_;
  while (end < data_.size() && data_[end] != '\n' && data_[end] != '\r') ++end;
  if (end - pos_ > kMaxLineBytes)
    fail_text(fmt::format("line longer than {} bytes: not a {} file, or a damaged one",
                          kMaxLineBytes, "mesh"));
  out = data_.substr(pos_, end - pos_);
  pos_ = end;
  if (pos_ < data_.size()) {
    if (data_[pos_] == '\r' && pos_ + 1 < data_.size() && data_[pos_ + 1] == '\n') ++pos_;
    ++pos_;
  }
  return true;
}

namespace {
bool is_space(char c) noexcept { return is_blank(c) || c == '\n'; }
}  // namespace

void MeshCursor::skip_space() noexcept {
  while (pos_ < data_.size() && is_space(data_[pos_])) ++pos_;
}

bool MeshCursor::looking_at(std::string_view prefix) const noexcept {
  if (remaining() < prefix.size()) return false;
  for (std::size_t k = 0; k < prefix.size(); ++k) {
    const auto a = static_cast<unsigned char>(data_[pos_ + k]);
    const auto b = static_cast<unsigned char>(prefix[k]);
    if (std::toupper(a) != std::toupper(b)) return false;
  }
  return true;
}

std::string_view MeshCursor::token() {
  skip_space();
  mark_ = pos_;
  const std::size_t start = pos_;
  while (pos_ < data_.size() && !is_space(data_[pos_])) ++pos_;
  if (pos_ - start > kMaxLineBytes)
    fail_text(fmt::format("a field longer than {} bytes: a damaged file", kMaxLineBytes));
  return data_.substr(start, pos_ - start);
}

const char* MeshCursor::bytes(std::size_t n, const char* what) {
  if (n > remaining())
    fail_at(pos_, fmt::format("truncated: {} needs {} bytes, {} left", what, n, remaining()));
  const char* at = data_.data() + pos_;
  pos_ += n;
  return at;
}

std::uint64_t MeshCursor::line_number_at(std::size_t offset) const noexcept {
  std::uint64_t line = 1;
  for (std::size_t i = 0; i < offset && i < data_.size(); ++i) {
    if (data_[i] == '\n') ++line;
    if (data_[i] == '\r' && (i + 1 >= data_.size() || data_[i + 1] != '\n')) ++line;
  }
  return line;
}

void MeshCursor::fail_text(const std::string& reason) const {
  throw InputError(name_, line_number_at(mark_), reason);
}

void MeshCursor::fail_at(std::size_t offset, const std::string& reason) const {
  throw InputError(name_, 0, fmt::format("byte {}: {}", offset, reason));
}

std::string number_text(double value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  return std::string(buffer, end);
}

std::string vertex_problem(const Vec3& v, std::size_t index) {
  for (const double c : v) {
    if (!std::isfinite(c))
      return fmt::format("vertex {} has a coordinate that is not a finite number ({})", index,
                         number_text(c));
    if (std::fabs(c) > limits::kMaxGridCoordinate)
      return fmt::format(
          "vertex {}: coordinate {} is outside the accepted ±{} Å (larger values overflow the "
          "float32 computation; see README, What dcs refuses)",
          index, number_text(c), number_text(limits::kMaxGridCoordinate));
  }
  return {};
}

std::string normal_problem(const Vec3& n, std::size_t index) {
  for (const double c : n)
    if (!std::isfinite(c))
      return fmt::format("normal of vertex {} is not finite ({})", index, number_text(c));
  return {};
}

void OutputBuffer::put_float(float value) {
  char buffer[32];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  text_.append(buffer, end);
}

void OutputBuffer::put_uint(std::uint64_t value) {
  char buffer[24];
  const auto end = std::to_chars(buffer, buffer + sizeof buffer, value).ptr;
  text_.append(buffer, end);
}

std::vector<std::string> header_comments(const MeshOutput& what, bool has_value_field) {
  std::vector<std::string> lines;
  lines.push_back(has_value_field
                      ? "dcs: electrostatic potential at each vertex (property potential)"
                      : "dcs: electrostatic potential at each vertex, shown as vertex colours");
  if (!what.meta.unit.empty()) lines.push_back("unit: " + what.meta.unit);
  for (const std::string& comment : what.meta.comments) lines.push_back(comment);
  lines.push_back("colour: " + what.colours.describe(what.meta.unit));
  if (!has_value_field) {
    lines.push_back("OBJ has no field for a value per vertex: the potentials are in the table " +
                    (what.meta.values_table.empty() ? std::string("(CSV/HDF5) written with it")
                                                    : what.meta.values_table) +
                    ", in vertex order");
  } else if (!what.meta.values_table.empty()) {
    lines.push_back("the same values in a table: " + what.meta.values_table);
  }
  // One header line each: a newline inside a comment would end it.
  for (std::string& line : lines)
    std::replace_if(
        line.begin(), line.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  return lines;
}

}  // namespace detail

const char* format_name(MeshFormat format) noexcept {
  switch (format) {
    case MeshFormat::kPly: return "PLY";
    case MeshFormat::kObj: return "OBJ";
    case MeshFormat::kVtk: return "VTK";
  }
  return "?";
}

MeshFormat mesh_format_of(const std::string& path) {
  const std::string name = detail::upper(std::filesystem::path(path).filename().string());
  const auto ends_with = [&](std::string_view suffix) {
    return name.size() > suffix.size() && name.ends_with(suffix);
  };
  if (ends_with(".PLY")) return MeshFormat::kPly;
  if (ends_with(".OBJ")) return MeshFormat::kObj;
  if (ends_with(".VTK")) return MeshFormat::kVtk;
  throw UsageError(path + ": unknown mesh format; dcs reads and writes .ply, .obj and .vtk");
}

Mesh parse_mesh(std::string_view bytes, MeshFormat format, const std::string& name) {
  if (bytes.empty()) throw InputError(name, 0, "empty file");
  Mesh mesh;
  switch (format) {
    case MeshFormat::kPly: mesh = detail::parse_ply(bytes, name); break;
    case MeshFormat::kObj: mesh = detail::parse_obj(bytes, name); break;
    case MeshFormat::kVtk: mesh = detail::parse_vtk(bytes, name); break;
  }
  mesh.format = format;
  mesh.source_path = name;
  if (mesh.vertices.empty()) throw InputError(name, 0, "no vertices");
  if (mesh.face_offsets.empty()) mesh.face_offsets.push_back(0);
  return mesh;
}

Mesh read_mesh(const std::string& path) {
  const MeshFormat format = mesh_format_of(path);
  detail::check_input_exists(path, "a mesh file");
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxMeshFileBytes)
    throw InputError(path, 0,
                     fmt::format("{} bytes: larger than the {} GiB dcs reads as a mesh", size,
                                 kMaxMeshFileBytes >> 30));
  detail::InputFile file(path);
  std::string bytes;
  if (!error) bytes.reserve(static_cast<std::size_t>(size));
  std::vector<char> block(std::size_t{1} << 20);
  for (;;) {
    if (interrupt_requested()) throw InterruptedError(path + ": interrupted while reading");
    const long long got = file.read(block.data(), block.size());
    if (got < 0) throw InputError(path, 0, "read error");
    if (got == 0) break;
    if (bytes.size() + static_cast<std::size_t>(got) > kMaxMeshFileBytes)
      throw InputError(
          path, 0,
          fmt::format("larger than the {} GiB dcs reads as a mesh", kMaxMeshFileBytes >> 30));
    bytes.append(block.data(), static_cast<std::size_t>(got));
  }
  Mesh mesh = parse_mesh(bytes, format, path);
  log().debug("read a {} mesh of {} vertices and {} faces from {}", format_name(format),
              mesh.vertices.size(), mesh.face_count(), path);
  return mesh;
}

std::vector<Vec3> vertex_normals(const Mesh& mesh) {
  const std::size_t n = mesh.vertices.size();
  std::vector<Vec3> normals(n, Vec3{0.0, 0.0, 0.0});
  const auto fail = [&](std::size_t v, const std::string& why) {
    throw InputError(mesh.source_path, 0,
                     fmt::format("vertex {} {}: an offset needs a normal at every vertex", v, why));
  };
  if (!mesh.normals.empty()) {
    for (std::size_t v = 0; v < n; ++v) {
      const Vec3& g = mesh.normals[v];
      const double length = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
      if (!(length > 0.0) || !std::isfinite(length)) fail(v, "has a zero-length normal");
      normals[v] = {g[0] / length, g[1] / length, g[2] / length};
    }
    return normals;
  }
  std::vector<bool> in_face(n, false);
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    const std::uint32_t begin = mesh.face_offsets[f];
    const std::uint32_t end = mesh.face_offsets[f + 1];
    // Newell: twice the polygon's vector area, along the normal of counter-clockwise winding.
    Vec3 area{0.0, 0.0, 0.0};
    for (std::uint32_t k = begin; k < end; ++k) {
      const Vec3& a = mesh.vertices[mesh.face_indices[k]];
      const Vec3& b = mesh.vertices[mesh.face_indices[k + 1 < end ? k + 1 : begin]];
      area[0] += (a[1] - b[1]) * (a[2] + b[2]);
      area[1] += (a[2] - b[2]) * (a[0] + b[0]);
      area[2] += (a[0] - b[0]) * (a[1] + b[1]);
    }
    for (std::uint32_t k = begin; k < end; ++k) {
      Vec3& sum = normals[mesh.face_indices[k]];
      for (std::size_t axis = 0; axis < 3; ++axis) sum[axis] += area[axis];
      in_face[mesh.face_indices[k]] = true;
    }
  }
  for (std::size_t v = 0; v < n; ++v) {
    Vec3& g = normals[v];
    const double length = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    if (!in_face[v]) fail(v, "is in no face and the file gives no normals");
    if (!(length > 0.0) || !std::isfinite(length))
      fail(v, "has faces without area around it and the file gives no normals");
    g = {g[0] / length, g[1] / length, g[2] / length};
  }
  return normals;
}

void write_mesh(const std::string& path, const Mesh& mesh, const std::vector<float>& values,
                const ColourMap& colours, const MeshWriteMeta& meta) {
  const MeshFormat format = mesh_format_of(path);
  if (values.size() != mesh.vertices.size())
    throw InternalError(
        fmt::format("write_mesh: {} values for {} vertices", values.size(), mesh.vertices.size()));
  if (!mesh.normals.empty() && mesh.normals.size() != mesh.vertices.size())
    throw InternalError(fmt::format("write_mesh: {} normals for {} vertices", mesh.normals.size(),
                                    mesh.vertices.size()));
  detail::MeshOutput what{mesh, values, colours, meta, {}, {}};
  what.rgb.reserve(values.size());
  for (const float value : values) what.rgb.push_back(colours.colour(value));
  // Unit normals: what viewers expect, and what float32 holds (a normal of 1e300, fine as a
  // double, would be written as inf).
  what.normals.reserve(mesh.normals.size());
  for (const Vec3& g : mesh.normals) {
    const double scale = std::max({std::fabs(g[0]), std::fabs(g[1]), std::fabs(g[2])});
    if (!(scale > 0.0)) {
      what.normals.push_back({0.0, 0.0, 0.0});
      continue;
    }
    const Vec3 s{g[0] / scale, g[1] / scale, g[2] / scale};  // no overflow in the squares
    const double length = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    what.normals.push_back({s[0] / length, s[1] / length, s[2] / length});
  }
  AtomicFile file(path, meta.force);
  detail::OutputBuffer out(file);
  switch (format) {
    case MeshFormat::kPly: detail::write_ply(out, what); break;
    case MeshFormat::kObj: detail::write_obj(out, what); break;
    case MeshFormat::kVtk: detail::write_vtk(out, what); break;
  }
  out.flush();
  file.commit();
}

}  // namespace dcs::io
