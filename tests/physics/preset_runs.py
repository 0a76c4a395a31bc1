"""What the preset checks (preset_pymol_check.py, preset_chimerax_check.py) share: dcs run on a
viewer's own grid, and the comparison of its map with the viewer's values away from the atoms.
Importing it exits 77 (skipped) where numpy is missing."""
import os
import shlex
import subprocess
import sys
import tempfile

SKIP = 77
try:
    import numpy as np
except ImportError as error:  # a Python without numpy (the GPU machine's): nothing to compare with
    print("SKIP: numpy cannot be imported (%s)" % error)
    sys.exit(SKIP)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from distances import nearest_atom_distance  # noqa: E402


class RunError(Exception):
    """dcs failed or wrote another grid than asked for: the check exits 2 (usage/run error)."""


def has_presets(dcs):
    """Whether this dcs binary knows --preset (older builds are checked with explicit options)."""
    return "--preset" in subprocess.run([dcs, "--help"], capture_output=True, text=True).stdout


def run_on_grid(dcs, pqr, origin, spacing, dims, extra, keep, name):
    """dcs on the grid of `dims` points from `origin`, `spacing` apart, with the physics options
    `extra`; the HDF5 file goes to the folder `keep` (kept) or to a temporary one (removed).
    Returns the map as [x][y][z] in float64, /potential's attributes and the atoms dcs read
    (positions, charges)."""
    tmp = keep or tempfile.mkdtemp(prefix=f"dcs_{name}_")
    os.makedirs(tmp, exist_ok=True)
    out = os.path.join(tmp, f"{name}_check.h5")
    argv = [dcs, "--atoms", pqr, "--origin", *map(repr, np.asarray(origin).tolist()), "--spacing",
            repr(spacing), "--grid", *map(str, dims), "-o", out, "--force", "--no-progress"]
    r = subprocess.run(argv + shlex.split(extra), capture_output=True, text=True)
    if r.returncode != 0:
        raise RunError("dcs failed (%d): %s\n%s" % (r.returncode, " ".join(argv), r.stderr.strip()))
    import h5py  # the callers checked that it imports (77 otherwise)
    with h5py.File(out, "r") as f:
        ds = f["/potential"]
        values = np.array(ds, np.float64).transpose(2, 1, 0)  # [z][y][x] -> [x][y][z]
        attrs = dict(ds.attrs)
        atoms = np.array(f["/atoms/position"], np.float64), np.array(f["/atoms/charge"], np.float64)
    if not keep:
        os.remove(out)
        os.rmdir(tmp)
    if list(values.shape) != list(dims) or np.abs(np.array(attrs["origin"]) - origin).max() > 1e-9:
        raise RunError("dcs map dims %s origin %s differ from the grid asked for: %s %s"
                       % (values.shape, attrs.get("origin"), list(dims), origin))
    print("dcs: %s  (units %s, coulomb_factor %s %s, dielectric %s)" % (extra, attrs.get("units"),
          attrs.get("coulomb_factor"), attrs.get("coulomb_factor_unit"), attrs.get("dielectric")))
    return values, attrs, atoms


def compare(viewer, want, got, points, atoms, exclude):
    """Prints how far dcs's values `got` are from the viewer's `want` at the points at least
    `exclude` Å from every atom; returns (kept mask, want and got there, max|want|, max diff /
    max|want|)."""
    keep = nearest_atom_distance(points, atoms) >= exclude
    a, b = want.ravel()[keep], got.ravel()[keep]
    vmax = np.abs(a).max()
    diff = np.abs(a - b)
    rel = diff.max() / vmax
    i = np.argmax(diff)
    big = np.abs(a) > 1e-3 * vmax
    print("compared %d of %d points (%d within %g A of an atom left out); max|V_%s| %.6g"
          % (keep.sum(), keep.size, keep.size - keep.sum(), exclude, viewer, vmax))
    print("max|dcs - %s| %.4g (%.3g of max|V|) at V_%s %.6g; rms %.3g of max|V|; median ratio dcs/%s %.8f"
          % (viewer, diff.max(), rel, viewer, a[i], np.sqrt((diff ** 2).mean()) / vmax, viewer,
             np.median(b[big] / a[big])))
    return keep, a, b, vmax, rel


def print_float64(viewer, a, b, vmax, reference):
    """Prints both programs' deviations from the formula in float64 (reference(): its values at
    the kept points). Printed, not checked (the verdict is dcs against the viewer), and left out
    under the sanitizers (DCS_TEST_SANITIZED=1, the "sanitize" test preset), which are there for
    dcs's code: it costs up to ~25 s of numpy."""
    if os.environ.get("DCS_TEST_SANITIZED") == "1":
        print("vs float64 formula: not evaluated under the sanitizers (DCS_TEST_SANITIZED)")
        return
    ref = reference()
    print("vs float64 formula: %s %.3g, dcs %.3g (max abs error / max|V|)"
          % (viewer, np.abs(a - ref).max() / vmax, np.abs(b - ref).max() / vmax))
