// Wavefront OBJ meshes (dcs/io/mesh.hpp): v, vn and f statements; the rest is ignored.
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "atom_text.hpp"
#include "mesh_formats.hpp"

namespace dcs::io::detail {
namespace {

/// A 1-based (or negative, relative) OBJ index into `count` items, 0-based; `what` and `plural`
/// name an item and the list for messages.
std::uint32_t resolve(MeshCursor& in, std::string_view text, std::size_t count, const char* what,
                      const char* plural) {
  long long index = 0;
  if (!parse_integer(text, index) || index == 0)
    in.fail_text(fmt::format("{} index {} is not a non-zero integer", what, quote(text)));
  const long long resolved = index > 0 ? index - 1 : static_cast<long long>(count) + index;
  if (resolved < 0 || resolved >= static_cast<long long>(count))
    in.fail_text(fmt::format("{} index {} is out of range: {} {} are defined before this line",
                             what, index, count, plural));
  return static_cast<std::uint32_t>(resolved);
}

Vec3 numbers(MeshCursor& in, const std::vector<Field>& fields, const char* statement) {
  Vec3 xyz{};
  for (std::size_t k = 1; k < fields.size(); ++k) {
    double value = 0.0;
    if (parse_double(fields[k].text, value) == NumberStatus::kNotNumber)
      in.fail_text(fmt::format("{}: {} is not a number", statement, quote(fields[k].text)));
    if (k <= 3) xyz[k - 1] = value;
  }
  return xyz;
}

}  // namespace

Mesh parse_obj(std::string_view bytes, const std::string& name) {
  MeshCursor in(bytes, name);
  Mesh mesh;
  std::vector<Vec3> file_normals;
  std::vector<Vec3> normal_sum;             // per vertex: the sum of its corners' unit normals
  std::vector<std::uint32_t> normal_count;  // per vertex: corners naming a normal
  bool corner_normals = false;              // some face corner names a normal
  std::vector<Field> fields;
  std::string_view line;
  mesh.face_offsets.push_back(0);
  while (in.line(line)) {
    line = line.substr(0, line.find('#'));
    split_fields(line, 0, line.size(), fields);
    if (fields.empty()) continue;
    const std::string_view keyword = fields[0].text;
    if (keyword == "v") {
      if (fields.size() < 4 || fields.size() > 8)
        in.fail_text(fmt::format("v: expected x y z [w] or x y z r g b, found {} numbers",
                                 fields.size() - 1));
      if (mesh.vertices.size() == kMaxMeshVertices)
        in.fail_text(fmt::format("more than {} vertices", kMaxMeshVertices));
      mesh.vertices.push_back(numbers(in, fields, "v"));
      if (const std::string problem = vertex_problem(mesh.vertices.back(), mesh.vertices.size());
          !problem.empty())
        in.fail_text(problem);
    } else if (keyword == "vn") {
      if (fields.size() != 4)
        in.fail_text(fmt::format("vn: expected 3 numbers, found {}", fields.size() - 1));
      if (file_normals.size() == kMaxMeshVertices)
        in.fail_text(fmt::format("more than {} normals", kMaxMeshVertices));
      file_normals.push_back(numbers(in, fields, "vn"));
      if (const std::string problem = normal_problem(file_normals.back(), file_normals.size());
          !problem.empty())
        in.fail_text(problem);
    } else if (keyword == "f") {
      const std::size_t corners = fields.size() - 1;
      if (corners < 3 || corners > kMaxFaceVertices)
        in.fail_text(
            fmt::format("f: a face has 3 to {} vertices, found {}", kMaxFaceVertices, corners));
      if (mesh.face_count() == kMaxMeshFaces)
        in.fail_text(fmt::format("more than {} faces", kMaxMeshFaces));
      if (mesh.face_indices.size() + corners > kMaxMeshFaceIndices)
        in.fail_text(fmt::format("more than {} face corners in all", kMaxMeshFaceIndices));
      normal_sum.resize(mesh.vertices.size(), Vec3{0.0, 0.0, 0.0});
      normal_count.resize(mesh.vertices.size(), 0);
      for (std::size_t k = 1; k < fields.size(); ++k) {
        const std::string_view corner = fields[k].text;
        const std::size_t slash = corner.find('/');
        const std::uint32_t v =
            resolve(in, corner.substr(0, slash), mesh.vertices.size(), "vertex", "vertices");
        mesh.face_indices.push_back(v);
        if (slash == std::string_view::npos) continue;
        const std::size_t second = corner.find('/', slash + 1);
        if (second == std::string_view::npos || second + 1 == corner.size()) continue;
        const std::uint32_t n =
            resolve(in, corner.substr(second + 1), file_normals.size(), "normal", "normals");
        const Vec3& g = file_normals[n];
        const double length = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        if (length > 0.0)
          for (std::size_t a = 0; a < 3; ++a) normal_sum[v][a] += g[a] / length;
        ++normal_count[v];
        corner_normals = true;
      }
      mesh.face_offsets.push_back(static_cast<std::uint32_t>(mesh.face_indices.size()));
    }
    // vt, g, o, s, usemtl, mtllib, l, p and anything else: not geometry dcs needs.
  }
  if (mesh.vertices.empty()) throw InputError(name, 0, "no vertices (no 'v' lines)");
  normal_count.resize(mesh.vertices.size(), 0);
  normal_sum.resize(mesh.vertices.size(), Vec3{0.0, 0.0, 0.0});
  if (corner_normals) {
    // Only when every vertex has one: a partial set would mix two kinds of normal.
    if (std::all_of(normal_count.begin(), normal_count.end(),
                    [](std::uint32_t c) { return c > 0; })) {
      for (std::size_t v = 0; v < normal_sum.size(); ++v)
        for (double& c : normal_sum[v]) c /= normal_count[v];
      mesh.normals = std::move(normal_sum);
    }
  } else if (mesh.face_count() == 0 && file_normals.size() == mesh.vertices.size()) {
    mesh.normals = std::move(file_normals);  // a point cloud: v and vn pair in order
  }
  return mesh;
}

void write_obj(OutputBuffer& out, const MeshOutput& what) {
  const Mesh& mesh = what.mesh;
  const bool normals = !what.normals.empty();
  for (const std::string& comment : header_comments(what, false)) out.put("# " + comment + "\n");
  out.put("# v x y z r g b: position in Å and vertex colour (0..1)\n");
  for (std::size_t v = 0; v < mesh.vertices.size(); ++v) {
    out.put("v");
    for (const double c : mesh.vertices[v]) {
      out.put(' ');
      out.put_float(static_cast<float>(c));
    }
    const Rgb c = what.rgb[v];
    out.put(fmt::format(" {:.4f} {:.4f} {:.4f}\n", c.r / 255.0, c.g / 255.0, c.b / 255.0));
  }
  if (normals) {
    for (const Vec3& n : what.normals) {
      out.put("vn");
      for (const double c : n) {
        out.put(' ');
        out.put_float(static_cast<float>(c));
      }
      out.put('\n');
    }
  }
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    out.put('f');
    for (std::uint32_t k = mesh.face_offsets[f]; k < mesh.face_offsets[f + 1]; ++k) {
      const std::uint64_t index = std::uint64_t{mesh.face_indices[k]} + 1;
      out.put(' ');
      out.put_uint(index);
      if (normals) {
        out.put("//");
        out.put_uint(index);
      }
    }
    out.put('\n');
  }
}

}  // namespace dcs::io::detail
