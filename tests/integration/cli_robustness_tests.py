#!/usr/bin/env python3
"""Issue 11 ("impossible to break") through the real `dcs` binary: option and file values
beyond the float32 limits, --threads, exit status of signals, damaged records, CR-only files.
Shares the harness of cli_tests.py.

Usage: cli_robustness_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import GOOD, assert_in, run, write  # noqa: E402

CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def final_outputs(directory):
    """Files a run left under final names (inputs and kept partial maps aside)."""
    return sorted(f for f in os.listdir(directory)
                  if not f.endswith((".pqr", ".xyzq", ".gz", ".partial")))


@case
def limits_options_refused(tmp):
    src = write(tmp, "m.pqr", GOOD)
    for args, needle in ((["--spacing", "1e-20"], "--spacing"), (["--spacing", "1e40"], "--spacing"),
                         (["--origin", "1e20", "0", "0"], "--origin"),
                         (["--center", "0", "-1e7", "0"], "--center"),
                         (["--dielectric", "1e-300"], "--dielectric"),
                         (["--temperature", "1e-300"], "--temperature"),
                         (["--min-distance", "1e300"], "--min-distance"),
                         (["--padding", "1e300"], "--padding"),
                         # missing input: the option is still refused first (exit 2, not 3)
                         (["--dielectric", "0"], "--dielectric")):
        proc = run(["--atoms", src, "--grid", "9"] + args, tmp, 2)
        assert_in(needle, proc.stderr)
    proc = run(["--atoms", os.path.join(tmp, "missing.pqr"), "--grid", "9", "--padding", "-1"], tmp, 2)
    assert_in("--padding", proc.stderr)
    # Placed grids: a spacing too fine for coordinates far from the origin.
    proc = run(["--atoms", src, "--grid", "9", "--spacing", "1e-4", "--origin", "1e6", "0", "0"], tmp, 2)
    assert_in("too fine", proc.stderr)
    if final_outputs(tmp):
        raise AssertionError(f"files left behind: {final_outputs(tmp)}")


@case
def limits_file_values_refused(tmp):
    for name, line, needle in (("charge.pqr", "ATOM 3 C ALA 1 0 0 0 1e38 1.0\n", "charge"),
                               ("far.pqr", "ATOM 3 C ALA 1 1e30 0 0 0.1 1.0\n", "x coordinate"),
                               ("huge.pqr", "ATOM 3 C ALA 1 0 -1e308 0 0.1 1.0\n", "y coordinate")):
        src = write(tmp, name, GOOD + line)
        proc = run(["--atoms", src, "--grid", "9", "--dx"], tmp, 3)
        assert_in(f"{name}:3", proc.stderr)
        assert_in(needle, proc.stderr)
    if final_outputs(tmp):
        raise AssertionError(f"files left behind: {final_outputs(tmp)}")


@case
def threads_capped(tmp):
    src = write(tmp, "m.pqr", GOOD)
    proc = run(["--atoms", src, "--grid", "9", "--threads", "100000", "--device", "cpu"], tmp, 0)
    assert_in("hardware threads", proc.stderr)


@case
def damaged_record_names(tmp):
    src = write(tmp, "flip.pqr", GOOD.replace("ATOM      2", "AT0M      2"))
    proc = run(["--atoms", src, "--grid", "9"], tmp, 3)
    assert_in("flip.pqr:2", proc.stderr)
    assert_in("AT0M", proc.stderr)
    src = write(tmp, "odd.pqr", "XYZ whatever\n" + GOOD + "XYZ again\n")
    proc = run(["--atoms", src, "--grid", "9", "-o", os.path.join(tmp, "odd.h5")], tmp, 0)
    assert_in("ignored 2 record(s) of unknown type 'XYZ'", proc.stderr)


@case
def cr_only_line_endings(tmp):
    src = write(tmp, "mac.pqr", ("REMARK mac\n" + GOOD).replace("\n", "\r"))
    proc = run(["--atoms", src, "--grid", "9", "-o", os.path.join(tmp, "mac.h5")], tmp, 0)
    assert_in("2 atoms", proc.stdout + proc.stderr)


def long_run(tmp):
    atoms = "".join(f"ATOM  {n:5d}  C   ALA A   1    {n % 17:8.3f}{n % 13:8.3f}{n % 11:8.3f}  0.1000 1.0\n"
                    for n in range(1, 2001))
    src = write(tmp, "m.pqr", atoms)
    return subprocess.Popen([base.DCS, "--atoms", src, "--grid", "200", "--device", "cpu", "--kernel",
                             "reference", "--threads", "1", "--dx"], cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def expect_status(tmp, signals, status):
    proc = long_run(tmp)
    time.sleep(1.5)
    for number in signals:
        proc.send_signal(number)
        time.sleep(0.05)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != status:
        raise AssertionError(f"signals {signals}: exit {proc.returncode}, expected {status}; "
                             f"stderr:\n{err}")
    if final_outputs(tmp):
        raise AssertionError(f"files left under final names: {final_outputs(tmp)}")


@case
def sigterm_exits_143(tmp):
    expect_status(tmp, [signal.SIGTERM], 143)


@case
def second_signal_keeps_the_status(tmp):
    expect_status(tmp, [signal.SIGINT, signal.SIGINT], 130)
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    expect_status(tmp, [signal.SIGTERM, signal.SIGINT], 143)


if __name__ == "__main__":
    name = sys.argv[3]
    if name == "list":
        print("\n".join(CASES))
        sys.exit(0)
    with tempfile.TemporaryDirectory(prefix="dcs-cli-") as tmp:
        CASES[name](tmp)
    print(f"{name}: ok")
