#!/usr/bin/env python3
"""Compare dcs's ChimeraX preset with a float32 re-implementation of ChimeraX's ``coulombic ... map true``.

ChimeraX is not installed where this runs, so this does NOT run ChimeraX: it re-implements the arithmetic of
RBVI/ChimeraX (commit 6911d7b) src/bundles/coulombic/esp_cpp/esp.cpp and the grid of src/bundles/coulombic/src/
cmd.py in numpy float32, and checks that dcs reproduces that formula on that grid.  It can only show that dcs's
preset equals the formula as read from the source, not that it equals what a ChimeraX build prints.

    python3 tests/physics/preset_chimerax_check.py --dcs build/dev-cpu/bin/dcs --pqr data/2lzt.pqr
    python3 tests/physics/preset_chimerax_check.py ... --no-dist-dep --extra "--units kcal/mol/e --dielectric 4"

ChimeraX's semantics (file:line at 6911d7b):
* esp.cpp:39-56  conv_factor = (float)(331.62 / dielectric); for each point, in atom order, in float:
      dx = x_j - tx ...; dval = dx*dx + dy*dy + dz*dz; if (!dist_dep) dval = sqrt(dval);
      esp += q_j / dval;          value = esp * conv_factor
  i.e. distDep true (default, cmd.py:29) gives 331.62/dielectric * sum q/r^2 = sum q/(4 r * r) with the
  default dielectric 4.0: eps = 4r.  No guard at r = 0 (a point on an atom gives +-inf, or NaN for q = 0).
  Coordinates, charges and points are converted to float32 (parse_float_n3_array / parse_float_n_array).
  Unit: kcal/(mol e) (docs/user/commands/coulombic.html: "at 298 K"); 331.62 is 0.13 % below CODATA's
  e^2/(4 pi eps0) = 332.0637 kcal A/(mol e^2), so dcs must use 331.62 itself to match at 1e-4.
* cmd.py:149-171 (map true, or gspacing/gpadding given): gspacing 1.0, gpadding 5.0;
      min_xyz = min(coords) - (gpadding + gspacing/2); max_xyz = max(coords) + (gpadding + gspacing/2)
      x = numpy.arange(min_xyz[0], max_xyz[0], gspacing)  (count = ceil((max-min)/gspacing)), same y, z;
  origin min_xyz, values reshaped (nx, ny, nz) then transposed to ChimeraX's [z][y][x].
* The charged atoms are those of one molecular surface (by default one per polymer chain, without ligands
  or solvent: cmd.py:41-77,117-125, coulombic.html).  This check uses every atom of the PQR file, i.e. one
  surface enclosing all of them.

Points within --exclude (0.1 A, dcs's --min-distance) of an atom are left out.  Tolerance 1e-4 of max|V|:
float32 accumulation (~sqrt(N) 6e-8 sum|terms|) and float32 point positions (~1e-6 A at points 0.1 A from
an atom, where |dV/dr| = 2 V/r) stay below ~3e-5; any wrong constant (331.62 vs 332.06: 1.3e-3), power of r
or grid shows far above it.  Exit: 0 pass, 1 fail, 2 usage/run error, 77 skipped (h5py missing).
"""
import argparse
import os
import sys

# preset_runs (beside this script) exits 77 without numpy and puts tests/support on the path.
from preset_runs import SKIP, RunError, compare, has_presets, print_float64, run_on_grid
import numpy as np  # noqa: I100
from distances import squared_distances
from pqr_atoms import read_pqr

EXPLICIT_DISTDEP = "--units kcal/mol/e --dielectric-model distance --dielectric 4"
EXPLICIT_CONST = "--units kcal/mol/e --dielectric 4"


def chimerax_grid(coords, gspacing, gpadding):
    """cmd.py:161-165."""
    min_xyz = np.min(coords, axis=0) - [gpadding + gspacing / 2.0] * 3
    max_xyz = np.max(coords, axis=0) + [gpadding + gspacing / 2.0] * 3
    ranges = [np.arange(min_xyz[a], max_xyz[a], gspacing) for a in range(3)]
    return min_xyz, ranges


def chimerax_esp(points, coords, charges, dist_dep, dielectric):
    """esp.cpp:35-57 in float32, atoms in order, vectorised over the points."""
    f = np.float32
    t = points.astype(f)
    tx, ty, tz = t[:, 0].copy(), t[:, 1].copy(), t[:, 2].copy()
    c = coords.astype(f)
    q = charges.astype(f)
    conv = f(331.62 / np.float64(f(dielectric)))
    esp = np.zeros(len(t), f)
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(len(c)):
            dx = c[j, 0] - tx
            dy = c[j, 1] - ty
            dz = c[j, 2] - tz
            dval = dx * dx + dy * dy
            dval += dz * dz
            if not dist_dep:
                dval = np.sqrt(dval)
            esp += q[j] / dval
    return esp * conv


def reference64(points, coords, charges, dist_dep, dielectric):
    out = np.zeros(len(points))
    for s in range(0, len(points), 2048):
        r2 = squared_distances(points[s:s + 2048], coords)
        out[s:s + 2048] = (charges[None, :] / (r2 if dist_dep else np.sqrt(r2))).sum(1)
    return out * 331.62 / dielectric


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dcs", required=True, help="dcs binary")
    ap.add_argument("--pqr", required=True, help="PQR file")
    ap.add_argument("--gspacing", type=float, default=1.0, help="ChimeraX gspacing (default 1.0)")
    ap.add_argument("--gpadding", type=float, default=5.0, help="ChimeraX gpadding (default 5.0)")
    ap.add_argument("--dielectric", type=float, default=4.0, help="ChimeraX dielectric (default 4.0)")
    ap.add_argument("--no-dist-dep", action="store_true", help="ChimeraX distDep false (constant dielectric)")
    ap.add_argument("--extra", default=None,
                    help='dcs physics options (default "--preset chimerax" if dcs has it and the ChimeraX defaults '
                         'are used, else "%s" or, with --no-dist-dep, "%s")' % (EXPLICIT_DISTDEP, EXPLICIT_CONST))
    ap.add_argument("--tolerance", type=float, default=1e-4)
    ap.add_argument("--exclude", type=float, default=0.1)
    ap.add_argument("--keep", metavar="DIR")
    args = ap.parse_args()
    try:
        import h5py  # noqa: F401  (preset_runs reads the map with it)
    except ImportError as e:
        print("SKIP: h5py cannot be imported (%s)" % e)
        return SKIP

    dist_dep = not args.no_dist_dep
    coords, charges = read_pqr(args.pqr)
    if len(coords) == 0:
        print("ERROR: no atoms in %s" % args.pqr)
        return 2
    origin, ranges = chimerax_grid(coords, args.gspacing, args.gpadding)
    dims = [len(r) for r in ranges]
    gx, gy, gz = np.meshgrid(*ranges, indexing="ij")  # cmd.py:166: x outermost, z innermost
    points = np.stack([gx.ravel(), gy.ravel(), gz.ravel()], axis=1)
    print("chimerax rule: %d atoms, net charge %.4f e; gspacing %g gpadding %g -> dims %s origin (%.6f %.6f %.6f)"
          % (len(coords), charges.sum(), args.gspacing, args.gpadding, dims, *origin))
    cx = chimerax_esp(points, coords, charges, dist_dep, args.dielectric).astype(np.float64)

    if args.extra is None:
        defaults = dist_dep and args.dielectric == 4.0
        if has_presets(args.dcs) and defaults:
            extra = "--preset chimerax"
        else:
            extra = (EXPLICIT_DISTDEP.replace("--dielectric 4", "--dielectric %r" % args.dielectric) if dist_dep
                     else EXPLICIT_CONST.replace("--dielectric 4", "--dielectric %r" % args.dielectric))
    else:
        extra = args.extra
    try:
        dcs, _, (apos, aq) = run_on_grid(args.dcs, args.pqr, origin, args.gspacing, dims, extra, args.keep,
                                         "chimerax")
    except RunError as e:
        print("ERROR: %s" % e)
        return 2
    if apos.shape != coords.shape or np.abs(apos - coords).max() > 1e-6 or np.abs(aq - charges).max() > 1e-9:
        print("ERROR: dcs read different atoms from %s than this script's PQR reader" % args.pqr)
        return 2
    # [x][y][z] with z fastest: the order of cmd.py:166's points.
    keep, a, b, vmax, rel = compare("chimerax", cx, dcs, points, coords, args.exclude)
    print_float64("chimerax-float32", a, b, vmax,
                  lambda: reference64(points[keep], coords, charges, dist_dep, args.dielectric))
    ok = rel <= args.tolerance
    print("%s: dcs %s vs ChimeraX esp.cpp formula (re-implemented, distDep %s, dielectric %g) on %s: "
          "max diff %.3g of max|V| (tolerance %g)" % ("PASS" if ok else "FAIL", extra, dist_dep, args.dielectric,
                                                     os.path.basename(args.pqr), rel, args.tolerance))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
