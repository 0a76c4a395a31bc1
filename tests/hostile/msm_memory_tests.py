#!/usr/bin/env python3
"""--method msm on boxes too large for it (issue 35 item 1): a zero-charge placeholder far from a
molecule, two atoms 10^6 A apart, atoms at opposite corners of the accepted coordinate range.
Each is refused in a fraction of a second with exit 2, naming the memory it would need, the
limit and what to do, in bounded memory (the process's address space or --memory-limit) and
with nothing written; a zero-charge placeholder beside a grid placed explicitly costs nothing
(the same map as without it). Shares the harness of tests/integration/cli_tests.py.

Usage: msm_memory_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import MOLECULE, assert_in, assert_no_outputs, main, write  # noqa: E402

CASES = {}
# ASan reserves terabytes of address space, so ulimit -v cannot bound a sanitized binary; the
# peak resident set (getrusage of the child) bounds it there and everywhere.
SANITIZED = os.environ.get("DCS_TEST_SANITIZED") == "1"
MSM = ["--method", "msm", "--device", "cpu", "--threads", "2", "--no-progress"]


def case(function):
    CASES[function.__name__] = function
    return function


def bounded_run(args, tmp, address_space=2 << 30):
    """dcs `args` under a 2 GiB address space: (process, seconds, peak RSS in MiB)."""
    def limits():
        if not SANITIZED:
            resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))

    start = time.monotonic()
    proc = subprocess.run([base.DCS] + args, cwd=tmp, capture_output=True, text=True, timeout=120,
                          preexec_fn=limits)
    took = time.monotonic() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return proc, took, peak


def assert_refused(proc, took, peak, tmp, *needles):
    if proc.returncode != 2:
        raise AssertionError(f"exit {proc.returncode}, expected 2\n{proc.stderr}")
    for needle in ("--method msm: the lattices would need", "--method exact") + needles:
        assert_in(needle, proc.stderr)
    for bad in ("unexpected error", "max_size", "out of memory"):
        assert bad not in proc.stderr, proc.stderr
    if took > 10 or peak > 512:
        raise AssertionError(f"took {took:.1f} s, peak RSS {peak:.0f} MiB\n{proc.stderr}")
    assert_no_outputs(tmp)


def with_placeholder(tmp):
    """The test molecule and one atom of charge 0 at (9e5, 9e5, 9e5) A."""
    lines = [line for line in open(MOLECULE) if line.startswith(("ATOM", "HETATM"))]
    far = "ATOM   9999  X   DUM  9999   900000.000 900000.000 900000.000  0.0000 1.0000\n"
    return write(tmp, "far.pqr", "".join(lines) + far)


@case
def msm_far_zero_charge_atom(tmp):
    src = with_placeholder(tmp)
    # The default grid covers every atom, the placeholder too: a 9e5 A map is refused at once
    # (before: gigabytes, then out of memory).
    proc, took, peak = bounded_run(["--atoms", src, "-o", "far.h5"] + MSM, tmp)
    assert_refused(proc, took, peak, tmp, "a box of 9e+05 x 9e+05 x 9e+05 A")
    # A grid placed around the molecule: the placeholder adds nothing to the lattice, so the map
    # is the molecule's alone, bit for bit, in the memory the molecule needs.
    grid = ["--grid", "33", "--spacing", "1.5", "--center", "0", "15", "20", "--no-hdf5"]
    proc, took, peak = bounded_run(["--atoms", src, "--dx", "with.dx", "--memory-limit", "64M"]
                                   + grid + MSM, tmp)
    assert proc.returncode == 0, proc.stderr
    mol = write(tmp, "mol.pqr", "".join(l for l in open(src) if "DUM" not in l))
    proc, _, _ = bounded_run(["--atoms", mol, "--dx", "without.dx"] + grid + MSM, tmp)
    assert proc.returncode == 0, proc.stderr

    def values(name):  # the DX numbers (the header names the input file)
        text = open(os.path.join(tmp, name)).read()
        return text[text.index("data follows"):text.index("attribute")]

    assert values("with.dx") == values("without.dx"), "the placeholder changed the map"


@case
def msm_two_atoms_far_apart(tmp):
    # Beside a small grid the lattice is a line of boxes 10^6 A long (11 GiB): --memory-limit
    # refuses it, and without the option the address space (ulimit -v) does.
    src = write(tmp, "apart.xyzq", "0 0 0 1\n1000000 0 0 -1\n")
    grid = ["--grid", "9", "--spacing", "1", "--center", "0", "0", "0", "-o", "a.h5"]
    proc, took, peak = bounded_run(["--atoms", src, "--memory-limit", "100M"] + grid + MSM, tmp)
    assert_refused(proc, took, peak, tmp, "--memory-limit allows 100.0 MiB",
                   "charged atoms from (0, 0, 0) to (1e+06, 0, 0) A")
    if not SANITIZED:
        proc, took, peak = bounded_run(["--atoms", src] + grid + MSM, tmp)
        tightest = ("the address-space limit (ulimit -v) leaves", "of memory is available now")
        assert any(t in proc.stderr for t in tightest), proc.stderr
        assert_refused(proc, took, peak, tmp)


@case
def msm_opposite_corners(tmp):
    src = write(tmp, "corners.xyzq", "-1000000 -1000000 -1000000 1\n1000000 1000000 1000000 -1\n")
    # before: "unexpected error: cannot create std::vector larger than max_size()"
    for grid in (["--grid", "400"], ["--grid", "9", "--spacing", "1", "--center", "0", "0", "0"]):
        proc, took, peak = bounded_run(["--atoms", src, "-o", "c.h5"] + grid + MSM, tmp)
        assert_refused(proc, took, peak, tmp, "no machine has that much memory")


if __name__ == "__main__":
    main(CASES)
