"""`dcs preview` on real maps of data/2lzt.pqr: by default the map's one colour range (the run
summary's, the file's colour_range and the PyMOL line's agree, a --preset's scale included);
asked for (--percentile), colour limits from |V| on the solvent-accessible shell (checked
against a brute-force shell), not saturated, different at ε = 1 and ε = 80; chosen slices,
clean errors, and the PyMOL commands it prints (run in PyMOL).

    preview_tests.py --dcs DCS --source DIR CASE     (CASE: one_range, surface, errors, pymol)

Prints "preview_tests: OK <case>"; raises (exit 1) on failure; exit 77 when a package is missing.
"""
import os
import re
import subprocess
import sys

try:
    import h5py
    import numpy as np
except ImportError:
    print("SKIPPED: h5py/numpy missing for this Python; run scripts/setup-viewers.sh")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from case_main import cases_of, run_case  # noqa: E402
from pymol_instance import start_pymol  # noqa: E402

PROBE, SHELL = 1.4, 1.0  # dcs preview's defaults


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def dcs(args, *arguments, rc=0, cwd=None):
    run = subprocess.run([args.dcs, *arguments], capture_output=True, text=True, timeout=300,
                         cwd=cwd)
    check(rc is None or run.returncode == rc,
          f"dcs {' '.join(arguments)}: exit {run.returncode}, expected {rc}\n{run.stdout}{run.stderr}")
    return run


def lysozyme(args, work, dielectric, extra=()):
    path = os.path.join(work, f"eps{dielectric}.h5")
    dcs(args, "--atoms", os.path.join(args.source, "data", "2lzt.pqr"), "--spacing", "1",
        "--dielectric", str(dielectric), "-o", path, "-q", "--force", *extra)
    return path


def brute_force_shell(path):
    """|V| at the grid points whose clearance min_i(|p - r_i| - R_i) lies in [PROBE, PROBE +
    SHELL), every atom that can decide it against every point. Point blocks of a few rows skip
    the atoms farther than PROBE + SHELL + max R (and a margin for rounding) from the block's box:
    such an atom's |p - r_i| - R_i is beyond PROBE + SHELL at every point of the block, so where
    the clearance is below PROBE + SHELL it is the same minimum over the nearer atoms, and where
    it is not, no skipped atom brings it there. The same shell as every atom against every point
    (16 s for each map), in a second."""
    with h5py.File(path, "r") as f:
        d = f["potential"]
        values = d[()]
        origin, spacing = d.attrs["origin"], d.attrs["spacing"]
        atoms, radii = f["atoms/position"][()], f["atoms/radius"][()]
    nz, ny, nx = values.shape
    k, j, i = np.meshgrid(np.arange(nz), np.arange(ny), np.arange(nx), indexing="ij")
    points = (origin + spacing * np.stack([i.ravel(), j.ravel(), k.ravel()], axis=1)).reshape(
        nz, ny, nx, 3)
    reach = PROBE + SHELL + float(radii.max()) + 0.01
    shell = np.zeros((nz, ny, nx), dtype=bool)
    rows = 8
    for z in range(nz):
        for y in range(0, ny, rows):
            p = points[z, y:y + rows].reshape(-1, 3)
            lo, hi = p.min(axis=0), p.max(axis=0)
            outside = np.maximum(np.maximum(lo - atoms, atoms - hi), 0.0)
            near = (outside ** 2).sum(axis=1) <= reach * reach
            if not near.any():
                continue
            distance = np.sqrt(((p[:, None, :] - atoms[None, near, :]) ** 2).sum(axis=2))
            gap = (distance - radii[None, near]).min(axis=1)
            shell[z, y:y + rows] = ((gap >= PROBE) & (gap < PROBE + SHELL)).reshape(-1, nx)
    return np.abs(values.ravel()[shell.ravel()])


def reported_limit(run):
    found = re.search(r"colour limits ±(\S+) kT/e \(99th percentile of \|V\| on the "
                      r"solvent-accessible shell \([^,]* beyond the atom radii, (\d+) points, "
                      r"(\S+) % clipped\); ε = (\S+)\)", run.stdout)
    check(found, f"no surface-view line in:\n{run.stdout}{run.stderr}")
    return float(found.group(1)), int(found.group(2)), float(found.group(3))


def printed_limit(run):
    """The preview's ±L and what it said L is."""
    found = re.search(r"colour limits ±(\S+) \S+ \((.*); ", run.stdout)
    check(found, f"no colour limits in:\n{run.stdout}{run.stderr}")
    return found.group(1), found.group(2)


def case_one_range(args, work):
    """One range per map: the summary's, the file's colour_range, the preview's (both views) and
    its PyMOL ramp are the same number; with --preset chimerax it is the preset's ±10."""
    for name, options, source in (
            ("eps1", (), "99th percentile of |V|"),
            ("salt", ("--ionic-strength", "0.15"), "99th percentile of |V|"),
            ("chimerax", ("--preset", "chimerax", "--dx"),
             "--preset chimerax: ChimeraX coulombic's colour scale")):
        h5 = os.path.join(work, f"{name}.h5")
        run = dcs(args, "--atoms", os.path.join(args.source, "data", "2lzt.pqr"), "--spacing", "1",
                  "-o", h5, "--force", "--no-progress", *options)
        summary = re.search(r"colours   view with a colour range of ±(\S+) \S+ \((.*); the "
                            r"file's colour_range\)", run.stdout)
        check(summary, f"{name}: no colours line in:\n{run.stdout}")
        with h5py.File(h5, "r") as f:
            attrs = f["potential"].attrs
            stored = float(attrs["colour_range"][1])
            stored_source = attrs["colour_range_source"]
        stored_source = stored_source.decode() if isinstance(stored_source, bytes) else stored_source
        check(summary.group(1) == f"{stored:.3g}" and summary.group(2) == source == stored_source,
              f"{name}: summary ±{summary.group(1)} ({summary.group(2)}), file ±{stored} "
              f"({stored_source})")
        if name == "chimerax":
            check(stored == 10.0, f"chimerax: the file's range ±{stored}, not the preset's ±10")
        for view in ("surface", "centre"):
            shown = dcs(args, "preview", h5, "-o", os.path.join(work, f"{name}-{view}.png"),
                        "--view", view)
            limit, what = printed_limit(shown)
            check(limit == f"{stored:.3g}" and what == f"the file's colour_range, {source}",
                  f"{name} {view}: preview ±{limit} ({what}), file ±{stored}")
            ramp = re.search(r"ramp_new pot_ramp, pot, \[-(\S+), 0, (\S+)\]", shown.stdout)
            check(ramp and float(ramp.group(1)) == float(ramp.group(2)) == float(f"{stored:.6g}"),
                  f"{name} {view}: PyMOL ramp {shown.stdout}")


def case_surface(args, work):
    import matplotlib.image as mpimg

    limits = {}
    for eps in (1, 80):
        h5 = lysozyme(args, work, eps)
        png = os.path.join(work, f"eps{eps}.png")
        run = dcs(args, "preview", h5, "-o", png, "--percentile", "99")
        limit, count, clipped = reported_limit(run)
        shell = brute_force_shell(h5)
        exact = float(np.percentile(shell, 99))
        check(abs(count - len(shell)) <= 0.01 * len(shell), f"shell points {count} vs {len(shell)}")
        check(abs(limit - exact) <= 5e-3 * exact, f"ε = {eps}: limit {limit} vs shell {exact}")
        # Not saturated: about 1 % of the shell beyond the limits, by the brute-force shell too.
        beyond = float((shell > limit * 1.005).mean())
        check(clipped <= 1.5 and beyond <= 0.015, f"ε = {eps}: {clipped} %, {beyond:.3%} clipped")
        check(f"ε = {eps})" in run.stdout, f"ε missing: {run.stdout}")
        image = mpimg.imread(png)[..., :3]
        grey = (np.abs(image - 0.82).max(axis=2) < 0.02).sum()  # the atoms' masked interior
        check(grey > 2000 and image.shape[1] > 2 * image.shape[0], f"masking: {grey} grey pixels")
        limits[eps] = limit
        width = image.shape[1]
    check(60 < limits[1] / limits[80] < 100, f"ε = 1 and 80 ranges: {limits}")
    # One chosen slice: one panel, the nearest plane, the same limits.
    one = os.path.join(work, "z.png")
    run = dcs(args, "preview", h5, "-o", one, "--slice", "z=12.5", "--percentile", "99")
    check(reported_limit(run)[0] == limits[80], "a slice changed the limits")
    shape = mpimg.imread(one).shape
    check(shape[1] < 0.8 * width, f"one slice, shape {shape}, three: {width} wide")
    two = dcs(args, "preview", h5, "-o", os.path.join(work, "two.png"), "--slice", "x=0",
              "--slice", "y=-3.5", "--percentile", "99")
    check(reported_limit(two)[0] == limits[80], "two slices")


def case_errors(args, work):
    h5 = lysozyme(args, work, 80, extra=("--dx",))
    dx = h5[:-3] + ".dx"
    for target, options, rc, needle in (
            (dx, (), 3, "is not an HDF5 file"),
            (h5, ("--slice", "z=1000"), 2, "--slice z=1000: outside the map (z from"),
            (h5, ("--slice", "q=1"), 2, "give an axis and a position in Å")):
        png = os.path.join(work, "bad.png")
        run = dcs(args, "preview", target, "-o", png, *options, rc=rc)
        lines = run.stderr.strip().splitlines()
        check(len(lines) == 1 and needle in lines[0] and "Traceback" not in run.stderr,
              f"{target} {options}: {run.stderr}")
        check(not os.path.exists(png), "a failed preview left a PNG")
    plain = os.path.join(work, "plain.h5")
    with h5py.File(plain, "w") as f:
        f["x"] = [1.0]
    run = dcs(args, "preview", plain, "-o", os.path.join(work, "p.png"), rc=3)
    check("not a dcs map" in run.stderr, run.stderr)
    # A map along a triclinic cell's vectors: refused, not drawn sheared.
    ions = os.path.join(work, "ions.xyzq")
    with open(ions, "w") as out:
        out.write("2 3 4 1\n10 -4 12 -1\n")
    skewed = os.path.join(work, "skewed.h5")
    dcs(args, "--atoms", ions, "--box", "20,22,24,80,95,105", "--periodic", "--grid", "8",
        "--device", "cpu", "-q", "-o", skewed)
    run = dcs(args, "preview", skewed, "-o", os.path.join(work, "s.png"), rc=3)
    check("--map-axes box" in run.stderr and "Traceback" not in run.stderr, run.stderr)
    check(not os.path.exists(os.path.join(work, "s.png")), "a refused preview left a PNG")


def case_pymol(args, work):
    """The printed commands, run in PyMOL (Debian's python3-pymol, this Python)."""
    instance = start_pymol()  # cmd refers to it weakly: keep it alive here
    cmd = instance.cmd
    h5 = lysozyme(args, work, 80, extra=("--dx",))
    run = dcs(args, "preview", h5, "-o", os.path.join(work, "m.png"))
    limit = float(printed_limit(run)[0])
    line = re.search(r"^PyMOL: (.*)$", run.stdout, re.M)
    check(line, f"no PyMOL line: {run.stdout}")
    commands = line.group(1).split("; ")
    check("set surface_ramp_above_mode, 1" in commands, f"{commands}")
    for command in commands:
        cmd.do(command)
    check(cmd.get_type("pot") == "object:map" and cmd.get_type("pot_ramp") == "object:ramp",
          f"PyMOL objects: {cmd.get_names('all')}")
    check(cmd.count_atoms("mol") == 1960, f"atoms {cmd.count_atoms('mol')}")
    check(cmd.get("surface_color", "mol") == "pot_ramp", "surface colour")
    check(int(cmd.get("surface_ramp_above_mode")) == 1, "surface_ramp_above_mode")
    ramp = re.search(r"ramp_new pot_ramp, pot, \[-(\S+), 0, (\S+)\], \[red, white, blue\]",
                     line.group(1))
    check(ramp and ramp.group(1) == ramp.group(2) and abs(float(ramp.group(1)) - limit) <= 5e-3 * limit,
          f"ramp limits: {line.group(1)}")


if __name__ == "__main__":
    run_case("preview_tests", cases_of(globals()), ("--source",))
