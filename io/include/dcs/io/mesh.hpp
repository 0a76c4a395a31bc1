// Surface meshes in, coloured meshes out: the vertices of a molecular surface (ChimeraX,
// Blender, MeshLab, PyMOL, VTK exports) as points at which to compute the potential, and the same
// mesh written back with each vertex's potential and a colour.
//
// Formats, chosen by the file name's extension (case-insensitive):
//   .ply  Stanford PLY: ascii, binary_little_endian, binary_big_endian. Element "vertex" with
//         x y z and optional nx ny nz of any scalar type; element "face" with a list property
//         "vertex_indices" (or "vertex_index"), any integer count and index types. Every other
//         element and property is skipped by its declared type.
//   .obj  Wavefront OBJ: v (3 to 7 numbers: x y z [w] or x y z r g b), vn, f with i, i/t, i//n,
//         i/t/n and negative (relative) indices, naming vertices and normals defined above it; vt,
//         g, o, s, usemtl, mtllib, l, p and every other statement are ignored. A vertex's normal is
//         the mean of the unit normals its face corners name; when some vertex gets none, the
//         file's normals are dropped (computed from the faces instead). A file without faces whose
//         vn count equals its v count pairs them in order (point clouds).
//   .vtk  legacy VTK, DATASET POLYDATA, ASCII or BINARY (big-endian): POINTS (any numeric
//         type), POLYGONS and TRIANGLE_STRIPS in the count form (versions <= 5.0) or the
//         OFFSETS/CONNECTIVITY form (5.1), POINT_DATA NORMALS. VERTICES, LINES, other attributes,
//         FIELD arrays, CELL_DATA and METADATA are skipped. Strips become triangles.
//
// Every malformed input is a dcs::InputError: "<file>:<line>: <reason>" in text, "<file>: byte
// <offset>: <reason>" in binary data. Counts a header declares are checked against the bytes the
// file still holds before anything is allocated (a header claiming 10^12 vertices is refused at
// once), and against the limits below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dcs/io/colour_map.hpp"
#include "dcs/types.hpp"

namespace dcs::io {

/// Limits of read_mesh (InputError beyond them). 10^8 vertices are 2.4 GB of positions, far
/// beyond any molecular surface (ChimeraX's surfaces of a ribosome: a few million).
inline constexpr std::size_t kMaxMeshVertices = 100'000'000;
inline constexpr std::size_t kMaxMeshFaces = 200'000'000;
inline constexpr std::size_t kMaxMeshFaceIndices = 1'000'000'000;  ///< corners of all faces
inline constexpr std::size_t kMaxFaceVertices = 65'536;            ///< corners of one polygon
inline constexpr std::uint64_t kMaxMeshFileBytes = std::uint64_t{16} << 30;  ///< 16 GiB

enum class MeshFormat { kPly, kObj, kVtk };

/// "PLY", "OBJ", "VTK".
const char* format_name(MeshFormat format) noexcept;

/// The format named by a path's extension (.ply, .obj, .vtk, any case); UsageError otherwise
/// (the caller names the option), e.g. "surface.stl: unknown mesh format; dcs reads and writes
/// .ply, .obj and .vtk".
MeshFormat mesh_format_of(const std::string& path);

/// A polygon mesh. Positions in Å. Faces in CSR form: face f has the corners
/// face_indices[face_offsets[f] .. face_offsets[f + 1]), indices into `vertices`, counter-
/// clockwise seen from outside (the winding ChimeraX, Blender and VTK writers use).
struct Mesh {
  std::vector<Vec3> vertices;
  std::vector<Vec3> normals;  ///< empty, or one per vertex as the file gave it (not normalised)
  std::vector<std::uint32_t> face_offsets;  ///< face_count() + 1 entries, the first 0 (or empty)
  std::vector<std::uint32_t> face_indices;  ///< every face has >= 3 corners, each < vertices
  MeshFormat format = MeshFormat::kPly;     ///< the format it was read from
  bool binary = false;                      ///< the file was binary (PLY binary_*, VTK BINARY)
  std::string source_path;                  ///< the file it was read from (for messages)

  std::size_t face_count() const noexcept {
    return face_offsets.empty() ? 0 : face_offsets.size() - 1;
  }
};

/// Reads a mesh file by its extension (see above). Vertices are finite and within
/// dcs::limits::kMaxGridCoordinate (they are where the potential is computed, like grid points);
/// normals, when present, are finite. Throws InputError (malformed, missing, unreadable file)
/// and UsageError (unknown extension).
Mesh read_mesh(const std::string& path);

/// The same from bytes in memory; `name` stands for the file in messages (tests, fuzzing).
Mesh parse_mesh(std::string_view bytes, MeshFormat format, const std::string& name);

/// One unit normal per vertex: the mesh's own normals normalised or, when it has none, the
/// area-weighted normals of the faces around each vertex (each face's vector area by Newell's
/// formula, so counter-clockwise winding points outward). `--offset D` moves each vertex D Å
/// along this normal (ChimeraX's `coulombic` samples 1.4 Å out, a water radius, by default).
/// Throws InputError naming the mesh's file when a vertex has a zero-length normal, or has no
/// normal and no face (or only faces without area): an offset needs a direction at every vertex.
std::vector<Vec3> vertex_normals(const Mesh& mesh);

/// What write_mesh records besides the geometry.
struct MeshWriteMeta {
  std::string unit;                   ///< unit of the values, e.g. "kT/e"
  std::vector<std::string> comments;  ///< lines for the file's header (physics, input, offset)
  std::string values_table;           ///< the CSV/HDF5 table with the exact values, if any
  bool force = false;                 ///< replace an existing file (check_output_path())
};

/// Writes `mesh` with one value per vertex (`values`, in meta.unit) and its colour from
/// `colours`, in the format of `path`'s extension (the input's or another). Coordinates and
/// normals are written as float32, normals as unit vectors (a zero normal stays zero).
///   PLY: vertex x y z [nx ny nz] red green blue (uchar) potential (float), then the faces
///        (list uchar|int int vertex_indices); binary_little_endian when mesh.binary, else
///        ascii; comments give the unit, meta.comments and the colour map.
///   OBJ: "v x y z r g b" (colours 0..1: the vertex-colour extension Blender and MeshLab read),
///        vn when the mesh has normals, f (i//i with normals); a comment header, which also says
///        that OBJ cannot hold the values themselves and where they are (meta.values_table).
///   VTK: legacy 3.0 POLYDATA: POINTS, POLYGONS, POINT_DATA with SCALARS potential float 1
///        (LOOKUP_TABLE default), COLOR_SCALARS colour 3 and NORMALS when present; BINARY
///        (big-endian) when mesh.binary, else ASCII. The title line holds the unit and range.
/// The file is written under a temporary name and renamed when complete (AtomicFile): it is
/// whole or absent. Throws IoError (writing), UsageError (unknown extension) and InternalError
/// when values.size() != mesh.vertices.size().
void write_mesh(const std::string& path, const Mesh& mesh, const std::vector<float>& values,
                const ColourMap& colours, const MeshWriteMeta& meta);

}  // namespace dcs::io
