"""A periodic map of a triclinic cell (--periodic, --map-axes cell: the grid's axes along the
cell vectors) opened by the real readers: each must place voxel (i, j, k) where dcs computed it,
origin + i*a/nx + j*b/ny + k*c/nz, as the HDF5 file's /potential `axes` attribute says (h5py).

    triclinic_viewer_tests.py --dcs DCS CASE

Cases: mrc (mrcfile's header, gemmi's positions), chimerax (ChimeraX's MRC and Chimera map
readers), vtkhdf (VTK's vtkHDFReader with its direction matrix), dx (the skewed delta rows, read
back as written). Prints "triclinic_viewer_tests: OK <case>"; exit 77 where the viewers' venv is
missing.
"""
import os
import shutil
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError:
    print("SKIPPED: numpy/h5py are not installed for this Python; run scripts/setup-viewers.sh")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from case_main import cases_of, run_case  # noqa: E402

CELL = "21,23,26,76,97,109"  # every angle off 90 degrees, a wide triclinic cell
COUNTS = ("7", "8", "9")
IJK = [(0, 0, 0), (6, 0, 0), (0, 7, 0), (0, 0, 8), (6, 7, 8), (3, 5, 2), (1, 6, 7)]


def check(condition, message):
    if not condition:
        raise AssertionError(message)


class Map:
    """dcs's map (-o .h5, --mrc, --dx) and h5py's view of its grid: the reference positions."""

    def __init__(self, args, work):
        atoms = os.path.join(work, "ions.xyzq")
        with open(atoms, "w") as out:  # a net charge: the background is part of the map
            out.write("2 3 4 1\n10 -4 12 -1\n-3 8 20 1\n15 12 3 -0.5\n")
        self.h5 = os.path.join(work, "cell.h5")
        self.mrc = os.path.join(work, "cell.mrc")
        self.dx = os.path.join(work, "cell.dx")
        run = subprocess.run([args.dcs, "--atoms", atoms, "--box", CELL, "--periodic", "--grid",
                              *COUNTS, "--device", "cpu", "-q", "-o", self.h5, "--mrc", self.mrc,
                              "--dx", self.dx], capture_output=True, text=True, timeout=300)
        check(run.returncode == 0, f"dcs exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
        with h5py.File(self.h5, "r") as f:
            pot = f["potential"]
            self.values = pot[()]  # [k][j][i]
            self.origin = np.array(pot.attrs["origin"], dtype=np.float64)
            self.axes = np.array(pot.attrs["axes"], dtype=np.float64).reshape(3, 3)
            self.spacing = np.array(pot.attrs["spacing"], dtype=np.float64)
            self.cell_vectors = np.array(f["method"].attrs["cell_vectors"], dtype=np.float64)
            self.cell_angles = np.array(f["method"].attrs["cell_angles"], dtype=np.float64)
            self.cell_lengths = np.array(f["method"].attrs["cell_lengths"], dtype=np.float64)
        self.dims = tuple(int(n) for n in COUNTS)
        check(self.values.shape == self.dims[::-1], f"shape {self.values.shape}")
        # The step vectors are the cell vectors over the counts: the map is the cell.
        check(np.allclose(self.axes * np.array(self.dims)[:, None], self.cell_vectors, atol=1e-9),
              f"axes {self.axes} are not the cell vectors {self.cell_vectors} over the counts")

    def position(self, ijk):
        return self.origin + np.asarray(ijk, dtype=np.float64) @ self.axes

    def check_positions(self, positions, who, tolerance=1e-4):
        for ijk, got in zip(IJK, positions):
            want = self.position(ijk)
            check(np.allclose(got, want, atol=tolerance),
                  f"{who}: voxel {ijk} at {np.asarray(got)}, dcs computed it at {want}")
        print(f"{who}: {len(IJK)} voxels where dcs computed them")


def case_mrc(ctx):
    """mrcfile reads the header (cell lengths, angles, mode 2, axis order, values); gemmi
    turns voxel indices into positions from that cell."""
    import gemmi
    import mrcfile

    with mrcfile.open(ctx.mrc, permissive=False) as m:
        h = m.header
        check(int(h.mode) == 2, f"mode {h.mode}")
        check((int(h.mapc), int(h.mapr), int(h.maps)) == (1, 2, 3), "axis order")
        cella = np.array([h.cella.x, h.cella.y, h.cella.z], dtype=np.float64)
        cellb = np.array([h.cellb.alpha, h.cellb.beta, h.cellb.gamma], dtype=np.float64)
        check(np.allclose(cella, ctx.cell_lengths, rtol=1e-6), f"cella {cella}")
        check(np.allclose(cellb, ctx.cell_angles, atol=1e-4), f"cellb {cellb}")
        check(np.array_equal(m.data, ctx.values), "mrcfile data != h5py values")
    ccp4 = gemmi.read_ccp4_map(ctx.mrc)
    ccp4.setup(float("nan"))
    grid = ccp4.grid
    check((grid.nu, grid.nv, grid.nw) == ctx.dims, f"gemmi grid {grid.nu} {grid.nv} {grid.nw}")
    positions = []
    for i, j, k in IJK:
        p = grid.get_position(i, j, k)
        positions.append([p.x, p.y, p.z])
        check(grid.get_value(i, j, k) == ctx.values[k, j, i], f"gemmi value at {(i, j, k)}")
    ctx.check_positions(positions, "gemmi")


def case_chimerax(ctx):
    """ChimeraX's MRC reader (CELLB) and its Chimera map reader (cell_angles of the .cmap
    group): the grid's ijk_to_xyz places every voxel."""
    import chimerax_readers as cx

    cmap = ctx.h5.replace(".h5", ".cmap")
    shutil.copy(ctx.h5, cmap)
    for path in (ctx.mrc, cmap):
        grids = cx.open_map(path)
        check(len(grids) == 1, f"ChimeraX opens {len(grids)} maps from {path}")
        g = grids[0]
        check(tuple(g.size) == ctx.dims, f"ChimeraX size {tuple(g.size)}")
        check(np.allclose(g.cell_angles, ctx.cell_angles, atol=1e-4),
              f"ChimeraX cell angles {g.cell_angles}")
        positions = [g.ijk_to_xyz(ijk) for ijk in IJK]
        ctx.check_positions(positions, f"ChimeraX ({cx.file_type(path)})")
        check(np.array_equal(g.matrix(), ctx.values), f"ChimeraX values of {path}")


def case_vtkhdf(ctx):
    """VTK's vtkHDFReader: ImageData with Origin, Spacing and a Direction whose columns are the
    unit step vectors."""
    from vtkmodules.vtkIOHDF import vtkHDFReader

    reader = vtkHDFReader()
    reader.SetFileName(ctx.h5)
    reader.Update()
    image = reader.GetOutput()
    check(tuple(image.GetDimensions()) == ctx.dims, f"VTK dimensions {image.GetDimensions()}")
    positions = []
    for ijk in IJK:
        out = [0.0, 0.0, 0.0]
        image.TransformIndexToPhysicalPoint(*ijk, out)
        positions.append(out)
    ctx.check_positions(positions, "VTK vtkHDFReader")


def case_dx(ctx):
    """The DX file's delta rows are the step vectors (VMD's reading), its values the map's."""
    with open(ctx.dx) as f:
        lines = f.read().splitlines()
    deltas = np.array([[float(v) for v in line.split()[1:]] for line in lines
                       if line.startswith("delta ")])
    origin = next(np.array([float(v) for v in line.split()[1:]]) for line in lines
                  if line.startswith("origin "))
    check(deltas.shape == (3, 3), f"{len(deltas)} delta lines")
    check(np.allclose(deltas, ctx.axes, rtol=1e-6, atol=1e-9), f"deltas {deltas} != {ctx.axes}")
    ctx.check_positions([origin + np.asarray(ijk, float) @ deltas for ijk in IJK], "DX deltas")


if __name__ == "__main__":
    run_case("triclinic_viewer_tests", cases_of(globals()), context=Map)
