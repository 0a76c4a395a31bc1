// Mesh readers (dcs/io/mesh.hpp) on files VTK's writers made (tests/data/mesh/make_meshes.py)
// and on malformed inputs of every kind, each refused with its line or byte and reason.
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../pqr/pqr_test_util.hpp"
#include "../scratch_dir.hpp"
#include "allocation_probe.hpp"
#include "dcs/io/mesh.hpp"
#include "mesh_data.hpp"

namespace {

using dcs::Vec3;
using dcs::io::Mesh;
using dcs::io::MeshFormat;
using dcs::test::expect_input_error;

/// Faces as corner lists rotated to start at their smallest index (winding kept), sorted.
std::vector<std::vector<std::uint32_t>> canonical_faces(const Mesh& mesh) {
  std::vector<std::vector<std::uint32_t>> faces;
  for (std::size_t f = 0; f < mesh.face_count(); ++f) {
    std::vector<std::uint32_t> face(mesh.face_indices.begin() + mesh.face_offsets[f],
                                    mesh.face_indices.begin() + mesh.face_offsets[f + 1]);
    std::rotate(face.begin(), std::min_element(face.begin(), face.end()), face.end());
    faces.push_back(face);
  }
  std::sort(faces.begin(), faces.end());
  return faces;
}

TEST(MeshRead, EveryVtkWrittenSphereReadsAlike) {
  const Mesh reference = dcs::io::read_mesh(mesh_data("sphere_42.vtk"));
  ASSERT_EQ(reference.vertices.size(), 34u);
  ASSERT_EQ(reference.face_count(), 64u);
  ASSERT_EQ(reference.normals.size(), 34u);
  EXPECT_FALSE(reference.binary);
  EXPECT_EQ(reference.format, MeshFormat::kVtk);
  const auto faces = canonical_faces(reference);
  for (const char* name : {"sphere_binary.ply", "sphere_ascii.ply", "sphere.obj", "sphere_51.vtk",
                           "sphere_51_binary.vtk", "sphere_42_binary.vtk"}) {
    SCOPED_TRACE(name);
    const Mesh mesh = dcs::io::read_mesh(mesh_data(name));
    EXPECT_EQ(mesh.binary, std::string(name).find("binary") != std::string::npos);
    ASSERT_EQ(mesh.vertices.size(), reference.vertices.size());
    ASSERT_EQ(mesh.normals.size(), reference.normals.size());
    EXPECT_EQ(canonical_faces(mesh), faces);
    for (std::size_t v = 0; v < mesh.vertices.size(); ++v)
      for (std::size_t a = 0; a < 3; ++a) {
        // The ASCII writers print 6 significant digits, the binary ones every bit.
        EXPECT_NEAR(mesh.vertices[v][a], reference.vertices[v][a], 1e-4);
        EXPECT_NEAR(mesh.normals[v][a], reference.normals[v][a], 1e-5);
      }
  }
}

TEST(MeshRead, TriangleStripsBecomeTrianglesWithTheirWinding) {
  const Mesh strips = dcs::io::read_mesh(mesh_data("strips_42.vtk"));
  const Mesh polygons = dcs::io::read_mesh(mesh_data("sphere_42.vtk"));
  EXPECT_TRUE(strips.normals.empty());
  EXPECT_EQ(canonical_faces(strips), canonical_faces(polygons));
}

TEST(MeshRead, NormalsFromFacesPointOutward) {
  const Mesh strips = dcs::io::read_mesh(mesh_data("strips_42.vtk"));
  const std::vector<Vec3> normals = dcs::io::vertex_normals(strips);
  const Vec3 centre{1, 2, 3};
  for (std::size_t v = 0; v < normals.size(); ++v) {
    const Vec3& p = strips.vertices[v];
    const Vec3 out{(p[0] - centre[0]) / 10, (p[1] - centre[1]) / 10, (p[2] - centre[2]) / 10};
    const double dot = normals[v][0] * out[0] + normals[v][1] * out[1] + normals[v][2] * out[2];
    EXPECT_GT(dot, 0.95) << "vertex " << v;
    EXPECT_NEAR(std::hypot(normals[v][0], normals[v][1], normals[v][2]), 1.0, 1e-12);
  }
  // The file's own normals, normalised.
  const Mesh with = dcs::io::read_mesh(mesh_data("sphere_binary.ply"));
  const auto given = dcs::io::vertex_normals(with);
  for (std::size_t v = 0; v < given.size(); ++v)
    EXPECT_NEAR(std::hypot(given[v][0], given[v][1], given[v][2]), 1.0, 1e-12);
}

TEST(MeshRead, OffsetNeedsANormalAtEveryVertex) {
  Mesh lonely = dcs::io::parse_mesh("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 5 5 5\nf 1 2 3\n",
                                    MeshFormat::kObj, "lonely.obj");
  expect_input_error([&] { (void)dcs::io::vertex_normals(lonely); }, "lonely.obj", 0,
                     {"vertex 3 is in no face", "an offset needs a normal at every vertex"});
  Mesh flat =
      dcs::io::parse_mesh("v 0 0 0\nv 1 0 0\nv 2 0 0\nf 1 2 3\n", MeshFormat::kObj, "flat.obj");
  expect_input_error([&] { (void)dcs::io::vertex_normals(flat); }, "flat.obj", 0,
                     {"faces without area"});
  Mesh zero = dcs::io::parse_mesh(
      "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
      "property float z\nproperty float nx\nproperty float ny\nproperty float nz\nend_header\n"
      "1 2 3 0 0 0\n",
      MeshFormat::kPly, "zero.ply");
  expect_input_error([&] { (void)dcs::io::vertex_normals(zero); }, "zero.ply", 0,
                     {"vertex 0 has a zero-length normal"});
}

TEST(MeshRead, PlyFromBlenderAndMeshLabLayouts) {
  // Blender 4: float x y z nx ny nz s t, uchar red green blue alpha; list uchar uint.
  const std::string blender =
      "ply\nformat ascii 1.0\ncomment Created in Blender version 4.1.0\nelement vertex 3\n"
      "property float x\nproperty float y\nproperty float z\nproperty float nx\n"
      "property float ny\nproperty float nz\nproperty float s\nproperty float t\n"
      "property uchar red\nproperty uchar green\nproperty uchar blue\nproperty uchar alpha\n"
      "element face 1\nproperty list uchar uint vertex_indices\nend_header\n"
      "0 0 0 0 0 1 0.5 0.5 255 0 0 255\n1 0 0 0 0 1 0.5 0.5 255 0 0 255\n"
      "0 1 0 0 0 1 0.5 0.5 255 0 0 255\n3 0 1 2\n";
  const Mesh a = dcs::io::parse_mesh(blender, MeshFormat::kPly, "blender.ply");
  EXPECT_EQ(a.vertices[1], (Vec3{1, 0, 0}));
  EXPECT_EQ(a.normals[2], (Vec3{0, 0, 1}));
  EXPECT_EQ(a.face_indices, (std::vector<std::uint32_t>{0, 1, 2}));
  // MeshLab: double coordinates, a "quality" float, an edge element, vertex_index, big endian.
  std::string meshlab =
      "ply\nformat binary_big_endian 1.0\nobj_info made by hand\nelement vertex 3\n"
      "property double x\nproperty double y\nproperty double z\nproperty float quality\n"
      "property list uchar int extra\nelement face 1\nproperty list int int vertex_index\n"
      "property uchar flags\nelement edge 1\nproperty int vertex1\nproperty int vertex2\n"
      "end_header\n";
  const auto be = [&](const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t k = n; k-- > 0;) meshlab.push_back(static_cast<char>(b[k]));
  };
  for (int v = 0; v < 3; ++v) {
    const double xyz[3] = {v == 1 ? 2.5 : 0.0, v == 2 ? -1.25 : 0.0, 7.0};
    for (const double c : xyz) be(&c, 8);
    const float quality = 0.5f;
    be(&quality, 4);
    meshlab.push_back(2);  // two list items of int
    const std::int32_t item = 9;
    be(&item, 4);
    be(&item, 4);
  }
  const std::int32_t three = 3;
  be(&three, 4);
  for (std::int32_t i : {2, 1, 0}) be(&i, 4);
  meshlab.push_back(7);  // flags
  for (std::int32_t i : {0, 1}) be(&i, 4);
  const Mesh b = dcs::io::parse_mesh(meshlab, MeshFormat::kPly, "meshlab.ply");
  EXPECT_TRUE(b.binary);
  EXPECT_EQ(b.vertices[1], (Vec3{2.5, 0, 7}));
  EXPECT_EQ(b.vertices[2], (Vec3{0, -1.25, 7}));
  EXPECT_TRUE(b.normals.empty());
  EXPECT_EQ(b.face_indices, (std::vector<std::uint32_t>{2, 1, 0}));
}

TEST(MeshRead, ObjCornerFormsNegativeIndicesAndIgnoredStatements) {
  const std::string text =
      "mtllib a.mtl\no thing\ng group\ns 1\nusemtl red\n"
      "v 0 0 0\nv 1 0 0 1.0\nv 0 1 0 0.5 0.5 0.5\nv 1 1 0\n"
      "vt 0 0\nvt 1 1\nvn 0 0 2\nvn 0 0 1\n"
      "f 1//1 2//1 3//2\nf -3/1/-1 -1/2/-1 -2/1/-1\nl 1 2\np 3\n";
  const Mesh mesh = dcs::io::parse_mesh(text, MeshFormat::kObj, "m.obj");
  ASSERT_EQ(mesh.face_count(), 2u);
  EXPECT_EQ(mesh.face_indices, (std::vector<std::uint32_t>{0, 1, 2, 1, 3, 2}));
  ASSERT_EQ(mesh.normals.size(), 4u);           // every vertex has one: the mean of unit normals
  EXPECT_EQ(mesh.normals[1], (Vec3{0, 0, 1}));  // two corners, (0 0 1) each
  // v/t only: no normals.
  const Mesh plain = dcs::io::parse_mesh("v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nf 1/1 2/1 3/1\n",
                                         MeshFormat::kObj, "t.obj");
  EXPECT_TRUE(plain.normals.empty());
  // A point cloud: v and vn in order.
  const Mesh cloud =
      dcs::io::parse_mesh("v 0 0 0\nv 1 0 0\nvn 1 0 0\nvn 0 1 0\n", MeshFormat::kObj, "c.obj");
  EXPECT_EQ(cloud.normals[1], (Vec3{0, 1, 0}));
  EXPECT_EQ(cloud.face_count(), 0u);
}

struct BadMesh {
  const char* label;
  MeshFormat format;
  std::string text;
  std::uint64_t line;  // 0: a byte offset or the whole file
  const char* part;
};

const std::string kPlyHead =
    "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
    "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
const std::string kVtkHead = "# vtk DataFile Version 4.2\nt\nASCII\nDATASET POLYDATA\n";

/// Malformed PLY files: the line (0: a byte offset or the whole file) and reason.
std::vector<BadMesh> ply_bad_cases() {
  using F = MeshFormat;
  return {
      {"ply_magic", F::kPly, "plyx\n", 1, "not a PLY file"},
      {"ply_no_end_header", F::kPly, "ply\nformat ascii 1.0\nelement vertex 1\n", 3,
       "no end_header"},
      {"ply_unknown_format", F::kPly, "ply\nformat binary 1.0\nend_header\n", 2,
       "unknown PLY format 'binary'"},
      {"ply_unknown_type", F::kPly,
       "ply\nformat ascii 1.0\nelement vertex 1\nproperty float128 x\nend_header\n", 4,
       "unknown property type 'float128'"},
      {"ply_unknown_line", F::kPly, "ply\nformat ascii 1.0\nvertex 3\nend_header\n", 3,
       "unknown PLY header line"},
      {"ply_no_xyz", F::kPly,
       "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nend_header\n1\n", 0,
       "lacks one of the properties x, y, z"},
      {"ply_index_out_of_range", F::kPly, kPlyHead + "0 0 0\n1 0 0\n0 1 0\n3 0 1 3\n", 13,
       "face 0 refers to vertex 3, but there are 3 vertices"},
      {"ply_negative_index", F::kPly, kPlyHead + "0 0 0\n1 0 0\n0 1 0\n3 0 -1 2\n", 13,
       "refers to vertex -1"},
      {"ply_two_corner_face", F::kPly, kPlyHead + "0 0 0\n1 0 0\n0 1 0\n2 0 1\n", 13,
       "face 0 has 2 vertices"},
      {"ply_nan", F::kPly, kPlyHead + "0 0 0\n1 nan 0\n0 1 0\n3 0 1 2\n", 11,
       "vertex 1 has a coordinate that is not a finite number"},
      {"ply_too_far", F::kPly, kPlyHead + "0 0 0\n1 0 0\n0 1 3e7\n3 0 1 2\n", 12,
       "outside the accepted"},
      {"ply_truncated_ascii", F::kPly, kPlyHead + "0 0 0\n1 0 0\n0 1 0\n3 0 1\n", 14,
       "truncated: the data end before a vertex index of entry 0 of element face"},
      {"ply_not_a_number", F::kPly, kPlyHead + "0 0 0\n1 zero 0\n0 1 0\n3 0 1 2\n", 11,
       "'zero' of element vertex entry 1 is not a number"},
      {"ply_huge_count", F::kPly,
       "ply\nformat binary_little_endian 1.0\nelement vertex 1000000000000\nproperty float x\n"
       "property float y\nproperty float z\nend_header\n",
       0, "1000000000000 vertices: more than the 100000000 dcs reads"},
      {"ply_count_beyond_file", F::kPly,
       "ply\nformat binary_little_endian 1.0\nelement vertex 90000000\nproperty float x\n"
       "property float y\nproperty float z\nend_header\n0123456789",
       0, "declares 90000000 entries of at least 12 bytes each, but the file holds only 10"},
      {"ply_truncated_binary", F::kPly,
       "ply\nformat binary_little_endian 1.0\nelement vertex 1\nproperty float x\n"
       "property float y\nproperty float z\nelement face 1\nproperty list uchar int "
       "vertex_indices\nend_header\n" +
           std::string(12, '\0') + std::string(1, '\3') + std::string(5, '\0'),
       0, "truncated: a vertex index needs 4 bytes"},
      {"ply_element_twice", F::kPly,
       "ply\nformat ascii 1.0\nelement vertex 1\nelement vertex 1\nend_header\n", 4,
       "element vertex declared twice"},
      {"ply_float_indices", F::kPly,
       "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
       "property float z\nelement face 0\nproperty list uchar float vertex_indices\nend_header\n"
       "0 0 0\n",
       0, "non-integer type"},
      {"ply_count_beyond_type", F::kPly, kPlyHead + "0 0 0\n1 0 0\n0 1 0\n256 0 1 2\n", 13,
       "'256' of element face entry 0 is not an integer of its type"},
  };
}

/// Malformed Wavefront OBJ files: the line (0: a byte offset or the whole file) and reason.
std::vector<BadMesh> obj_bad_cases() {
  using F = MeshFormat;
  return {
      {"obj_index_zero", F::kObj, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", 4,
       "vertex index '0' is not a non-zero integer"},
      {"obj_index_out_of_range", F::kObj, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n", 4,
       "vertex index 4 is out of range: 3 vertices"},
      {"obj_negative_too_far", F::kObj, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", 4,
       "vertex index -4 is out of range"},
      {"obj_normal_out_of_range", F::kObj,
       "v 0 0 0\nv 1 0 0\nv 0 1 0\nvn 0 0 1\nf 1//1 2//2 3//1\n", 5,
       "normal index 2 is out of range"},
      {"obj_two_numbers", F::kObj, "v 0 0\n", 1, "v: expected x y z [w] or x y z r g b"},
      {"obj_nan", F::kObj, "v 0 0 0\nv nan 0 0\n", 2, "vertex 2 has a coordinate"},
      {"obj_text", F::kObj, "v 0 zero 0\n", 1, "v: 'zero' is not a number"},
      {"obj_small_face", F::kObj, "v 0 0 0\nv 1 0 0\nf 1 2\n", 3, "f: a face has 3 to"},
      {"obj_no_vertices", F::kObj, "# nothing\n", 0, "no vertices"},
      {"obj_vn_nan", F::kObj, "v 0 0 0\nvn 0 inf 0\n", 2, "normal of vertex 1 is not finite"},
  };
}

/// Malformed legacy VTK files: the line (0: a byte offset or the whole file) and reason.
std::vector<BadMesh> vtk_bad_cases() {
  using F = MeshFormat;
  return {
      {"vtk_magic", F::kVtk, "# not vtk\n", 1, "not a legacy VTK file"},
      {"vtk_mode", F::kVtk, "# vtk DataFile Version 3.0\nt\nXML\n", 3, "expected ASCII or BINARY"},
      {"vtk_dataset", F::kVtk, "# vtk DataFile Version 3.0\nt\nASCII\nDATASET UNSTRUCTURED_GRID\n",
       4, "DATASET UNSTRUCTURED_GRID is not supported"},
      {"vtk_huge_points", F::kVtk, kVtkHead + "POINTS 99999999 float\n0 0 0\n", 5,
       "POINTS declares 299999997 values, but only 6 bytes follow"},
      {"vtk_too_many_points", F::kVtk, kVtkHead + "POINTS 1000000000000 float\n", 5,
       "more than the 100000000 dcs reads"},
      {"vtk_unknown_type", F::kVtk, kVtkHead + "POINTS 1 quad\n0 0 0\n", 5,
       "unknown data type 'quad'"},
      {"vtk_index_out_of_range", F::kVtk,
       kVtkHead + "POINTS 3 float\n0 0 0 1 0 0 0 1 0\nPOLYGONS 1 4\n3 0 1 3\n", 8,
       "refers to point 3, but there are 3 points"},
      {"vtk_cell_overruns", F::kVtk,
       kVtkHead + "POINTS 3 float\n0 0 0 1 0 0 0 1 0\nPOLYGONS 1 4\n4 0 1 2\n", 8,
       "cell 0 of 4 points overruns the declared size 4"},
      {"vtk_huge_cell_count", F::kVtk,
       kVtkHead + "POINTS 3 float\n0 0 0 1 0 0 0 1 0\nPOLYGONS 1 4\n1e30 0 1 2\n", 8,
       "cell 0 of 1e+30 points overruns"},
      {"vtk_polygons_before_points", F::kVtk, kVtkHead + "POLYGONS 1 4\n3 0 1 2\n", 5,
       "POLYGONS before POINTS"},
      {"vtk_bad_offsets", F::kVtk,
       kVtkHead + "POINTS 3 float\n0 0 0 1 0 0 0 1 0\nPOLYGONS 2 3\nOFFSETS vtktypeint64\n0 4\n"
                  "CONNECTIVITY vtktypeint64\n0 1 2\n",
       9, "OFFSETS: offset 1 (4)"},
      {"vtk_truncated", F::kVtk, kVtkHead + "POINTS 3 float\n0 0 0 1 0 0 0 1\n", 5,
       "POINTS declares 9 values"},
      {"vtk_nan", F::kVtk, kVtkHead + "POINTS 2 float\n0 0 0\nnan 0 0\n", 7,
       "vertex 1 has a coordinate that is not a finite number"},
      {"vtk_point_data_count", F::kVtk, kVtkHead + "POINTS 1 float\n0 0 0\nPOINT_DATA 2\n", 7,
       "POINT_DATA 2 for 1 points"},
      {"vtk_unknown_keyword", F::kVtk, kVtkHead + "POINTS 1 float\n0 0 0\nBANANAS 3\n", 7,
       "unknown or unsupported keyword 'BANANAS'"},
      {"vtk_binary_truncated", F::kVtk,
       "# vtk DataFile Version 3.0\nt\nBINARY\nDATASET POLYDATA\nPOINTS 2 float\n" +
           std::string(20, '\0'),
       5, "POINTS declares 6 values, but only 20 bytes follow"},
      {"vtk_binary_bad_index", F::kVtk,
       "# vtk DataFile Version 3.0\nt\nBINARY\nDATASET POLYDATA\nPOINTS 3 float\n" +
           std::string(36, '\0') + "\nPOLYGONS 1 4\n" +
           std::string("\0\0\0\3\0\0\0\0\0\0\0\1\0\0\0\7", 16),
       0, "byte 130: POLYGONS refers to point 7"},
  };
}

std::vector<BadMesh> bad_cases() {
  std::vector<BadMesh> cases = ply_bad_cases();
  for (const auto& more : {obj_bad_cases(), vtk_bad_cases()})
    cases.insert(cases.end(), more.begin(), more.end());
  return cases;
}

TEST(MeshRead, MalformedInputsRefusedWithPlaceAndReason) {
  for (const BadMesh& c : bad_cases()) {
    SCOPED_TRACE(c.label);
    expect_input_error([&] { (void)dcs::io::parse_mesh(c.text, c.format, "bad"); }, "bad", c.line,
                       {c.part});
  }
}

TEST(MeshRead, HugeDeclaredCountsAreRefusedBeforeAllocating) {
  // Each declares far more than the file holds but less than the limits: only the size check
  // stands between the header and a vector of gigabytes.
  const std::vector<std::pair<MeshFormat, std::string>> files = {
      {MeshFormat::kPly,
       "ply\nformat binary_little_endian 1.0\nelement vertex 99000000\nproperty double x\n"
       "property double y\nproperty double z\nend_header\n" +
           std::string(64, '\0')},
      {MeshFormat::kPly,
       "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\n"
       "property float z\nelement face 199000000\nproperty list uchar int vertex_indices\n"
       "end_header\n0 0 0\n"},
      {MeshFormat::kVtk,
       "# vtk DataFile Version 3.0\nt\nBINARY\nDATASET POLYDATA\nPOINTS "
       "99000000 double\n" +
           std::string(64, '\0')},
      {MeshFormat::kVtk,
       "# vtk DataFile Version 5.1\nt\nASCII\nDATASET POLYDATA\nPOINTS 3 float\n"
       "0 0 0 1 0 0 0 1 0\nPOLYGONS 100000000 300000000\nOFFSETS vtktypeint64\n0\n"},
  };
  for (const auto& [format, text] : files) {
    dcs::test::reset_largest_allocation();
    EXPECT_THROW((void)dcs::io::parse_mesh(text, format, "huge"), dcs::InputError);
    if (dcs::test::allocation_probe_active()) {
      EXPECT_LT(dcs::test::largest_allocation(), std::size_t{1} << 20) << text.substr(0, 80);
    }
  }
}

TEST(MeshRead, LongBinaryCellDataIsNotReadAsALine) {
  // 96 KB of big-endian polygons without a line-end byte: the check for a 5.1 OFFSETS line
  // after POLYGONS must look at the bytes, not read them as a (too long) line.
  std::string text = "# vtk DataFile Version 4.2\nt\nBINARY\nDATASET POLYDATA\nPOINTS 3 float\n";
  const unsigned char point_bytes[36] = {0,    0,    0, 0, 0,    0,    0, 0, 0, 0, 0, 0,
                                         0x3f, 0x80, 0, 0, 0,    0,    0, 0, 0, 0, 0, 0,
                                         0,    0,    0, 0, 0x3f, 0x80, 0, 0, 0, 0, 0, 0};
  text.append(reinterpret_cast<const char*>(point_bytes), sizeof point_bytes);
  text += "\nPOLYGONS 6000 24000\n";
  const char triangle[16] = {0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2};
  for (int k = 0; k < 6000; ++k) text.append(triangle, sizeof triangle);
  text += "\n";
  const Mesh mesh = dcs::io::parse_mesh(text, MeshFormat::kVtk, "long.vtk");
  EXPECT_EQ(mesh.face_count(), 6000u);
  EXPECT_EQ(mesh.vertices[1], (Vec3{1, 0, 0}));
}

TEST(MeshRead, ReadMeshChecksNameAndFile) {
  dcs::test::ScratchDir dir;
  EXPECT_THROW((void)dcs::io::read_mesh(dir.file("surface.stl")), dcs::UsageError);
  expect_input_error([&] { (void)dcs::io::read_mesh(dir.file("none.ply")); }, dir.file("none.ply"),
                     0, {"no such file"});
  dcs::test::write_bytes(dir.file("empty.obj"), "");
  expect_input_error([&] { (void)dcs::io::read_mesh(dir.file("empty.obj")); },
                     dir.file("empty.obj"), 0, {"empty file"});
  EXPECT_EQ(dcs::io::mesh_format_of("A.PLY"), MeshFormat::kPly);
  EXPECT_EQ(dcs::io::mesh_format_of("a.Obj"), MeshFormat::kObj);
}

}  // namespace
