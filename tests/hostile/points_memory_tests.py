#!/usr/bin/env python3
"""Points runs under --memory-limit (issue 35 item 8: 10^7 points took 922 MB under
--memory-limit 100M). A list whose points would not fit is refused fast, with exit 2, naming
the points, the memory they need and the limit, read no further than what fits (bounded
memory) and with nothing written; a list that fits runs under the same limit. Shares the
harness of tests/integration/cli_tests.py.

Usage: points_memory_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from msm_memory_tests import SANITIZED, bounded_run  # noqa: E402  (the shared bounded run)
import cli_tests as base  # noqa: E402,F401  (reads DCS and SOURCE from sys.argv)
from cli_tests import MOLECULE, assert_in, main  # noqa: E402

CASES = {}
RUN = ["--device", "cpu", "--threads", "2", "--no-progress", "--memory-limit", "100M"]


def case(function):
    CASES[function.__name__] = function
    return function


def point_list(tmp, name, count):
    """`count` distinct points on a 100 x 100 x n lattice 30 A around the test molecule."""
    path = os.path.join(tmp, name)
    with open(path, "w") as out:
        out.write("x y z\n")
        out.writelines(f"{i % 100 * 0.5 - 25} {i // 100 % 100 * 0.5 - 10} {i // 10000 * 0.5}\n"
                       for i in range(count))
    return path


def outputs(tmp):
    return sorted(f for f in os.listdir(tmp) if not f.endswith(".txt"))


@case
def points_beyond_the_memory_limit_are_refused(tmp):
    # 2.5 * 10^6 points need ~230 MB: refused before they are all read, in a fraction of the
    # memory (before: the whole list held, computed and written, about 92 bytes a point).
    count = 2_500_000 if not SANITIZED else 1_500_000
    src = point_list(tmp, "many.txt", count)
    proc, took, peak = bounded_run(["--atoms", MOLECULE, "--points", src, "-o", "many.h5"] + RUN,
                                   tmp)
    if proc.returncode != 2:
        raise AssertionError(f"exit {proc.returncode}, expected 2\n{proc.stderr}")
    for needle in (f"many.txt: {count} points would need about", "--memory-limit allows 100.0 MiB",
                   "bytes a point", "points fit; split the points over several runs"):
        assert_in(needle, proc.stderr)
    # Under ASan (SANITIZED) shadow memory and quarantine inflate the peak RSS by design (as for
    # pipeline.memory_limit_bounds_the_resident_set): the bound is checked in the plain run.
    if took > 20 or (peak > 100 and not SANITIZED):
        raise AssertionError(f"took {took:.1f} s, peak RSS {peak:.0f} MiB\n{proc.stderr}")
    assert outputs(tmp) == [], outputs(tmp)


@case
def points_within_the_memory_limit_run(tmp):
    # 2 * 10^5 points (18 MB by the estimate) under the same limit: computed and written.
    src = point_list(tmp, "some.txt", 200_000)
    proc, took, peak = bounded_run(["--atoms", MOLECULE, "--points", src, "-o", "some.h5"] + RUN,
                                   tmp)
    assert proc.returncode == 0, proc.stderr
    with open(os.path.join(tmp, "some.csv")) as table:
        rows = sum(1 for line in table if line[:1] not in "#x")
    assert rows == 200_000, rows
    if peak > 100 and not SANITIZED:  # ASan inflates the peak RSS: checked in the plain run
        raise AssertionError(f"peak RSS {peak:.0f} MiB under --memory-limit 100M")


if __name__ == "__main__":
    main(CASES)
