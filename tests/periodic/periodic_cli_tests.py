#!/usr/bin/env python3
"""`dcs --periodic` maps through the real binary, against the float64 Ewald sum of
tests/periodic/periodic_dump (--reference-at, the oracle dcs measures its own error with, itself
checked against OpenMM by openmm_check.py).

    periodic_cli_tests.py --dcs DCS --dump PERIODIC_DUMP CASE

Cases:
  single_charge_cubic  one charge in a cubic --box: the grid tiles the box (points i L/n), every
                       point against the oracle, the file's cell, parameters, background, gauge
                       and measured error
  truncoct_map         AMBER tz2 in its truncated octahedron (net +2 e), frame 0 as a PQR with
                       its CRYST1: the bounding-box grid, sampled points against the oracle, the
                       file's measured error
  truncoct_frames      the same from parm7 + NetCDF, frames 0-2: the mean map is the mean of the
                       frames' periodic potentials, each in its own cell
  missed_target        a run made to miss --ewald-error (DCS_EWALD_TESTING_ACCURACY) exits 4 and
                       writes nothing
With DCS_TEST_DEVICE=cuda (the GPU machine) every run computes on the GPUs (kernels/src/periodic)
instead of the CPU, against the same oracle.
Exit 77 (skipped) where h5py, numpy or (truncoct cases) MDAnalysisTests are missing.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import h5py
    import numpy as np
except ImportError as missing:
    print(f"SKIPPED: {missing} (the venv of scripts/setup-md.sh has h5py and numpy)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from map_files import grid_points  # noqa: E402
from verdict import check, dcs, fail  # noqa: E402

warnings.filterwarnings("ignore")
DEVICE = os.environ.get("DCS_TEST_DEVICE", "cpu")
TOLERANCE = 1e-5  # relative RMS against the float64 Ewald sum (--ewald-error's default)
CASES = {}
case = lambda function: CASES.setdefault(function.__name__, function)  # noqa: E731


def oracle(args, work, dimensions, positions, charges, points):
    """The float64 Ewald sum (e/Å) at `points`, by periodic_dump --reference-at."""
    system = os.path.join(work, "oracle.txt")
    with open(system, "w") as out:
        out.write("cell " + " ".join(repr(float(v)) for v in dimensions) + "\n")
        for (x, y, z), q in zip(np.asarray(positions, float).tolist(), np.asarray(charges, float).tolist()):
            out.write(f"{x!r} {y!r} {z!r} {q!r}\n")
    at = os.path.join(work, "points.txt")
    np.savetxt(at, np.asarray(points, float), fmt="%.17g")
    values = os.path.join(work, "oracle.f64")
    run = subprocess.run([args.dump, system, "--reference-at", at, values], capture_output=True,
                         text=True)
    check(run.returncode == 0, f"periodic_dump: {run.stderr}")
    return np.fromfile(values, dtype="<f8")


def relative_rms(values, reference):
    values = np.asarray(values, float)
    return float(np.sqrt(np.sum((values - reference) ** 2) / np.sum(reference ** 2)))


def text(attrs, name):
    value = attrs[name]
    return value.decode() if isinstance(value, bytes) else str(value)


def check_method(h5, net_charge, tiles):
    m = h5["method"].attrs
    check(text(m, "name") == "ewald", f"/method name {text(m, 'name')}")
    check(bool(m["measured"]) and bool(m["met"]), "the error was not measured or not met")
    check(float(m["rms_rel_error"]) <= TOLERANCE, f"reported error {float(m['rms_rel_error'])}")
    check(float(m["target"]) == 1e-5, f"target {float(m['target'])}")
    check(abs(float(m["net_charge"]) - net_charge) < 1e-3, f"net charge {float(m['net_charge'])}")
    check(np.array(m["cell_vectors"]).shape == (3, 3), "cell_vectors is not 3x3")
    check(float(m["beta"]) > 0 and float(m["real_cutoff"]) > 0 and len(m["mesh"]) == 3,
          "Ewald parameters missing")
    check("mean of the potential over the unit cell is 0" in text(m, "gauge"), text(m, "gauge"))
    check(("neutralising background" in text(m, "background")) == (abs(net_charge) > 1e-6),
          text(m, "background"))
    check(("tiles the box" in text(m, "grid")) == tiles, text(m, "grid"))
    return float(m["rms_rel_error"])


def write_xyzq(work, name, lines):
    """The atom file `name` in `work` holding `lines` (x y z q)."""
    path = os.path.join(work, name)
    with open(path, "w") as out:
        out.write(lines)
    return path


@case
def single_charge_cubic(args, work):
    atoms = write_xyzq(work, "one.xyzq", "3.0 4.0 5.0 1.0\n")
    out = os.path.join(work, "one.h5")
    run = dcs(args, "--atoms", atoms, "--box", "20,20,20", "--periodic", "--spacing", "2",
              "--units", "e/A", "--device", DEVICE, "-o", out)
    check("net charge +1 e neutralised by a uniform background" in run.stdout, run.stdout)
    check("the map tiles the box periodically" in run.stdout, run.stdout)
    with h5py.File(out, "r") as h5:
        check(h5["potential"].shape == (10, 10, 10), f"shape {h5['potential'].shape}")
        check(list(h5["potential"].attrs["origin"]) == [0, 0, 0], "origin is not the cell's")
        check(list(h5["potential"].attrs["spacing"]) == [2, 2, 2], "spacing is not L/n")
        reported = check_method(h5, 1.0, tiles=True)
        check(list(h5["method"].attrs["cell_lengths"]) == [20, 20, 20], "cell lengths")
        values = h5["potential"][...].reshape(-1)
        points = grid_points(h5)
    expected = oracle(args, work, [20, 20, 20, 90, 90, 90], [[3, 4, 5]], [1.0], points)
    error = relative_rms(values, expected)
    print(f"single charge: {len(points)} points, relative RMS {error:.2e} against the float64 "
          f"Ewald sum (file: {reported:.2e})")
    check(error <= TOLERANCE, f"relative RMS {error:.3e} against the oracle")
    # The open-boundary potential is not what was mapped: it differs by far more.
    open_map = 1.0 / np.maximum(np.linalg.norm(points - [3, 4, 5], axis=1), 0.1)
    check(relative_rms(open_map, expected) > 0.05, "the map looks like the open-boundary one")


def truncoct_frame0():
    try:
        import MDAnalysis as mda
        import MDAnalysisTests.datafiles as data
    except ImportError as missing:
        print(f"SKIPPED: {missing} (scripts/setup-md.sh installs MDAnalysis and MDAnalysisTests)")
        sys.exit(77)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "trajectory"))
    from periodic_tests import truncoct_parm7  # noqa: E402  (the parm7 is bzip2-compressed)
    return mda, data, truncoct_parm7


@case
def truncoct_map(args, work):
    mda, data, _ = truncoct_frame0()
    u = mda.Universe(data.PRM7, data.NCDFtruncoct)
    u.trajectory[0]
    dims = [float(v) for v in u.dimensions]
    positions = np.round(u.atoms.positions.astype(float), 3)
    charges = np.round(u.atoms.charges.astype(float), 6)
    pqr = os.path.join(work, "tz2.pqr")
    with open(pqr, "w") as out:
        out.write("CRYST1{:9.3f}{:9.3f}{:9.3f}{:7.2f}{:7.2f}{:7.2f} P 1           1\n".format(*dims))
        for n, ((x, y, z), q) in enumerate(zip(positions, charges)):
            out.write(f"ATOM  {n % 100000:5d}  X   RES A{n // 10 % 10000:4d}    "
                      f"{x:.3f} {y:.3f} {z:.3f} {q:.6f} 1.5\n")
    cell = [float(f"{v:.3f}") for v in dims[:3]] + [float(f"{v:.2f}") for v in dims[3:]]
    out = os.path.join(work, "tz2.h5")
    # The run measures its error at 1024 points (512 under the sanitizers, a smaller grid too):
    # the float64 sum over 5827 atoms is most of the run's time.
    small = os.environ.get("DCS_TEST_SANITIZED") == "1"
    run = dcs(args, "--atoms", pqr, "--periodic", "--grid", "12" if small else "18", "--units",
              "e/A", "--validate-points", "512" if small else "1024", "--device", DEVICE, "-o", out)
    check("ewald error relative RMS" in run.stdout, run.stdout)
    # Atoms outside the bounding box are images of atoms inside: no open-map box warning.
    check("outside the box" not in run.stderr and "--padding" not in run.stderr, run.stderr)
    with h5py.File(out, "r") as h5:
        reported = check_method(h5, float(charges.sum()), tiles=False)
        check(np.allclose(h5["method"].attrs["cell_angles"], cell[3:]), "cell angles")
        values = h5["potential"][...].reshape(-1)
        points = grid_points(h5)
    pick = np.random.default_rng(34).choice(len(points), 100 if small else 300, replace=False)
    expected = oracle(args, work, cell, positions, charges, points[pick])
    error = relative_rms(values[pick], expected)
    print(f"tz2 truncated octahedron: {len(charges)} atoms, net {charges.sum():+.3f} e, "
          f"{len(pick)} sampled points, relative RMS {error:.2e} (file: {reported:.2e})")
    check(error <= TOLERANCE, f"relative RMS {error:.3e} against the oracle")


@case
def truncoct_frames(args, work):
    mda, data, truncoct_parm7 = truncoct_frame0()
    out = os.path.join(work, "frames.h5")
    dcs(args, "--topology", truncoct_parm7(work), "--trajectory", data.NCDFtruncoct, "--frames", "0:2",
        "--periodic", "--grid", "14", "--units", "e/A", "--device", DEVICE, "-o", out)
    with h5py.File(out, "r") as h5:
        values = h5["potential"][...].reshape(-1)
        points = grid_points(h5)
        check(text(h5["method"].attrs, "name") == "ewald", "method")
        # Each frame's cell as dcs read it, in float64 (MDAnalysis rounds it to float32: 2e-6 Å
        # moves the far images enough to change the potential near them by ~1e-5).
        cells = np.array(h5["trajectory/dimensions"][...], dtype=np.float64)
    check(cells.shape == (2, 6) and abs(cells[0][0] - cells[1][0]) > 1e-3,
          f"the frames' cells {cells}: not two different cells")
    pick = np.random.default_rng(7).choice(len(points), 150, replace=False)
    u = mda.Universe(data.PRM7, data.NCDFtruncoct)
    frames = []
    for f in (0, 1):
        u.trajectory[f]
        frames.append(oracle(args, work, cells[f], u.atoms.positions.astype(float),
                             u.atoms.charges.astype(float), points[pick]))
    expected = 0.5 * (frames[0] + frames[1])
    error = relative_rms(values[pick], expected)
    print(f"tz2 frames 0-1: mean map at {len(pick)} points, relative RMS {error:.2e}")
    check(error <= TOLERANCE, f"relative RMS {error:.3e} against the mean of the frames' oracles")


@case
def missed_target(args, work):
    atoms = write_xyzq(work, "two.xyzq", "3 4 5 1\n7 8 9 -1\n")
    out = os.path.join(work, "two.h5")
    env = dict(os.environ, DCS_EWALD_TESTING_ACCURACY="1e-2")
    run = dcs(args, "--atoms", atoms, "--box", "16,16,16", "--periodic", "--grid", "8",
              "--device", DEVICE, "-o", out, rc=4, env=env)
    check("--method ewald missed its error target" in run.stderr, run.stderr)
    check("--ewald-error 1.0e-05" in run.stderr, run.stderr)
    check(not os.path.exists(out), "a map was written")
    print("missed target: exit 4, nothing written")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dcs", required=True)
    p.add_argument("--dump", required=True)
    p.add_argument("case", choices=sorted(CASES))
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="dcs-periodic-") as work:
        CASES[args.case](args, work)
    print(f"periodic_cli_tests: OK {args.case}")


if __name__ == "__main__":
    main()
