#!/usr/bin/env python3
"""--method msm through the real `dcs` binary: the map against --method exact within its
--msm-error target, the same bytes for 1 or 3 CPU workers and any thread count, and the usage
errors (a physics model MSM lacks, a target out of range, a GPU device).

Usage: cli_msm_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import math
import os
import subprocess
import sys
import tempfile

import h5py

DCS, SOURCE = sys.argv[1], sys.argv[2]
MOLECULE = os.path.join(SOURCE, "data", "2lzt.pqr")
CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def run(args, cwd, expect):
    proc = subprocess.run([DCS] + args, cwd=cwd, capture_output=True, text=True, timeout=600)
    if proc.returncode != expect:
        raise AssertionError(f"dcs {' '.join(args)}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def potential(path):
    with h5py.File(path, "r") as f:
        return f["potential"][()]


def compute(tmp, name, *extra):
    out = os.path.join(tmp, name)
    run(["--atoms", MOLECULE, "--grid", "41", "--device", "cpu", "-o", out, *extra], tmp, 0)
    return out


@case
def msm_meets_its_target_against_exact(tmp):
    exact = potential(compute(tmp, "exact.h5"))
    for target in ("1e-2", "1e-3", "1e-4"):
        msm = potential(compute(tmp, f"msm{target}.h5", "--method", "msm", "--msm-error", target))
        diff = sum(float(a - b) ** 2 for a, b in zip(msm.ravel(), exact.ravel()))
        norm = sum(float(b) ** 2 for b in exact.ravel())
        error = math.sqrt(diff / norm)
        print(f"--msm-error {target}: relative RMS {error:.3e} against --method exact")
        if not error <= float(target):
            raise AssertionError(f"--msm-error {target}: measured {error:.3e}")
        if not error > 1e-8:
            raise AssertionError("the msm map equals the exact one: was MSM used at all?")


@case
def msm_same_bytes_for_any_workers_and_threads(tmp):
    one = potential(compute(tmp, "one.h5", "--method", "msm", "--threads", "1"))
    many = potential(compute(tmp, "many.h5", "--method", "msm", "--cpu-workers", "3",
                             "--threads", "3"))
    if one.tobytes() != many.tobytes():
        raise AssertionError("1 worker and 3 workers gave different maps")


@case
def msm_usage_errors(tmp):
    base = ["--atoms", MOLECULE, "--grid", "17", "--device", "cpu", "--method", "msm", "-o",
            os.path.join(tmp, "x.h5")]
    proc = run(base + ["--ionic-strength", "0.15"], tmp, 2)
    if "--method msm supports the Coulomb model only" not in proc.stderr:
        raise AssertionError(proc.stderr)
    run(base + ["--msm-error", "0"], tmp, 2)
    run(base + ["--msm-error", "1e-7"], tmp, 2)
    run(["--atoms", MOLECULE, "--method", "fast"], tmp, 2)


def main():
    name = sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        CASES[name](tmp)
    print(f"cli_msm_tests {name}: OK")


if __name__ == "__main__":
    main()
