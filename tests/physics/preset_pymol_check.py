#!/usr/bin/python3
"""Compare dcs's PyMOL preset with PyMOL's own ``cmd.map_new(name, "coulomb", ...)``.

Run with a Python that can ``import pymol2`` (Debian's python3-pymol: /usr/bin/python3):

    python3 tests/physics/preset_pymol_check.py --dcs build/dev-cpu/bin/dcs --pqr data/2lzt.pqr
    python3 tests/physics/preset_pymol_check.py --dcs ... --pqr ... --extra "--units kT/e --temperature 300.0017 --dielectric 2"

What PyMOL computes (schrodinger/pymol-open-source 9b9cd6f; Debian 2.5.0 behaves the same):

* layer3/Selector.cpp SelectorMapCoulomb (5323-5557): for plain "coulomb" the cutoff is 0 and there is
  no neutralising or shifting, so every grid point gets
      V = sum_j (float)(q_j * c) / (float)|p - r_j|      skipping pairs with |p - r_j| <= R_SMALL4 = 1e-4 A
  with c = coulomb_units_factor / coulomb_dielectric = 557.0 / 2.0 (SettingInfo.h:327-328), the charge
  q_j = partial_charge * q (occupancy) / n_states_in_which_the_atom_occurs, the distance computed in double
  (diff3f = pymol::diff3<double,float>, Vector.h:442,468) and cast to float, the sum accumulated in float
  in atom-table order.  557.0 is kT/e at ~300 K (e^2/(4 pi eps0 A k_B T) = 557.0 at T = 300.0017 K).
* The grid (layer2/ObjectMap.cpp ObjectMapNewStateFromDesc, 2075-2097; Executive.cpp ExecutiveMapNew):
  extent = min/max of the selection's atom centres (no radii) -/+ buffer; per axis
  Dim = (int)(extent/grid), +1 if Dim*grid < extent (at least 1); the Dim points start at
  MinCorner = centre - 0.5*Dim*grid, i.e. the points are centred half a spacing below the box centre and the
  last point lies at centre + (Dim/2 - 1)*grid.  Defaults (modules/pymol/creating.py:351-354):
  grid = gaussian_resolution/3 = 0.6667 A, buffer = -1 -> gaussian_resolution = 2.0 A.
* PyMOL's PQR reader (layer2/ObjectMolecule2.cpp parse_pqr_atom_line) sets partial_charge and elec_radius but
  leaves the occupancy q at 0, so map_new coulomb of a freshly loaded PQR file is zero everywhere.  This
  check therefore runs ``alter all, q=1.0`` first (what a PyMOL user has to do too) and says so.
* Values are read with cmd.get_volume_field (float32, axis order [x][y][z]); the origin is the map's
  extent minimum (cmd.get_extent), which this script also recomputes from the rule above as a check.

dcs is run on exactly that grid (--origin/--spacing/--grid) with --preset pymol when the binary has it, else
with the explicit equivalent (--units kT/e --temperature 300.00169979363056 --dielectric 2), or with
--extra.  Its /potential dataset is [z][y][x].  Points within --exclude (default 0.1 A = dcs's
--min-distance) of an atom are left out: dcs clamps distances below 0.1 A, PyMOL only skips < 1e-4 A.

Tolerance: PyMOL accumulates ~N float32 terms with unit round-off u = 2^-24 = 6e-8 (error ~sqrt(N) u sum|terms|)
and places its points in float32 (origin + i*grid: ~1e-6 A off, which costs ~1e-6 A * c|q|/r^2 at the
points 0.1 A from an atom that set max|V|).  Measured: 3e-6 (1bbl, 576 atoms) and 2.3e-5 (2lzt, 1960 atoms) of
max|V| between PyMOL and its own formula in float64.  1e-4 of max|V| separates that float noise from any real
difference in constant (557 vs 560.46 is 6.2e-3), grid (half a spacing) or charges.
The script also evaluates PyMOL's formula in float64 and prints both programs' deviations from it.
Exit: 0 pass, 1 fail, 2 usage/run error, 77 skipped (no pymol).
"""
import argparse
import os
import sys

# preset_runs (beside this script) exits 77 without numpy and puts tests/support on the path.
from preset_runs import SKIP, RunError, compare, has_presets, print_float64, run_on_grid
import numpy as np  # noqa: I100
from distances import squared_distances

EXPLICIT_PYMOL = "--units kT/e --temperature 300.00169979363056 --dielectric 2"


def pymol_grid_rule(lo, hi, grid, buffer):
    """ObjectMap.cpp:2075-2097 in float32: returns (dims, origin)."""
    f = np.float32
    lo = np.array(lo, f) - f(buffer) if buffer > 0 else np.array(lo, f)
    hi = np.array(hi, f) + f(buffer) if buffer > 0 else np.array(hi, f)
    g = f(grid)
    v = hi - lo
    dims = []
    for a in range(3):
        d = int(v[a] / g)
        d = max(d, 1)
        if f(d) * g < v[a]:
            d += 1
        dims.append(d)
    centre = (hi + lo) * f(0.5)
    origin = np.array([centre[a] - f(0.5) * f(dims[a]) * g for a in range(3)], f)
    return dims, origin


def reference64(points, atoms, charges, c):
    """PyMOL's formula in float64 (pairs closer than 1e-4 A skipped)."""
    out = np.zeros(len(points))
    for s in range(0, len(points), 2048):
        r = np.sqrt(squared_distances(points[s:s + 2048], atoms))
        t = np.divide(charges[None, :], r, out=np.zeros_like(r), where=r > 1e-4)
        out[s:s + 2048] = c * t.sum(1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dcs", required=True, help="dcs binary")
    ap.add_argument("--pqr", required=True, help="PQR file")
    ap.add_argument("--spacing", type=float, default=None, help="map_new grid (default PyMOL's: gaussian_resolution/3)")
    ap.add_argument("--buffer", type=float, default=None, help="map_new buffer (default PyMOL's: gaussian_resolution)")
    ap.add_argument("--extra", default=None,
                    help='dcs options for the physics (default "--preset pymol" if dcs has it, else "%s")' % EXPLICIT_PYMOL)
    ap.add_argument("--tolerance", type=float, default=1e-4, help="max|dcs-PyMOL| / max|V| (default 1e-4)")
    ap.add_argument("--exclude", type=float, default=0.1, help="skip points closer than this to an atom (A)")
    ap.add_argument("--no-reference", action="store_true", help="skip the float64 evaluation")
    ap.add_argument("--keep", metavar="DIR", help="keep dcs's output in DIR")
    args = ap.parse_args()

    try:
        import pymol2
    except Exception as e:  # noqa: BLE001
        print("SKIP: pymol cannot be imported (%s); run with Debian's /usr/bin/python3 (python3-pymol)" % e)
        return SKIP
    try:
        import h5py  # noqa: F401  (preset_runs reads the map with it)
    except ImportError as e:
        print("SKIP: h5py cannot be imported (%s)" % e)
        return SKIP

    p = pymol2.PyMOL()
    p.start()
    cmd = p.cmd
    cmd.feedback("disable", "all", "everything")
    res = cmd.get_setting_float("gaussian_resolution")
    spacing = res / 3.0 if args.spacing is None else args.spacing
    buffer = res if args.buffer is None else args.buffer
    factor = cmd.get_setting_float("coulomb_units_factor")
    eps = cmd.get_setting_float("coulomb_dielectric")

    cmd.load(args.pqr, "mol")
    natoms = cmd.count_atoms("mol")
    occ = []
    cmd.iterate("mol", "occ.append(q)", space={"occ": occ})
    zero_occ = sum(1 for q in occ if q == 0.0)
    cmd.alter("mol", "q=1.0")
    m = cmd.get_model("mol")
    atoms = np.array([a.coord for a in m.atom], np.float64)
    charges = np.array([a.partial_charge for a in m.atom], np.float64)
    (lo, hi) = cmd.get_extent("mol")
    cmd.map_new("esp", "coulomb", spacing, "mol", buffer)
    field = np.array(cmd.get_volume_field("esp"), np.float64)  # [x][y][z]
    (mlo, mhi) = cmd.get_extent("esp")
    dims, origin32 = pymol_grid_rule(lo, hi, spacing, buffer)
    origin = np.array(mlo, np.float64)
    if list(field.shape) != dims or np.abs(origin - origin32).max() > 1e-5:
        print("ERROR: PyMOL's map (dims %s, origin %s) does not follow the rule (dims %s, origin %s)"
              % (list(field.shape), origin, dims, origin32))
        return 2
    h = float(np.float32(spacing))  # PyMOL's float32 spacing
    span = (np.array(mhi) - np.array(mlo)) / (np.array(dims) - 1)
    print("pymol %s: %d atoms (%d with occupancy 0 as loaded; set to 1), net charge %.4f e, c = %g/%g"
          % (cmd.get_version()[0], natoms, zero_occ, charges.sum(), factor, eps))
    print("grid: spacing %.7g buffer %g -> dims %s origin (%.6f %.6f %.6f) (extent check: spacing %s)"
          % (h, buffer, dims, *origin, np.array2string(span, precision=6)))
    p.stop()

    extra = args.extra if args.extra is not None else ("--preset pymol" if has_presets(args.dcs) else EXPLICIT_PYMOL)
    try:
        dcs, _, _ = run_on_grid(args.dcs, args.pqr, origin, h, dims, extra, args.keep, "pymol")
    except RunError as e:
        print("ERROR: %s" % e)
        return 2
    idx = np.indices(dims).reshape(3, -1).T
    pts = origin[None, :] + idx * h
    keep, a, b, vmax, rel = compare("pymol", field, dcs, pts, atoms, args.exclude)
    if not args.no_reference:
        print_float64("pymol", a, b, vmax, lambda: reference64(pts[keep], atoms, charges, factor / eps))
    ok = rel <= args.tolerance
    print("%s: dcs %s vs PyMOL map_new coulomb on %s: max diff %.3g of max|V| (tolerance %g)"
          % ("PASS" if ok else "FAIL", extra, os.path.basename(args.pqr), rel, args.tolerance))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
