// write_mesh (dcs/io/mesh.hpp): every input format written as every output format, binary and
// text, read back with the same vertices (as float32), faces and normals; the values read back
// from the text forms; nothing left but the final file.
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../scratch_dir.hpp"
#include "dcs/error.hpp"
#include "dcs/io/mesh.hpp"
#include "mesh_data.hpp"

namespace {

using dcs::Vec3;
using dcs::io::Mesh;

std::vector<float> values_of(const Mesh& mesh) {
  std::vector<float> values;
  for (const Vec3& v : mesh.vertices)
    values.push_back(static_cast<float>(v[0] - 2 * v[1] + 0.37 * v[2]) * 1.1f);
  return values;
}

dcs::io::MeshWriteMeta meta() {
  dcs::io::MeshWriteMeta m;
  m.unit = "kT/e";
  m.comments = {"physics: epsilon 1, 298.15 K", "input: test\nwith a newline"};
  m.values_table = "out.csv";
  return m;
}

void expect_same_geometry(const Mesh& a, const Mesh& b) {
  ASSERT_EQ(a.vertices.size(), b.vertices.size());
  for (std::size_t v = 0; v < a.vertices.size(); ++v)
    for (std::size_t k = 0; k < 3; ++k)
      EXPECT_EQ(static_cast<float>(a.vertices[v][k]), static_cast<float>(b.vertices[v][k]));
  EXPECT_EQ(a.face_offsets, b.face_offsets);
  EXPECT_EQ(a.face_indices, b.face_indices);
  ASSERT_EQ(a.normals.size(), b.normals.size());
  for (std::size_t v = 0; v < a.normals.size(); ++v)
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(a.normals[v][k], b.normals[v][k], 1e-6);
}

/// The potentials of an ASCII PLY written by write_mesh (the last number of each vertex line).
std::vector<float> ply_values(const std::string& text, std::size_t n) {
  std::istringstream in(text.substr(text.find("end_header\n") + 11));
  std::vector<float> values;
  std::string line;
  for (std::size_t v = 0; v < n && std::getline(in, line); ++v)
    values.push_back(std::stof(line.substr(line.rfind(' ') + 1)));
  return values;
}

/// The potentials of an ASCII VTK file written by write_mesh.
std::vector<float> vtk_values(const std::string& text, std::size_t n) {
  const std::string key = "SCALARS potential float 1\nLOOKUP_TABLE default\n";
  std::istringstream in(text.substr(text.find(key) + key.size()));
  std::vector<float> values(n);
  for (float& v : values) in >> v;
  return values;
}

TEST(MeshWrite, EveryFormatRoundTrips) {
  dcs::test::ScratchDir dir;
  for (const char* input : {"sphere_binary.ply", "sphere_ascii.ply", "sphere.obj",
                            "sphere_51_binary.vtk", "strips_42.vtk"}) {
    const Mesh mesh = dcs::io::read_mesh(mesh_data(input));
    const std::vector<float> values = values_of(mesh);
    const dcs::io::ColourMap colours(dcs::io::symmetric_range(values));
    for (const bool binary : {false, true}) {
      for (const char* extension : {".ply", ".obj", ".vtk"}) {
        SCOPED_TRACE(std::string(input) + " -> " + extension + (binary ? " binary" : " text"));
        Mesh copy = mesh;
        copy.binary = binary;
        const std::string out = dir.file(std::string("out") + extension);
        dcs::io::MeshWriteMeta m = meta();
        m.force = true;
        dcs::io::write_mesh(out, copy, values, colours, m);
        EXPECT_EQ(dir.entries().size(), 1u);  // no temporary left
        const Mesh back = dcs::io::read_mesh(out);
        expect_same_geometry(mesh, back);
        EXPECT_EQ(back.binary, binary && std::string(extension) != ".obj");
        const std::string text = dcs::test::read_bytes(out);
        EXPECT_NE(text.find("kT/e"), std::string::npos);
        if (std::string(extension) == ".obj") {
          EXPECT_NE(text.find("# OBJ has no field for a value per vertex: the potentials are in "
                              "the table out.csv"),
                    std::string::npos);
          EXPECT_NE(text.find("# input: test with a newline\n"), std::string::npos);
        }
        if (!binary && std::string(extension) == ".ply") {
          EXPECT_EQ(ply_values(text, values.size()), values);
        }
        if (!binary && std::string(extension) == ".vtk") {
          EXPECT_EQ(vtk_values(text, values.size()), values);
        }
        std::filesystem::remove(out);
      }
    }
  }
}

TEST(MeshWrite, BinaryPlyHeaderAndColours) {
  dcs::test::ScratchDir dir;
  Mesh mesh = dcs::io::parse_mesh("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", dcs::io::MeshFormat::kObj,
                                  "t.obj");
  mesh.binary = true;
  const std::vector<float> values = {-2.0f, 0.0f, 0.5f};
  dcs::io::write_mesh(dir.file("t.ply"), mesh, values, dcs::io::ColourMap(1.0), meta());
  const std::string bytes = dcs::test::read_bytes(dir.file("t.ply"));
  const std::string header = bytes.substr(0, bytes.find("end_header\n") + 11);
  EXPECT_NE(header.find("format binary_little_endian 1.0\n"), std::string::npos);
  EXPECT_NE(header.find("comment unit: kT/e\n"), std::string::npos);
  EXPECT_NE(header.find("comment colour: red-white-blue, red at -R, white at 0, blue at +R (R = 1 "
                        "kT/e)\n"),
            std::string::npos);
  EXPECT_NE(header.find("property uchar red\nproperty uchar green\nproperty uchar blue\n"
                        "property float potential\nelement face 1\n"
                        "property list uchar int vertex_indices\n"),
            std::string::npos);
  // Vertex records: 3 floats, 3 uchar, 1 float = 19 bytes.
  ASSERT_EQ(bytes.size(), header.size() + 3 * 19 + 1 + 3 * 4);
  const auto rgb = [&](std::size_t v) {
    const std::size_t at = header.size() + v * 19 + 12;
    return std::vector<int>{static_cast<unsigned char>(bytes[at]),
                            static_cast<unsigned char>(bytes[at + 1]),
                            static_cast<unsigned char>(bytes[at + 2])};
  };
  EXPECT_EQ(rgb(0), (std::vector<int>{255, 0, 0}));      // below -range: red
  EXPECT_EQ(rgb(1), (std::vector<int>{255, 255, 255}));  // 0: white
  EXPECT_EQ(rgb(2), (std::vector<int>{128, 128, 255}));  // half way to blue
}

TEST(MeshWrite, RefusesWrongSizesAndExistingFiles) {
  dcs::test::ScratchDir dir;
  const Mesh mesh = dcs::io::read_mesh(mesh_data("sphere.obj"));
  const dcs::io::ColourMap colours(1.0);
  EXPECT_THROW(dcs::io::write_mesh(dir.file("a.ply"), mesh, {1.0f}, colours, meta()),
               dcs::InternalError);
  EXPECT_THROW(dcs::io::write_mesh(dir.file("a.stl"), mesh, values_of(mesh), colours, meta()),
               dcs::UsageError);
  dcs::test::write_bytes(dir.file("exists.ply"), "x");
  EXPECT_THROW(dcs::io::write_mesh(dir.file("exists.ply"), mesh, values_of(mesh), colours, meta()),
               dcs::IoError);
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"exists.ply"}));
  EXPECT_EQ(dcs::test::read_bytes(dir.file("exists.ply")), "x");
}

}  // namespace
