#!/usr/bin/env python3
"""Robustness through the real `dcs` binary: option and file values beyond the float32 limits,
--threads, exit status of signals, damaged records, CR-only files, outputs that would replace
links, special files or inputs. Shares the harness of cli_tests.py.

Usage: cli_robustness_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import signal
import subprocess
import sys
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


def long_run(tmp, extra=()):
    """Minutes of work, in slabs of 25 planes. A signal takes effect once the slab being computed
    is done: a few seconds, ~12 s under the sanitizers (DCS_TEST_SANITIZED=1, the "sanitize"
    test preset), which therefore use 120^3 (slabs of 15 planes, a fifth of the work each)."""
    atoms = "".join(f"ATOM  {n:5d}  C   ALA A   1    {n % 17:8.3f}{n % 13:8.3f}{n % 11:8.3f}  0.1000 1.0\n"
                    for n in range(1, 2001))
    src = write(tmp, "m.pqr", atoms)
    grid = "120" if os.environ.get("DCS_TEST_SANITIZED") == "1" else "200"
    return subprocess.Popen([base.DCS, "--atoms", src, "--grid", grid, "--device", "cpu", "--kernel",
                             "reference", "--threads", "1", "--dx", *extra], cwd=tmp,
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


@case
def outputs_never_replace_links_or_special_files(tmp):
    """--force replaces regular files only; no output is written through (or in
    place of) a symbolic link, but a linked directory works."""
    import socket
    import stat

    src = write(tmp, "m.pqr", GOOD)
    target = write(tmp, "target.txt", "keep")
    os.symlink(target, os.path.join(tmp, "link.h5"))
    os.symlink(target, os.path.join(tmp, "link.dx"))
    os.symlink(target, os.path.join(tmp, "m.h5.partial"))  # the partial file of `-o m.h5`
    os.mkfifo(os.path.join(tmp, "fifo.h5"))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.path.join(tmp, "sock.mrc"))
    os.mkdir(os.path.join(tmp, "adir.h5"))
    for args, needle in ((["-o", "link.h5"], "link.h5: it is a symbolic link (to " + target),
                         (["-o", "x.h5", "--dx", "link.dx"], "link.dx: it is a symbolic link"),
                         (["-o", "m.h5"], "m.h5.partial: it is a symbolic link"),
                         (["-o", "fifo.h5"], "fifo.h5: it is a FIFO (named pipe), not a regular file"),
                         (["-o", "y.h5", "--mrc", "sock.mrc"], "sock.mrc: it is a socket"),
                         (["-o", "adir.h5"], "adir.h5: it is a directory")):
        for force in ([], ["--force"]):
            proc = run(["--atoms", src, "--grid", "9"] + args + force, tmp, 1)
            assert_in(needle, proc.stderr)
    sock.close()
    with open(target) as handle:
        if handle.read() != "keep":
            raise AssertionError("the link's target was written")
    if not (os.path.islink(os.path.join(tmp, "link.h5")) and os.path.islink(os.path.join(tmp, "m.h5.partial"))
            and stat.S_ISFIFO(os.lstat(os.path.join(tmp, "fifo.h5")).st_mode)):
        raise AssertionError("a link or a FIFO was replaced")
    for name in ("x.h5", "y.h5", "m.h5"):
        if os.path.lexists(os.path.join(tmp, name)):
            raise AssertionError(f"a refused run wrote {name}")
    # A linked directory is the user's choice: the map goes where the link points.
    os.mkdir(os.path.join(tmp, "real"))
    os.symlink(os.path.join(tmp, "real"), os.path.join(tmp, "linked"))
    run(["--atoms", src, "--grid", "9", "-o", "linked/z.h5", "--dx", "--mrc"], tmp, 0)
    if sorted(os.listdir(os.path.join(tmp, "real"))) != ["z.dx", "z.h5", "z.mrc"]:
        raise AssertionError(f"linked directory: {os.listdir(os.path.join(tmp, 'real'))}")


@case
def outputs_checked_against_each_other_and_inputs(tmp):
    """Outputs that are one file, or an input (also through a hard link or
    another spelling), are refused before any work (exit 2), even with --force."""
    src = write(tmp, "in.pqr", GOOD)
    os.link(src, os.path.join(tmp, "hard.h5"))
    os.mkdir(os.path.join(tmp, "maps"))
    write(tmp, "maps/a.dx", "1 2 3 0.5\n")  # an input named like another input's output
    write(tmp, "b.pqr", GOOD)
    for args, needle in ((["-o", "same.h5", "--dx", "same.h5"],
                          "the OpenDX output same.h5 and the HDF5 output same.h5 are the same file"),
                         (["-o", "m.h5", "--mrc", "./maps/../m.h5"],
                          "the MRC output ./maps/../m.h5 and the HDF5 output m.h5 are the same file"),
                         (["-o", "x.h5", "--dx", "x.h5.partial"], "are the same file"),
                         (["-o", "in.pqr"], "the HDF5 output in.pqr is the input file in.pqr"),
                         (["-o", "o.h5", "--dx", os.path.join(tmp, "in.pqr")], "is the input file in.pqr"),
                         (["-o", "hard.h5"], "the HDF5 output hard.h5 is the input file in.pqr")):
        for force in ([], ["--force"]):
            proc = run(["--atoms", "in.pqr", "--grid", "9"] + args + force, tmp, 2)
            assert_in(needle, proc.stderr)
            if "backend:" in proc.stderr:
                raise AssertionError(f"refused after the workers were made:\n{proc.stderr}")
    # A batch whose second input is named like an output: a map's name is no atom file.
    proc = run(["--atoms", "b.pqr", "maps/a.dx", "--grid", "9", "--output-dir", "maps", "--dx",
                "--force", "--keep-going"], tmp, 2)
    assert_in("maps/a.dx is a map (.dx), not an atom file", proc.stderr)
    # Two inputs with one stem (the existing rule, now in the same check).
    os.mkdir(os.path.join(tmp, "other"))
    write(tmp, "other/in.pqr", GOOD)
    proc = run(["--atoms", "in.pqr", "other/in.pqr", "--grid", "9"], tmp, 2)
    assert_in("would write the same output", proc.stderr)
    with open(src) as handle:
        if handle.read() != GOOD:
            raise AssertionError("the input was overwritten")
    left = sorted(set(os.listdir(tmp)) - {"in.pqr", "hard.h5", "maps", "b.pqr", "other"})
    if left or os.listdir(os.path.join(tmp, "maps")) != ["a.dx"]:
        raise AssertionError(f"a refused run wrote {left} {os.listdir(os.path.join(tmp, 'maps'))}")


def temporaries(directory):
    """The atomic writer's temporaries (.<name>.tmp.<host>.<pid>.<hex>)."""
    return sorted(f for f in os.listdir(directory) if f.startswith(".") and ".tmp." in f)


@case
def stale_temporaries_are_removed_by_the_next_run(tmp):
    """kill -9 leaves the streaming MRC output's temporary; the next run writing
    the same outputs removes it (an info line), and nothing else."""
    proc = long_run(tmp, extra=["--mrc"])  # the MRC temporary exists from the start (it streams)
    deadline = time.time() + 60
    while not temporaries(tmp) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    stale = temporaries(tmp)
    if len(stale) != 1 or not stale[0].startswith(".m.mrc.tmp."):
        raise AssertionError(f"expected the killed run's MRC temporary, found {stale}")
    # Someone else's temporary of another output, and one of a live process: kept.
    other = write(tmp, ".other.dx.tmp.elsewhere.1.0123abcd", "x")
    live = stale[0].rsplit(".", 2)[0] + f".{os.getpid()}.0123abcd"
    write(tmp, live, "x")
    proc = run(["--atoms", "m.pqr", "--grid", "9", "--dx", "--mrc"], tmp, 0)
    for name in stale:
        if not [line for line in proc.stderr.splitlines() if "info: removed" in line and name in line]:
            raise AssertionError(f"no info line says {name} was removed:\n{proc.stderr}")
    left = temporaries(tmp)
    if left != sorted([os.path.basename(other), live]):
        raise AssertionError(f"temporaries after the next run: {left}")
    for name in ("m.h5", "m.dx", "m.mrc"):
        if not os.path.isfile(os.path.join(tmp, name)):
            raise AssertionError(f"{name} missing")


@case
def signals_during_the_dx_write_leave_nothing(tmp):
    """One or two signals while the OpenDX file is written (the HDF5 store is
    finished by then): exit 128 + the first signal, and no output, no partial file and no
    temporary remain (the second signal's handler removes the finished store too)."""
    write(tmp, "m.pqr", "ATOM      1  N   ALA A   1       1.000   2.000   3.000  0.5000 1.8240\n")
    # One atom on 256^3: computed at once; the gzip DX of 16.7 M values takes seconds.
    for signals, status in (([signal.SIGTERM, signal.SIGINT], 143), ([signal.SIGINT, signal.SIGINT], 130),
                            ([signal.SIGTERM], 143)):
        proc = subprocess.Popen([base.DCS, "--atoms", "m.pqr", "--grid", "256", "--dx", "m.dx.gz",
                                 "--mrc", "--no-progress"], cwd=tmp, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while (not any(f.startswith(".m.dx.gz.tmp.") for f in os.listdir(tmp))
               and proc.poll() is None and time.time() < deadline):
            time.sleep(0.01)
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before its DX write was seen: {proc.communicate()}")
        time.sleep(0.1)
        for number in signals:
            proc.send_signal(number)
            time.sleep(0.05)
        _, err = proc.communicate(timeout=120)
        left = sorted(set(os.listdir(tmp)) - {"m.pqr"})
        if proc.returncode != status or left:
            raise AssertionError(f"signals {signals} during the DX write: exit {proc.returncode} "
                                 f"(expected {status}), left {left}; stderr:\n{err}")


if __name__ == "__main__":
    base.main(CASES)
