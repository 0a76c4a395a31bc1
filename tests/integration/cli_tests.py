#!/usr/bin/env python3
"""Runs the real `dcs` binary: success paths, every failure path (exit code, message with
file and line, no file left behind), batch mode, interruption, and all apbs-data molecules.

Usage: cli_tests.py DCS_BINARY SOURCE_DIR CASE   (CASE 'list' prints the case names)
"""
import glob
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from case_main import run_listed_case  # noqa: E402

DCS, SOURCE = sys.argv[1], sys.argv[2]
DATA = os.path.join(SOURCE, "tests", "data")
MOLECULE = sorted(glob.glob(os.path.join(SOURCE, "data", "*.pqr")))[0]
APBS = "/usr/share/apbs"
CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def run(args, cwd, expect, timeout=600):
    proc = subprocess.run([DCS] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != expect:
        raise AssertionError(f"dcs {' '.join(args)}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def assert_in(needle, text):
    if needle not in text:
        raise AssertionError(f"expected {needle!r} in:\n{text}")


def assert_no_outputs(directory):
    left = [f for f in os.listdir(directory) if not f.endswith((".pqr", ".xyzq", ".gz"))]
    if left:
        raise AssertionError(f"files left behind in {directory}: {left}")


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as handle:
        handle.write(text)
    return path


GOOD = ("ATOM      1  N   ALA A   1      1.000   2.000   3.000  0.5000 1.8240\n"
        "ATOM      2  CA  ALA A   1      2.000   2.000   3.000 -0.5000 1.9080\n")


@case
def help_and_version(tmp):
    out = run(["--help"], tmp, 0).stdout
    for group in ("Input and output", "Grid", "Physics and units", "Compute", "Validation", "Exit status"):
        assert_in(group, out)
    assert_in("dcs", run(["--version"], tmp, 0).stdout)


@case
def kernels_listing(tmp):
    out = run(["kernels"], tmp, 0).stdout
    for name in ("reference", "simd"):
        assert_in(name, out)


@case
def default_run_h5_and_dx_agree(tmp):
    proc = run(["--atoms", MOLECULE, "--grid", "33", "--dx", "--validate", "--output-dir", tmp], tmp, 0)
    stem = os.path.splitext(os.path.basename(MOLECULE))[0]
    assert_in("passed", proc.stdout)
    assert_in("atom-evaluations/s", proc.stdout)
    h5, dx = os.path.join(tmp, stem + ".h5"), os.path.join(tmp, stem + ".dx")
    check = os.path.join(SOURCE, "tests", "integration", "check_maps.py")
    subprocess.run([sys.executable, check, h5, dx], check=True)


@case
def output_exists_needs_force(tmp):
    src = write(tmp, "m.pqr", GOOD)
    run(["--atoms", src, "--grid", "9", "-o", os.path.join(tmp, "m.h5")], tmp, 0)
    before = os.path.getmtime(os.path.join(tmp, "m.h5"))
    proc = run(["--atoms", src, "--grid", "9", "-o", os.path.join(tmp, "m.h5")], tmp, 1)
    assert_in("--force", proc.stderr)
    assert os.path.getmtime(os.path.join(tmp, "m.h5")) == before
    run(["--atoms", src, "--grid", "9", "-o", os.path.join(tmp, "m.h5"), "--force"], tmp, 0)


def bad_input(tmp, name, text, line, reason):
    path = write(tmp, name, text)
    proc = run(["--atoms", path, "--grid", "9", "--dx"], tmp, 3)
    assert_in(f"{name}:{line}" if line else name, proc.stderr)
    assert_in(reason, proc.stderr)
    assert_no_outputs(tmp)


@case
def bad_non_numeric(tmp):
    bad_input(tmp, "bad.pqr", GOOD + "ATOM      3  C   ALA A   1      x.000   2.000   3.000  0.1 1.0\n", 3, "x.000")


@case
def bad_nan(tmp):
    bad_input(tmp, "nan.pqr", GOOD + "ATOM      3  C   ALA A   1      nan   2.000   3.000  0.1 1.0\n", 3, "")


@case
def bad_too_few_fields(tmp):
    bad_input(tmp, "few.pqr", "ATOM      1  N   ALA A   1      1.000   2.000\n", 1, "")


@case
def bad_empty_file(tmp):
    bad_input(tmp, "empty.pqr", "", 0, "empty.pqr")


@case
def bad_no_atoms(tmp):
    bad_input(tmp, "noatoms.pqr", "REMARK nothing here\nEND\n", 0, "noatoms.pqr")


@case
def bad_missing_file(tmp):
    proc = run(["--atoms", os.path.join(tmp, "nope.pqr"), "--grid", "9"], tmp, 3)
    assert_in("nope.pqr", proc.stderr)
    assert_no_outputs(tmp)


@case
def bad_usage(tmp):
    src = write(tmp, "m.pqr", GOOD)
    for args, needle in ((["--grid", "0"], "--grid"), (["--spacing", "-1"], "--spacing"),
                         (["--units", "furlongs"], "unit"), (["--grid", "9", "--dielectric", "0"], "--dielectric"),
                         (["--grid", "9", "--min-distance", "0"], "--min-distance"),
                         (["--grid", "9", "9"], "--grid"), (["--grid", "9", "--device", "tpu"], "--device"),
                         (["--grid", "9", "--device", "cuda:"], "--device"),
                         (["--grid", "9", "--kernel", "reference", "--reduction", "warp-shuffle"], "warp-shuffle"),
                         (["--grid", "9", "--kernel", "nonsense", "--device", "cpu"], "nonsense"),
                         (["--grid", "9", "--origin", "0", "0", "0", "--center", "1", "1", "1"], "--origin"),
                         (["--grid", "100000", "100000", "100000"], "memory")):
        proc = run(["--atoms", src] + args, tmp, 2)
        assert_in(needle, proc.stderr)
    assert_no_outputs(tmp)


@case
def batch_with_keep_going(tmp):
    good = write(tmp, "good.pqr", GOOD)
    bad = write(tmp, "bad.pqr", "ATOM 1 N ALA 1 1 2 three 0.1 1.0\n")
    outdir = os.path.join(tmp, "maps")
    os.mkdir(outdir)
    proc = run(["--atoms", good, bad, "--grid", "9", "--output-dir", outdir, "--keep-going"], tmp, 3)
    assert os.path.exists(os.path.join(outdir, "good.h5"))
    assert not os.path.exists(os.path.join(outdir, "bad.h5"))
    assert_in("bad.pqr:1", proc.stdout + proc.stderr)


@case
def batch_refuses_clashing_names(tmp):
    os.mkdir(os.path.join(tmp, "a"))
    os.mkdir(os.path.join(tmp, "b"))
    first = write(os.path.join(tmp, "a"), "x.pqr", GOOD)
    second = write(os.path.join(tmp, "b"), "x.pqr", GOOD)
    proc = run(["--atoms", first, second, "--grid", "9", "--force"], tmp, 2)
    assert_in("same output", proc.stderr)
    assert not os.path.exists(os.path.join(tmp, "x.h5"))


@case
def interrupted_run_leaves_nothing(tmp):
    atoms = "".join(f"ATOM  {n:5d}  C   ALA A   1    {n % 17:8.3f}{n % 13:8.3f}{n % 11:8.3f}  0.1000 1.0\n"
                    for n in range(1, 2001))
    src = write(tmp, "m.pqr", atoms)  # 2000 atoms x 200^3 points in float64 on one thread: minutes
    # SIGINT takes effect once the slab being computed (25 planes) is done: ~12 s under the
    # sanitizers (DCS_TEST_SANITIZED=1, the "sanitize" test preset), which therefore use 120^3
    # (slabs of 15 planes, a fifth of the work each; the run still lasts far beyond the signal).
    grid = "120" if os.environ.get("DCS_TEST_SANITIZED") == "1" else "200"
    proc = subprocess.Popen([DCS, "--atoms", src, "--grid", grid, "--device", "cpu", "--kernel",
                             "reference", "--threads", "1", "--dx"], cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 130:
        raise AssertionError(f"exit {proc.returncode}, expected 130; stderr:\n{err}")
    assert_in("interrupted", err)
    # Nothing under a final name; the partial map is kept for --resume, and says so.
    left = sorted(f for f in os.listdir(tmp) if not f.endswith((".pqr", ".xyzq", ".gz")))
    if left != ["m.h5.partial"]:
        raise AssertionError(f"expected only m.h5.partial, found {left}")
    assert_in("m.h5.partial", err)
    assert_in("--resume", err)


@case
def units_scale(tmp):
    src = write(tmp, "one.pqr", "ATOM      1  N   ALA A   1      0.000   0.000   0.000  1.0000 1.0\n")
    maxima = {}
    for unit in ("kT/e", "kcal/mol/e", "e/A"):
        out = run(["--atoms", src, "--grid", "5", "--spacing", "1", "--units", unit, "-o",
                   os.path.join(tmp, unit.replace("/", "_") + ".h5")], tmp, 0).stdout
        line = [l for l in out.splitlines() if "potential" in l][0]
        maxima[unit] = float(line.split("max")[1].split()[0])
    # Point (2,2,2) sits on the atom: clamped at 0.1 A -> 10 e/A; the map max is that value.
    assert abs(maxima["e/A"] - 10.0) < 1e-4, maxima
    assert abs(maxima["kcal/mol/e"] / maxima["e/A"] - 332.0637) < 2e-3, maxima
    assert abs(maxima["kT/e"] / maxima["e/A"] - 560.47) < 0.05, maxima


@case
def all_apbs_molecules_validate(tmp):
    files = sorted(glob.glob(os.path.join(APBS, "**", "*.pqr"), recursive=True))
    if len(files) < 73:
        raise AssertionError(f"expected 73 apbs-data PQR files, found {len(files)}")
    outdir = os.path.join(tmp, "maps")
    os.mkdir(outdir)
    # Same-named files live in different folders: run them in groups of unique names.
    groups = {}
    for f in files:
        groups.setdefault(os.path.basename(f), []).append(f)
    rounds = max(len(v) for v in groups.values())
    for r in range(rounds):
        batch = [v[r] for v in groups.values() if len(v) > r]
        run(["--atoms"] + batch + ["--grid", "17", "--validate", "--output-dir", outdir, "--force",
             "--no-progress", "-q"], tmp, 0)
    produced = len(glob.glob(os.path.join(outdir, "*.h5")))
    assert produced == len(groups), (produced, len(groups))


@case
def summary_counts_residues_and_hetatm(tmp):
    """The summary states the residues and HETATM records read: lysozyme has 129 residues and no
    HETATM; a zinc kept as HETATM counts one (a PQR where pdb2pqr dropped it would say 0)."""
    proc = run(["--atoms", os.path.join(SOURCE, "data", "2lzt.pqr"), "--grid", "9",
                "--output-dir", tmp, "--no-progress"], tmp, 0)
    assert_in("  atoms     1960 (129 residues, 0 HETATM)\n", proc.stdout)
    zinc = write(tmp, "zn.pqr", GOOD + "ATOM      3  N   GLY A   2      3.000   2.000   3.000 "
                 "-0.4000 1.8240\nHETATM    4 ZN    ZN A 101      5.000   5.000   5.000  2.0000 "
                 "1.1000\n")
    proc = run(["--atoms", zinc, "--grid", "9", "--no-progress"], tmp, 0)
    assert_in("  atoms     4 (3 residues, 1 HETATM)\n", proc.stdout)
    xyzq = run(["--atoms", os.path.join(DATA, "pqr", "sample.xyzq"), "--grid", "9",
                "--no-progress", "-o", os.path.join(tmp, "x.h5")], tmp, 0)
    if "residues" in xyzq.stdout:  # XYZQ names no residues: nothing to count
        raise AssertionError(xyzq.stdout)


def pdb2pqr_program():
    """pdb2pqr from the viewer venv (scripts/setup-viewers.sh), $DCS_PDB2PQR, or the PATH."""
    import shutil
    for candidate in (os.environ.get("DCS_PDB2PQR"), os.path.join(SOURCE, ".venv-viewers", "bin", "pdb2pqr"),
                      shutil.which("pdb2pqr")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@case
def pdb_through_pdb2pqr(tmp):
    """The README's path from a PDB file: pdb2pqr (PyPI) makes the PQR, dcs maps and validates it."""
    pdb2pqr = pdb2pqr_program()
    if pdb2pqr is None:
        print("pdb_through_pdb2pqr: SKIPPED: no pdb2pqr (scripts/setup-viewers.sh installs it)")
        sys.exit(77)
    pdb = os.path.join(APBS, "examples", "actin-dimer", "UHBD", "prot4.pdb")  # actin, 5877 atoms
    proc = run(["--atoms", pdb, "--grid", "9"], tmp, 3)
    assert_in("pdb2pqr", proc.stderr)
    pqr = os.path.join(tmp, "prot4.pqr")
    made = subprocess.run([pdb2pqr, "--ff", "AMBER", "--keep-chain", "--drop-water", pdb, pqr],
                          capture_output=True, text=True, timeout=600)
    if made.returncode != 0 or not os.path.exists(pqr):
        raise AssertionError(f"pdb2pqr failed ({made.returncode}):\n{made.stderr[-3000:]}")
    proc = run(["--atoms", pqr, "--grid", "33", "--validate", "--no-progress"], tmp, 0)
    assert_in("validate  passed", proc.stdout)
    import h5py
    with h5py.File(os.path.join(tmp, "prot4.h5"), "r") as f:
        if f["potential"].shape != (33, 33, 33):
            raise AssertionError(f["potential"].shape)


# The command line: cases[argv[3]] in a fresh temporary directory (also the hostile scripts').
main = run_listed_case


if __name__ == "__main__":
    main(CASES)
