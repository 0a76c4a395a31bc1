#!/usr/bin/env python3
"""kill -9 at every change of the partial file, then --resume: the crash-consistency of the
store, deterministic. A preloaded library (tests/support/kill_at_write.c) kills the run just
before its N-th write, truncation or sync of out.h5.partial, for every N of the run; each
killed run is then resumed to completion and its map must be the uninterrupted run's, bit for
bit (or the resume must say it starts afresh and still finish). A timed kill -9 lands in
HDF5's checkpoint flush once in many runs; here every moment of it is tried.

Usage: crash_sweep_tests.py DCS_BINARY KILL_LIBRARY SOURCE_DIR CASE
Set DCS_SWEEP_EVERY=K to try every K-th change only (a quicker look by hand).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from map_files import assert_same_map  # noqa: E402

DCS, KILL_LIBRARY, SOURCE = (os.path.abspath(a) for a in sys.argv[1:4])
MOLECULE = os.path.join(SOURCE, "data", "2lzt.pqr")
# 20 x 72 x 72 points in slabs of 3 planes: 7 slabs, each a checkpoint (--checkpoint-interval
# 0), compressed in rows of 2 x 2 chunks one plane deep: about 180 changes of the file (about
# 100 uncompressed), a kill and a resume each (~40 s on two busy cores).
BASE = ["--atoms", MOLECULE, "--grid", "72", "72", "20", "--device", "cpu", "--threads", "1",
        "--memory-limit", "700K", "--checkpoint-interval", "0", "--no-progress"]


def run(args, cwd, env_extra=None):
    env = dict(os.environ)
    env.update(env_extra or {})
    return subprocess.run([DCS] + args, cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=300)


def checked(proc, what):
    if proc.returncode != 0:
        raise AssertionError(f"{what}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def sweep(tmp, extra):
    args = BASE + extra
    checked(run(args + ["-o", "ref.h5"], tmp), "the uninterrupted run")
    count_file = os.path.join(tmp, "count")
    preload = {"LD_PRELOAD": KILL_LIBRARY, "DCS_KILL_PATH": "out.h5.partial",
               "DCS_KILL_COUNT_FILE": count_file}
    checked(run(args + ["-o", "out.h5"], tmp, preload), "the counted run")
    with open(count_file) as handle:
        changes = int(handle.read())
    if changes < 20:
        raise AssertionError(f"only {changes} changes of the partial file counted: is the "
                             "library preloaded?")
    os.remove(os.path.join(tmp, "out.h5"))
    every = int(os.environ.get("DCS_SWEEP_EVERY", "1"))
    failures = []
    reused = afresh = 0  # resumes that kept done planes; that found nothing to continue
    for n in range(1, changes + 1, every):
        for name in os.listdir(tmp):
            if name.startswith("out."):
                os.remove(os.path.join(tmp, name))
        killed = run(args + ["-o", "out.h5"], tmp, {**preload, "DCS_KILL_AT_WRITE": str(n)})
        if killed.returncode != -9:
            failures.append(f"kill at change {n}: the run ended with {killed.returncode}, "
                            f"not killed\n{killed.stderr}")
            continue
        # Resumed twice when the first resume fails: a file the next resume stumbles over
        # again is the failure this test is about.
        resumed = run(args + ["-o", "out.h5", "--resume"], tmp)
        if resumed.returncode != 0:
            again = run(args + ["-o", "out.h5", "--resume"], tmp)
            failures.append(f"kill at change {n} of {changes}: --resume failed "
                            f"(exit {resumed.returncode}; a second --resume: exit "
                            f"{again.returncode})\n{resumed.stderr.strip()[-1500:]}")
            continue
        found = re.search(r"resuming .*: (\d+) of", resumed.stderr)
        reused += 1 if found and int(found.group(1)) > 0 else 0
        afresh += 1 if "starting afresh" in resumed.stderr else 0
        try:
            assert_same_map(os.path.join(tmp, "ref.h5"), os.path.join(tmp, "out.h5"))
        except AssertionError as error:
            failures.append(f"kill at change {n} of {changes}: {error}")
    failed = [re.match(r"kill at change (\d+)", f).group(1) for f in failures]
    print(f"{len(range(1, changes + 1, every))} kills of {changes} changes tried, "
          f"{len(failures)} failed: {' '.join(failed)}; {reused} resumes kept done planes, "
          f"{afresh} started afresh")
    if reused == 0:
        raise AssertionError("no resume kept a done plane: the sweep tried no checkpoint")
    if failures:
        raise AssertionError("\n\n".join(failures[:5]) + (
            f"\n... and {len(failures) - 5} more" if len(failures) > 5 else ""))


CASES = {
    "compressed_kill_at_every_write": lambda tmp: sweep(tmp, ["--compress", "3"]),
    "uncompressed_kill_at_every_write": lambda tmp: sweep(tmp, []),
}


def main():
    if os.environ.get("DCS_TEST_SANITIZED") == "1":
        print("skipped: the sanitizers' runtime must be the first preloaded library")
        return 77
    if not os.path.exists(MOLECULE):
        print(f"skipped: {MOLECULE} is missing")
        return 77
    name = sys.argv[4]
    tmp = tempfile.mkdtemp(prefix=f"dcs-{name}-")
    try:
        CASES[name](tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{name}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
