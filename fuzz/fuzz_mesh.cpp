// libFuzzer target: the mesh readers (io::parse_mesh, what io::read_mesh runs on a file's bytes)
// and writers. Layout: byte 0 picks the format by its low two bits (0 PLY, 1 OBJ, 2 VTK, 3 PLY);
// bit 2 also writes every mesh read in each format (binary and text) and reads it back; the rest
// is the file. Besides crashes, UB and exceptions other than InputError, it checks what
// io/mesh.hpp promises of a mesh read:
// - at least one vertex, each finite and within dcs::limits::kMaxGridCoordinate; normals empty
//   or one per vertex, finite;
// - faces in CSR form: face_offsets starts at 0, rises by 3 to kMaxFaceVertices per face, ends
//   at face_indices.size(); every index names a vertex;
// - vertex_normals() gives unit normals or an InputError;
// - write_mesh then read_mesh gives the same vertices (as float32) and faces in every format,
//   and the same unit normals (as float32) in PLY and VTK.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/io/mesh.hpp"
#include "fuzz_support.hpp"

namespace {

using dcs::fuzz::Outcome;
using dcs::fuzz::require;
using dcs::fuzz::run_expecting;
using dcs::io::Mesh;
using dcs::io::MeshFormat;

constexpr MeshFormat kFormats[] = {MeshFormat::kPly, MeshFormat::kObj, MeshFormat::kVtk,
                                   MeshFormat::kPly};

void check_mesh(const Mesh& mesh, const char* what) {
  const std::string where = std::string(what) + ": ";
  require(!mesh.vertices.empty(), where + "a mesh without vertices");
  for (const dcs::Vec3& v : mesh.vertices)
    for (const double c : v)
      require(std::isfinite(c) && std::fabs(c) <= dcs::limits::kMaxGridCoordinate,
              where + "vertex outside the limits: " + std::to_string(c));
  require(mesh.normals.empty() || mesh.normals.size() == mesh.vertices.size(),
          where + "normals not one per vertex");
  for (const dcs::Vec3& n : mesh.normals)
    for (const double c : n) require(std::isfinite(c), where + "a normal that is not finite");
  require(!mesh.face_offsets.empty() && mesh.face_offsets.front() == 0,
          where + "face_offsets does not start at 0");
  require(mesh.face_offsets.back() == mesh.face_indices.size(),
          where + "face_offsets does not end at face_indices.size()");
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    const std::uint32_t corners = mesh.face_offsets[f + 1] - mesh.face_offsets[f];
    require(mesh.face_offsets[f + 1] > mesh.face_offsets[f] && corners >= 3 &&
                corners <= dcs::io::kMaxFaceVertices,
            where + "a face of " + std::to_string(corners) + " corners");
  }
  for (const std::uint32_t index : mesh.face_indices)
    require(index < mesh.vertices.size(), where + "a face index beyond the vertices");
}

bool same_floats(const std::vector<dcs::Vec3>& a, const std::vector<dcs::Vec3>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = 0; k < 3; ++k)
      if (static_cast<float>(a[i][k]) != static_cast<float>(b[i][k])) return false;
  return true;
}

/// Normals as write_mesh writes them: unit length, zero kept.
std::vector<dcs::Vec3> unit(const std::vector<dcs::Vec3>& normals) {
  std::vector<dcs::Vec3> out;
  for (const dcs::Vec3& g : normals) {
    const double scale = std::max({std::fabs(g[0]), std::fabs(g[1]), std::fabs(g[2])});
    if (!(scale > 0.0)) {
      out.push_back({0.0, 0.0, 0.0});
      continue;
    }
    const dcs::Vec3 s{g[0] / scale, g[1] / scale, g[2] / scale};
    const double length = std::sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
    out.push_back({s[0] / length, s[1] / length, s[2] / length});
  }
  return out;
}

void round_trip(const Mesh& mesh) {
  std::vector<float> values;
  for (const dcs::Vec3& v : mesh.vertices) values.push_back(static_cast<float>(v[0] - v[2]));
  const dcs::io::ColourMap colours(1.0);
  dcs::io::MeshWriteMeta meta;
  meta.unit = "kT/e";
  meta.force = true;
  for (const char* extension : {".ply", ".obj", ".vtk"}) {
    for (const bool binary : {false, true}) {
      Mesh copy = mesh;
      copy.binary = binary;
      const std::string path =
          (dcs::fuzz::scratch_dir() / (std::string("out") + extension)).string();
      std::string message;
      const Outcome wrote = run_expecting(
          "write_mesh", [&] { dcs::io::write_mesh(path, copy, values, colours, meta); }, &message);
      require(wrote == Outcome::kOk, std::string("write_mesh refused a mesh read: ") + message);
      Mesh back;
      const Outcome read = run_expecting(
          "read_mesh", [&] { back = dcs::io::read_mesh(path); }, &message);
      require(read == Outcome::kOk,
              std::string("a mesh written by write_mesh does not read back (") + extension +
                  (binary ? ", binary): " : ", text): ") + message);
      check_mesh(back, "read back");
      require(same_floats(mesh.vertices, back.vertices),
              std::string("vertices changed by a round trip through ") + extension);
      require(back.face_offsets == mesh.face_offsets && back.face_indices == mesh.face_indices,
              std::string("faces changed by a round trip through ") + extension);
      if (std::string_view(extension) != ".obj")
        require(same_floats(unit(mesh.normals), back.normals),
                std::string("normals changed by a round trip through ") + extension);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const MeshFormat format = kFormats[data[0] & 3];
  const std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  Mesh mesh;
  std::string message;
  const Outcome outcome = run_expecting(
      "parse_mesh", [&] { mesh = dcs::io::parse_mesh(bytes, format, "fuzz.mesh"); }, &message);
  require(outcome != Outcome::kUsageError, "parse_mesh threw UsageError: " + message);
  if (outcome != Outcome::kOk) return 0;
  check_mesh(mesh, "parse_mesh");

  std::vector<dcs::Vec3> normals;
  if (run_expecting("vertex_normals", [&] { normals = dcs::io::vertex_normals(mesh); }) ==
      Outcome::kOk) {
    require(normals.size() == mesh.vertices.size(), "vertex_normals: not one per vertex");
    for (const dcs::Vec3& n : normals)
      require(std::fabs(std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) - 1.0) < 1e-9,
              "vertex_normals: a normal that is not of unit length");
  }
  if ((data[0] & 4) != 0) round_trip(mesh);
  return 0;
}
