#!/usr/bin/python3
"""Checks that a dcs HDF5 map and an OpenDX map of the same potential agree, using independent
readers: h5py for the HDF5 file and GridDataFormats (gridData) for the DX file.

    /usr/bin/python3 check_maps.py MAP.h5 MAP.dx[.gz] [--samples N] [--seed S]

Compares shape, origin, spacing and attributes, every value (DX keeps 7 significant digits), the
coordinates each reader gives the corners, the centre and N random nodes, and the /VTKHDF group
(with vtkHDFReader where VTK's Python module is installed). Each failure is printed as
"check_maps: FAIL: <what>", exit status 1. Needs Debian's python3-h5py, -griddataformats, -numpy.
"""

import argparse
import sys

try:
    import h5py
    import numpy as np
    from gridData import Grid
except ImportError as error:  # pragma: no cover - environment problem, reported clearly
    print(f"check_maps: FAIL: missing Python module ({error}); install python3-h5py, "
          "python3-griddataformats and python3-numpy and run with /usr/bin/python3",
          file=sys.stderr)
    sys.exit(1)

DX_RTOL = 6e-7          # %12.6e: half a unit in the 7th significant digit, plus float rounding
GEOMETRY_RTOL = 1e-6    # origin and delta go through %12.6e too


class Mismatch(Exception):
    pass


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def require(condition, message):
    if not condition:
        raise Mismatch(message)


def close(a, b, rtol, scale=0.0):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(a), scale) + 1e-300)


def check_hdf5_layout(f):
    require("potential" in f, "no /potential dataset")
    pot = f["potential"]
    require(pot.ndim == 3, f"/potential has {pot.ndim} dimensions, expected 3")
    require(pot.dtype == np.float32, f"/potential is {pot.dtype}, expected float32")
    nz, ny, nx = pot.shape
    dims = [int(d) for d in pot.attrs["dims"]]
    require(dims == [nx, ny, nz],
            f"/potential dims attribute {dims} is not the reverse of its shape {pot.shape}")
    require(text(pot.attrs["axis_order"]) == "zyx",
            f"axis_order is {text(pot.attrs['axis_order'])!r}, expected 'zyx'")
    origin = np.asarray(pot.attrs["origin"], dtype=float)
    spacing = np.asarray(pot.attrs["spacing"], dtype=float)
    require(origin.shape == (3,) and spacing.shape == (3,), "origin/spacing must have 3 elements")
    require(np.all(spacing > 0), f"spacing {spacing} must be positive")
    for name in ("units", "temperature", "dielectric", "coulomb_factor", "min_distance"):
        require(name in pot.attrs, f"/potential has no {name!r} attribute")
    return pot, origin, spacing


def check_vtkhdf(f, pot, origin, spacing):
    if "VTKHDF" not in f:
        return "no VTKHDF group"
    vtk = f["VTKHDF"]
    nz, ny, nx = pot.shape
    require(text(vtk.attrs["Type"]) == "ImageData", f"VTKHDF Type is {vtk.attrs['Type']!r}")
    version = [int(v) for v in vtk.attrs["Version"]]
    require(len(version) == 2 and version[0] >= 1, f"VTKHDF Version {version} is not [1, x]")
    extent = [int(v) for v in vtk.attrs["WholeExtent"]]
    require(extent == [0, nx - 1, 0, ny - 1, 0, nz - 1],
            f"VTKHDF WholeExtent {extent} does not match /potential shape {pot.shape}")
    require(np.array_equal(np.asarray(vtk.attrs["Origin"], float), origin),
            f"VTKHDF Origin {vtk.attrs['Origin']} differs from /potential origin {origin}")
    require(np.array_equal(np.asarray(vtk.attrs["Spacing"], float), spacing),
            f"VTKHDF Spacing {vtk.attrs['Spacing']} differs from /potential spacing {spacing}")
    require(np.array_equal(np.asarray(vtk.attrs["Direction"], float), np.eye(3).ravel()),
            f"VTKHDF Direction {vtk.attrs['Direction']} is not the identity")
    require("PointData" in vtk and "potential" in vtk["PointData"],
            "VTKHDF/PointData/potential is missing")
    linked = vtk["PointData"]["potential"]
    require(linked == pot, "VTKHDF/PointData/potential is not the same object as /potential")
    require(linked.shape == (nz, ny, nx), f"VTKHDF point data shape {linked.shape}")
    scalars = text(vtk["PointData"].attrs.get("Scalars", b""))
    require(scalars == "potential", f"VTKHDF PointData Scalars is {scalars!r}")
    return "VTKHDF ImageData consistent (links to the /potential dataset)"


def check_with_vtk(h5_path, h5_xyz, origin, spacing):
    """Reads the file as ParaView does (VTK's vtkHDFReader), when VTK's Python module exists."""
    try:
        from vtkmodules.vtkIOHDF import vtkHDFReader
        from vtkmodules.util.numpy_support import vtk_to_numpy
    except ImportError:
        return "VTK's Python module not available: vtkHDFReader check skipped"
    reader = vtkHDFReader()
    reader.SetFileName(h5_path)
    reader.Update()
    image = reader.GetOutput()
    nx, ny, nz = h5_xyz.shape
    require(tuple(image.GetDimensions()) == (nx, ny, nz),
            f"vtkHDFReader dimensions {image.GetDimensions()} differ from {(nx, ny, nz)}")
    require(np.allclose(image.GetOrigin(), origin, rtol=0, atol=0),
            f"vtkHDFReader origin {image.GetOrigin()} differs from {origin}")
    require(np.allclose(image.GetSpacing(), spacing, rtol=0, atol=0),
            f"vtkHDFReader spacing {image.GetSpacing()} differs from {spacing}")
    array = image.GetPointData().GetArray("potential")
    require(array is not None, "vtkHDFReader finds no point array 'potential'")
    # VTK point ids run x fastest, like the HDF5 dataset.
    values = vtk_to_numpy(array).reshape(nz, ny, nx)
    require(np.array_equal(values, np.transpose(h5_xyz, (2, 1, 0)).astype(values.dtype)),
            "vtkHDFReader values differ from /potential")
    return "vtkHDFReader (VTK {}) reads the same image".format(
        __import__("vtkmodules.vtkCommonCore", fromlist=["vtkVersion"]).vtkVersion.GetVTKVersion())


def sample_indices(shape_xyz, count, seed):
    nx, ny, nz = shape_xyz
    points = {(i, j, k) for i in (0, nx - 1) for j in (0, ny - 1) for k in (0, nz - 1)}
    points.add((nx // 2, ny // 2, nz // 2))
    rng = np.random.default_rng(seed)
    for _ in range(count):
        points.add((int(rng.integers(nx)), int(rng.integers(ny)), int(rng.integers(nz))))
    return sorted(points)


def check(h5_path, dx_path, samples, seed):
    notes = []
    with h5py.File(h5_path, "r") as f:
        pot, origin, spacing = check_hdf5_layout(f)
        data_zyx = pot[...].astype(np.float64)
        notes.append(check_vtkhdf(f, pot, origin, spacing))
        units = text(pot.attrs["units"])

    nz, ny, nx = data_zyx.shape
    h5_xyz = np.transpose(data_zyx, (2, 1, 0))  # [i][j][k], the index order gridData uses

    g = Grid(dx_path)
    require(g.grid.shape == (nx, ny, nz),
            f"DX shape {g.grid.shape} differs from HDF5 (nx, ny, nz) = {(nx, ny, nz)}")
    dx_origin = np.asarray(g.origin, float)
    dx_delta = np.asarray(g.delta, float)
    if dx_delta.ndim == 2:
        require(np.count_nonzero(dx_delta - np.diag(np.diag(dx_delta))) == 0,
                "DX deltas are not axis-aligned")
        dx_delta = np.diag(dx_delta)
    require(close(dx_origin, origin, GEOMETRY_RTOL, scale=np.max(np.abs(origin)) + 1.0),
            f"origin differs: DX {dx_origin} vs HDF5 {origin}")
    require(close(dx_delta, spacing, GEOMETRY_RTOL),
            f"delta differs: DX {dx_delta} vs HDF5 {spacing}")

    dx_values = np.asarray(g.grid, float)
    error = np.abs(dx_values - h5_xyz)
    allowed = DX_RTOL * np.abs(h5_xyz) + 1e-300
    bad = np.argwhere(error > allowed)
    if bad.size:
        i, j, k = (int(v) for v in bad[0])
        raise Mismatch(f"values differ at {len(bad)} of {h5_xyz.size} points; first at index "
                       f"({i}, {j}, {k}): HDF5 {h5_xyz[i, j, k]!r} vs DX {dx_values[i, j, k]!r}")

    # Same value at the same coordinates, each reader mapping index -> position its own way.
    checked = 0
    for i, j, k in sample_indices((nx, ny, nz), samples, seed):
        h5_position = origin + np.array([i, j, k]) * spacing
        dx_position = np.array([g.midpoints[0][i], g.midpoints[1][j], g.midpoints[2][k]])
        require(close(dx_position, h5_position, GEOMETRY_RTOL, scale=np.max(np.abs(origin)) + 1.0),
                f"node ({i}, {j}, {k}) is at {dx_position} in DX but {h5_position} in HDF5")
        # Locate the node in the DX grid from the coordinate alone.
        located = np.rint((h5_position - dx_origin) / dx_delta).astype(int)
        require(tuple(located) == (i, j, k),
                f"coordinate {h5_position} falls on DX node {tuple(located)}, not {(i, j, k)}")
        require(close(dx_values[i, j, k], h5_xyz[i, j, k], DX_RTOL),
                f"value at {h5_position}: HDF5 {h5_xyz[i, j, k]!r} vs DX {dx_values[i, j, k]!r}")
        checked += 1

    interpolation = "scipy not available: interpolation check skipped"
    try:
        import scipy  # noqa: F401  (gridData's interpolation needs it)
        if min(nx, ny, nz) >= 5:
            nodes = [(nx // 2, ny // 2, nz // 2), (1, ny - 2, 2), (nx - 2, 1, nz - 3)]
            xyz = np.array([origin + np.array(n) * spacing for n in nodes])
            got = np.asarray(g.interpolated(xyz[:, 0], xyz[:, 1], xyz[:, 2]), float)
            want = np.array([h5_xyz[n] for n in nodes])
            scale = np.max(np.abs(h5_xyz))
            require(np.all(np.abs(got - want) <= 1e-5 * scale),
                    f"gridData interpolation at nodes {nodes} gives {got}, HDF5 has {want}")
            interpolation = f"gridData interpolation reproduces {len(nodes)} interior nodes"
    except ImportError:
        pass

    notes.append(check_with_vtk(h5_path, h5_xyz, origin, spacing))
    notes.insert(0, f"{nx} x {ny} x {nz} points, {units}, origin {origin}, spacing {spacing}")
    notes.append(f"all {h5_xyz.size} values agree within {DX_RTOL:g} relative; "
                 f"{checked} sampled nodes agree in position and value")
    notes.append(interpolation)
    return notes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("h5")
    parser.add_argument("dx")
    parser.add_argument("--samples", type=int, default=50, help="random nodes besides corners")
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args()
    try:
        notes = check(args.h5, args.dx, args.samples, args.seed)
    except Mismatch as mismatch:
        print(f"check_maps: FAIL: {mismatch}", file=sys.stderr)
        return 1
    except (OSError, KeyError, ValueError) as error:
        print(f"check_maps: FAIL: cannot read the maps: {type(error).__name__}: {error}",
              file=sys.stderr)
        return 1
    print(f"check_maps: OK: {args.h5} and {args.dx}")
    for note in notes:
        print(f"  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
