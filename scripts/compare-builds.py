#!/usr/bin/python3
"""Maps of every apbs-data molecule made by two builds of dcs, compared: the bits of /potential,
every /statistics and colour-range attribute (tests/support/map_files.py), the DX values and the
MRC bytes past the header's labels. Each molecule is mapped serially, with --cpu-workers 3 and,
when an MPI binary is given, by 3 MPI ranks. For refactorings that must not change a map.

  compare-builds.py make DCS [DCS_MPI] OUTDIR     maps of one build
  compare-builds.py compare OUTDIR_A OUTDIR_B     exit 1 on the first difference
"""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "support"))
from map_files import assert_same_map  # noqa: E402

GRID = "33"
MODES = {"serial": [], "workers3": ["--cpu-workers", "3"]}


def molecules():
    return sorted(glob.glob("/usr/share/apbs/**/*.pqr", recursive=True))


def make(dcs, dcs_mpi, out):
    names = set()
    for path in molecules():
        name = os.path.relpath(path, "/usr/share/apbs").replace("/", "_")[:-4]
        assert name not in names
        names.add(name)
        runs = [(mode, [dcs] + extra) for mode, extra in MODES.items()]
        if dcs_mpi:
            runs.append(("mpi3", ["mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                                  "-np", "3", dcs_mpi]))
        for mode, command in runs:
            os.makedirs(os.path.join(out, mode), exist_ok=True)
            stem = os.path.join(out, mode, name)
            proc = subprocess.run(command + ["--atoms", path, "--grid", GRID, "-o", stem + ".h5", "--dx",
                                             "--mrc", "--device", "cpu", "-q", "--force"],
                                  capture_output=True, text=True)
            with open(stem + ".status", "w") as f:
                f.write(f"{proc.returncode}\n{proc.stderr}")


def dx_values(path):
    with open(path) as f:
        return [line for line in f if not line.startswith("#")]


def compare(a, b):
    count = 0
    for status in sorted(glob.glob(os.path.join(a, "*", "*.status"))):
        stem_a = status[:-7]
        stem_b = os.path.join(b, os.path.relpath(stem_a, a))
        ra = open(status).read().split("\n")[0]
        rb = open(stem_b + ".status").read().split("\n")[0]
        assert ra == rb, f"{stem_a}: exit status {ra} vs {rb}"
        if ra != "0":
            continue
        assert_same_map(stem_a + ".h5", stem_b + ".h5")
        assert dx_values(stem_a + ".dx") == dx_values(stem_b + ".dx"), f"{stem_a}.dx differs"
        ma, mb = open(stem_a + ".mrc", "rb").read(), open(stem_b + ".mrc", "rb").read()
        assert ma[:224] == mb[:224] and ma[1024:] == mb[1024:], f"{stem_a}.mrc differs"
        count += 1
    print(f"{count} maps identical")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3] if len(sys.argv) == 5 else None, sys.argv[-1])
    else:
        compare(sys.argv[2], sys.argv[3])
