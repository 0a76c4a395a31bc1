#!/usr/bin/env python3
"""Batches, pipes and the command line through the real `dcs` binary: what the option parser
says to a person, `--`, a map given as atoms, a closed stdout, summaries of a batch that is
killed, output-name templates, lists of inputs, the speed after --resume and the records of a
job array's tasks. Shares the harness of tests/integration/cli_tests.py.

Usage: cli_tests.py DCS_BINARY SOURCE_DIR CASE   (CASE 'list' prints the case names)
"""
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import GOOD, assert_in, assert_no_outputs, run, write  # noqa: E402

GRID = ["--grid", "9", "--device", "cpu"]
CASES = {}
case = lambda function: CASES.setdefault(function.__name__, function)  # noqa: E731


def outputs(directory):
    return sorted(f for f in os.listdir(directory) if not f.endswith((".pqr", ".xyzq", ".txt")))


def heavy_atoms(count):
    """PQR text of `count` atoms: on a 200^3 grid with the reference kernel, minutes."""
    return "".join(f"ATOM  {n:5d}  C   ALA A   1    {n % 17:8.3f}{n % 13:8.3f}{n % 11:8.3f}"
                   "  0.1000 1.0\n" for n in range(1, count + 1))


@case
def parse_errors_explained(tmp):
    src = write(tmp, "m.pqr", GOOD)
    for args, needle in (
            (["--atoms", src, "--dielectic", "80"], "unknown option --dielectic; did you mean --dielectric?"),
            (["--atoms", src, "--grdi=9"], "did you mean --grid?"),
            ([src, "--grid", "9"], "m.pqr: a file name needs --atoms before it"),
            (["--atoms", src, "--spacing", "--no-progress"],
             "--spacing needs a value (got the option --no-progress)"),
            (["--atoms", "--grid", "9"], "--atoms needs a value (got the option --grid)"),
            (["--atoms", src, "--grid"], "--grid needs a value (nothing followed it)"),
            (["--atoms", src, "--dielectric", "abc"], "--dielectric needs a number, got 'abc'"),
            (["--atoms", src, "--threads", "2.5"], "--threads needs a whole number, got '2.5'"),
            (["kernel"], "unknown command kernel; did you mean dcs kernels?")):
        proc = run(args, tmp, 2)
        assert_in(needle, proc.stderr)
        assert_in("Run with --help", proc.stderr)
    assert_no_outputs(tmp)


@case
def option_bounds_show_the_value_given(tmp):
    # 1e-9 printed with %f was "got 0.000000"; the value is shown as given.
    src = write(tmp, "m.pqr", GOOD)
    proc = run(["--atoms", src, "--method", "msm", "--msm-error", "1e-9"] + GRID, tmp, 2)
    assert_in("--msm-error must be in [1e-5, 1e-1], got 1e-09", proc.stderr)
    proc = run(["--atoms", src, "--method", "msm", "--msm-error", "0.1000001"] + GRID, tmp, 2)
    assert_in("got 0.1000001", proc.stderr)
    assert_no_outputs(tmp)


@case
def map_given_as_atoms_is_told_so(tmp):
    src = write(tmp, "m.pqr", GOOD)
    run(["--atoms", src, "--mrc"] + GRID, tmp, 0)
    for name, extra in (("m.h5", []), ("m.h5", ["-o", "other.h5"]), ("m.mrc", [])):
        proc = run(["--atoms", os.path.join(tmp, name)] + extra + GRID, tmp, 2)
        assert_in(f"{name} is a map", proc.stderr)
        assert_in("not an atom file", proc.stderr)
        if "overwrite" in proc.stderr:
            raise AssertionError(proc.stderr)


@case
def double_dash_ends_the_options(tmp):
    write(tmp, "-dash.pqr", GOOD)
    proc = run(["--grid", "9", "--device", "cpu", "--atoms", "--", "-dash.pqr"], tmp, 0)
    assert_in("-dash.pqr -> -dash.h5", proc.stdout)
    os.remove(os.path.join(tmp, "-dash.h5"))
    run(["--grid", "9", "--device", "cpu", "--", "-dash.pqr"], tmp, 0)
    if outputs(tmp) != ["-dash.h5"]:
        raise AssertionError(outputs(tmp))


@case
def closed_stdout_keeps_the_exit_status(tmp):
    srcs = [write(tmp, f"m{i}.pqr", GOOD) for i in range(3)]
    proc = subprocess.Popen([base.DCS, "--atoms"] + srcs + GRID, cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # the reader has gone before the first summary line
    err = proc.stderr.read()
    proc.wait(timeout=120)
    if proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}, expected 0:\n{err}")
    assert_in("cannot write the summary to standard output", err)
    if err.count("cannot write the summary") != 1:
        raise AssertionError(f"expected one warning:\n{err}")
    if outputs(tmp) != ["m0.h5", "m1.h5", "m2.h5"]:
        raise AssertionError(outputs(tmp))


@case
def killed_batch_tells_what_it_completed(tmp):
    small = write(tmp, "a.pqr", GOOD)
    big = write(tmp, "b.pqr", heavy_atoms(2000))
    # SIGTERM takes effect once the slab being computed (25 planes) is done: ~10 s under the
    # sanitizers (DCS_TEST_SANITIZED=1, the "sanitize" test preset), which therefore use 120^3
    # (slabs of 15 planes, a fifth of the work each; b.pqr's map still lasts far beyond 0.5 s).
    grid = "120" if os.environ.get("DCS_TEST_SANITIZED") == "1" else "200"
    proc = subprocess.Popen([base.DCS, "--atoms", small, big, "--grid", grid, "--device", "cpu",
                             "--kernel", "reference", "--threads", "1", "--no-progress"], cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = proc.stdout.readline()  # printed as the first map finished, not at the end
    assert_in("a.pqr -> a.h5", first)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, f"exit {proc.returncode}, expected 143:\n{out}\n{err}"
    assert_in("batch: interrupted after 1 input: 1 written, 0 complete already, 0 failed", out)
    assert_in("interrupted at map 2 of 2, ", err)
    assert_in("the outputs of the 1 map(s) before it are complete", err)
    if "no output was written" in err:
        raise AssertionError(err)
    if not os.path.exists(os.path.join(tmp, "a.h5")) or os.path.exists(os.path.join(tmp, "b.h5")):
        raise AssertionError(outputs(tmp))


@case
def name_template_separates_same_stems(tmp):
    for folder in ("a", "b"):
        os.mkdir(os.path.join(tmp, folder))
        write(os.path.join(tmp, folder), "x.pqr", GOOD)
    inputs = [os.path.join(tmp, "a", "x.pqr"), os.path.join(tmp, "b", "x.pqr")]
    proc = run(["--atoms"] + inputs + GRID, tmp, 2)
    assert_in("--name-template {parent}_{stem}", proc.stderr)
    os.mkdir(os.path.join(tmp, "maps"))
    run(["--atoms"] + inputs + GRID + ["--output-dir", "maps", "--name-template", "{parent}_{stem}",
                                       "--dx"], tmp, 0)
    made = sorted(os.listdir(os.path.join(tmp, "maps")))
    if made != ["a_x.dx", "a_x.h5", "b_x.dx", "b_x.h5"]:
        raise AssertionError(made)
    for bad in ("{nope}", "{stem", "sub/{stem}", "plain"):
        proc = run(["--atoms"] + inputs + GRID + ["--name-template", bad], tmp, 2)
        assert_in("--name-template", proc.stderr)


@case
def atoms_from_a_list(tmp):
    for name in ("a.pqr", "b.pqr", "c.pqr"):
        write(tmp, name, GOOD)
    write(tmp, "list.txt", "# inputs\na.pqr\n\n  b.pqr  \n")
    proc = run(["--atoms", "c.pqr", "--atoms-from", "list.txt"] + GRID, tmp, 0)
    assert_in("batch: 3 inputs: 3 written", proc.stdout)
    proc = subprocess.run([base.DCS, "--atoms-from", "-", "--force"] + GRID, cwd=tmp, input="a.pqr\n",
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise AssertionError(proc.stderr)
    proc = run(["--atoms-from", "missing.txt"] + GRID, tmp, 3)
    assert_in("missing.txt", proc.stderr)
    write(tmp, "empty.txt", "# nothing\n")
    proc = run(["--atoms-from", "empty.txt"] + GRID, tmp, 2)
    assert_in("lists no atom files", proc.stderr)


@case
def speed_after_resume_counts_computed_slabs(tmp):
    src = write(tmp, "m.pqr", heavy_atoms(300))
    args = ["--atoms", src, "--grid", "120", "--device", "cpu", "--threads", "1", "--kernel", "reference",
            "--memory-limit", "4M", "--checkpoint-interval", "0", "--no-progress"]
    partial = os.path.join(tmp, "m.h5.partial")
    for delay in (0.5, 1.0, 0.2, 2.0):
        for name in outputs(tmp):
            os.remove(os.path.join(tmp, name))
        proc = subprocess.Popen([base.DCS] + args, cwd=tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while not os.path.exists(partial) and proc.poll() is None and time.time() < deadline:
            time.sleep(0.005)
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=120)
        if proc.returncode != 143 or not os.path.exists(partial):
            continue  # finished (or nothing kept) before the signal
        out = run(args + ["--resume"], tmp, 0).stdout
        resumed = re.search(r"resumed\s+(\d+) slab\(s\) found done in the partial file, (\d+) computed", out)
        if resumed is None or int(resumed.group(1)) == 0 or int(resumed.group(2)) == 0:
            continue
        reused, computed = int(resumed.group(1)), int(resumed.group(2))
        timing = re.search(r"([0-9.]+) s compute and write \(([0-9.e+-]+) atom-evaluations/s", out)
        seconds, rate = float(timing.group(1)), float(timing.group(2))
        expected = 300 * 120 ** 3 * computed / (reused + computed) / seconds
        if abs(rate - expected) > 0.02 * expected:
            raise AssertionError(f"rate {rate:.3g}, expected {expected:.3g} (only the {computed} "
                                 f"computed of {reused + computed} slabs count):\n{out}")
        return
    raise AssertionError("no interrupted run left a partial map with slabs done and slabs to do")


@case
def job_array_records_summarised(tmp):
    for name in ("a.pqr", "b.pqr", "c.pqr"):
        write(tmp, name, GOOD)
    write(tmp, "bad.pqr", GOOD + "ATOM 3 C ALA 1 x 0 0 1 1\n")
    inputs = ["a.pqr", "b.pqr", "c.pqr", "bad.pqr"]
    proc = run(["batch-summary", "maps"], tmp, 2)
    assert_in("no task records", proc.stderr)
    codes = []
    for task in range(3):
        proc = subprocess.run([base.DCS, "--atoms"] + inputs + GRID + ["--shard", f"{task}/3",
                              "--output-dir", "maps", "--keep-going", "-q"], cwd=tmp,
                              capture_output=True, text=True, timeout=120)
        codes.append(proc.returncode)
        record = os.path.join(tmp, "maps", f"dcs-task-{task}-of-3.tsv")
        if not os.path.exists(record):
            raise AssertionError(f"no record {record}:\n{proc.stderr}")
    if sorted(codes) != [0, 0, 3]:
        raise AssertionError(codes)
    proc = run(["batch-summary", "maps"], tmp, 1)
    assert_in("batch-summary: 3 of 3 tasks reported: 3 written, 0 complete already, 1 failed", proc.stdout)
    assert_in("failed: bad.pqr: bad.pqr:3:", proc.stdout)
    os.remove(os.path.join(tmp, "maps", "dcs-task-1-of-3.tsv"))
    proc = run(["batch-summary", "maps"], tmp, 1)
    assert_in("tasks that have not reported: 1", proc.stdout)
    # A complete array, one task without inputs (it reports too, into a directory it makes): 0.
    for task in (2, 0, 1):
        run(["--atoms", "a.pqr", "b.pqr"] + GRID + ["--shard", f"{task}/3", "--output-dir", "ok"], tmp, 0)
    proc = run(["batch-summary", "ok"], tmp, 0)
    assert_in("batch-summary: 3 of 3 tasks reported: 2 written", proc.stdout)


@case
def box_errors_are_explained(tmp):
    src = write(tmp, "m.pqr", GOOD)
    for box, needle in (("40,40", "--box 40,40: 2 values; expected 3 or 6"),
                        ("40,x,40", "'x' is not a number"),
                        ("40,,40", "'' is not a number"),
                        ("40,40,-1", "the length -1 is not positive"),
                        ("40,40,nan", "'nan' is not a finite number"),
                        ("40,40,40,90,90", "5 values; expected 3 or 6"),
                        ("40,40,40,10,10,170", "--box 40,40,40,10,10,170: "),
                        ("40,40,40,90,90,180", "--box 40,40,40,90,90,180: ")):
        proc = run(["--atoms", src, "--periodic", "--box", box] + GRID, tmp, 2)
        assert_in(needle, proc.stderr)
        assert_in("(give a,b,c in Å, or a,b,c,alpha,beta,gamma", proc.stderr)
    if outputs(tmp):
        raise AssertionError(f"files written: {outputs(tmp)}")


@case
def periodic_refusals_are_explained(tmp):
    src = write(tmp, "m.pqr", GOOD)
    box = ["--box", "30,30,30"]
    for args, needle in (
            (["--ionic-strength", "0.15"] + box, "supports the Coulomb model only"),
            (["--dielectric-model", "distance", "--dielectric", "4"] + box,
             "supports the Coulomb model only"),
            (box + ["--method", "msm"], "--periodic is --method ewald; it contradicts --method msm"),
            (box + ["--ewald-error", "0.5"], "--ewald-error must be a number from 1e-08 to 0.01, got 0.5"),
            ([], "m.pqr: --periodic needs the unit cell, and it has none: give it with --box")):
        proc = run(["--atoms", src, "--periodic"] + GRID[:2] + args, tmp, 2)
        assert_in(needle, proc.stderr)
    # The 1 x 1 x 1 A CRYST1 of NMR and model files is no cell.
    placeholder = write(tmp, "nmr.pqr", "CRYST1    1.000    1.000    1.000  90.00  90.00  90.00 P 1\n" + GOOD)
    proc = run(["--atoms", placeholder, "--periodic"] + GRID, tmp, 2)
    assert_in("nmr.pqr: --periodic needs the unit cell, and it has none", proc.stderr)
    proc = run(["--topology", "a.psf", "--trajectory", "b.dcd", "--box", "30,30,30", "--periodic"] + GRID, tmp, 2)
    assert_in("--box gives atom files their cell; a trajectory's frames carry their own", proc.stderr)
    bad = write(tmp, "cryst.pqr", "CRYST1   40.000   40.000      abc  90.00  90.00  90.00 P 1\n" + GOOD)
    proc = run(["--atoms", bad, "--periodic"] + GRID, tmp, 3)
    assert_in("cryst.pqr:1: CRYST1 record: expected a b c alpha beta gamma (6 numbers), found 2 "
              "then 'abc'", proc.stderr)
    if outputs(tmp):
        raise AssertionError(f"files written: {outputs(tmp)}")


if __name__ == "__main__":
    base.main(CASES)
