#!/usr/bin/env python3
"""The potential at points through the real dcs binary (issue 22), read back by the viewers' own
readers: VTK (PLY, OBJ, legacy VTK), gemmi (PDB), h5py (HDF5) and Python's csv module.

Usage: points_cli.py DCS SOURCE_DIR CASE
Cases: sphere (a charge at the centre of VTK-written sphere meshes in every format, --offset
1.4: every vertex must hold C q / 11.4), at_atoms (2lzt.pqr: each atom from the others against
a float64 numpy sum, the PDB's B-factors by gemmi), list (a CSV list against numpy, under every
physics model), workers (bit-identical for 1 and 3 CPU workers), presets (--preset chimerax on a
mesh: 1.4 Å offset, ±10 colours, ChimeraX's formula), refusals (exit codes and reasons).
Prints "points_cli: OK" on success; exit 77 when VTK or gemmi is missing."""
import csv
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

try:
    import gemmi
    import vtk
    from vtk.util.numpy_support import vtk_to_numpy
except ImportError as error:  # the viewers' venv (scripts/setup-viewers.sh) has both
    print("SKIP: %s" % error)
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from pqr_atoms import read_pqr  # noqa: E402

E = 1.602176634e-19
KB = 1.380649e-23
EPS0 = 8.8541878188e-12
NA = 6.02214076e23
KT = E / (4 * math.pi * EPS0 * 1e-10) * E / (KB * 298.15)  # kT/e * Å / e^2 at 298.15 K


def run(dcs, *args, expect=0):
    r = subprocess.run([dcs, *args, "--no-progress"], capture_output=True, text=True)
    if r.returncode != expect:
        sys.exit("points_cli: dcs %s exited %d (expected %d):\n%s%s"
                 % (" ".join(args), r.returncode, expect, r.stdout, r.stderr))
    return r


def read_vtk_mesh(path):
    ext = os.path.splitext(path)[1].lower()
    reader = {".ply": vtk.vtkPLYReader, ".obj": vtk.vtkOBJReader, ".vtk": vtk.vtkPolyDataReader}[ext]()
    reader.SetFileName(path)
    reader.Update()
    mesh = reader.GetOutput()
    points = vtk_to_numpy(mesh.GetPoints().GetData()).astype(np.float64)
    data = mesh.GetPointData()
    potential = data.GetArray("potential")
    return points, (vtk_to_numpy(potential).astype(np.float64) if potential is not None else None), mesh


def read_h5(path):
    with h5py.File(path, "r") as f:
        return (np.array(f["/points/position"]), np.array(f["/points/potential"], np.float64),
                dict(f.attrs))


def read_csv(path):
    rows = [r for r in csv.reader(line for line in open(path) if not line.startswith("#"))]
    header = rows[0]
    data = np.array(rows[1:], np.float64)
    return header, data


def direct_sum(points, atoms, charges, g, skip=None):
    out = np.zeros(len(points))
    for i, p in enumerate(points):
        r = np.maximum(np.sqrt(((atoms - p) ** 2).sum(1)), 0.1)
        terms = charges * g(r)
        if skip is not None:
            terms[skip[i]] = 0.0
        out[i] = terms.sum()
    return out


def sphere(dcs, source, tmp):
    atom = os.path.join(tmp, "centre.xyzq")
    with open(atom, "w") as f:
        f.write("1.0 2.0 3.0 -0.75\n")
    want = KT * -0.75 / 11.4
    meshes = ["sphere_ascii.ply", "sphere_binary.ply", "sphere.obj", "sphere_42.vtk",
              "sphere_42_binary.vtk", "sphere_51.vtk", "sphere_51_binary.vtk"]
    for name in meshes:
        mesh = os.path.join(source, "tests", "data", "mesh", name)
        out = os.path.join(tmp, "s_" + os.path.splitext(name)[0] + ".h5")
        run(dcs, "--atoms", atom, "--points", mesh, "--offset", "1.4", "-o", out, "--force")
        base = out[:-3]
        written = base + os.path.splitext(name)[1]
        points, potential, vmesh = read_vtk_mesh(written)
        src_points, _, smesh = read_vtk_mesh(mesh)
        assert len(points) == len(src_points) and vmesh.GetNumberOfCells() == smesh.GetNumberOfCells(), name
        assert np.abs(points - src_points).max() < 1e-5, name  # the surface, not the moved points
        h5_pos, h5_val, attrs = read_h5(out)
        # Each point 1.4 Å from its vertex; at 11.4 Å from the charge where the file gives the
        # sphere's radial normals (a file without normals gets them from its faces).
        with h5py.File(out, "r") as f:
            surface = np.array(f["/points/surface_position"])
        assert np.abs(np.sqrt(((h5_pos - surface) ** 2).sum(1)) - 1.4).max() < 1e-6, name
        r = np.sqrt(((h5_pos - [1, 2, 3]) ** 2).sum(1))
        exact = KT * -0.75 / r
        assert np.abs(h5_val / exact - 1).max() < 1e-6, (name, h5_val[:4], exact[:4])
        if potential is not None:  # PLY and VTK carry the value (OBJ: colours only)
            assert np.abs(potential / exact - 1).max() < 1e-6, (name, potential[:4])
        header, rows = read_csv(base + ".csv")
        assert header[:4] == ["x", "y", "z", "potential"], header
        assert np.array_equal(rows[:, 3].astype(np.float32), h5_val.astype(np.float32)), name
        print("sphere %s: %d vertices 1.4 A out (r %.3f-%.3f A), max rel. error %.1e"
              % (name, len(points), r.min(), r.max(), np.abs(h5_val / exact - 1).max()))


def at_atoms(dcs, source, tmp):
    pqr = os.path.join(source, "data", "2lzt.pqr")
    out = os.path.join(tmp, "lyso.h5")
    run(dcs, "--atoms", pqr, "--at-atoms", "-o", out, "--force")
    xyz, q = read_pqr(pqr)
    pos, val, attrs = read_h5(out)
    assert np.abs(pos - xyz).max() < 1e-9
    ref = KT * direct_sum(xyz, xyz, q, lambda r: 1 / r, skip=np.arange(len(xyz)))
    rel = np.abs(val - ref).max() / np.abs(ref).max()
    assert rel < 1e-5, rel
    structure = gemmi.read_structure(os.path.join(tmp, "lyso.pdb"))
    b = np.array([a.b_iso for res in structure[0][0] for a in res] if len(structure[0]) == 1 else
                 [a.b_iso for ch in structure[0] for res in ch for a in res])
    assert len(b) == len(val), (len(b), len(val))
    # %6.2f holds -99.99..999.99; beyond, one decimal, then none (io/atom_values.hpp).
    allowed = np.where((val > -99.995) & (val < 999.995), 0.005, np.where((val > -999.95) & (val < 9999.95), 0.05, 0.5))
    # (gemmi keeps B as float32: 296.01 reads as 296.0100098)
    assert (np.abs(b - val) <= allowed + 1e-4).all(), np.abs(b - val).max()
    print("at_atoms: 1960 atoms, max error %.2g of max|V| vs numpy float64; gemmi reads the B-factors" % rel)


def point_list(dcs, source, tmp):
    pqr = os.path.join(source, "data", "2lzt.pqr")
    xyz, q = read_pqr(pqr)
    rng = np.random.default_rng(3)
    pts = xyz[rng.choice(len(xyz), 400, replace=False)] + rng.normal(0, 1.5, (400, 3))
    listing = os.path.join(tmp, "pts.csv")
    with open(listing, "w") as f:
        f.write("# probe points\nx,y,z\n")
        for p in pts:
            f.write("%.6f,%.6f,%.6f\n" % tuple(p))
    pts = np.loadtxt(listing, delimiter=",", comments="#", skiprows=2)
    lam = math.sqrt(EPS0 * 78.54 * KB * 298.15 / (2 * NA * E * E * 0.15 * 1000)) * 1e10
    models = [([], lambda r: KT / r), (["--ionic-strength", "0.15"], lambda r: KT / 78.54 * np.exp(-r / lam) / r),
              (["--dielectric-model", "distance", "--dielectric", "4"], lambda r: KT / 4 / r ** 2)]
    for opts, g in models:
        out = os.path.join(tmp, "list.h5")
        run(dcs, "--atoms", pqr, "--points", listing, "-o", out, "--force", *opts)
        pos, val, attrs = read_h5(out)
        assert np.abs(pos - pts).max() < 1e-12
        ref = direct_sum(pts, xyz, q, g)
        rel = np.abs(val - ref).max() / np.abs(ref).max()
        assert rel < 1e-5, (opts, rel)
        print("list %s: 400 points, max error %.2g of max|V|" % (" ".join(opts) or "coulomb", rel))


def workers(dcs, source, tmp):
    pqr = os.path.join(source, "data", "2lzt.pqr")
    mesh = os.path.join(source, "tests", "data", "mesh", "sphere_binary.ply")
    values = []
    for w in ("1", "3"):
        out = os.path.join(tmp, "w%s.h5" % w)
        run(dcs, "--atoms", pqr, "--at-atoms", "--cpu-workers", w, "-o", out, "--force")
        values.append(read_h5(out)[1])
    assert np.array_equal(values[0], values[1]), "1 and 3 CPU workers differ"
    print("workers: 1 and 3 CPU workers give the same bits")


def presets(dcs, source, tmp):
    atom = os.path.join(tmp, "centre.xyzq")
    with open(atom, "w") as f:
        f.write("1.0 2.0 3.0 0.5\n")
    mesh = os.path.join(source, "tests", "data", "mesh", "sphere_binary.ply")
    out = os.path.join(tmp, "cx.h5")
    r = run(dcs, "--atoms", atom, "--points", mesh, "--preset", "chimerax", "-o", out, "--force")
    assert "from -10 to +10 kcal/mol/e" in r.stdout, r.stdout
    pos, val, attrs = read_h5(out)
    want = 331.62 * 0.5 / (4 * 11.4 ** 2)  # eps = 4r, 1.4 A out
    assert np.abs(val / want - 1).max() < 1e-6, (val[:3], want)
    points, potential, vmesh = read_vtk_mesh(out[:-3] + ".ply")
    colours = vtk_to_numpy(vmesh.GetPointData().GetScalars()) if vmesh.GetPointData().GetScalars() else None
    print("presets: chimerax on a mesh: %.4g kcal/mol/e at 1.4 A out, colours ±10" % want)


def far_mesh(dcs, source, tmp):
    """Distances to the nearest atom: a mesh around the molecule (each vertex 3 Å out from an
    atom) is summarised quietly; the same mesh moved 60 Å off (as PyMOL's `save x.obj` writes
    camera coordinates) is warned about. Median and max against a numpy brute force."""
    pqr = os.path.join(source, "data", "2lzt.pqr")
    xyz, _ = read_pqr(pqr)
    rng = np.random.default_rng(7)
    directions = rng.normal(size=(len(xyz), 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    near = xyz + 3.0 * directions
    for name, vertices, warned in (("near", near, False), ("far", near + [0.0, 0.0, -60.0], True)):
        mesh = os.path.join(tmp, name + ".obj")
        with open(mesh, "w") as f:
            f.writelines("v %.4f %.4f %.4f\n" % tuple(v) for v in vertices)
            f.writelines("f %d %d %d\n" % (i + 1, i + 2, i + 3) for i in range(0, len(vertices) - 2, 3))
        out = os.path.join(tmp, name + "_values.h5")
        r = run(dcs, "--atoms", pqr, "--points", mesh, "-o", out, "--force")
        read = np.loadtxt([l[1:] for l in open(mesh) if l.startswith("v ")])
        d = np.array([np.sqrt(((xyz - p) ** 2).sum(1)).min() for p in read])
        median, largest = np.sort(d)[len(d) // 2], d.max()
        line = [l for l in r.stdout.splitlines() if l.strip().startswith("distance")]
        assert line and "median %.3g A, max %.3g A" % (median, largest) in line[0], (line, median)
        _, _, attrs = read_h5(out)  # root attributes: "1.26056 A"
        text = attrs["nearest_atom_median"]
        got = float((text.decode() if isinstance(text, bytes) else text).split()[0])
        assert abs(got - median) <= 1e-5 * median, (got, median)
        assert ("lie far from the molecule" in r.stderr) == warned, r.stderr
        print("far_mesh %s: median %.3g A, max %.3g A, warned: %s" % (name, median, largest, warned))


def refusals(dcs, source, tmp):
    pqr = os.path.join(source, "data", "2lzt.pqr")
    listing = os.path.join(tmp, "p.txt")
    with open(listing, "w") as f:
        f.write("1 2 3\n4 5\n")
    mesh = os.path.join(source, "tests", "data", "mesh", "sphere_binary.ply")
    cases = [
        (["--points", listing], 3, "p.txt:2: expected 3 numbers"),
        (["--points", os.path.join(tmp, "none.csv")], 3, "none.csv"),
        (["--points", mesh, "--grid", "33"], 2, "--grid places a map's grid"),
        (["--points", mesh, "--dx"], 2, "--dx, --mrc and --no-hdf5 shape map outputs"),
        (["--at-atoms", "--points", mesh], 2, "one or the other"),
        (["--at-atoms", "--offset", "1"], 2, "--offset moves mesh vertices"),
        (["--offset", "1"], 2, "--offset applies to --points or --at-atoms"),
        (["--points", mesh, "--colour-range", "-3"], 2, "--colour-range must be a positive number"),
    ]
    for args, code, words in cases:
        out = os.path.join(tmp, "r.h5")
        r = run(dcs, "--atoms", pqr, *args, "-o", out, "--force", expect=code)
        assert words in r.stderr, (args, r.stderr)
        assert not os.path.exists(out) and not os.path.exists(out[:-3] + ".csv"), args
    # An existing output without --force: refused before any work, the file untouched.
    out = os.path.join(tmp, "keep.h5")
    with open(out, "w") as f:
        f.write("mine")
    r = run(dcs, "--atoms", pqr, "--at-atoms", "-o", out, expect=1)
    assert open(out).read() == "mine" and not os.path.exists(out[:-3] + ".csv"), r.stderr
    print("refusals: each with its exit code and reason, nothing written")


if __name__ == "__main__":
    dcs, source, case = sys.argv[1], sys.argv[2], sys.argv[3]
    cases = {"sphere": sphere, "at_atoms": at_atoms, "list": point_list, "workers": workers,
             "presets": presets, "refusals": refusals, "far_mesh": far_mesh}
    with tempfile.TemporaryDirectory() as tmp:
        cases[case](dcs, source, tmp)
    print("points_cli: OK")
