#!/usr/bin/env python3
"""The potential at points over MPI ranks (the MPI build, real mpirun): 2 and 3 ranks give the
bits of the run without mpirun (and of the serial build, DCS_SERIAL_BIN) for --at-atoms and a
surface mesh; a bad point file is refused on every rank with one message and nothing written.

Usage: points_ranks.py DCS_MPI_BINARY SOURCE_DIR
DCS_TEST_DEVICE=cuda runs the ranks on GPUs. Exit 77 without mpirun."""
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np

DCS, SOURCE = sys.argv[1], sys.argv[2]
SERIAL = os.environ.get("DCS_SERIAL_BIN", "")
DEVICE = os.environ.get("DCS_TEST_DEVICE", "cpu")
MPIRUN = shutil.which("mpirun")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")


def run(command, expect=0):
    proc = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=600)
    if proc.returncode != expect:
        print(f"FAIL: {' '.join(command)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
        sys.exit(1)
    return proc


def values(path):
    with h5py.File(path, "r") as f:
        return np.array(f["/points/potential"])


def main():
    if not MPIRUN:
        print("SKIPPED: no mpirun")
        sys.exit(77)
    pqr = os.path.join(SOURCE, "data", "2lzt.pqr")
    mesh = os.path.join(SOURCE, "tests", "data", "mesh", "sphere_binary.ply")
    with tempfile.TemporaryDirectory() as tmp:
        for label, args in (("at-atoms", ["--at-atoms"]),
                            ("mesh", ["--points", mesh, "--offset", "1.4", "--ionic-strength", "0.1"])):
            common = ["--atoms", pqr, *args, "--device", DEVICE, "--no-progress", "--force"]
            alone = os.path.join(tmp, "alone.h5")
            run([DCS, *common, "-o", alone])
            reference = values(alone)
            for ranks in (2, 3):
                out = os.path.join(tmp, f"r{ranks}.h5")
                run([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", str(ranks), DCS, *common,
                     "--threads", "1", "-o", out])
                got = values(out)
                if got.tobytes() != reference.tobytes():
                    print(f"FAIL: {label}: {ranks} ranks differ from one process")
                    sys.exit(1)
            if SERIAL:
                serial = os.path.join(tmp, "serial.h5")
                run([SERIAL, *common, "-o", serial])
                if values(serial).tobytes() != reference.tobytes():
                    print(f"FAIL: {label}: the serial build differs")
                    sys.exit(1)
            print(f"{label}: {len(reference)} values, 1, 2 and 3 ranks bit-identical")
        bad = os.path.join(tmp, "bad.csv")
        with open(bad, "w") as f:
            f.write("1,2,3\n1,2,nan\n")
        out = os.path.join(tmp, "bad.h5")
        proc = run([MPIRUN, "--oversubscribe", "-np", "2", DCS, "--atoms", pqr, "--points", bad,
                    "--no-progress", "-o", out], expect=3)
        if "bad.csv:2:" not in proc.stderr or os.path.exists(out):
            print(f"FAIL: a bad point list under 2 ranks:\n{proc.stderr}")
            sys.exit(1)
    print("points_ranks: OK")


main()
