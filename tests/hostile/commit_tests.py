#!/usr/bin/env python3
"""A map's outputs are renamed one after another; a run killed between two renames leaves the
HDF5 file without its OpenDX or MRC file. --resume then writes the map's outputs again, together
(before: "exists; use --force"). Shares the harness of tests/integration/cli_tests.py.

Usage: commit_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import assert_in, main, run  # noqa: E402
from map_files import assert_same_map  # noqa: E402

CASES = {}
ARGS = ["--grid", "17", "--device", "cpu", "--no-progress", "--dx", "--mrc"]


def case(function):
    CASES[function.__name__] = function
    return function


@case
def resume_writes_what_a_stop_between_renames_left_missing(tmp):
    src = os.path.join(base.SOURCE, "data", "2lzt.pqr")
    run(["--atoms", src, "-o", "m.h5"] + ARGS, tmp, 0)
    os.rename(os.path.join(tmp, "m.h5"), os.path.join(tmp, "whole.h5"))
    run(["--atoms", src, "-o", "m.h5"] + ARGS + ["--force"], tmp, 0)
    dx = open(os.path.join(tmp, "m.dx")).read()
    for missing in ("m.dx", "m.mrc"):
        os.remove(os.path.join(tmp, missing))  # the state a kill between the renames leaves
        proc = run(["--atoms", src, "-o", "m.h5"] + ARGS + ["--resume"], tmp, 0)
        assert_in("is missing", proc.stderr)
        assert os.path.exists(os.path.join(tmp, missing)), missing
        assert_same_map(os.path.join(tmp, "m.h5"), os.path.join(tmp, "whole.h5"))
        strip = lambda text: [l for l in text.splitlines() if not l.startswith("#")]
        assert strip(open(os.path.join(tmp, "m.dx")).read()) == strip(dx)
    # Complete: skipped, nothing rewritten.
    proc = run(["--atoms", src, "-o", "m.h5"] + ARGS + ["--resume"], tmp, 0)
    assert_in("complete", proc.stdout + proc.stderr)


if __name__ == "__main__":
    main(CASES)
