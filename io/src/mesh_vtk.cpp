// Legacy VTK POLYDATA meshes, ASCII and BINARY (big-endian) (dcs/io/mesh.hpp). After four
// header lines come sections, each a keyword line followed by its values (text tokens, or raw
// big-endian bytes and a newline). Cell sections have two forms: up to version 5.0 "POLYGONS
// <cells> <size>" with <count> <index>... per cell; from 5.1 "POLYGONS <offsets>
// <connectivity>" followed by an OFFSETS and a CONNECTIVITY array.
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "atom_text.hpp"
#include "mesh_formats.hpp"

namespace dcs::io::detail {
namespace {

struct DataType {
  std::string_view name;
  std::size_t size;  ///< bytes in BINARY; 0 for "bit" (packed)
  bool integer;
};

constexpr std::array<DataType, 15> kTypes = {{
    {"bit", 0, true},
    {"unsigned_char", 1, true},
    {"char", 1, true},
    {"unsigned_short", 2, true},
    {"short", 2, true},
    {"unsigned_int", 4, true},
    {"int", 4, true},
    {"unsigned_long", 8, true},
    {"long", 8, true},
    {"vtktypeint64", 8, true},
    {"vtktypeuint64", 8, true},
    {"vtkIdType", 8, true},
    {"float", 4, false},
    {"double", 8, false},
    {"signed_char", 1, true},
}};

class VtkReader {
 public:
  VtkReader(std::string_view bytes, const std::string& name) : in_(bytes, name) {}

  Mesh read() {
    read_header();
    Mesh mesh;
    mesh.binary = binary_;
    mesh.face_offsets.push_back(0);
    std::vector<Field> fields;
    bool dataset = false;
    std::size_t point_data = 0;  // the count of the current POINT_DATA (0: in CELL_DATA or none)
    bool in_point_data = false;
    while (next_keyword_line(fields)) {
      const std::string keyword = upper(fields[0].text);
      if (keyword == "DATASET") {
        if (fields.size() != 2 || upper(fields[1].text) != "POLYDATA")
          in_.fail_text("DATASET " + (fields.size() > 1 ? std::string(fields[1].text) : "") +
                        " is not supported: dcs reads surfaces, DATASET POLYDATA");
        dataset = true;
      } else if (keyword == "FIELD") {
        skip_field(fields);
      } else if (keyword == "METADATA") {
        skip_metadata();
      } else if (!dataset) {
        in_.fail_text("expected DATASET POLYDATA before " + quote(fields[0].text));
      } else if (keyword == "POINTS") {
        read_points(fields, mesh);
      } else if (keyword == "POLYGONS" || keyword == "TRIANGLE_STRIPS" || keyword == "VERTICES" ||
                 keyword == "LINES") {
        read_cells(fields, keyword, mesh);
      } else if (keyword == "POINT_DATA" || keyword == "CELL_DATA") {
        const std::uint64_t count = count_field(fields, 1, 2);
        in_point_data = keyword == "POINT_DATA";
        if (in_point_data && count != mesh.vertices.size())
          in_.fail_text(fmt::format("POINT_DATA {} for {} points", count, mesh.vertices.size()));
        point_data = in_point_data ? static_cast<std::size_t>(count) : 0;
        attribute_count_ = count;
      } else if (keyword == "NORMALS" && in_point_data) {
        read_normals(fields, mesh, point_data);
      } else {
        skip_attribute(fields, keyword);
      }
    }
    if (!dataset) in_.fail_text("no DATASET line");
    return mesh;
  }

 private:
  void read_header() {
    std::string_view line;
    if (!in_.line(line) || !upper(line).starts_with("# VTK DATAFILE"))
      in_.fail_text("not a legacy VTK file: the first line must be '# vtk DataFile Version x.y'");
    if (!in_.line(line)) in_.fail_text("truncated: no title line");
    if (!in_.line(line)) in_.fail_text("truncated: no ASCII/BINARY line");
    const std::string mode = upper(trim(line));
    if (mode == "BINARY") binary_ = true;
    else if (mode != "ASCII") in_.fail_text("expected ASCII or BINARY, found " + quote(line));
  }

  /// The next non-empty keyword line split into fields; false at the end of the file.
  bool next_keyword_line(std::vector<Field>& fields) {
    std::string_view line;
    for (;;) {
      in_.skip_space();
      if (!in_.line(line)) return false;
      split_fields(line, 0, line.size(), fields);
      if (!fields.empty()) return true;
    }
  }

  std::uint64_t count_field(const std::vector<Field>& fields, std::size_t index,
                            std::size_t expected) {
    // 2^40 values are more than any file dcs reads holds; the bound keeps products exact.
    constexpr long long kLargest = 1LL << 40;
    long long count = 0;
    if (fields.size() < expected || !parse_integer(fields[index].text, count) || count < 0 ||
        count > kLargest)
      in_.fail_text(
          fmt::format("{}: expected a count from 0 to 2^40", std::string(fields[0].text)));
    return static_cast<std::uint64_t>(count);
  }

  const DataType& type_of(std::string_view name) {
    for (const DataType& type : kTypes)
      if (type.name == name) return type;
    in_.fail_text("unknown data type " + quote(name));
  }

  /// Refuses `count` values of `type` that the rest of the file cannot hold, before any
  /// allocation: each takes its size in BINARY and at least two bytes ("0 ") in ASCII.
  void check_room(std::uint64_t count, const DataType& type, const char* what) {
    const std::uint64_t least = binary_ ? std::max<std::size_t>(type.size, 1) : 2;
    const std::uint64_t available = binary_ ? in_.remaining() : in_.remaining() + 1;
    const std::uint64_t needed = type.size == 0 && binary_ ? (count + 7) / 8 : count;
    if (needed > available / least)
      in_.fail_text(
          fmt::format("{} declares {} values, but only {} bytes follow (truncated or "
                      "damaged)",
                      what, count, in_.remaining()));
  }

  /// The next value of `type` as a double.
  double value(const DataType& type, const char* what) {
    if (!binary_) {
      const std::string_view text = in_.token();
      if (text.empty()) in_.fail_text(fmt::format("truncated: the file ends inside {}", what));
      double v = 0.0;
      const NumberStatus status = parse_double(text, v);
      if (status == NumberStatus::kNotNumber ||
          (type.integer && (status != NumberStatus::kOk || std::floor(v) != v)))
        in_.fail_text(fmt::format("{}: {} is not {}", what, quote(text),
                                  type.integer ? "an integer" : "a number"));
      // As binary data would hold it (1e300 as a float is inf).
      return type.name == "float" ? static_cast<double>(static_cast<float>(v)) : v;
    }
    const std::size_t at = in_.pos();
    switch (type.size) {
      case 1:
        return type.name == "unsigned_char"
                   ? static_cast<double>(in_.binary<std::uint8_t>(true, what))
                   : static_cast<double>(in_.binary<std::int8_t>(true, what));
      case 2:
        return type.name == "unsigned_short"
                   ? static_cast<double>(in_.binary<std::uint16_t>(true, what))
                   : static_cast<double>(in_.binary<std::int16_t>(true, what));
      case 4:
        if (type.name == "float") return in_.binary<float>(true, what);
        return type.name == "unsigned_int"
                   ? static_cast<double>(in_.binary<std::uint32_t>(true, what))
                   : static_cast<double>(in_.binary<std::int32_t>(true, what));
      case 8:
        if (type.name == "double") return in_.binary<double>(true, what);
        if (type.name == "unsigned_long" || type.name == "vtktypeuint64")
          return static_cast<double>(in_.binary<std::uint64_t>(true, what));
        return static_cast<double>(in_.binary<std::int64_t>(true, what));
      default: break;
    }
    in_.fail_at(at, fmt::format("{}: values of type bit cannot be used here", what));
  }

  /// Skips `count` values of `type` (what a section dcs does not use holds).
  void skip_values(std::uint64_t count, const DataType& type, const char* what) {
    check_room(count, type, what);
    if (binary_) {
      const std::uint64_t bytes = type.size == 0 ? (count + 7) / 8 : count * type.size;
      (void)in_.bytes(static_cast<std::size_t>(bytes), what);
      return;
    }
    for (std::uint64_t k = 0; k < count; ++k)
      if (in_.token().empty())
        in_.fail_text(fmt::format("truncated: the file ends inside {}", what));
  }

  /// An error inside data: its line in ASCII, its byte offset in BINARY.
  [[noreturn]] void fail_data(std::size_t offset, const std::string& reason) {
    if (binary_) in_.fail_at(offset, reason);
    in_.fail_text(reason);
  }

  void read_points(const std::vector<Field>& fields, Mesh& mesh) {
    if (fields.size() != 3) in_.fail_text("expected 'POINTS <count> <type>'");
    if (!mesh.vertices.empty()) in_.fail_text("a second POINTS section");
    const std::uint64_t count = count_field(fields, 1, 3);
    const DataType& type = type_of(fields[2].text);
    if (count > kMaxMeshVertices)
      in_.fail_text(fmt::format("{} points: more than the {} dcs reads", count, kMaxMeshVertices));
    if (type.size == 0) in_.fail_text("POINTS of type bit");
    check_room(3 * count, type, "POINTS");
    mesh.vertices.resize(count);
    for (std::uint64_t v = 0; v < count; ++v) {
      const std::size_t at = in_.pos();
      for (double& c : mesh.vertices[v]) c = value(type, "POINTS");
      if (const std::string problem = vertex_problem(mesh.vertices[v], v); !problem.empty())
        fail_data(at, problem);
    }
  }

  void read_normals(const std::vector<Field>& fields, Mesh& mesh, std::size_t count) {
    if (fields.size() != 3) in_.fail_text("expected 'NORMALS <name> <type>'");
    const DataType& type = type_of(fields[2].text);
    if (type.size == 0) in_.fail_text("NORMALS of type bit");
    check_room(3 * std::uint64_t{count}, type, "NORMALS");
    mesh.normals.assign(count, Vec3{});
    for (std::size_t v = 0; v < count; ++v) {
      const std::size_t at = in_.pos();
      for (double& c : mesh.normals[v]) c = value(type, "NORMALS");
      if (const std::string problem = normal_problem(mesh.normals[v], v); !problem.empty())
        fail_data(at, problem);
    }
  }

  /// Whether the next keyword line starts with `keyword` (not consumed). In BINARY, data start
  /// right after the line end, so nothing is skipped there (nor read as a line).
  bool next_is(std::string_view keyword) {
    if (!binary_) in_.skip_space();
    return in_.looking_at(keyword);
  }

  /// One index of a cell, checked against the points.
  std::uint32_t index(const DataType& type, std::size_t points, const char* what) {
    const std::size_t at = in_.pos();
    const double v = value(type, what);
    if (!(v >= 0 && v < static_cast<double>(points)))
      fail_data(at, fmt::format("{} refers to point {}, but there are {} points", what,
                                number_text(v), points));
    return static_cast<std::uint32_t>(v);
  }

  void add_face(Mesh& mesh, const std::vector<std::uint32_t>& corners, bool strip, std::size_t at) {
    if (strip) {
      if (corners.size() < 3) fail_data(at, "a triangle strip with fewer than 3 points");
      for (std::size_t k = 0; k + 2 < corners.size(); ++k) {
        std::array<std::uint32_t, 3> t = {corners[k], corners[k + 1], corners[k + 2]};
        if (k % 2 == 1) std::swap(t[0], t[1]);  // every other triangle turns the other way
        if (t[0] == t[1] || t[1] == t[2] || t[0] == t[2]) continue;  // stitching: no area
        push_face(mesh, t.data(), 3, at);
      }
      return;
    }
    if (corners.size() < 3 || corners.size() > kMaxFaceVertices)
      fail_data(at, fmt::format("a polygon of {} points (3 to {} accepted)", corners.size(),
                                kMaxFaceVertices));
    push_face(mesh, corners.data(), corners.size(), at);
  }

  void push_face(Mesh& mesh, const std::uint32_t* corners, std::size_t n, std::size_t at) {
    if (mesh.face_count() >= kMaxMeshFaces || mesh.face_indices.size() + n > kMaxMeshFaceIndices)
      fail_data(
          at, fmt::format("more than {} faces or {} corners", kMaxMeshFaces, kMaxMeshFaceIndices));
    mesh.face_indices.insert(mesh.face_indices.end(), corners, corners + n);
    mesh.face_offsets.push_back(static_cast<std::uint32_t>(mesh.face_indices.size()));
  }

  void read_cells(const std::vector<Field>& fields, const std::string& keyword, Mesh& mesh) {
    if (fields.size() != 3) in_.fail_text("expected '" + keyword + " <count> <size>'");
    const std::uint64_t first = count_field(fields, 1, 3);
    const std::uint64_t second = count_field(fields, 2, 3);
    const bool keep = keyword == "POLYGONS" || keyword == "TRIANGLE_STRIPS";
    const bool strip = keyword == "TRIANGLE_STRIPS";
    const std::size_t points = mesh.vertices.size();
    if (keep && mesh.vertices.empty()) in_.fail_text(keyword + " before POINTS");
    std::vector<std::uint32_t> corners;
    if (next_is("OFFSETS")) {
      // 5.1: <first> offsets (cells + 1), <second> connectivity entries.
      std::vector<Field> header;
      (void)next_keyword_line(header);
      if (header.size() != 2) in_.fail_text("expected 'OFFSETS <type>'");
      const DataType& offset_type = type_of(header[1].text);
      if (!keep) {
        skip_values(first, offset_type, "OFFSETS");
        if (!next_keyword_line(header) || upper(header[0].text) != "CONNECTIVITY" ||
            header.size() != 2)
          in_.fail_text("expected 'CONNECTIVITY <type>' after OFFSETS");
        skip_values(second, type_of(header[1].text), "CONNECTIVITY");
        return;
      }
      if (first > kMaxMeshFaces + 1 || second > kMaxMeshFaceIndices)
        in_.fail_text(
            fmt::format("{} {} {}: more cells or corners than dcs reads", keyword, first, second));
      check_room(first, offset_type, "OFFSETS");
      std::vector<std::uint64_t> offsets(first);
      for (std::uint64_t k = 0; k < first; ++k) {
        const std::size_t at = in_.pos();
        const double v = value(offset_type, "OFFSETS");
        if (!(v >= 0 && v <= static_cast<double>(second)) ||
            (k > 0 && v < static_cast<double>(offsets[k - 1])) || (k == 0 && v != 0))
          fail_data(at, fmt::format("OFFSETS: offset {} ({}) is not between the previous one "
                                    "and the connectivity size {} (or the first is not 0)",
                                    k, number_text(v), second));
        offsets[k] = static_cast<std::uint64_t>(v);
      }
      if (first > 0 && offsets.back() != second)
        in_.fail_text(fmt::format("OFFSETS: the last offset {} is not the connectivity size {}",
                                  offsets.back(), second));
      if (!next_keyword_line(header) || upper(header[0].text) != "CONNECTIVITY" ||
          header.size() != 2)
        in_.fail_text("expected 'CONNECTIVITY <type>' after OFFSETS");
      const DataType& index_type = type_of(header[1].text);
      check_room(second, index_type, "CONNECTIVITY");
      for (std::uint64_t cell = 0; cell + 1 < first; ++cell) {
        const std::size_t at = in_.pos();
        corners.clear();
        for (std::uint64_t k = offsets[cell]; k < offsets[cell + 1]; ++k)
          corners.push_back(index(index_type, points, "CONNECTIVITY"));
        add_face(mesh, corners, strip, at);
      }
      return;
    }
    // Up to 5.0: <first> cells in <second> integers, each cell "<n> <index> ...".
    static const DataType& kInt = kTypes[6];
    if (!keep) {
      skip_values(second, kInt, keyword.c_str());
      return;
    }
    if (first > kMaxMeshFaces || second > kMaxMeshFaceIndices + kMaxMeshFaces)
      in_.fail_text(
          fmt::format("{} {} {}: more cells or corners than dcs reads", keyword, first, second));
    check_room(second, kInt, keyword.c_str());
    std::uint64_t used = 0;
    for (std::uint64_t cell = 0; cell < first; ++cell) {
      const std::size_t at = in_.pos();
      const double n = value(kInt, keyword.c_str());
      // Compared as doubles: a count such as 1e30 has no integer to convert to.
      if (!(n >= 0 && n + 1 <= static_cast<double>(second - used)))
        fail_data(at, fmt::format("{}: cell {} of {} points overruns the declared size {}", keyword,
                                  cell, number_text(n), second));
      used += 1 + static_cast<std::uint64_t>(n);
      corners.clear();
      for (std::uint64_t k = 0; k < static_cast<std::uint64_t>(n); ++k)
        corners.push_back(index(kInt, points, keyword.c_str()));
      add_face(mesh, corners, strip, at);
    }
    if (used != second)
      in_.fail_text(
          fmt::format("{}: the cells hold {} integers, the header says {}", keyword, used, second));
  }

  /// A dataset attribute dcs does not use, skipped by its declared size.
  void skip_attribute(const std::vector<Field>& fields, const std::string& keyword) {
    const std::uint64_t n = attribute_count_;
    if (keyword == "SCALARS") {
      if (fields.size() < 3 || fields.size() > 4)
        in_.fail_text("expected 'SCALARS <name> <type> [components]'");
      const DataType& type = type_of(fields[2].text);
      std::uint64_t components = 1;
      if (fields.size() == 4) components = count_field(fields, 3, 4);
      if (components < 1 || components > 4)
        in_.fail_text("SCALARS with other than 1 to 4 components");
      if (next_is("LOOKUP_TABLE")) {
        std::vector<Field> table;
        (void)next_keyword_line(table);
      }
      skip_values(n * components, type, "SCALARS");
    } else if (keyword == "COLOR_SCALARS") {
      const std::uint64_t components = count_field(fields, 2, 3);
      if (components < 1 || components > 4)
        in_.fail_text("COLOR_SCALARS with other than 1 to 4 components");
      static const DataType& kUchar = kTypes[1];
      static const DataType& kFloat = kTypes[12];
      skip_values(n * components, binary_ ? kUchar : kFloat, "COLOR_SCALARS");
    } else if (keyword == "LOOKUP_TABLE") {
      const std::uint64_t size = count_field(fields, 2, 3);
      static const DataType& kUchar = kTypes[1];
      static const DataType& kFloat = kTypes[12];
      skip_values(4 * size, binary_ ? kUchar : kFloat, "LOOKUP_TABLE");
    } else if (keyword == "VECTORS" || keyword == "NORMALS") {
      if (fields.size() != 3) in_.fail_text("expected '" + keyword + " <name> <type>'");
      skip_values(3 * n, type_of(fields[2].text), keyword.c_str());
    } else if (keyword == "TEXTURE_COORDINATES") {
      if (fields.size() != 4) in_.fail_text("expected 'TEXTURE_COORDINATES <name> <dim> <type>'");
      const std::uint64_t dim = count_field(fields, 2, 4);
      if (dim > 3) in_.fail_text("TEXTURE_COORDINATES of more than 3 dimensions");
      skip_values(dim * n, type_of(fields[3].text), "TEXTURE_COORDINATES");
    } else if (keyword == "TENSORS" || keyword == "TENSORS6") {
      if (fields.size() != 3) in_.fail_text("expected '" + keyword + " <name> <type>'");
      skip_values((keyword == "TENSORS" ? 9 : 6) * n, type_of(fields[2].text), keyword.c_str());
    } else if (keyword == "GLOBAL_IDS" || keyword == "PEDIGREE_IDS") {
      if (fields.size() != 3) in_.fail_text("expected '" + keyword + " <name> <type>'");
      skip_values(n, type_of(fields[2].text), keyword.c_str());
    } else {
      in_.fail_text("unknown or unsupported keyword " + quote(fields[0].text));
    }
  }

  void skip_field(const std::vector<Field>& fields) {
    const std::uint64_t arrays = count_field(fields, 2, 3);
    std::vector<Field> array;
    for (std::uint64_t a = 0; a < arrays; ++a) {
      if (!next_keyword_line(array))
        in_.fail_text(fmt::format("truncated: FIELD declares {} arrays, found {}", arrays, a));
      if (array.size() == 1 && upper(array[0].text) == "NULL_ARRAY") continue;
      if (upper(array[0].text) == "METADATA") {
        skip_metadata();
        --a;
        continue;
      }
      if (array.size() != 4)
        in_.fail_text("expected '<name> <components> <tuples> <type>' of a FIELD array");
      const std::uint64_t components = count_field(array, 1, 4);
      const std::uint64_t tuples = count_field(array, 2, 4);
      if (array[3].text == "string" || array[3].text == "utf8_string")
        in_.fail_text("FIELD arrays of strings are not supported");
      const DataType& type = type_of(array[3].text);
      if (components > 0 && tuples > (std::uint64_t{1} << 62) / components)
        in_.fail_text("FIELD array too large");
      skip_values(components * tuples, type, "a FIELD array");
    }
  }

  /// METADATA blocks (VTK >= 8: component names, information keys) end at an empty line.
  void skip_metadata() {
    std::string_view line;
    while (in_.line(line))
      if (trim(line).empty()) return;
  }

  MeshCursor in_;
  bool binary_ = false;
  std::uint64_t attribute_count_ = 0;
};

void put_title(OutputBuffer& out, const MeshOutput& what) {
  std::string title = "dcs: electrostatic potential at each vertex";
  if (!what.meta.unit.empty()) title += " in " + what.meta.unit;
  title += "; colour " + what.colours.describe(what.meta.unit);
  std::replace_if(
      title.begin(), title.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  if (title.size() > 255) title.resize(255);  // VTK reads 256 bytes of title
  out.put(title + "\n");
}

}  // namespace

Mesh parse_vtk(std::string_view bytes, const std::string& name) {
  VtkReader reader(bytes, name);
  Mesh mesh = reader.read();
  if (mesh.vertices.empty()) throw InputError(name, 0, "no POINTS, or 0 points");
  return mesh;
}

void write_vtk(OutputBuffer& out, const MeshOutput& what) {
  const Mesh& mesh = what.mesh;
  const bool binary = mesh.binary;
  const std::size_t n = mesh.vertices.size();
  const auto floats = [&](const std::vector<Vec3>& rows) {
    for (const Vec3& row : rows) {
      for (std::size_t a = 0; a < 3; ++a) {
        const auto value = static_cast<float>(row[a]);
        if (binary) {
          out.put_binary(value, true);
        } else {
          out.put_float(value);
          out.put(a < 2 ? ' ' : '\n');
        }
      }
    }
    if (binary) out.put('\n');
  };
  out.put("# vtk DataFile Version 3.0\n");
  put_title(out, what);
  out.put(binary ? "BINARY\n" : "ASCII\n");
  out.put("DATASET POLYDATA\n");
  out.put(fmt::format("POINTS {} float\n", n));
  floats(mesh.vertices);
  if (mesh.face_count() > 0) {
    out.put(fmt::format("POLYGONS {} {}\n", mesh.face_count(),
                        mesh.face_count() + mesh.face_indices.size()));
    for (std::size_t f = 0; f < mesh.face_count(); ++f) {
      const std::uint32_t begin = mesh.face_offsets[f];
      const std::uint32_t end = mesh.face_offsets[f + 1];
      if (binary) {
        out.put_binary(static_cast<std::int32_t>(end - begin), true);
        for (std::uint32_t k = begin; k < end; ++k)
          out.put_binary(static_cast<std::int32_t>(mesh.face_indices[k]), true);
        continue;
      }
      out.put_uint(end - begin);
      for (std::uint32_t k = begin; k < end; ++k) {
        out.put(' ');
        out.put_uint(mesh.face_indices[k]);
      }
      out.put('\n');
    }
    if (binary) out.put('\n');
  }
  out.put(fmt::format("POINT_DATA {}\n", n));
  out.put("SCALARS potential float 1\nLOOKUP_TABLE default\n");
  for (const float value : what.values) {
    if (binary) {
      out.put_binary(value, true);
    } else {
      out.put_float(value);
      out.put('\n');
    }
  }
  if (binary) out.put('\n');
  out.put("COLOR_SCALARS colour 3\n");
  for (const Rgb& c : what.rgb) {
    if (binary) {
      out.put_binary(c.r, true);
      out.put_binary(c.g, true);
      out.put_binary(c.b, true);
    } else {
      out.put(fmt::format("{:.4f} {:.4f} {:.4f}\n", c.r / 255.0, c.g / 255.0, c.b / 255.0));
    }
  }
  if (binary) out.put('\n');
  if (!what.normals.empty()) {
    out.put("NORMALS normals float\n");
    floats(what.normals);
  }
}

}  // namespace dcs::io::detail
