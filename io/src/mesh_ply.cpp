// Stanford PLY meshes: ascii, binary_little_endian and binary_big_endian (dcs/io/mesh.hpp).
// The header declares elements (a name and a count) and their properties (a scalar type, or a
// list: a count type and an item type); the data follow in that order. Only vertex x y z
// [nx ny nz] and face vertex_indices are kept; everything else is skipped by its type's size.
#include <array>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "atom_text.hpp"
#include "mesh_formats.hpp"

namespace dcs::io::detail {
namespace {

enum class Scalar { kInt8, kUint8, kInt16, kUint16, kInt32, kUint32, kFloat32, kFloat64 };

std::size_t size_of(Scalar type) {
  switch (type) {
    case Scalar::kInt8:
    case Scalar::kUint8: return 1;
    case Scalar::kInt16:
    case Scalar::kUint16: return 2;
    case Scalar::kInt32:
    case Scalar::kUint32:
    case Scalar::kFloat32: return 4;
    case Scalar::kFloat64: return 8;
  }
  return 1;
}

bool is_integer(Scalar type) { return type != Scalar::kFloat32 && type != Scalar::kFloat64; }

/// The range of an integer type (ascii values outside it are refused, as binary ones cannot be).
double lowest(Scalar type) {
  switch (type) {
    case Scalar::kInt8: return -128.0;
    case Scalar::kInt16: return -32768.0;
    case Scalar::kInt32: return -2147483648.0;
    default: return 0.0;
  }
}

double highest(Scalar type) {
  switch (type) {
    case Scalar::kInt8: return 127.0;
    case Scalar::kUint8: return 255.0;
    case Scalar::kInt16: return 32767.0;
    case Scalar::kUint16: return 65535.0;
    case Scalar::kInt32: return 2147483647.0;
    case Scalar::kUint32: return 4294967295.0;
    default: return 0.0;
  }
}

std::optional<Scalar> scalar_type(std::string_view name) {
  struct Entry {
    std::string_view name;
    Scalar type;
  };
  static constexpr std::array<Entry, 16> kTypes = {{
      {"char", Scalar::kInt8},
      {"int8", Scalar::kInt8},
      {"uchar", Scalar::kUint8},
      {"uint8", Scalar::kUint8},
      {"short", Scalar::kInt16},
      {"int16", Scalar::kInt16},
      {"ushort", Scalar::kUint16},
      {"uint16", Scalar::kUint16},
      {"int", Scalar::kInt32},
      {"int32", Scalar::kInt32},
      {"uint", Scalar::kUint32},
      {"uint32", Scalar::kUint32},
      {"float", Scalar::kFloat32},
      {"float32", Scalar::kFloat32},
      {"double", Scalar::kFloat64},
      {"float64", Scalar::kFloat64},
  }};
  for (const Entry& entry : kTypes)
    if (entry.name == name) return entry.type;
  return std::nullopt;
}

struct Property {
  std::string name;
  Scalar type = Scalar::kFloat32;  ///< the item type of a list
  bool list = false;
  Scalar count_type = Scalar::kUint8;
};

struct Element {
  std::string name;
  std::uint64_t count = 0;
  std::vector<Property> properties;
};

enum class Encoding { kAscii, kLittle, kBig };

class PlyReader {
 public:
  PlyReader(std::string_view bytes, const std::string& name) : in_(bytes, name) {}

  Mesh read() {
    read_header();
    check_sizes();
    Mesh mesh;
    mesh.binary = encoding_ != Encoding::kAscii;
    for (const Element& element : elements_) {
      if (element.name == "vertex") read_vertices(element, mesh);
      else if (element.name == "face") read_faces(element, mesh);
      else skip_element(element);
    }
    return mesh;
  }

 private:
  void read_header() {
    std::string_view line;
    if (!in_.line(line) || trim(line) != "ply")
      in_.fail_text("not a PLY file: the first line must be 'ply'");
    std::vector<Field> fields;
    bool have_format = false;
    for (;;) {
      if (!in_.line(line)) in_.fail_text("the header has no end_header line");
      split_fields(line, 0, line.size(), fields);
      if (fields.empty()) continue;
      const std::string_view keyword = fields[0].text;
      if (keyword == "end_header") break;
      if (keyword == "comment" || keyword == "obj_info") continue;
      if (keyword == "format") {
        if (fields.size() != 3) in_.fail_text("expected 'format <encoding> 1.0'");
        const std::string_view encoding = fields[1].text;
        if (encoding == "ascii") encoding_ = Encoding::kAscii;
        else if (encoding == "binary_little_endian") encoding_ = Encoding::kLittle;
        else if (encoding == "binary_big_endian") encoding_ = Encoding::kBig;
        else
          in_.fail_text("unknown PLY format " + quote(encoding) +
                        " (ascii, binary_little_endian or binary_big_endian)");
        have_format = true;
      } else if (keyword == "element") {
        long long count = 0;
        if (fields.size() != 3 || !parse_integer(fields[2].text, count) || count < 0)
          in_.fail_text("expected 'element <name> <count>' with a count >= 0");
        for (const Element& earlier : elements_)
          if (earlier.name == fields[1].text)
            in_.fail_text("element " + std::string(fields[1].text) + " declared twice");
        elements_.push_back({std::string(fields[1].text), static_cast<std::uint64_t>(count), {}});
      } else if (keyword == "property") {
        if (elements_.empty()) in_.fail_text("a property before any element");
        elements_.back().properties.push_back(read_property(fields));
      } else {
        in_.fail_text("unknown PLY header line " + quote(line));
      }
    }
    if (!have_format) in_.fail_text("the header has no format line");
    header_end_ = in_.pos();
  }

  Property read_property(const std::vector<Field>& fields) {
    Property p;
    const auto type_of = [&](std::string_view text) {
      const std::optional<Scalar> type = scalar_type(text);
      if (!type)
        in_.fail_text("unknown property type " + quote(text) +
                      " (char, uchar, short, ushort, int, uint, float, double, or the int8 ... "
                      "float64 names)");
      return *type;
    };
    if (fields.size() == 5 && fields[1].text == "list") {
      p.list = true;
      p.count_type = type_of(fields[2].text);
      if (!is_integer(p.count_type))
        in_.fail_text("a list count must have an integer type, not " + quote(fields[2].text));
      p.type = type_of(fields[3].text);
      p.name = fields[4].text;
    } else if (fields.size() == 3 && fields[1].text != "list") {
      p.type = type_of(fields[1].text);
      p.name = fields[2].text;
    } else {
      in_.fail_text(
          "expected 'property <type> <name>' or 'property list <count type> <type> "
          "<name>'");
    }
    return p;
  }

  /// Refuses counts the data cannot hold before anything is allocated: each value takes at
  /// least its size in binary and two bytes ("0 ") in ascii.
  void check_sizes() {
    std::uint64_t left = in_.remaining();
    for (const Element& element : elements_) {
      std::uint64_t least = 0;
      for (const Property& p : element.properties)
        least += encoding_ == Encoding::kAscii ? 2 : size_of(p.list ? p.count_type : p.type);
      if (element.name == "vertex" && element.count > kMaxMeshVertices)
        fail_header(fmt::format("{} vertices: more than the {} dcs reads", element.count,
                                kMaxMeshVertices));
      if (element.name == "face" && element.count > kMaxMeshFaces)
        fail_header(
            fmt::format("{} faces: more than the {} dcs reads", element.count, kMaxMeshFaces));
      // An ascii file may omit the separator after its very last value.
      const std::uint64_t available = encoding_ == Encoding::kAscii ? left + 1 : left;
      if (least > 0 && element.count > available / least)
        fail_header(fmt::format(
            "element {} declares {} entries of at least {} bytes each, but the file holds only "
            "{} bytes of data after the header (truncated or damaged)",
            element.name, element.count, least, in_.remaining()));
      left -= std::min(left, element.count * least);
    }
  }

  [[noreturn]] void fail_header(const std::string& reason) {
    throw InputError(in_.name(), 0, reason);
  }

  /// One scalar of `type` as a double; `what` names it for messages.
  double scalar(Scalar type, const char* what) {
    if (encoding_ == Encoding::kAscii) {
      const std::string_view text = in_.token();
      if (text.empty())
        in_.fail_text(fmt::format("truncated: the data end before {} of entry {} of element {}",
                                  what, entry_, element_name_));
      double value = 0.0;
      const NumberStatus status = parse_double(text, value);
      if (status == NumberStatus::kNotNumber ||
          (is_integer(type) && (status != NumberStatus::kOk || std::floor(value) != value ||
                                value < lowest(type) || value > highest(type))))
        in_.fail_text(fmt::format("{} {} of element {} entry {} is not {}", what, quote(text),
                                  element_name_, entry_,
                                  is_integer(type) ? "an integer of its type" : "a number"));
      // As binary data would hold it (1e300 as a float is inf); not finite: vertex_problem()
      // and normal_problem() refuse it where it matters.
      return type == Scalar::kFloat32 ? static_cast<double>(static_cast<float>(value)) : value;
    }
    const bool big = encoding_ == Encoding::kBig;
    switch (type) {
      case Scalar::kInt8: return in_.binary<std::int8_t>(big, what);
      case Scalar::kUint8: return in_.binary<std::uint8_t>(big, what);
      case Scalar::kInt16: return in_.binary<std::int16_t>(big, what);
      case Scalar::kUint16: return in_.binary<std::uint16_t>(big, what);
      case Scalar::kInt32: return in_.binary<std::int32_t>(big, what);
      case Scalar::kUint32: return in_.binary<std::uint32_t>(big, what);
      case Scalar::kFloat32: return in_.binary<float>(big, what);
      case Scalar::kFloat64: return in_.binary<double>(big, what);
    }
    return 0.0;
  }

  [[noreturn]] void fail_entry(const std::string& reason) {
    if (encoding_ == Encoding::kAscii) in_.fail_text(reason);
    in_.fail_at(entry_start_, reason);
  }

  std::uint64_t list_count(const Property& p) {
    const double count = scalar(p.count_type, "a list count");
    if (count < 0)
      fail_entry(fmt::format("list {} of element {} entry {} has a negative count", p.name,
                             element_name_, entry_));
    return static_cast<std::uint64_t>(count);
  }

  void skip_property(const Property& p) {
    if (!p.list) {
      (void)scalar(p.type, "a value");
      return;
    }
    const std::uint64_t count = list_count(p);
    if (encoding_ != Encoding::kAscii) {
      (void)in_.bytes(static_cast<std::size_t>(count * size_of(p.type)), "a list");
      return;
    }
    for (std::uint64_t k = 0; k < count; ++k) (void)scalar(p.type, "a list item");
  }

  void begin_entry(const Element& element, std::uint64_t entry) {
    element_name_ = element.name;
    entry_ = entry;
    entry_start_ = in_.pos();
  }

  void skip_element(const Element& element) {
    if (element.properties.empty()) return;
    for (std::uint64_t e = 0; e < element.count; ++e) {
      begin_entry(element, e);
      for (const Property& p : element.properties) skip_property(p);
    }
  }

  void read_vertices(const Element& element, Mesh& mesh) {
    static constexpr std::array<std::string_view, 6> kNames = {"x", "y", "z", "nx", "ny", "nz"};
    std::vector<int> role(element.properties.size(), -1);
    std::array<bool, 6> found{};
    for (std::size_t k = 0; k < element.properties.size(); ++k) {
      for (std::size_t r = 0; r < kNames.size(); ++r) {
        if (element.properties[k].name != kNames[r]) continue;
        if (element.properties[k].list)
          fail_header(fmt::format("vertex property {} is a list, not a number", kNames[r]));
        if (found[r]) fail_header(fmt::format("vertex property {} declared twice", kNames[r]));
        role[k] = static_cast<int>(r);
        found[r] = true;
      }
    }
    if (!found[0] || !found[1] || !found[2])
      fail_header("element vertex lacks one of the properties x, y, z");
    const bool normals = found[3] && found[4] && found[5];
    mesh.vertices.resize(element.count);
    if (normals) mesh.normals.resize(element.count);
    for (std::uint64_t v = 0; v < element.count; ++v) {
      begin_entry(element, v);
      std::array<double, 6> value{};
      for (std::size_t k = 0; k < element.properties.size(); ++k) {
        if (role[k] < 0) skip_property(element.properties[k]);
        else
          value[static_cast<std::size_t>(role[k])] =
              scalar(element.properties[k].type, kNames[static_cast<std::size_t>(role[k])].data());
      }
      mesh.vertices[v] = {value[0], value[1], value[2]};
      if (const std::string problem = vertex_problem(mesh.vertices[v], v); !problem.empty())
        fail_entry(problem);
      if (normals) {
        mesh.normals[v] = {value[3], value[4], value[5]};
        if (const std::string problem = normal_problem(mesh.normals[v], v); !problem.empty())
          fail_entry(problem);
      }
    }
  }

  void read_faces(const Element& element, Mesh& mesh) {
    std::size_t index_property = element.properties.size();
    for (std::size_t k = 0; k < element.properties.size(); ++k) {
      const Property& p = element.properties[k];
      if (p.name != "vertex_indices" && p.name != "vertex_index") continue;
      if (!p.list) fail_header("face property " + p.name + " is not a list");
      if (!is_integer(p.type)) fail_header("face property " + p.name + " has a non-integer type");
      index_property = k;
    }
    if (index_property == element.properties.size())
      fail_header("element face has no vertex_indices (or vertex_index) list");
    const std::uint64_t vertices = vertex_count();
    mesh.face_offsets.reserve(element.count + 1);
    mesh.face_offsets.push_back(0);
    mesh.face_indices.reserve(std::min<std::uint64_t>(3 * element.count, in_.remaining()));
    for (std::uint64_t f = 0; f < element.count; ++f) {
      begin_entry(element, f);
      for (std::size_t k = 0; k < element.properties.size(); ++k) {
        const Property& p = element.properties[k];
        if (k != index_property) {
          skip_property(p);
          continue;
        }
        const std::uint64_t corners = list_count(p);
        if (corners < 3 || corners > kMaxFaceVertices)
          fail_entry(fmt::format("face {} has {} vertices (3 to {} accepted)", f, corners,
                                 kMaxFaceVertices));
        if (mesh.face_indices.size() + corners > kMaxMeshFaceIndices)
          fail_entry(fmt::format("more than {} face corners in all", kMaxMeshFaceIndices));
        for (std::uint64_t c = 0; c < corners; ++c) {
          const double index = scalar(p.type, "a vertex index");
          if (!(index >= 0 && index < static_cast<double>(vertices)))
            fail_entry(fmt::format(
                "face {} refers to vertex {}, but there are {} vertices "
                "(0 to {})",
                f, number_text(index), vertices, static_cast<std::int64_t>(vertices) - 1));
          mesh.face_indices.push_back(static_cast<std::uint32_t>(index));
        }
        mesh.face_offsets.push_back(static_cast<std::uint32_t>(mesh.face_indices.size()));
      }
    }
  }

  std::uint64_t vertex_count() const {
    for (const Element& element : elements_)
      if (element.name == "vertex") return element.count;
    return 0;
  }

  MeshCursor in_;
  Encoding encoding_ = Encoding::kAscii;
  std::vector<Element> elements_;
  std::size_t header_end_ = 0;
  std::string element_name_;
  std::uint64_t entry_ = 0;
  std::size_t entry_start_ = 0;
};

}  // namespace

Mesh parse_ply(std::string_view bytes, const std::string& name) {
  PlyReader reader(bytes, name);
  Mesh mesh = reader.read();
  if (mesh.vertices.empty()) throw InputError(name, 0, "no element vertex, or 0 vertices");
  return mesh;
}

void write_ply(OutputBuffer& out, const MeshOutput& what) {
  const Mesh& mesh = what.mesh;
  const bool binary = mesh.binary;
  const bool normals = !what.normals.empty();
  std::size_t widest = 0;
  for (std::size_t f = 0; f < mesh.face_count(); ++f)
    widest = std::max<std::size_t>(widest, mesh.face_offsets[f + 1] - mesh.face_offsets[f]);
  const bool uchar_counts = widest <= 255;
  out.put("ply\n");
  out.put(binary ? "format binary_little_endian 1.0\n" : "format ascii 1.0\n");
  for (const std::string& comment : header_comments(what, true))
    out.put("comment " + comment + "\n");
  out.put(fmt::format("element vertex {}\n", mesh.vertices.size()));
  out.put("property float x\nproperty float y\nproperty float z\n");
  if (normals) out.put("property float nx\nproperty float ny\nproperty float nz\n");
  out.put("property uchar red\nproperty uchar green\nproperty uchar blue\n");
  out.put("property float potential\n");
  out.put(fmt::format("element face {}\n", mesh.face_count()));
  out.put(uchar_counts ? "property list uchar int vertex_indices\n"
                       : "property list int int vertex_indices\n");
  out.put("end_header\n");
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
    std::array<float, 6> xyz{};
    for (std::size_t a = 0; a < 3; ++a) {
      xyz[a] = static_cast<float>(mesh.vertices[v][a]);
      if (normals) xyz[3 + a] = static_cast<float>(what.normals[v][a]);
    }
    const std::size_t floats = normals ? 6 : 3;
    const Rgb c = what.rgb[v];
    if (binary) {
      for (std::size_t k = 0; k < floats; ++k) out.put_binary(xyz[k], false);
      out.put_binary(c.r, false);
      out.put_binary(c.g, false);
      out.put_binary(c.b, false);
      out.put_binary(what.values[v], false);
      continue;
    }
    for (std::size_t k = 0; k < floats; ++k) {
      out.put_float(xyz[k]);
      out.put(' ');
    }
    out.put(fmt::format("{} {} {} ", c.r, c.g, c.b));
    out.put_float(what.values[v]);
    out.put('\n');
  }
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    const std::uint32_t begin = mesh.face_offsets[f];
    const std::uint32_t end = mesh.face_offsets[f + 1];
    const std::uint32_t corners = end - begin;
    if (binary) {
      if (uchar_counts) out.put_binary(static_cast<std::uint8_t>(corners), false);
      else out.put_binary(static_cast<std::int32_t>(corners), false);
      for (std::uint32_t k = begin; k < end; ++k)
        out.put_binary(static_cast<std::int32_t>(mesh.face_indices[k]), false);
      continue;
    }
    out.put_uint(corners);
    for (std::uint32_t k = begin; k < end; ++k) {
      out.put(' ');
      out.put_uint(mesh.face_indices[k]);
    }
    out.put('\n');
  }
}

}  // namespace dcs::io::detail
