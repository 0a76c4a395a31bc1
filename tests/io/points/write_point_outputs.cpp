// Writes what point_formats.py opens with VTK, gemmi and h5py:
//   write_point_outputs MESH OUTDIR
// reads MESH (any format) and writes OUTDIR/out_{binary,ascii}.{ply,vtk}, out.obj, out.csv,
// out.h5 (with HDF5) with the value v = 0.7 x - 1.3 y + 0.2 z - 1 at each vertex, and
// atoms.pdb: five atoms whose values test the B-factor column's widths. Values and colours are
// recomputed by the script from the positions it reads.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "dcs/io/atom_values.hpp"
#include "dcs/io/hdf5.hpp"
#include "dcs/io/mesh.hpp"
#include "dcs/io/point_table.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_point_outputs MESH OUTDIR\n");
    return 2;
  }
  try {
    const std::string out = argv[2];
    dcs::io::Mesh mesh = dcs::io::read_mesh(argv[1]);
    std::vector<float> values;
    for (const dcs::Vec3& v : mesh.vertices)
      values.push_back(static_cast<float>(0.7 * v[0] - 1.3 * v[1] + 0.2 * v[2] - 1.0));
    const dcs::io::ColourMap colours(5.0);
    dcs::io::MeshWriteMeta meta;
    meta.unit = "kT/e";
    meta.comments = {"physics: test values"};
    meta.values_table = "out.csv";
    for (const bool binary : {true, false}) {
      mesh.binary = binary;
      const std::string stem = out + (binary ? "/out_binary" : "/out_ascii");
      dcs::io::write_mesh(stem + ".ply", mesh, values, colours, meta);
      dcs::io::write_mesh(stem + ".vtk", mesh, values, colours, meta);
    }
    dcs::io::write_mesh(out + "/out.obj", mesh, values, colours, meta);
    dcs::io::PointTable table;
    table.positions = mesh.vertices;
    table.values = values;
    table.normals = dcs::io::vertex_normals(mesh);
    table.unit = "kT/e";
    table.attributes = {{"physics", "test values"}, {"mesh", argv[1]}};
    dcs::io::write_point_csv(out + "/out.csv", table, false);
    if (dcs::io::hdf5_available()) dcs::io::write_point_hdf5(out + "/out.h5", table, false);

    dcs::System system;
    const char* names[] = {"N", "CA", "C", "O", "OW"};
    const float atom_values[] = {1.25f, -99.99f, 999.99f, -1234.5f, 5e6f};
    for (int k = 0; k < 5; ++k) {
      dcs::Atom atom;
      atom.serial = k + 1;
      atom.name = names[k];
      atom.res_name = k < 4 ? "GLY" : "HOH";
      atom.chain = k < 4 ? "A" : "W";
      atom.res_seq = k < 4 ? 7 : 101;
      atom.hetatm = k == 4;
      atom.position = {1.5 * k, -2.25 * k, 100.0 + k};
      system.atoms.push_back(atom);
    }
    dcs::io::AtomValuesMeta atom_meta;
    atom_meta.unit = "kT/e";
    atom_meta.values_table = "atoms.csv";
    dcs::io::write_atoms_with_values(out + "/atoms.pdb", system,
                                     std::vector<float>(atom_values, atom_values + 5), atom_meta);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "write_point_outputs: %s\n", error.what());
    return 1;
  }
  return 0;
}
