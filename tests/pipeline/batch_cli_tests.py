#!/usr/bin/env python3
"""Batches through the real binary: --shard splits a batch so that the shards (a job array)
cover every input exactly once, and every per-input failure is reported in one summary (and
skipped with --keep-going; without it the batch stops, saying what was completed before).

Usage: batch_cli_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import glob
import os
import subprocess
import sys
import tempfile

DCS, SOURCE = sys.argv[1], sys.argv[2]
APBS = sorted(glob.glob("/usr/share/apbs/examples/**/*.pqr", recursive=True))
MOLECULE = os.path.join(SOURCE, "data", "2lzt.pqr")
CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def dcs(args, cwd, expect=0, env=None):
    proc = subprocess.run([DCS] + args, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **(env or {})))
    if proc.returncode != expect:
        raise AssertionError(f"dcs {' '.join(args)}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


COMMON = ["--grid", "25", "--device", "cpu", "--no-progress"]


def maps(directory):
    """The files of a shard's --output-dir less its task record (dcs-task-I-of-N.tsv)."""
    return [n for n in os.listdir(directory) if not n.startswith("dcs-task-")]


@case
def shards_cover_a_batch_exactly_once(tmp):
    inputs = APBS[:7] + [MOLECULE]
    if len(inputs) < 5:
        print("SKIP: apbs-data examples not installed")
        sys.exit(77)
    seen = {}
    for index in range(3):
        out = os.path.join(tmp, f"shard{index}")
        dcs(["--atoms"] + inputs + ["--output-dir", out, "--shard", f"{index}/3"] + COMMON, tmp)
        assert os.path.exists(os.path.join(out, f"dcs-task-{index}-of-3.tsv"))  # batch-summary's
        for name in maps(out):
            assert name not in seen, f"{name} written by shards {seen[name]} and {index}"
            seen[name] = index
    expected = {os.path.basename(p).rsplit(".", 1)[0] + ".h5" for p in inputs}
    assert set(seen) == expected, f"shards wrote {sorted(seen)}, expected {sorted(expected)}"
    # --shard slurm: an array --array=4-6 (task ids 4, 5, 6) is the same split as 0/3, 1/3, 2/3.
    for task in (4, 5, 6):
        out = os.path.join(tmp, f"slurm{task}")
        env = {"SLURM_ARRAY_TASK_ID": str(task), "SLURM_ARRAY_TASK_MIN": "4",
               "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": "3"}
        dcs(["--atoms"] + inputs + ["--output-dir", out, "--shard", "slurm"] + COMMON, tmp, env=env)
        assert sorted(maps(out)) == sorted(n for n, s in seen.items() if s == task - 4)
    # A resubmitted task with --resume redoes nothing.
    shard1 = os.path.join(tmp, "shard1")
    before = {n: os.stat(os.path.join(shard1, n)).st_mtime_ns for n in maps(shard1)}
    proc = dcs(["--atoms"] + inputs + ["--output-dir", shard1, "--shard", "1/3", "--resume"] + COMMON, tmp)
    assert ": 0 written" in proc.stdout or "complete already, skipped" in proc.stdout, proc.stdout
    after = {n: os.stat(os.path.join(shard1, n)).st_mtime_ns for n in maps(shard1)}
    assert before == after, "a resubmitted shard rewrote complete outputs"
    # Refusals.
    for bad in ("3/3", "1/0", "-1/2", "a/b", "1/2/3", "1"):
        proc = dcs(["--atoms"] + inputs + ["--shard", bad] + COMMON, tmp, expect=2)
        assert "--shard must be I/N" in proc.stderr, proc.stderr
    proc = dcs(["--atoms"] + inputs + ["--shard", "slurm"] + COMMON, tmp, expect=2,
               env={"SLURM_ARRAY_TASK_ID": ""})
    assert "SLURM_ARRAY_TASK_ID is not set" in proc.stderr, proc.stderr
    proc = dcs(["--atoms", MOLECULE, "-o", "x.h5", "--shard", "0/2"] + COMMON, tmp, expect=2)
    assert "--output-dir" in proc.stderr, proc.stderr


def make_batch(tmp):
    """good1, a malformed file, a single atom with --padding 0 (no box), an input whose output
    exists (no --force), good2."""
    os.makedirs(os.path.join(tmp, "in"))
    os.makedirs(os.path.join(tmp, "out"))
    lines = [line for line in open(MOLECULE) if line.startswith("ATOM")]
    paths = []
    for name, text in (("good1", "".join(lines[:50])),
                       ("bad", "ATOM      1  N   LYS A   1       3.294  10.164  x0.266 -0.3479 1.8240\n"),
                       ("lonely", lines[0]),
                       ("exists", "".join(lines[50:90])),
                       ("good2", "".join(lines[100:160]))):
        path = os.path.join(tmp, "in", name + ".pqr")
        with open(path, "w") as f:
            f.write(text)
        paths.append(path)
    with open(os.path.join(tmp, "out", "exists.h5"), "w") as f:
        f.write("not ours")
    return paths


@case
def every_failure_is_reported_and_keep_going_skips_it(tmp):
    paths = make_batch(tmp)
    args = ["--atoms"] + paths + ["--output-dir", "out", "--padding", "0", "--grid", "9",
                                  "--device", "cpu", "--no-progress"]
    proc = dcs(args + ["--keep-going"], tmp, expect=3)  # the first failure's status: bad input
    out = proc.stdout
    assert "batch: 5 inputs: 2 written, 0 complete already, 3 failed" in out, out
    for name in ("bad", "lonely", "exists"):
        assert f"failed: {os.path.join(tmp, 'in', name)}.pqr" in out or f"failed: in/{name}.pqr" in out \
            or f"{name}.pqr: " in out, f"{name} missing from the summary:\n{out}"
    assert os.path.exists(os.path.join(tmp, "out", "good2.h5")), "--keep-going went past failures"
    assert open(os.path.join(tmp, "out", "exists.h5")).read() == "not ours", "an existing output was replaced"


@case
def without_keep_going_the_first_failure_stops_the_batch(tmp):
    paths = make_batch(tmp)
    args = ["--atoms"] + paths + ["--output-dir", "out", "--padding", "0", "--grid", "9",
                                  "--device", "cpu", "--no-progress"]
    proc = dcs(args, tmp, expect=3)
    out = proc.stdout
    assert "batch: 5 inputs: 1 written, 0 complete already, 1 failed, 3 not attempted" in out, out
    assert "the batch stopped at its first failure; the 1 output(s) written before it are complete" in out, out
    assert os.path.exists(os.path.join(tmp, "out", "good1.h5"))
    assert not os.path.exists(os.path.join(tmp, "out", "good2.h5")), "the batch went on after a failure"
    assert out.count("not attempted") >= 3, out


def main():
    with tempfile.TemporaryDirectory(prefix="dcs-batch-") as tmp:
        CASES[sys.argv[3]](tmp)
    print(f"{sys.argv[3]}: passed")


if __name__ == "__main__":
    main()
