"""The maps of the real dcs binary, opened by the real readers of each viewer (ChimeraX, VTK,
ParaView, mrcfile, gemmi, PyMOL, xarray, `dcs preview`), compared with h5py's view of the same
file: grid count, origin, step, axis order and values at and between grid points.

    viewer_tests.py --dcs DCS --write-mrc TOOL --write-sample TOOL --source DIR CASE

Prints "viewer_tests: OK <case>" on success; raises (exit 1) on failure.
"""
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
except ImportError:  # a machine without the viewers' Python packages (the GPU machine)
    print("SKIPPED: numpy is not installed for this Python; run scripts/setup-viewers.sh")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from case_main import cases_of, run_case  # noqa: E402
from pymol_instance import start_pymol  # noqa: E402


def fail(message):
    raise AssertionError(message)


def check(condition, message):
    if not condition:
        fail(message)


class Ctx:
    def __init__(self, args, work):
        self.args = args
        self.work = work
        self.pqr = os.path.join(args.source, "data", "2lzt.pqr")

    def dcs(self, *arguments, check_rc=True):
        run = subprocess.run([self.args.dcs, *arguments], cwd=self.work, capture_output=True,
                             text=True, timeout=300)
        if check_rc and run.returncode != 0:
            fail(f"dcs {' '.join(arguments)} exited {run.returncode}:\n{run.stdout}\n{run.stderr}")
        return run

    def molecule_map(self, name="mol.h5", grid=("17", "19", "23"), extra=()):
        """A map of 2lzt.pqr (counts per axis differ, so a transposition shows)."""
        path = os.path.join(self.work, name)
        self.dcs("--atoms", self.pqr, "--grid", *grid, "-o", path, "-q", "--force", *extra)
        return path

    def noncubic_map(self, name="noncubic.h5"):
        path = os.path.join(self.work, name)
        dx = os.path.join(self.work, name + ".dx")
        run = subprocess.run([self.args.write_sample, path, dx], capture_output=True, text=True)
        check(run.returncode == 0, f"write_sample_map failed: {run.stderr}")
        return path

    def mrc_of(self, h5_path, name):
        path = os.path.join(self.work, name)
        run = subprocess.run([self.args.write_mrc, h5_path, path, "4"], capture_output=True,
                             text=True)
        check(run.returncode == 0, f"write_mrc_map failed: {run.stderr}")
        return path


class H5Map:
    """The reference: h5py's view of a dcs file."""

    def __init__(self, path):
        import h5py

        with h5py.File(path, "r") as f:
            d = f["potential"]
            self.values = d[()].astype(np.float64)  # [k][j][i]
            self.origin = np.asarray(d.attrs["origin"], dtype=np.float64)
            self.spacing = np.asarray(d.attrs["spacing"], dtype=np.float64)
            self.dims = tuple(int(n) for n in d.attrs["dims"])
        check(self.values.shape == self.dims[::-1], "h5py: dims disagree with the shape")
        check(len(set(self.dims)) == 3, f"test grid must have three different counts: {self.dims}")

    def test_points(self):
        """Grid points (corners, centre, asymmetric ones) and points between grid points, as
        float32 positions (what the readers interpolate at), with their trilinear values."""
        nx, ny, nz = self.dims
        # Not on the map's faces: float32 rounding may put a face point just outside, where
        # readers refuse to interpolate. (Every value, faces included, is compared elsewhere.)
        ijk = [(1, 1, 1), (nx - 2, ny - 2, nz - 2), (nx - 2, 1, 1), (1, ny - 2, 1), (1, 1, nz - 2),
               (nx // 2, ny // 2, nz // 2), (1, 2, 3), (nx - 2, 1, nz // 3)]
        ijk += [(i + 0.5, j + 0.25, k + 0.75) for i, j, k in [(1, 2, 3), (nx // 2, ny // 3, nz // 2)]]
        ijk = np.array(ijk, dtype=np.float64)
        xyz = (self.origin + ijk * self.spacing).astype(np.float32)
        expected = np.array([self.trilinear(p) for p in xyz.astype(np.float64)])
        return xyz, expected

    def trilinear(self, xyz):
        f = (np.asarray(xyz) - self.origin) / self.spacing
        f = np.clip(f, 0, np.array(self.dims) - 1)
        i0 = np.minimum(np.floor(f).astype(int), np.array(self.dims) - 2).clip(0)
        t = f - i0
        v = 0.0
        for dk in (0, 1):
            for dj in (0, 1):
                for di in (0, 1):
                    w = ((t[0] if di else 1 - t[0]) * (t[1] if dj else 1 - t[1]) *
                         (t[2] if dk else 1 - t[2]))
                    v += w * self.values[i0[2] + dk, i0[1] + dj, i0[0] + di]
        return v

    def check_values(self, got, expected, who):
        scale = np.abs(self.values).max()
        err = np.abs(np.asarray(got, dtype=np.float64) - expected)
        check(np.all(err <= 2e-5 * scale),
              f"{who}: values differ from h5py by up to {err.max():.3g} (max|V| {scale:.3g}):\n"
              f"  got      {np.asarray(got)}\n  expected {expected}")


def close(a, b, rtol):
    return np.allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64),
                       rtol=rtol, atol=rtol * 1e-3)


# --- ChimeraX -------------------------------------------------------------------------------

def check_chimerax(path, expected_type):
    import chimerax_readers as cx

    ref = H5Map(path)
    check(cx.file_type(path) == expected_type,
          f"ChimeraX reads {os.path.basename(path)} as {cx.file_type(path)}, not {expected_type}")
    grids = cx.open_map(path)
    check(len(grids) == 1, f"ChimeraX opens {len(grids)} maps from {path}: "
          f"{[(g.name, tuple(g.origin), tuple(g.step)) for g in grids]}")
    g = grids[0]
    check(tuple(g.size) == ref.dims, f"ChimeraX size {tuple(g.size)} != dims {ref.dims}")
    # Origin and step come from the file's float64 attributes: equal to rounding.
    check(close(g.origin, ref.origin, 1e-12), f"ChimeraX origin {tuple(g.origin)} != {ref.origin}")
    check(close(g.step, ref.spacing, 1e-12), f"ChimeraX step {tuple(g.step)} != {ref.spacing}")
    check(tuple(g.cell_angles) == (90, 90, 90), f"cell angles {g.cell_angles}")
    m = g.matrix()
    check(np.array_equal(m, ref.values.astype(np.float32)), "ChimeraX matrix != h5py values")
    xyz, expected = ref.test_points()
    ref.check_values(cx.values_at(g, xyz), expected, f"ChimeraX ({expected_type})")
    return g


def case_chimerax_h5(ctx):
    """ChimeraX `open mol.h5` (EMAN HDF reader): one map, origin, step, values."""
    check_chimerax(ctx.molecule_map(), "emanhdf")


def case_chimerax_cmap(ctx):
    """The same file, gzip-compressed, named .cmap (Chimera map reader)."""
    h5 = ctx.molecule_map(extra=("--compress", "4"))  # PyTables reads the shuffle + gzip chunks
    cmap = os.path.join(ctx.work, "mol.cmap")
    shutil.copy(h5, cmap)
    check_chimerax(cmap, "cmap")


def case_chimerax_noncubic(ctx):
    """Both readers on a non-cubic grid (write_sample_map: 0.5 x 0.75 x 1.25 Å voxels)."""
    h5 = ctx.noncubic_map()
    ref = H5Map(h5)
    check(len(set(ref.spacing)) == 3, f"spacing {ref.spacing} is not non-cubic")
    check_chimerax(h5, "emanhdf")
    cmap = h5[:-3] + ".cmap"
    shutil.copy(h5, cmap)
    check_chimerax(cmap, "cmap")


def case_chimerax_layout(ctx):
    """The layout dcs writes, built with h5py, against the alternative it avoids."""
    import h5py
    import chimerax_readers as cx

    data = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    origin, step = np.array([-3.3, 1.7, 10.1]), np.array([0.5, 0.75, 1.25])

    def build(path, second_name_is_hard_link):
        with h5py.File(path, "w") as f:
            g = f.create_group("MDF/images/0")
            d = g.create_dataset("image", data=data)
            if second_name_is_hard_link:
                f["potential"] = d
            else:
                f["potential"] = h5py.SoftLink("/MDF/images/0/image")
            g.attrs["origin"], g.attrs["step"] = origin, step
            for axis, h in zip("xyz", step):
                g.attrs["EMAN.apix_" + axis] = np.array([h])
            t = np.zeros(1, [(f"{r}{c}", "<f8") for r in range(3) for c in range(4)])
            for r in range(3):
                t[0][f"{r}{r}"], t[0][f"{r}3"] = 1.0, origin[r] / step[r]
            g.attrs["EMAN.xform.align3d"] = t

    good, bad = os.path.join(ctx.work, "soft.cmap"), os.path.join(ctx.work, "hard.cmap")
    build(good, False)
    build(bad, True)
    check(len(cx.open_map(good)) == 1, "soft link: the cmap reader should see one map")
    check(len(cx.open_map(bad)) == 2, "hard link: the cmap reader should see two maps "
          "(if this changes, the soft link at /potential is no longer needed)")
    eman = os.path.join(ctx.work, "soft.h5")
    shutil.copy(good, eman)
    (g,) = cx.open_map(eman)
    check(close(g.origin, origin, 1e-12) and close(g.step, step, 1e-12), "EMAN origin/step")


# --- ParaView / VTK -------------------------------------------------------------------------

def case_vtkhdf(ctx):
    """`-o mol.vtkhdf`: VTK's vtkHDFReader (ParaView's reader) probes the values."""
    from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
    from vtkmodules.vtkCommonCore import vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkPolyData
    from vtkmodules.vtkFiltersCore import vtkProbeFilter
    from vtkmodules.vtkIOHDF import vtkHDFReader

    path = ctx.molecule_map("mol.vtkhdf")
    ref = H5Map(path)
    reader = vtkHDFReader()
    check(reader.CanReadFile(path), f"vtkHDFReader cannot read {path}")
    reader.SetFileName(path)
    reader.Update()
    image = reader.GetOutput()
    check(tuple(image.GetDimensions()) == ref.dims, f"VTK dims {image.GetDimensions()}")
    check(close(image.GetOrigin(), ref.origin, 1e-12), f"VTK origin {image.GetOrigin()}")
    check(close(image.GetSpacing(), ref.spacing, 1e-12), f"VTK spacing {image.GetSpacing()}")
    arrays = [image.GetPointData().GetArrayName(i)
              for i in range(image.GetPointData().GetNumberOfArrays())]
    check(arrays == ["potential"], f"VTK point arrays {arrays}")
    values = vtk_to_numpy(image.GetPointData().GetArray("potential"))
    check(np.array_equal(values, ref.values.astype(np.float32).ravel()), "VTK values != h5py")
    xyz, expected = ref.test_points()
    points = vtkPoints()
    points.SetData(numpy_to_vtk(xyz.astype(np.float64), deep=True))
    probe_input = vtkPolyData()
    probe_input.SetPoints(points)
    probe = vtkProbeFilter()
    probe.SetInputData(probe_input)
    probe.SetSourceData(image)
    probe.Update()
    out = probe.GetOutput()
    valid = vtk_to_numpy(out.GetPointData().GetArray(probe.GetValidPointMaskArrayName()))
    check(valid.all(), f"VTK probe: points outside the image: {valid}")
    ref.check_values(vtk_to_numpy(out.GetPointData().GetArray("potential")), expected, "VTK probe")


def case_paraview(ctx):
    """The README's ParaView recipe in ParaView's own pvpython (Debian's 5.11, under xvfb-run):
    the VTKHDF Reader on the .h5 as it is, and OpenDataFile on `-o mol.hdf`; a Slice coloured by
    potential with 'Warm to Cool' at ±L (negative red, positive blue)."""
    from paraview import simple as pv
    from paraview import servermanager
    from vtkmodules.util.numpy_support import vtk_to_numpy

    h5, hdf = ctx.molecule_map(), ctx.molecule_map("mol.hdf")
    ref = H5Map(h5)
    for reader in (pv.VTKHDFReader(FileName=[h5]), pv.OpenDataFile(hdf)):
        check(reader is not None and reader.GetXMLLabel() == "VTKHDF Reader",
              f"ParaView's reader for {hdf}: {reader and reader.GetXMLLabel()}")
        image = servermanager.Fetch(reader)
        check(tuple(image.GetDimensions()) == ref.dims, f"ParaView dims {image.GetDimensions()}")
        check(close(image.GetOrigin(), ref.origin, 1e-12), f"ParaView origin {image.GetOrigin()}")
        check(close(image.GetSpacing(), ref.spacing, 1e-12),
              f"ParaView spacing {image.GetSpacing()}")
        values = vtk_to_numpy(image.GetPointData().GetArray("potential"))
        check(np.array_equal(values, ref.values.astype(np.float32).ravel()), "ParaView != h5py")
    # The recipe: a Slice through a grid plane, coloured by potential over ±L.
    k = ref.dims[2] // 2
    pv_slice = pv.Slice(Input=reader)
    pv_slice.SliceType.Origin = list(ref.origin + np.array([0, 0, k]) * ref.spacing)
    pv_slice.SliceType.Normal = [0, 0, 1]
    plane = servermanager.Fetch(pv_slice)
    points = vtk_to_numpy(plane.GetPoints().GetData()).astype(np.float64)
    got = vtk_to_numpy(plane.GetPointData().GetArray("potential"))
    ij = np.rint((points[:, :2] - ref.origin[:2]) / ref.spacing[:2]).astype(int)
    check(len(got) == ref.dims[0] * ref.dims[1], f"Slice has {len(got)} points")
    ref.check_values(got, ref.values[k, ij[:, 1], ij[:, 0]], "ParaView Slice")
    limit = float(np.percentile(np.abs(ref.values), 99))
    display = pv.Show(pv_slice)
    pv.ColorBy(display, ("POINTS", "potential"))
    lut = pv.GetColorTransferFunction("potential")
    check(lut.ApplyPreset("Warm to Cool", True), "ParaView has no preset 'Warm to Cool'")
    lut.RescaleTransferFunction(-limit, limit)
    pv.Render()
    colours = {}
    for value in (-limit, limit):
        rgb = [0.0, 0.0, 0.0]
        lut.GetClientSideObject().GetColor(value, rgb)
        colours[value] = rgb
    (red, _, blue), (red2, _, blue2) = colours[-limit], colours[limit]
    check(red > 0.5 > blue and blue2 > 0.5 > red2, f"'Warm to Cool' at -L, +L: {colours}")


# --- MRC --------------------------------------------------------------------------------------

def case_mrc_readers(ctx):
    """MRC2014 from the streaming writer: mrcfile.validate, mrcfile, gemmi, ChimeraX."""
    import gemmi
    import mrcfile
    import chimerax_readers as cx

    for h5 in (ctx.molecule_map(), ctx.noncubic_map()):
        ref = H5Map(h5)
        mrc = ctx.mrc_of(h5, os.path.basename(h5)[:-3] + ".mrc")
        who = os.path.basename(mrc)
        check(os.path.getsize(mrc) == 1024 + 4 * ref.values.size, f"{who}: file size")
        check(mrcfile.validate(mrc, print_file=sys.stdout) is True, f"{who}: mrcfile.validate")
        f32 = lambda a: np.asarray(a, dtype=np.float32).astype(np.float64)
        with mrcfile.open(mrc, permissive=False) as m:
            check(m.data.shape == ref.values.shape, f"{who}: mrcfile shape {m.data.shape}")
            check(np.array_equal(m.data, ref.values.astype(np.float32)), f"{who}: mrcfile data")
            vs = m.voxel_size
            check(close([vs.x, vs.y, vs.z], f32(ref.spacing), 1e-6), f"{who}: voxel size {vs}")
            o = m.header.origin
            check(np.array_equal(f32([o.x, o.y, o.z]), f32(ref.origin)), f"{who}: origin {o}")
            check(m.header.dmin == np.float32(ref.values.min()), f"{who}: dmin")
            check(m.header.dmax == np.float32(ref.values.max()), f"{who}: dmax")
            check(close(m.header.dmean, ref.values.mean(), 1e-5), f"{who}: dmean")
            check(close(m.header.rms, ref.values.std(), 1e-4), f"{who}: rms {m.header.rms} "
                  f"vs std {ref.values.std()}")
        # gemmi: the grid in (u, v, w) = (x, y, z); positions are relative to the unit cell, so
        # a point p of the map is at p - ORIGIN for gemmi.
        g = gemmi.read_ccp4_map(mrc)
        g.setup(float("nan"))
        grid = g.grid
        check((grid.nu, grid.nv, grid.nw) == ref.dims, f"{who}: gemmi size")
        check(close(grid.spacing, f32(ref.spacing), 1e-6), f"{who}: gemmi spacing {grid.spacing}")
        check(np.array_equal(f32([g.header_float(50), g.header_float(51), g.header_float(52)]),
                             f32(ref.origin)), f"{who}: gemmi header origin")
        arr = np.array(grid, copy=False)  # [u][v][w]
        check(np.array_equal(arr, ref.values.astype(np.float32).transpose(2, 1, 0)),
              f"{who}: gemmi values")
        xyz, expected = ref.test_points()
        rel = xyz.astype(np.float64) - f32(ref.origin)
        got = [grid.interpolate_value(gemmi.Position(*p)) for p in rel]
        ref.check_values(got, expected, f"{who}: gemmi interpolate_value")
        # ChimeraX's MRC reader.
        check(cx.file_type(mrc) == "mrc", f"ChimeraX type {cx.file_type(mrc)}")
        grids = cx.open_map(mrc)
        check(len(grids) == 1, f"{who}: ChimeraX opens {len(grids)} maps")
        c = grids[0]
        check(tuple(c.size) == ref.dims, f"{who}: ChimeraX size {c.size}")
        check(close(c.origin, f32(ref.origin), 1e-7), f"{who}: ChimeraX origin {c.origin}")
        check(close(c.step, f32(ref.spacing), 1e-6), f"{who}: ChimeraX step {c.step}")
        ref.check_values(cx.values_at(c, xyz), expected, f"{who}: ChimeraX MRC")


def check_mrc_file(mrc, h5):
    """An MRC file written by `dcs --mrc` against the /potential of the HDF5 file of the same run."""
    import h5py
    import mrcfile

    ref = H5Map(h5)
    who = os.path.basename(mrc)
    check(os.path.getsize(mrc) == 1024 + 4 * ref.values.size, f"{who}: file size")
    check(mrcfile.validate(mrc, print_file=sys.stdout) is True, f"{who}: mrcfile.validate")
    with h5py.File(h5, "r") as f:
        stats = {k: float(f["statistics"].attrs[k]) for k in ("min", "max", "mean")}
    with mrcfile.open(mrc, permissive=False) as m:
        check(np.array_equal(m.data, ref.values.astype(np.float32)), f"{who}: values != /potential")
        check(m.header.dmin == np.float32(stats["min"]) and m.header.dmax == np.float32(stats["max"]),
              f"{who}: dmin/dmax {m.header.dmin} {m.header.dmax} != {stats}")
        check(close(m.header.dmean, stats["mean"], 1e-6), f"{who}: dmean")
        o = m.header.origin
        check(np.array_equal(np.float32([o.x, o.y, o.z]), ref.origin.astype(np.float32)),
              f"{who}: origin {o}")
        labels = b" ".join(bytes(l) for l in m.header.label[: int(m.header.nlabl)]).decode()
        check("dcs" in labels and "kT/e" in labels, f"{who}: labels {labels!r}")


def temporaries(directory):
    """The atomic writer's temporaries (.<name>.tmp.<host>.<pid>.<hex>) left in a directory."""
    return sorted(f for f in os.listdir(directory) if ".tmp." in f)


def case_mrc_cli(ctx):
    """`dcs --mrc`: default name beside the HDF5 output, explicit .mrc/.map/.ccp4 paths, batches
    in --output-dir, --no-hdf5, and an existing file refused without --force."""
    import gemmi

    grid = ("--grid", "17", "19", "23")
    # No value: beside -o, named after it.
    os.mkdir(os.path.join(ctx.work, "sub"))
    h5 = os.path.join(ctx.work, "sub", "x.h5")
    run = ctx.dcs("--atoms", ctx.pqr, *grid, "-o", h5, "--mrc")
    mrc = os.path.join(ctx.work, "sub", "x.mrc")
    check(os.path.isfile(mrc), f"--mrc did not write {mrc}: {os.listdir(os.path.dirname(mrc))}")
    check(mrc in run.stdout, f"the summary does not name {mrc}:\n{run.stdout}")
    check_mrc_file(mrc, h5)
    # Without -o: <stem>.mrc in the current directory, next to <stem>.h5.
    ctx.dcs("--atoms", ctx.pqr, *grid, "--mrc", "-q")
    check_mrc_file(os.path.join(ctx.work, "2lzt.mrc"), os.path.join(ctx.work, "2lzt.h5"))
    # Explicit paths with the other MRC extensions; gemmi reads them as CCP4 maps.
    for name in ("m.map", "m.ccp4"):
        out = os.path.join(ctx.work, name)
        ctx.dcs("--atoms", ctx.pqr, *grid, "-o", os.path.join(ctx.work, name + ".h5"), "--mrc", out, "-q")
        check_mrc_file(out, os.path.join(ctx.work, name + ".h5"))
        g = gemmi.read_ccp4_map(out)
        check((g.grid.nu, g.grid.nv, g.grid.nw) == (17, 19, 23), f"gemmi {name}: size")
    # A batch: one MRC per input in --output-dir.
    for stem in ("a", "b"):
        shutil.copy(ctx.pqr, os.path.join(ctx.work, stem + ".pqr"))
    maps = os.path.join(ctx.work, "maps")
    ctx.dcs("--atoms", "a.pqr", "b.pqr", *grid, "--output-dir", maps, "--mrc", "-q")
    check(sorted(os.listdir(maps)) == ["a.h5", "a.mrc", "b.h5", "b.mrc"], f"batch: {os.listdir(maps)}")
    for stem in ("a", "b"):
        check_mrc_file(os.path.join(maps, stem + ".mrc"), os.path.join(maps, stem + ".h5"))
    # --no-hdf5: the MRC alone (the partial HDF5 file is a scratch file, removed).
    only = os.path.join(ctx.work, "only")
    os.mkdir(only)
    ctx.dcs("--atoms", ctx.pqr, *grid, "--no-hdf5", "--mrc", os.path.join(only, "o.mrc"), "-q")
    check(os.listdir(only) == ["o.mrc"], f"--no-hdf5 --mrc left {os.listdir(only)}")
    check(mrcfile_values_equal(os.path.join(only, "o.mrc"), os.path.join(maps, "a.mrc")),
          "--no-hdf5: values differ from the run with HDF5")
    # An existing MRC file is refused before any work, and kept; --force replaces it.
    keep = os.path.join(ctx.work, "keep.mrc")
    with open(keep, "w") as f:
        f.write("precious")
    h5k = os.path.join(ctx.work, "keep.h5")
    refused = ctx.dcs("--atoms", ctx.pqr, *grid, "-o", h5k, "--mrc", check_rc=False)
    check(refused.returncode == 1 and "--force" in refused.stderr and "keep.mrc" in refused.stderr,
          f"existing MRC: exit {refused.returncode}: {refused.stderr}")
    check(open(keep).read() == "precious", "the existing MRC file changed")
    check(not os.path.exists(h5k) and not os.path.exists(h5k + ".partial"),
          "a refused run wrote the HDF5 output")
    ctx.dcs("--atoms", ctx.pqr, *grid, "-o", h5k, "--mrc", "--force", "-q")
    check_mrc_file(keep, h5k)
    # Several inputs with one explicit --mrc path: refused (usage).
    both = ctx.dcs("--atoms", "a.pqr", "b.pqr", *grid, "--mrc", "x.mrc", check_rc=False)
    check(both.returncode == 2 and "--output-dir" in both.stderr, f"batch --mrc FILE: {both.stderr}")
    check(temporaries(ctx.work) == [], f"temporaries left: {temporaries(ctx.work)}")


def mrcfile_values_equal(a, b):
    import mrcfile

    with mrcfile.open(a) as ma, mrcfile.open(b) as mb:
        return np.array_equal(ma.data, mb.data)


def case_mrc_interrupted(ctx):
    """SIGINT while the MRC file streams: exit 130, no .mrc and no temporary left."""
    import signal
    import time

    atoms = "".join(f"ATOM  {n:5d}  C   ALA A   1    {n % 17:8.3f}{n % 13:8.3f}{n % 11:8.3f}  0.1000 1.0\n"
                    for n in range(1, 2001))
    src = os.path.join(ctx.work, "m.pqr")
    with open(src, "w") as f:
        f.write(atoms)
    # 2000 atoms x 160^3 points in float64 on one thread: far longer than the test waits.
    proc = subprocess.Popen([ctx.args.dcs, "--atoms", src, "--grid", "160", "--device", "cpu",
                             "--kernel", "reference", "--threads", "1", "--mrc", "--no-progress"],
                            cwd=ctx.work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not temporaries(ctx.work) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    check(temporaries(ctx.work) != [], "the MRC temporary never appeared (it streams while computing)")
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    check(proc.returncode == 130, f"exit {proc.returncode}, expected 130:\n{err}")
    left = sorted(f for f in os.listdir(ctx.work) if f != "m.pqr")
    check(left == ["m.h5.partial"], f"expected only the partial map to be kept, found {left}")


def case_pymol(ctx):
    """PyMOL loads the MRC. Run with Debian's python3 (python3-pymol, python3-h5py)."""
    instance = start_pymol()  # cmd refers to it weakly: keep it alive here
    cmd = instance.cmd
    # PyMOL rescales CCP4/MRC maps to mean 0, sigma 1 unless told not to (README says so too).
    cmd.set("normalize_ccp4_maps", 0)
    for h5 in (ctx.molecule_map(), ctx.noncubic_map()):
        ref = H5Map(h5)
        mrc = ctx.mrc_of(h5, os.path.basename(h5)[:-3] + ".mrc")
        cmd.delete("all")
        cmd.load(mrc, "m")
        check(cmd.get_type("m") == "object:map", f"PyMOL loaded {cmd.get_type('m')}")
        lo, hi = (np.array(v) for v in cmd.get_extent("m"))
        f32 = lambda a: np.asarray(a, dtype=np.float32).astype(np.float64)
        end = ref.origin + (np.array(ref.dims) - 1) * ref.spacing
        check(np.allclose(lo, f32(ref.origin), atol=1e-3), f"PyMOL extent min {lo} != {ref.origin}")
        check(np.allclose(hi, end, atol=1e-3), f"PyMOL extent max {hi} != {end}")
        field = cmd.get_volume_field("m")  # [x][y][z]
        check(field.shape == ref.dims, f"PyMOL field shape {field.shape}")
        check(np.array_equal(field, ref.values.astype(np.float32).transpose(2, 1, 0)),
              "PyMOL values != h5py")
    # The README's recipe on the DX of a real run: load, ramp at ±L, surface coloured by it.
    h5 = ctx.molecule_map(extra=("--dx",))
    ref = H5Map(h5)
    limit = float(np.percentile(np.abs(ref.values), 99))
    cmd.delete("all")
    cmd.load(ctx.pqr, "mol")
    cmd.load(h5[:-3] + ".dx", "pot")
    lo, hi = (np.array(v) for v in cmd.get_extent("pot"))
    end = ref.origin + (np.array(ref.dims) - 1) * ref.spacing
    check(np.allclose(lo, ref.origin, atol=1e-3) and np.allclose(hi, end, atol=1e-3),
          f"PyMOL DX extent {lo} {hi}")
    field = cmd.get_volume_field("pot")
    check(np.allclose(field, ref.values.transpose(2, 1, 0), rtol=1e-6, atol=1e-6 * limit),
          "PyMOL DX values != h5py")
    cmd.ramp_new("ramp", "pot", [-limit, 0, limit], ["red", "white", "blue"])
    cmd.set("surface_ramp_above_mode", 1)  # colour by the value just off the surface, as APBS
    cmd.set("surface_color", "ramp", "mol")
    cmd.show("surface", "mol")
    check(cmd.get_type("ramp") == "object:ramp", f"ramp is {cmd.get_type('ramp')}")
    check(cmd.get_setting_int("surface_ramp_above_mode") == 1, "surface_ramp_above_mode unset")
    check(cmd.count_atoms("mol and rep surface") == cmd.count_atoms("mol"), "no surface shown")


# --- Python reader -------------------------------------------------------------------------

def case_xarray_reader(ctx):
    """python/dcs_map.py: numpy and xarray views, coordinates, sel, attrs."""
    sys.path.insert(0, os.path.join(ctx.args.source, "python"))
    import dcs_map

    h5 = ctx.noncubic_map()
    ref = H5Map(h5)
    m = dcs_map.open_map(h5)
    check(m.dims == ref.dims and np.array_equal(m.values, ref.values.astype(np.float32)),
          "open_map values")
    check(np.array_equal(m.origin, ref.origin) and np.array_equal(m.spacing, ref.spacing), "grid")
    check(m.units == "kT/e", f"units {m.units}")
    v = dcs_map.to_xarray(h5)
    check(v.dims == ("x", "y", "z"), f"dims {v.dims}")  # every reader's convention (DESIGN §9)
    check(float(v.isel(x=2, y=3, z=1)) == np.float32(ref.values[1, 3, 2]), "isel (x, y, z)")
    for a, n in zip("xyz", ref.dims):
        want = ref.origin["xyz".index(a)] + np.arange(n) * ref.spacing["xyz".index(a)]
        check(np.array_equal(v[a].values, want), f"coordinate {a}")
        check(v[a].attrs["units"] == "angstrom", f"coordinate {a} units")
    check(v.attrs["units"] == "kT/e", "units attr")
    check(v.attrs["dielectric"] == 1.0 and v.attrs["temperature"] == 298.15, "physics attrs")
    check("origin" not in v.attrs and "dims" not in v.attrs, "grid attrs duplicate the coords")
    check(v.attrs["provenance_program"] == "dcs", "provenance attr")
    check("statistics_max" in v.attrs, "statistics attrs")
    i, j, k = 2, 3, 1
    x, y, z = ref.origin + np.array([i, j, k]) * ref.spacing
    got = float(v.sel(x=x + 0.2 * ref.spacing[0], y=y - 0.3 * ref.spacing[1], z=z, method="nearest"))
    check(got == np.float32(ref.values[k, j, i]), f"sel nearest {got} != {ref.values[k, j, i]}")
    check(m.index_of(x + 0.2 * ref.spacing[0], y, z) == (i, j, k), "index_of")
    profile = v.sel(y=y, z=z, method="nearest")
    check(np.array_equal(profile.values, ref.values[k, j, :].astype(np.float32)), "line profile")
    # The molecule's own map has atoms.
    m2 = dcs_map.open_map(ctx.molecule_map())
    check(m2.atom_positions.shape == (1960, 3), f"atoms {m2.atom_positions.shape}")
    v2 = dcs_map.to_xarray(m2)
    check("--atoms" in v2.attrs["provenance_command_line"], "provenance command line")
    check(v2.attrs["provenance_input_sha256"] == "151c1d46b147f6b1a62a90aad4d128e66958df628cf53dcc9c"
          "92acd379a70c10", "provenance input checksum")


# --- Colour range ----------------------------------------------------------------------------

def nearest_rank(values, percentile):
    return float(np.percentile(np.abs(values), percentile, method="inverted_cdf"))


def case_colour_range(ctx):
    """/potential's colour_range (±L, L the 99th percentile of |V| within 0.1%), the summary line
    that gives it, its scaling with --units, and the xarray view that carries it."""
    import h5py

    sys.path.insert(0, os.path.join(ctx.args.source, "python"))
    import dcs_map

    ranges = {}
    for unit in ("kT/e", "kcal/mol/e"):
        name = unit.replace("/", "_") + ".h5"
        path = os.path.join(ctx.work, name)
        run = ctx.dcs("--atoms", ctx.pqr, "--grid", "33", "37", "41", "-o", path, "--units", unit)
        with h5py.File(path, "r") as f:
            attrs = f["potential"].attrs
            for key in ("colour_range", "colour_range_percentiles", "colour_range_near_zero"):
                check(key in attrs, f"{name}: /potential has no {key}")
            lo, hi = (float(x) for x in attrs["colour_range"])
            check(attrs["colour_range"].dtype == np.float64 and lo == -hi and hi > 0,
                  f"{name}: colour_range {attrs['colour_range']}")
            check(list(attrs["colour_range_percentiles"]) == [1.0, 99.0],
                  f"{name}: percentiles {attrs['colour_range_percentiles']}")
            values = f["potential"][()]
            near_zero = float(attrs["colour_range_near_zero"])
        exact = nearest_rank(values, 99)
        check(abs(hi - exact) <= 1e-3 * exact, f"{name}: colour_range ±{hi} vs 99th percentile {exact}")
        exact_low = nearest_rank(values, 1)
        check(abs(near_zero - exact_low) <= 1e-3 * exact_low, f"{name}: near zero {near_zero} vs {exact_low}")
        check(hi < np.abs(values).max() / 3, f"{name}: ±{hi} is not a robust range (max|V| "
              f"{np.abs(values).max()})")
        line = f"view with a colour range of ±{hi:.3g} {unit} (99th percentile of |V|"
        check(line in run.stdout, f"summary lacks '{line}':\n{run.stdout}")
        ranges[unit] = hi
        v = dcs_map.to_xarray(path)
        check(np.array_equal(np.asarray(v.attrs["colour_range"]), [-hi, hi]), "xarray attrs: colour_range")
    ratio = ranges["kT/e"] / ranges["kcal/mol/e"]
    check(abs(ratio - 560.4593 / 332.0637) < 2e-3 * ratio, f"colour range does not scale with units: {ranges}")
    # -q: no summary, the range stays in the file.
    quiet = ctx.dcs("--atoms", ctx.pqr, "--grid", "9", "-o", os.path.join(ctx.work, "q.h5"), "-q")
    check("colour range" not in quiet.stdout + quiet.stderr, f"-q printed: {quiet.stdout}{quiet.stderr}")


# --- dcs preview ------------------------------------------------------------------------------

def case_preview(ctx):
    """`dcs preview --view centre`: the PNG, its limits (the file's colour_range) and its size
    (the surface view: preview_tests.py)."""
    import matplotlib.image as mpimg

    h5 = ctx.molecule_map(grid=("33", "37", "41"))
    png = os.path.join(ctx.work, "mol.png")
    run = ctx.dcs("preview", h5, "-o", png, "--view", "centre")
    check(os.path.getsize(png) > 10000, "PNG too small")
    image = mpimg.imread(png)
    check(image.ndim == 3 and image.shape[1] > image.shape[0] > 300, f"PNG shape {image.shape}")
    rgb = image[..., :3]
    reddish = ((rgb[..., 0] > 0.6) & (rgb[..., 2] < 0.35)).sum()
    bluish = ((rgb[..., 2] > 0.6) & (rgb[..., 0] < 0.35)).sum()
    check(reddish > 500 and bluish > 500, f"diverging colours missing: {reddish} red, {bluish} blue")
    ref = H5Map(h5)
    # The limit is the file's colour_range (the 99th percentile of |V| that dcs stored).
    import h5py
    with h5py.File(h5, "r") as f:
        stored = float(f["potential"].attrs["colour_range"][1])
    exact = nearest_rank(ref.values, 99.0)
    check(abs(stored - exact) <= 1e-3 * exact, f"stored limit {stored} vs {exact}")
    text = run.stdout + run.stderr
    check(f"±{stored:.3g}" in text and "the file's colour_range" in text,
          f"preview should report the file's limit ±{stored:.3g}: {text}")
    # Without the attribute (a file from an older dcs) it computes the percentile itself.
    old = os.path.join(ctx.work, "old.h5")
    shutil.copy(h5, old)
    with h5py.File(old, "r+") as f:
        for key in ("colour_range", "colour_range_percentiles", "colour_range_near_zero"):
            del f["potential"].attrs[key]
    computed = ctx.dcs("preview", old, "-o", os.path.join(ctx.work, "old.png"), "--view", "centre")
    limit = np.percentile(np.abs(ref.values), 99.0)
    text = computed.stdout + computed.stderr
    check(f"±{limit:.3g}" in text and "colour_range" not in text,
          f"preview of a file without colour_range should compute ±{limit:.3g}: {text}")
    # An existing PNG is kept unless --force.
    with open(png, "rb") as f:
        before = f.read()
    again = ctx.dcs("preview", h5, "-o", png, "--percentile", "90", check_rc=False)
    check(again.returncode != 0 and "--force" in again.stderr, f"overwrote: {again.stderr}")
    with open(png, "rb") as f:
        check(f.read() == before, "the existing PNG changed")
    ctx.dcs("preview", h5, "-o", png, "--percentile", "90", "--force")
    with open(png, "rb") as f:
        check(f.read() != before, "--force did not replace the PNG")
    # Never through a symbolic link, even with --force (it could point at any file).
    link = os.path.join(ctx.work, "link.png")
    os.symlink(png, link)
    with open(png, "rb") as f:
        before = f.read()
    linked = ctx.dcs("preview", h5, "-o", link, "--force", check_rc=False)
    check(linked.returncode != 0 and "symbolic link" in linked.stderr, f"link: {linked.stderr}")
    with open(png, "rb") as f:
        check(os.path.islink(link) and f.read() == before, "preview wrote through a link")
    # A file without /potential is a clean error, not a traceback.
    bad = ctx.dcs("preview", os.path.join(ctx.work, "missing.h5"), "-o", png + "2", check_rc=False)
    check(bad.returncode != 0 and "Traceback" not in bad.stderr, f"missing file: {bad.stderr}")
    check(not os.path.exists(png + "2"), "a failed preview left a file")


if __name__ == "__main__":
    run_case("viewer_tests", cases_of(globals()), ("--write-mrc", "--write-sample", "--source"),
             Ctx)
