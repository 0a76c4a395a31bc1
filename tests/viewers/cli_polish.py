"""What a new user sees from the dcs binary: progress line, -q, `dcs devices`, `dcs kernels`.

    cli_polish.py DCS SOURCE_DIR CASE

Prints "cli_polish: OK <case>".
"""
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import fcntl
import termios


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def long_path_input(work, source):
    deep = os.path.join(work, "a-rather-long-directory-name-for-inputs", "and-one-more-level-below")
    os.makedirs(deep)
    path = os.path.join(deep, "lysozyme-with-a-long-file-name.pqr")
    shutil.copy(os.path.join(source, "data", "2lzt.pqr"), path)
    return path


# A run of a few seconds on one thread: the float64 reference backend.
SLOW = ["--grid", "56", "--kernel", "reference", "--threads", "1", "--force"]
# The progress line appears once a run has lasted 1 s: 80^3 points x 1960 atoms (1e9 float64
# evaluations, 4 s on the CI machine) still lasts over 1 s on a CPU three times faster.
LONGER = ["--grid", "80", "--kernel", "reference", "--threads", "1", "--force"]


def run_on_terminal(command, cwd, columns):
    """Runs `command` with stderr on a pseudo-terminal `columns` wide; returns (rc, stderr)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = dict(os.environ, COLUMNS="200")  # the terminal's own width must win
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=slave, cwd=cwd, env=env)
    os.close(slave)
    data = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    proc.wait(timeout=120)
    os.close(master)
    return proc.returncode, data.decode("utf-8", "replace")


def case_progress_tty(dcs, source, work):
    """On a (pseudo) terminal 60 columns wide, with an input under a long directory path:
    every redraw is "\\r" + at most 59 characters + "\\x1b[K", names the file by its basename,
    and the line is cleared at the end; with -q nothing is drawn."""
    pqr = long_path_input(work, source)
    out = os.path.join(work, "m.h5")
    rc, text = run_on_terminal([dcs, "--atoms", pqr, "-o", out, *LONGER], work, 60)
    check(rc == 0, f"dcs exited {rc}: {text[-500:]!r}")
    redraws = re.findall(r"\r([^\r\n\x1b]*)\x1b\[K", text)
    lines = [r for r in redraws if r]
    check(lines, f"no progress line was drawn (the run must last over 1 s): {text[-800:]!r}")
    for line in lines:
        check(len(line) <= 59, f"progress line wider than the 60-column terminal: {line!r}")
        check("lysozyme-with-a-long-file-name.pqr" in line or line.startswith("..."),
              f"progress line should name the file by its basename: {line!r}")
        check("a-rather-long-directory" not in line, f"directory in the progress line: {line!r}")
        check(not re.search(r"ETA \d+s\S", line), f"garbled ETA: {line!r}")
        check("%" in line and "ETA" in line, f"progress line lacks percent or ETA: {line!r}")
    check(text.count("\r\x1b[K") >= 1 and redraws[-1] == "",
          "the progress line is not cleared at the end")
    # -q: nothing at all on the terminal (a box large enough for no box-face warning: -q keeps
    # warnings).
    rc, text = run_on_terminal([dcs, "--atoms", pqr, "-o", out, *SLOW, "--padding", "30", "-q"],
                               work, 60)
    check(rc == 0 and text == "", f"-q on a terminal printed {text[-300:]!r}")


def case_progress_log(dcs, source, work):
    """Not a terminal: no carriage returns or escape sequences on stderr."""
    pqr = long_path_input(work, source)
    run = subprocess.run([dcs, "--atoms", pqr, "-o", os.path.join(work, "m.h5"), *SLOW],
                         capture_output=True, text=True, cwd=work, timeout=300)
    check(run.returncode == 0, run.stderr)
    check("\r" not in run.stderr and "\x1b" not in run.stderr,
          f"control characters in a non-terminal log: {run.stderr[-300:]!r}")


def case_quiet(dcs, source, work):
    """-q prints no summary on stdout (and no info lines on stderr); failures still do."""
    pqr = os.path.join(source, "data", "2lzt.pqr")
    run = subprocess.run([dcs, "--atoms", pqr, "--grid", "9", "-o", "q.h5", "-q"],
                         capture_output=True, text=True, cwd=work, timeout=300)
    check(run.returncode == 0, run.stderr)
    check(run.stdout == "", f"-q printed a summary: {run.stdout!r}")
    check("info" not in run.stderr, f"-q printed info lines: {run.stderr!r}")
    check(os.path.exists(os.path.join(work, "q.h5")), "no output")
    loud = subprocess.run([dcs, "--atoms", pqr, "--grid", "9", "-o", "l.h5"],
                          capture_output=True, text=True, cwd=work, timeout=300)
    check("potential" in loud.stdout, f"without -q the summary is printed: {loud.stdout!r}")
    # A batch failure is still reported under -q.
    bad = os.path.join(work, "bad.pqr")
    with open(bad, "w") as f:
        f.write("ATOM      1  N   LYS     1       x.967   4.770  13.995 -0.3200 2.0000\n")
    fail = subprocess.run([dcs, "--atoms", bad, pqr, "--grid", "9", "--output-dir", "out",
                           "--keep-going", "-q"], capture_output=True, text=True, cwd=work,
                          timeout=300)
    check(fail.returncode != 0, "a bad input must fail the batch")
    check("bad.pqr" in fail.stdout + fail.stderr, f"-q hid the failure: {fail.stdout!r}")


def nvidia_driver_present():
    return any(os.path.exists(p) for p in
               ("/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version"))


def case_devices(dcs, source, work):
    """`dcs devices` here: no "insufficient driver" alarm, no repeated "no CUDA device:", and
    "no NVIDIA GPU found" where no NVIDIA driver is loaded."""
    run = subprocess.run([dcs, "devices"], capture_output=True, text=True, timeout=120)
    check(run.returncode == 0, run.stderr)
    out = run.stdout + run.stderr
    check("insufficient" not in out.lower(), f"driver alarm: {out!r}")
    check(out.count("no CUDA device") <= 1, f"repeated 'no CUDA device': {out!r}")
    check(re.search(r"(?m)^cpu\s+\d+ hardware threads", run.stdout), f"no cpu line: {out!r}")
    if not nvidia_driver_present():
        check("no NVIDIA GPU found" in out or "built without CUDA" in out,
              f"without a GPU, say so plainly: {out!r}")
    # The same calm words when a run falls back to the CPU.
    run = subprocess.run([dcs, "--atoms", os.path.join(source, "data", "2lzt.pqr"), "--grid", "5",
                          "-o", "d.h5"], capture_output=True, text=True, cwd=work, timeout=120)
    check("insufficient" not in (run.stdout + run.stderr).lower(), f"alarm in a run: {run.stderr!r}")


def case_kernels(dcs, source, work):
    """`dcs kernels`: lines <= 100 columns, one "(default)" per group, no variant twice in one."""
    run = subprocess.run([dcs, "kernels"], capture_output=True, text=True, timeout=60)
    check(run.returncode == 0, run.stderr)
    groups = []
    for line in run.stdout.splitlines():
        check(len(line) <= 100, f"line of {len(line)} columns: {line!r}")
        if not line.startswith(" "):
            groups.append((line, []))
        elif not line.startswith(" " * 20):  # a variant row (continuations are indented more)
            groups[-1][1].append(line)
    check(len(groups) == 4, f"expected 4 groups, got {[g[0] for g in groups]}")
    for title, rows in groups:
        names = [row.split()[0] for row in rows]
        check(len(names) == len(set(names)), f"{title}: a variant listed twice: {names}")
        defaults = [row for row in rows if "(default)" in row]
        check(len(defaults) == 1, f"{title}: {len(defaults)} defaults: {defaults}")
    text = run.stdout
    for name in ("production", "simd", "reference", "warp-shuffle", "cpu-threaded", "cpu-serial"):
        check(re.search(rf"(?m)^  {re.escape(name)}\s", text), f"{name} missing")


def case_dx_beside(dcs, source, work):
    """`-o sub/x.h5 --dx` writes sub/x.dx (not ./x.dx or ./<input>.dx)."""
    os.makedirs(os.path.join(work, "sub"))
    run = subprocess.run([dcs, "--atoms", os.path.join(source, "data", "2lzt.pqr"), "--grid", "7",
                          "-o", "sub/x.h5", "--dx", "-q"], capture_output=True, text=True,
                         cwd=work, timeout=120)
    check(run.returncode == 0, run.stderr)
    check(sorted(os.listdir(os.path.join(work, "sub"))) == ["x.dx", "x.h5"],
          f"sub/ holds {sorted(os.listdir(os.path.join(work, 'sub')))}")
    check(sorted(os.listdir(work)) == ["sub"], f"written outside sub/: {sorted(os.listdir(work))}")


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}

if __name__ == "__main__":
    dcs, source, case = sys.argv[1:4]
    with tempfile.TemporaryDirectory(prefix="dcs-cli-") as work:
        CASES[case](os.path.abspath(dcs), source, work)
    print(f"cli_polish: OK {case}")
