#!/usr/bin/env python3
"""What the system refuses while dcs runs: threads it cannot start, file names too long, and
names that hold control characters. Each gets one clear line, never a crash or a forged log
line. Shares the harness of tests/integration/cli_tests.py.

Usage: limits_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import GOOD, assert_in, main, run, write  # noqa: E402

CASES = {}
GRID = ["--grid", "9", "--device", "cpu", "--no-progress"]


def case(function):
    CASES[function.__name__] = function
    return function


def address_space_at_start(tmp):
    """The address space (bytes) of a dcs process blocked opening its input, a FIFO no one
    writes: what the binary and its libraries map before any work (a CUDA build maps cuFFT and
    the CUDA runtime, hundreds of MiB more than a CPU build)."""
    fifo = os.path.join(tmp, "wait.pqr")
    os.mkfifo(fifo)
    proc = subprocess.Popen([base.DCS, "--atoms", fifo] + GRID, cwd=tmp,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        size, steady = 0, 0
        deadline = time.time() + 30
        while time.time() < deadline and proc.poll() is None and steady < 5:
            time.sleep(0.2)
            with open(f"/proc/{proc.pid}/status") as status:
                peak = next(int(line.split()[1]) * 1024 for line in status
                            if line.startswith("VmPeak:"))
            steady = steady + 1 if peak == size else 0  # unchanged for 1 s: blocked in open()
            size = peak
        assert size, "could not read the address space of a dcs process"
        return size
    finally:
        proc.kill()
        proc.wait()
        os.unlink(fifo)


@case
def threads_that_cannot_start_give_a_clear_error(tmp):
    # 200 MB thread stacks in the start-up's address space plus 300 MB: the second thread cannot
    # be made. Before, the failure escaped with threads still running: "terminate called", exit
    # 134. The start-up's size is measured, not assumed (a CUDA build maps far more).
    src = write(tmp, "m.pqr", GOOD)
    limit = address_space_at_start(tmp) + (300 << 20)

    def limits():
        resource.setrlimit(resource.RLIMIT_STACK, (200 << 20, 200 << 20))
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    proc = subprocess.run([base.DCS, "--atoms", src, "--threads", "4"] + GRID, cwd=tmp,
                          capture_output=True, text=True, timeout=60, preexec_fn=limits)
    assert proc.returncode == 1, f"exit {proc.returncode} (address space {limit >> 20} MiB)\n{proc.stderr}"
    assert_in("cannot start a thread", proc.stderr)
    assert not [n for n in os.listdir(tmp) if n != "m.pqr"], os.listdir(tmp)


@case
def a_newline_in_a_file_name_is_escaped(tmp):
    src = write(tmp, "a\nb.pqr", GOOD)
    proc = run(["--atoms", src] + GRID, tmp, 0)
    for line in proc.stderr.splitlines():
        assert line.startswith("[dcs]"), f"a log line was split: {line!r}\n{proc.stderr}"
    assert_in("a\\nb.pqr", proc.stderr)


@case
def a_path_too_long_is_an_io_error(tmp):
    src = write(tmp, "m.pqr", GOOD)
    deep = "/".join(["d" * 200] * 25)
    for args in (["--output-dir", deep], ["-o", deep + "/x.h5"], ["-o", "y" * 250 + ".h5"]):
        proc = run(["--atoms", src] + GRID + args, tmp, 1)
        assert_in("File name too long", proc.stderr)
        assert "unexpected error" not in proc.stderr, proc.stderr


if __name__ == "__main__":
    main(CASES)
