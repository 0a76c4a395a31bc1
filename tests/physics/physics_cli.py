#!/usr/bin/env python3
"""The physics models from the command line (issue 22): the real dcs binary on a single charge
against the analytic forms in float64, the file's record of the model, --resume refusing a map
of another model, and the refusals of combinations that have no meaning.

Usage: physics_cli.py DCS CASE   (cases: single_charge, metadata, resume, refusals,
                                 salt_sweep_is_continuous)
Prints "physics_cli: OK" on success."""
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

# CODATA 2022, as libdcs/include/dcs/physics.hpp.
E = 1.602176634e-19
KB = 1.380649e-23
NA = 6.02214076e23
EPS0 = 8.8541878188e-12
KT_FACTOR = E / (4 * math.pi * EPS0 * 1e-10) * E / (KB * 298.15)  # kT/e * Å / e^2


def run(dcs, *args, expect=0):
    r = subprocess.run([dcs, *args, "--no-progress", "-q"], capture_output=True, text=True)
    if r.returncode != expect:
        sys.exit("physics_cli: dcs %s exited %d (expected %d):\n%s" % (" ".join(args), r.returncode, expect, r.stderr))
    return r


def grid_points(ds):
    nx, ny, nz = (int(v) for v in ds.attrs["dims"])
    o, h = ds.attrs["origin"], ds.attrs["spacing"]
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    return o[0] + i * h[0], o[1] + j * h[1], o[2] + k * h[2]


def single_charge(dcs, tmp):
    # One charge of -1.5 e off the grid points; each model against its formula.
    atom = os.path.join(tmp, "one.xyzq")
    with open(atom, "w") as f:
        f.write("0.31 -0.17 0.23 -1.5\n")
    lam = math.sqrt(EPS0 * 78.54 * KB * 298.15 / (2 * NA * E * E * 0.15 * 1000)) * 1e10
    cases = [
        (["--ionic-strength", "0.15"], lambda r: KT_FACTOR / 78.54 * np.exp(-r / lam) / r),
        (["--dielectric-model", "distance", "--dielectric", "4"], lambda r: KT_FACTOR / 4 / r ** 2),
        (["--preset", "chimerax"], lambda r: 331.62 / 4 / r ** 2),
        (["--preset", "pymol"], lambda r: 557.0 / 2 / r),
    ]
    for opts, g in cases:
        out = os.path.join(tmp, "one.h5")
        run(dcs, "--atoms", atom, "--grid", "21", "--padding", "6", "--device", "cpu", "-o", out, "--force", *opts)
        with h5py.File(out, "r") as f:
            ds = f["/potential"]
            x, y, z = grid_points(ds)
            v = np.array(ds, np.float64)
        r = np.maximum(np.sqrt((x - 0.31) ** 2 + (y + 0.17) ** 2 + (z - 0.23) ** 2), 0.1)
        exact = -1.5 * g(r)
        # float32 arithmetic: a few ulp of each value (times r/lambda for the exponent).
        rel = np.abs(v - exact) / (np.abs(exact) * (1 + r / lam))
        if rel.max() > 2e-6:
            sys.exit("physics_cli: %s: max relative error %.3g at V = %.6g" % (opts, rel.max(), exact.ravel()[rel.argmax()]))
        print("single charge %s: max relative error %.2g" % (" ".join(opts), rel.max()))


def metadata(dcs, tmp):
    out = os.path.join(tmp, "m.h5")
    run(dcs, "--atoms", os.path.join(SOURCE, "data", "2lzt.pqr"), "--grid", "17", "--ionic-strength", "0.15", "-o", out, "--force")
    with h5py.File(out, "r") as f:
        a = f["/potential"].attrs
        text = lambda k: a[k].decode() if isinstance(a[k], bytes) else str(a[k])
        assert abs(float(a["debye_length"]) - 7.857) < 5e-4, a["debye_length"]
        assert float(a["ionic_strength"]) == 0.15 and float(a["dielectric"]) == 78.54, dict(a)
        assert "Debye-Hueckel" in text("physics"), text("physics")
        assert "exp(-r/lambda)/r" in text("description"), text("description")
    out = os.path.join(tmp, "c.h5")
    run(dcs, "--atoms", os.path.join(SOURCE, "data", "2lzt.pqr"), "--grid", "17", "--preset", "chimerax", "-o", out, "--force", "--dx", os.path.join(tmp, "c.dx"))
    with h5py.File(out, "r") as f:
        a = f["/potential"].attrs
        text = lambda k: a[k].decode() if isinstance(a[k], bytes) else str(a[k])
        assert text("preset") == "chimerax" and float(a["coulomb_constant"]) == 331.62, dict(a)
        assert text("units") == "kcal/mol/e" and text("dielectric_model") == "distance", dict(a)
        assert text("coulomb_factor_unit") == "kcal*A^2/(mol*e^2)", text("coulomb_factor_unit")
    dx = open(os.path.join(tmp, "c.dx")).read().replace("\n#   ", " ")
    assert "g(r) = 1/r^2" in dx and "preset chimerax" in dx, dx[:800]
    print("metadata: HDF5 attributes and DX comments name the model")


def resume(dcs, tmp):
    out = os.path.join(tmp, "r.h5")
    mol = os.path.join(SOURCE, "data", "2lzt.pqr")
    run(dcs, "--atoms", mol, "--grid", "17", "--ionic-strength", "0.15", "-o", out, "--force")
    r = run(dcs, "--atoms", mol, "--grid", "17", "--ionic-strength", "0.2", "-o", out, "--resume", expect=1)
    assert "ionic_strength was 0.14999" in r.stderr or "ionic_strength was 0.15" in r.stderr, r.stderr
    r = run(dcs, "--atoms", mol, "--grid", "17", "--dielectric-model", "distance", "-o", out, "--resume", expect=1)
    assert "dielectric_model was constant, now distance" in r.stderr, r.stderr
    run(dcs, "--atoms", mol, "--grid", "17", "--ionic-strength", "0.15", "-o", out, "--resume")
    print("resume: another model's map is refused, the same model's is kept")


def refusals(dcs, tmp):
    mol = os.path.join(SOURCE, "data", "2lzt.pqr")
    for args, words in [
        (["--preset", "chimerax", "--units", "kT/e"], "does not combine with --preset chimerax"),
        (["--ionic-strength", "0.15", "--dielectric-model", "distance"], "needs --dielectric-model constant"),
        (["--ionic-strength", "-1"], "--ionic-strength must be a number from 0 to 10"),
        (["--ionic-strength", "nan"], "--ionic-strength"),
        (["--preset", "vmd"], "unknown --preset 'vmd' (valid: chimerax, pymol, pmepot)"),
        (["--dielectric-model", "sigmoid"], "--dielectric-model"),
    ]:
        r = run(dcs, "--atoms", mol, "--grid", "9", "-o", os.path.join(tmp, "x.h5"), *args, expect=2)
        assert words in r.stderr, (args, r.stderr)
        assert not os.path.exists(os.path.join(tmp, "x.h5"))
    print("refusals: exit 2 with the reason, nothing written")


def salt_sweep_is_continuous(dcs, tmp):
    # Issue 35 item 6: --ionic-strength given at all (0 included) means "in water" (eps 78.54
    # unless --dielectric), so I = 0 and I = 1e-300 are the same map; it was a factor of 78.54.
    mol = os.path.join(SOURCE, "data", "2lzt.pqr")
    maps, physics = {}, {}
    for ionic in ["0", "1e-300"]:
        out = os.path.join(tmp, "i%s.h5" % ionic)
        run(dcs, "--atoms", mol, "--grid", "17", "--ionic-strength", ionic, "-o", out, "--force")
        with h5py.File(out, "r") as f:
            a = f["/potential"].attrs
            assert float(a["dielectric"]) == 78.54, (ionic, dict(a))
            physics[ionic] = a["physics"].decode() if isinstance(a["physics"], bytes) else str(a["physics"])
            maps[ionic] = f["/potential"][...].astype(np.float64)
    assert "eps = 78.54" in physics["0"] and "eps = 78.54" in physics["1e-300"], physics
    scale = np.abs(maps["0"]).max()
    diff = np.abs(maps["0"] - maps["1e-300"]).max() / scale
    if diff > 1e-6:
        sys.exit("physics_cli: I = 0 and I = 1e-300 differ by %.3g of max|V|" % diff)
    # --dielectric still wins, and no --ionic-strength keeps vacuum's eps = 1.
    out = os.path.join(tmp, "d.h5")
    run(dcs, "--atoms", mol, "--grid", "17", "--ionic-strength", "0", "--dielectric", "2", "-o", out, "--force")
    with h5py.File(out, "r") as f:
        assert float(f["/potential"].attrs["dielectric"]) == 2.0, dict(f["/potential"].attrs)
    run(dcs, "--atoms", mol, "--grid", "17", "-o", out, "--force")
    with h5py.File(out, "r") as f:
        assert float(f["/potential"].attrs["dielectric"]) == 1.0, dict(f["/potential"].attrs)
    print("salt sweep: I = 0 and 1e-300 agree to %.2g of max|V|, both eps 78.54" % diff)


if __name__ == "__main__":
    dcs, case = sys.argv[1], sys.argv[2]
    SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with tempfile.TemporaryDirectory() as tmp:
        {"single_charge": single_charge, "metadata": metadata, "resume": resume, "refusals": refusals,
         "salt_sweep_is_continuous": salt_sweep_is_continuous}[case](dcs, tmp)
    print("physics_cli: OK")
