#!/usr/bin/env python3
"""The files of a "potential at points" run opened by the programs that read them.

    point_formats.py --writer WRITE_POINT_OUTPUTS --hdf5 1|0 CASE

A sphere is written by VTK's own writers (vtkSphereSource + vtkPLYWriter / vtkOBJWriter /
vtkPolyDataWriter), dcs reads it and writes every output (write_point_outputs.cpp: the value
v = 0.7 x - 1.3 y + 0.2 z - 1 at each vertex, colours from a ±5 red-white-blue ramp), and:
  ply     vtkPLYReader reads out_{binary,ascii}.ply: points, triangles, RGB; the potential
          property read with numpy from the header's layout;
  vtk     vtkPolyDataReader reads out_{binary,ascii}.vtk: points, polygons, the potential
          scalars (exact float32), the colour scalars and the normals;
  obj     a plain parser reads out.obj: v x y z r g b, vn, f i//i;
  pdb     gemmi reads atoms.pdb: names, residues, chains, HETATM, B-factors as written;
  tables  h5py reads out.h5 and numpy out.csv: the same points and values, units, attributes.
Prints "point_formats: OK" on success.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import vtk
from vtk.util.numpy_support import vtk_to_numpy

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "support"))
from verdict import check  # noqa: E402


def sphere():
    source = vtk.vtkSphereSource()
    source.SetRadius(12.0)
    source.SetCenter(-3.0, 4.5, 20.0)
    source.SetThetaResolution(24)
    source.SetPhiResolution(16)
    source.Update()
    return source.GetOutput()


def write_input(directory, case):
    poly = sphere()
    if case == "ply":
        path = os.path.join(directory, "in.ply")
        writer = vtk.vtkPLYWriter()
        writer.SetFileTypeToBinary()
    elif case == "obj":
        path = os.path.join(directory, "in.obj")
        writer = vtk.vtkOBJWriter()
    else:
        path = os.path.join(directory, "in.vtk")
        writer = vtk.vtkPolyDataWriter()
        writer.SetFileTypeToBinary()  # ASCII would round the points to 6 digits
    writer.SetFileName(path)
    writer.SetInputData(poly)
    check(writer.Write() == 1, f"VTK could not write {path}")
    return path, poly


def expected(points):
    x, y, z = (points[:, k].astype(np.float64) for k in range(3))
    values = (0.7 * x - 1.3 * y + 0.2 * z - 1.0).astype(np.float32)
    t = np.minimum(1.0, np.abs(values.astype(np.float64)) / 5.0)
    fade = np.rint(255.0 * (1.0 - t)).astype(np.uint8)
    rgb = np.where((values < 0)[:, None], np.stack([np.full_like(fade, 255), fade, fade], 1),
                   np.stack([fade, fade, np.full_like(fade, 255)], 1))
    return values, rgb


def triangles(poly):
    cells = poly.GetPolys()
    offsets = vtk_to_numpy(cells.GetOffsetsArray())
    connectivity = vtk_to_numpy(cells.GetConnectivityArray())
    return [tuple(connectivity[offsets[i]:offsets[i + 1]]) for i in range(len(offsets) - 1)]


def check_geometry(name, poly, source):
    points = vtk_to_numpy(poly.GetPoints().GetData())
    reference = vtk_to_numpy(source.GetPoints().GetData()).astype(np.float32)
    check(points.shape == reference.shape, f"{name}: {points.shape} points, expected {reference.shape}")
    check(np.array_equal(points.astype(np.float32), reference), f"{name}: points differ")
    check(triangles(poly) == triangles(source), f"{name}: the polygons differ")
    return points


def ply_potentials(path, n):
    """The 'potential' property of the vertices of a PLY dcs wrote, parsed from its header."""
    with open(path, "rb") as f:
        data = f.read()
    end = data.index(b"end_header\n") + len(b"end_header\n")
    header = data[:end].decode("ascii").splitlines()
    binary = "format binary_little_endian 1.0" in header
    names, types = [], []
    in_vertex = False
    for line in header:
        words = line.split()
        if words[:1] == ["element"]:
            in_vertex = words[1] == "vertex"
        elif words[:1] == ["property"] and in_vertex:
            types.append({"float": "<f4", "uchar": "u1"}[words[1]])
            names.append(words[2])
    if binary:
        table = np.frombuffer(data, dtype=np.dtype(list(zip(names, types))), count=n, offset=end)
        return table["potential"]
    rows = data[end:].decode("ascii").splitlines()[:n]
    column = names.index("potential")
    return np.array([np.float32(row.split()[column]) for row in rows], dtype=np.float32)


def case_ply(out, source):
    for name in ("out_binary.ply", "out_ascii.ply"):
        reader = vtk.vtkPLYReader()
        reader.SetFileName(os.path.join(out, name))
        reader.Update()
        poly = reader.GetOutput()
        points = check_geometry(name, poly, source)
        values, rgb = expected(points)
        colours = poly.GetPointData().GetScalars()
        check(colours is not None and colours.GetNumberOfComponents() == 3, f"{name}: no RGB")
        check(np.array_equal(vtk_to_numpy(colours), rgb), f"{name}: colours differ")
        check(poly.GetPointData().GetNormals() is not None, f"{name}: normals lost")
        check(np.array_equal(ply_potentials(os.path.join(out, name), len(points)), values),
              f"{name}: potentials differ")


def case_vtk(out, source):
    for name in ("out_binary.vtk", "out_ascii.vtk"):
        reader = vtk.vtkPolyDataReader()
        reader.SetFileName(os.path.join(out, name))
        reader.ReadAllScalarsOn()
        reader.ReadAllColorScalarsOn()
        reader.Update()
        poly = reader.GetOutput()
        points = check_geometry(name, poly, source)
        values, rgb = expected(points)
        data = poly.GetPointData()
        potential = data.GetArray("potential")
        check(potential is not None, f"{name}: no potential array")
        check(np.array_equal(vtk_to_numpy(potential), values), f"{name}: potentials differ")
        colour = data.GetArray("colour")
        check(colour is not None, f"{name}: no colour array")
        check(np.array_equal(vtk_to_numpy(colour).astype(np.uint8), rgb), f"{name}: colours differ")
        normals = data.GetNormals()
        check(normals is not None, f"{name}: no normals")
        reference = vtk_to_numpy(source.GetPointData().GetNormals())
        check(np.allclose(vtk_to_numpy(normals), reference, atol=1e-6), f"{name}: normals differ")


def case_obj(out, source):
    vertices, colours, normals, faces, comments = [], [], [], [], []
    with open(os.path.join(out, "out.obj"), encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if not words:
                continue
            if words[0] == "#":
                comments.append(line)
            elif words[0] == "v":
                check(len(words) == 7, f"out.obj: v line with {len(words) - 1} numbers")
                vertices.append([float(w) for w in words[1:4]])
                colours.append([float(w) for w in words[4:7]])
            elif words[0] == "vn":
                normals.append([float(w) for w in words[1:4]])
            elif words[0] == "f":
                corners = [w.split("//") for w in words[1:]]
                check(all(len(c) == 2 and c[0] == c[1] for c in corners), f"out.obj: {line!r}")
                faces.append(tuple(int(c[0]) - 1 for c in corners))
    points = np.array(vertices, dtype=np.float64)
    reference = vtk_to_numpy(source.GetPoints().GetData()).astype(np.float32)
    check(np.array_equal(points.astype(np.float32), reference), "out.obj: vertices differ")
    check(faces == triangles(source), "out.obj: faces differ")
    check(len(normals) == len(vertices), "out.obj: not one vn per v")
    _, rgb = expected(reference)
    check(np.allclose(np.array(colours), rgb / 255.0, atol=1e-4), "out.obj: colours differ")
    text = "".join(comments)
    check("kT/e" in text and "out.csv" in text and "OBJ has no field" in text,
          "out.obj: the header does not name the unit and the table")


def case_pdb(out):
    import gemmi
    structure = gemmi.read_structure(os.path.join(out, "atoms.pdb"))
    atoms = [(r, a) for m in structure for c in m for r in c for a in r][:5]
    check(len(atoms) == 5, f"atoms.pdb: gemmi read {len(atoms)} atoms")
    names = [a.name for _, a in atoms]
    check(names == ["N", "CA", "C", "O", "OW"], f"atoms.pdb: names {names}")
    check([r.name for r, _ in atoms] == ["GLY"] * 4 + ["HOH"], "atoms.pdb: residue names")
    check(atoms[4][0].het_flag == "H", "atoms.pdb: the last atom is not HETATM")
    b = [a.b_iso for _, a in atoms]
    want = [1.25, -99.99, 999.99, -1234.0, 999999.0]  # -1234.5 has no room for decimals
    check(np.allclose(b[:3], want[:3], atol=1e-4), f"atoms.pdb: B-factors {b}")
    check(abs(b[3] + 1234.5) <= 0.5 and b[4] == 999999.0, f"atoms.pdb: wide B-factors {b}")
    positions = [a.pos for _, a in atoms]
    check(abs(positions[4].z - 104.0) < 1e-3 and abs(positions[2].y + 4.5) < 1e-3,
          "atoms.pdb: coordinates")
    remarks = open(os.path.join(out, "atoms.pdb"), encoding="ascii").read()
    check("1 values shown with fewer than 2 decimals and 1 clamped" in remarks,
          "atoms.pdb: no REMARK about the values that did not fit")
    try:
        from Bio.PDB import PDBParser
    except ImportError:
        print("point_formats: Biopython is not in the venv; gemmi alone read the PDB")
    else:
        s = PDBParser(QUIET=True).get_structure("a", os.path.join(out, "atoms.pdb"))
        bb = [a.get_bfactor() for a in s.get_atoms()]
        check(np.allclose(bb, b, atol=1e-4), f"atoms.pdb: Biopython B-factors {bb}")


def case_tables(out, source, hdf5):
    with open(os.path.join(out, "out.csv"), encoding="ascii") as f:
        lines = f.read().splitlines()
    rows = [line for line in lines if not line.startswith("#")]
    header = rows[0]
    table = np.array([[float(cell) for cell in row.split(",")] for row in rows[1:]])
    check(header == "x,y,z,potential,nx,ny,nz", f"out.csv: header {header!r}")
    check("# unit: kT/e" in lines, "out.csv: no unit line")
    reference = vtk_to_numpy(source.GetPoints().GetData()).astype(np.float32)
    check(np.array_equal(table[:, :3].astype(np.float32), reference), "out.csv: positions differ")
    values, _ = expected(reference)
    check(np.array_equal(table[:, 3].astype(np.float32), values), "out.csv: potentials differ")
    check(np.allclose(np.linalg.norm(table[:, 4:7], axis=1), 1.0), "out.csv: normals not unit")
    if not hdf5:
        print("point_formats: dcs was built without HDF5; out.h5 not checked")
        return
    import h5py
    with h5py.File(os.path.join(out, "out.h5"), "r") as f:
        check(f.attrs["format"] == "dcs points" and f.attrs["unit"] == "kT/e", "out.h5: root attrs")
        check(f.attrs["physics"] == "test values", "out.h5: caller's attribute")
        position = f["points/position"]
        potential = f["points/potential"]
        check(position.dtype == np.float64 and position.shape == (len(reference), 3),
              f"out.h5: position {position.dtype} {position.shape}")
        check(potential.dtype == np.float32, f"out.h5: potential {potential.dtype}")
        check(position.attrs["units"] == "angstrom" and potential.attrs["units"] == "kT/e",
              "out.h5: units")
        check(np.array_equal(position[...], table[:, :3]), "out.h5 and out.csv: positions differ")
        check(np.array_equal(potential[...], values), "out.h5: potentials differ")
        check(np.allclose(f["points/normal"][...], table[:, 4:7]), "out.h5: normals differ")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writer", required=True)
    parser.add_argument("--hdf5", default="1")
    parser.add_argument("case", choices=["ply", "vtk", "obj", "pdb", "tables"])
    args = parser.parse_args()
    hdf5 = args.hdf5.upper() in ("1", "ON", "TRUE", "YES")
    with tempfile.TemporaryDirectory(prefix="dcs-point-formats-") as directory:
        path, source = write_input(directory, args.case)
        result = subprocess.run([args.writer, path, directory], capture_output=True, text=True)
        check(result.returncode == 0, f"write_point_outputs failed: {result.stderr}")
        if args.case == "ply":
            case_ply(directory, source)
        elif args.case == "vtk":
            case_vtk(directory, source)
        elif args.case == "obj":
            case_obj(directory, source)
        elif args.case == "pdb":
            case_pdb(directory)
        else:
            case_tables(directory, source, hdf5)
    print("point_formats: OK")


if __name__ == "__main__":
    main()
