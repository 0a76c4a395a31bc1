"""Reading finished dcs maps in the Python tests: one definition of "the same map" (the bytes of
/potential, every /statistics attribute and the colour range), shared by the pipeline and MPI
tests (and, by path, any other test that compares runs)."""
import h5py
import numpy as np


def potential_and_stats(path):
    """The map, its statistics and its colour range (which must not depend on slabs, workers,
    ranks or resumption either: a resumed run reads back the sampled planes it did not compute)."""
    with h5py.File(path, "r") as f:
        values = f["potential"][...]
        stats = {k: f["statistics"].attrs[k] for k in f["statistics"].attrs}
        for key in ("colour_range", "colour_range_percentiles", "colour_range_near_zero"):
            assert key in f["potential"].attrs, f"{path}: /potential has no {key} attribute"
            stats[key] = f["potential"].attrs[key]
        assert "resume" not in f, f"{path}: a finished file keeps no /resume group"
    return values, stats


def assert_same_map(a, b):
    """Raises AssertionError unless the maps at paths a and b are bit-identical."""
    va, sa = potential_and_stats(a)
    vb, sb = potential_and_stats(b)
    if va.shape != vb.shape or va.tobytes() != vb.tobytes():
        diff = np.abs(va.astype(np.float64) - vb.astype(np.float64)).max() if va.shape == vb.shape else "shape"
        raise AssertionError(f"{a} and {b}: /potential differs (max |diff| {diff})")
    for key in sa:
        if np.asarray(sa[key]).tobytes() != np.asarray(sb[key]).tobytes():
            raise AssertionError(f"{a} and {b}: statistics {key} {sa[key]!r} != {sb[key]!r}")


def grid_points(h5):
    """Every grid point's (x, y, z) in Å, z slowest, as /potential stores the values (an open
    h5py file)."""
    pot = h5["potential"]
    nz, ny, nx = pot.shape
    origin = np.array(pot.attrs["origin"], dtype=np.float64)
    spacing = np.array(pot.attrs["spacing"], dtype=np.float64)
    z, y, x = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    if "axes" in pot.attrs:  # a grid along a triclinic cell's vectors: rows a/nx, b/ny, c/nz
        axes = np.array(pot.attrs["axes"], dtype=np.float64).reshape(3, 3)
        ijk = np.stack([x, y, z], axis=-1).reshape(-1, 3).astype(np.float64)
        return origin + ijk @ axes
    return np.stack([origin[0] + x * spacing[0], origin[1] + y * spacing[1],
                     origin[2] + z * spacing[2]], axis=-1).reshape(-1, 3)
