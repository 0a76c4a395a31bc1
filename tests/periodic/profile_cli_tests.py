#!/usr/bin/env python3
"""`dcs --profile` through the real binary: the file's /profile (or /trajectory/profile) and the
CSV beside the map against numpy's plane means of the map the same run wrote.

    profile_cli_tests.py --dcs DCS --source DIR CASE

Cases:
  triclinic   a periodic map along a triclinic cell's vectors: --profile c (planes of constant
              fractional c), the same as z there; x refused
  molecule    2lzt.pqr's open-boundary map: --profile x; a, b, c refused without a cell
  trajectory  adk PSF + DCD, three frames: /trajectory/profile of the mean map
Exit 77 (skipped) where h5py, numpy or (trajectory) MDAnalysisTests are missing.
"""
import csv
import os
import sys

try:
    import h5py
    import numpy as np
except ImportError as missing:
    print(f"SKIPPED: {missing} (the venv of scripts/setup-md.sh has h5py and numpy)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from case_main import run_case  # noqa: E402
from verdict import check, dcs  # noqa: E402

CASES = {}
case = lambda function: CASES.setdefault(function.__name__, function)  # noqa: E731


def read_csv(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("#")]
    rows = list(csv.reader(lines))
    return rows[0], np.array(rows[1:], dtype=np.float64)


def check_profile(h5, group, axis, index, unit):
    """/profile of an open file against numpy's plane means of /potential ([k][j][i]); returns
    the file's profile group."""
    values = h5["potential"][...].astype(np.float64)
    across = tuple(a for a in (0, 1, 2) if a != 2 - index)  # axis 0 of the array is k
    expected = values.mean(axis=across)
    p = h5[group]
    got = np.array(p["potential"])
    check(p.attrs["axis"] in (axis, axis.encode()), f"{group} axis {p.attrs['axis']}")
    check(p.attrs["units"] in (unit, unit.encode()), f"{group} units {p.attrs['units']}")
    check(got.shape == expected.shape, f"{group}: {got.shape} planes, map has {expected.shape}")
    scale = np.abs(expected).max()
    check(np.allclose(got, expected, rtol=0, atol=1e-9 * scale),
          f"{group} differs from numpy's plane means by {np.abs(got - expected).max():.3g}")
    return p


@case
def triclinic(args, work):
    atoms = os.path.join(work, "ions.xyzq")
    with open(atoms, "w") as out:
        out.write("2 3 4 1\n10 -4 12 -1\n-3 8 20 1\n15 12 3 -0.5\n")
    out = os.path.join(work, "cell.h5")
    common = ["--atoms", atoms, "--box", "21,23,26,76,97,109", "--periodic", "--grid", "7", "8",
              "9", "--device", "cpu"]
    dcs(args, *common, "--profile", "c", "-o", out)
    with h5py.File(out, "r") as h5:
        p = check_profile(h5, "profile", "c", 2, "kT/e")
        fraction = np.array(p["fraction"])
        position = np.array(p["position"])
        vectors = np.array(h5["method"].attrs["cell_vectors"]).reshape(3, 3)
        mean = np.array(p["potential"])
    check(np.allclose(fraction, np.arange(9) / 9), f"fractions {fraction}")
    # Planes of constant c are planes of constant z in the reduced cell: z = fraction * c_z.
    check(np.allclose(position, fraction * vectors[2][2], atol=1e-12), f"positions {position}")
    header, rows = read_csv(os.path.join(work, "cell.profile.csv"))
    check(header == ["c (fraction)", "distance (A)", "potential (kT/e)"], f"header {header}")
    check(np.allclose(rows[:, 2], mean, rtol=1e-8, atol=0), "the CSV's potentials")
    check(np.allclose(rows[:, 1], position, rtol=1e-8, atol=1e-12), "the CSV's distances")
    z = os.path.join(work, "z.h5")
    dcs(args, *common, "--profile", "z", "-o", z)
    with h5py.File(z, "r") as h5:
        check(np.array_equal(np.array(h5["profile/potential"]), mean), "z and c differ")
    refused = dcs(args, *common, "--profile", "x", "-o", os.path.join(work, "x.h5"), rc=2)
    check("planes of constant x are not planes of its grid" in refused.stderr, refused.stderr)
    check(not os.path.exists(os.path.join(work, "x.h5")) and
          not os.path.exists(os.path.join(work, "x.profile.csv")), "a refused run wrote files")
    print(f"triclinic: --profile c over {len(mean)} planes equals numpy's means; z the same; "
          "x refused")


@case
def molecule(args, work):
    pqr = os.path.join(args.source, "data", "2lzt.pqr")
    out = os.path.join(work, "mol.h5")
    dcs(args, "--atoms", pqr, "--grid", "17", "19", "23", "--units", "kcal/mol/e", "--profile",
        "x", "-o", out, "--device", "cpu")
    with h5py.File(out, "r") as h5:
        p = check_profile(h5, "profile", "x", 0, "kcal/mol/e")
        origin = h5["potential"].attrs["origin"][0]
        step = h5["potential"].attrs["spacing"][0]
        position = np.array(p["position"])
        check("fraction" not in p, "an x profile has fractions")
    check(np.allclose(position, origin + step * np.arange(17), rtol=0, atol=1e-12), "positions")
    header, rows = read_csv(os.path.join(work, "mol.profile.csv"))
    check(header == ["x (A)", "potential (kcal/mol/e)"], f"header {header}")
    check(len(rows) == 17, f"{len(rows)} CSV rows")
    refused = dcs(args, "--atoms", pqr, "--grid", "9", "--profile", "c", "-o",
                  os.path.join(work, "c.h5"), rc=2)
    check("has no periodic cell" in refused.stderr, refused.stderr)
    print("molecule: --profile x equals numpy's plane means; c refused without a cell")


@case
def trajectory(args, work):
    try:
        import MDAnalysisTests.datafiles as data
    except ImportError as missing:
        print(f"SKIPPED: {missing} (scripts/setup-md.sh installs MDAnalysisTests)")
        sys.exit(77)
    out = os.path.join(work, "adk.h5")
    dcs(args, "--topology", data.PSF, "--trajectory", data.DCD, "--frames", "0:3", "--grid", "10",
        "11", "12", "--profile", "z", "--device", "cpu", "-o", out)
    with h5py.File(out, "r") as h5:
        check("profile" not in h5, "a trajectory's profile is under /trajectory")
        check_profile(h5, "trajectory/profile", "z", 2, "kT/e")
    header, rows = read_csv(os.path.join(work, "adk.profile.csv"))
    check(header == ["z (A)", "potential (kT/e)"] and len(rows) == 12, f"CSV {header}")
    print("trajectory: /trajectory/profile of the mean map equals numpy's plane means")


def main():
    run_case("profile_cli_tests", CASES, ("--source",))


if __name__ == "__main__":
    main()
