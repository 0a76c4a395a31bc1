#!/usr/bin/env python3
"""Ranks started with different command lines (an MPMD launch, `mpirun -np 1 dcs A : -np 1 dcs
B`): every rank exits non-zero within seconds, names the setting that differs, and nothing is
written. Before, a different --dielectric gave a map computed half with each value (exit 0) and
a different --grid or -o left both ranks spinning forever.

Usage: mpmd_tests.py DCS_MPI_BINARY SOURCE_DIR CASE
"""
import os
import shutil
import subprocess
import sys
import tempfile

DCS, SOURCE, CASE = sys.argv[1], sys.argv[2], sys.argv[3]
MOLECULE = os.path.join(SOURCE, "data", "2lzt.pqr")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
BASE = ["--atoms", MOLECULE, "--device", "cpu", "--no-progress"]

# case -> (rank 1's extra options, the option named in the message)
CASES = {
    "ranks_with_another_dielectric_are_refused": (["--dielectric", "2"], "--dielectric"),
    "ranks_with_another_grid_are_refused": (["--grid", "35"], "--grid"),
    "ranks_with_another_output_are_refused": (["-o", "other.h5"], "--output"),
}


def main():
    if shutil.which("mpirun") is None:
        print("skipped: no mpirun")
        return 77
    extra, option = CASES[CASE]
    with tempfile.TemporaryDirectory() as tmp:
        command = ["mpirun", "--bind-to", "none", "-np", "1", DCS] + BASE + [":", "-np", "1", DCS] + BASE + extra
        proc = subprocess.run(command, cwd=tmp, capture_output=True, text=True, timeout=120, env=ENV)
        assert proc.returncode == 2, f"exit {proc.returncode}, expected 2\n{proc.stdout}\n{proc.stderr}"
        lines = [l for l in proc.stderr.splitlines() if "not given the same run" in l]
        assert len(lines) >= 2 and option in lines[0], f"every rank names {option}:\n{proc.stderr}"
        left = [n for n in os.listdir(tmp) if n.endswith((".h5", ".partial")) or ".tmp" in n]
        assert not left, f"left behind: {left}"
    return 0


if __name__ == "__main__":
    sys.exit(main())
