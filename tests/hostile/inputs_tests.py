#!/usr/bin/env python3
"""Hostile inputs through the real `dcs` binary: endless files, FIFOs, a PDB file named .pqr,
and the messages a newcomer gets. Shares the harness of tests/integration/cli_tests.py.

Usage: inputs_tests.py DCS_BINARY SOURCE_DIR CASE   (CASE 'list' prints the case names)
"""
import hashlib
import os
import resource
import signal
import subprocess
import sys
import threading
import time

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import GOOD, assert_in, run, write  # noqa: E402

CASES = {}
GRID = ["--grid", "9", "--device", "cpu"]


def case(function):
    CASES[function.__name__] = function
    return function


def left_behind(directory, inputs):
    return sorted(set(os.listdir(directory)) - set(inputs))


def map_and_sha(path):
    with h5py.File(path, "r") as f:
        return f["potential"][...].tobytes(), f["provenance"].attrs["input_sha256"]


@case
def fifo_without_writer_sigterm_exits_143(tmp):
    fifo = os.path.join(tmp, "in.pqr")
    os.mkfifo(fifo)
    proc = subprocess.Popen([base.DCS, "--atoms", fifo, "--dx"] + GRID, cwd=tmp,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)  # dcs now waits in open() for a writer
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    if proc.returncode != 143:
        raise AssertionError(f"exit {proc.returncode}, expected 143; stderr:\n{err}")
    if left_behind(tmp, ["in.pqr"]):
        raise AssertionError(f"files left behind: {left_behind(tmp, ['in.pqr'])}")


@case
def fifo_with_writer_gives_the_regular_files_map(tmp):
    regular = write(tmp, "m.pqr", GOOD)
    run(["--atoms", regular] + GRID, tmp, 0)
    fifo = os.path.join(tmp, "f.pqr")
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as handle:
            handle.write(GOOD)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        run(["--atoms", fifo] + GRID, tmp, 0, timeout=30)
    finally:
        writer.join(timeout=30)
    m_map, m_sha = map_and_sha(os.path.join(tmp, "m.h5"))
    f_map, f_sha = map_and_sha(os.path.join(tmp, "f.h5"))
    if m_map != f_map:
        raise AssertionError("the map of the FIFO differs from the map of the regular file")
    if not m_sha == f_sha == hashlib.sha256(GOOD.encode()).hexdigest():
        raise AssertionError(f"input_sha256 {f_sha} (FIFO), {m_sha} (file)")


@case
def dev_zero_fails_fast_in_bounded_memory(tmp):
    link = os.path.join(tmp, "z.pqr")
    os.symlink("/dev/zero", link)
    start = time.monotonic()
    proc = run(["--atoms", link] + GRID, tmp, 3, timeout=30)
    took = time.monotonic() - start
    assert_in("z.pqr:1: line longer than 65536 bytes", proc.stderr)
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if took > 10 or peak_mib > 512:
        raise AssertionError(f"took {took:.1f} s, peak RSS {peak_mib:.0f} MiB")
    if left_behind(tmp, ["z.pqr"]):
        raise AssertionError(f"files left behind: {left_behind(tmp, ['z.pqr'])}")


@case
def one_line_file_refused_at_its_line(tmp):
    src = write(tmp, "long.pqr", GOOD + "REMARK " + "x" * (4 << 20) + "\n")
    proc = run(["--atoms", src] + GRID, tmp, 3, timeout=30)
    assert_in("long.pqr:3: line longer than 65536 bytes", proc.stderr)
    src = write(tmp, "one.xyzq", "1 2 3 0.5 " * 200000)
    proc = run(["--atoms", src] + GRID, tmp, 3, timeout=30)
    assert_in("one.xyzq:1: line longer than 65536 bytes", proc.stderr)


def pdb_text(atoms=40):
    """A PDB file as the Protein Data Bank writes it, without element columns."""
    return "HEADER    HYDROLASE\n" + "".join(
        f"ATOM  {n:5d}  CA  ALA A{n:4d}    {1.5 * n:8.3f}{2.0:8.3f}{-3.0:8.3f}{1.0:6.2f}{10 + n:6.2f}\n"
        for n in range(1, atoms + 1)) + "END\n"


@case
def pdb_named_pqr_refused_unless_charges_as_given(tmp):
    src = write(tmp, "1abc.pqr", pdb_text())
    proc = run(["--atoms", src] + GRID, tmp, 3)
    assert_in("looks like a PDB file", proc.stderr)
    assert_in("pdb2pqr", proc.stderr)
    assert_in("--charges-as-given", proc.stderr)
    if left_behind(tmp, ["1abc.pqr"]):
        raise AssertionError(f"files left behind: {left_behind(tmp, ['1abc.pqr'])}")
    proc = run(["--atoms", src, "--charges-as-given"] + GRID, tmp, 0)
    assert_in("total charge +40.0000 e", proc.stderr)


@case
def newcomer_messages(tmp):
    src = write(tmp, "1abc.pdb", pdb_text(3))
    proc = run(["--atoms", src] + GRID, tmp, 3)
    assert_in("pdb2pqr --ff=AMBER in.pdb out.pqr", proc.stderr)
    proc = run(["--atoms", os.path.join(tmp, "missing.pdb")] + GRID, tmp, 3)
    assert_in("missing.pdb: no such file", proc.stderr)
    src = write(tmp, "noradius.pqr", GOOD + "ATOM 3 N ALA 1 1.0 2.0 3.0 -0.3\n")
    proc = run(["--atoms", src] + GRID, tmp, 3)
    assert_in("noradius.pqr:3: too few fields", proc.stderr)


if __name__ == "__main__":
    base.main(CASES, prefix="dcs-hostile-")
