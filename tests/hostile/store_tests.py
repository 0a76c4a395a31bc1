#!/usr/bin/env python3
"""Outputs and the partial file through the real `dcs` binary: two runs on one output, a partial
file changed behind dcs's back, a file size limit, an unreadable partial file, a user's file under
the partial file's name. Shares the harness of tests/integration/cli_tests.py.

Usage: store_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import pwd
import resource
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import assert_in, run  # noqa: E402
from map_files import assert_same_map  # noqa: E402

MOLECULE = os.path.join(base.SOURCE, "data", "2lzt.pqr")
# A run of a few seconds on one CPU thread, checkpointed after every slab: 64 slabs of 4 planes,
# 3 buffers. Under the sanitizers (DCS_TEST_SANITIZED=1, the "sanitize" test preset) the binary
# is about 10 times slower: 128^3 points with a quarter of the memory limit give the same plan
# (slabs of 4 planes, 3 buffers, 32 slabs) and about the same wall time as 256^3 unsanitized,
# instead of 30 s a run (174 s for two_runs_on_one_output).
SANITIZED = os.environ.get("DCS_TEST_SANITIZED") == "1"
SLOW = ["--atoms", MOLECULE, "--grid", "128" if SANITIZED else "256", "--device", "cpu",
        "--threads", "1", "--memory-limit", "1M" if SANITIZED else "4M",
        "--checkpoint-interval", "0", "--no-progress"]
CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def start(args, cwd, **kwargs):
    return subprocess.Popen([base.DCS] + args, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def wait_for_done_planes(partial, proc, planes=8, timeout=120):
    """Waits until the partial file flags `planes` planes done (read with h5py, which may fail
    while the file is being created)."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            with h5py.File(partial, "r") as f:
                if int(np.sum(f["resume/plane_done"][...])) >= planes:
                    return
        except (OSError, KeyError):
            pass
        time.sleep(0.02)
    raise AssertionError(f"{partial}: no {planes} done planes (run ended: {proc.poll()})")


def kept_partial(tmp, args):
    """A run stopped by SIGTERM once some planes are done: its partial file is kept."""
    proc = start(args, tmp)
    wait_for_done_planes(os.path.join(tmp, "m.h5.partial"), proc)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 143 or not os.path.exists(os.path.join(tmp, "m.h5.partial")):
        raise AssertionError(f"SIGTERM: exit {proc.returncode}, partial kept: "
                             f"{os.path.exists(os.path.join(tmp, 'm.h5.partial'))}\n{err}")


@case
def two_runs_on_one_output(tmp):
    """The second run is refused while the first holds the partial file; the first commits its
    own map; kill -9 releases the partial file; --wait-lock waits for the holder."""
    ref = start(SLOW + ["-o", "ref.h5"], tmp)
    first = start(SLOW + ["-o", "m.h5"], tmp)
    wait_for_done_planes(os.path.join(tmp, "m.h5.partial"), first, planes=1)
    second = run(SLOW + ["-o", "m.h5", "--dielectric", "2"], tmp, 1)
    assert_in("m.h5.partial is in use by another dcs run", second.stderr)
    assert_in(f"(pid {first.pid})", second.stderr)
    resumed = run(SLOW + ["-o", "m.h5", "--resume"], tmp, 1)
    assert_in("in use by another dcs run", resumed.stderr)
    _, err = first.communicate(timeout=300)
    ref.communicate(timeout=300)
    if first.returncode != 0 or ref.returncode != 0:
        raise AssertionError(f"the first run: exit {first.returncode}\n{err}")
    assert_same_map(os.path.join(tmp, "ref.h5"), os.path.join(tmp, "m.h5"))
    with h5py.File(os.path.join(tmp, "m.h5"), "r") as f:
        if "--dielectric" in f["provenance"].attrs["command_line"]:
            raise AssertionError("the committed file names the second run's command line")

    # kill -9: the kernel drops the lock; the next run resumes the partial file.
    killed = start(SLOW + ["-o", "k.h5"], tmp)
    wait_for_done_planes(os.path.join(tmp, "k.h5.partial"), killed)
    killed.kill()
    killed.communicate(timeout=120)
    proc = run(SLOW + ["-o", "k.h5", "--resume"], tmp, 0)
    assert_in("resuming", proc.stderr)
    assert_same_map(os.path.join(tmp, "ref.h5"), os.path.join(tmp, "k.h5"))

    # --wait-lock: the second run starts once the first has ended.
    holder = start(SLOW + ["-o", "w.h5"], tmp)
    wait_for_done_planes(os.path.join(tmp, "w.h5.partial"), holder, planes=1)
    waiter = run(SLOW + ["-o", "w.h5", "--wait-lock", "--force"], tmp, 0)
    assert_in("waiting", waiter.stderr)
    if holder.wait(timeout=300) != 0:
        raise AssertionError("the run holding w.h5.partial failed")


@case
def changed_done_plane_is_recomputed(tmp):
    """A NaN and 3.4e38 written into done planes of a kept partial file: --resume recomputes
    those planes and gives the uninterrupted run's map, with no non-finite value."""
    run(SLOW + ["-o", "ref.h5"], tmp, 0)
    kept_partial(tmp, SLOW + ["-o", "m.h5"])
    with h5py.File(os.path.join(tmp, "m.h5.partial"), "r+") as f:
        done = np.flatnonzero(f["resume/plane_done"][...])
        f["potential"][done[0], 5, 7] = np.nan
        f["potential"][done[-1], 9, 3] = np.float32(3.4e38)
    proc = run(SLOW + ["-o", "m.h5", "--resume"], tmp, 0)
    assert_in("do not match their stored statistics", proc.stderr)
    assert_in(f"{done[0]}", proc.stderr)
    assert_same_map(os.path.join(tmp, "ref.h5"), os.path.join(tmp, "m.h5"))
    with h5py.File(os.path.join(tmp, "m.h5"), "r") as f:
        if f["statistics"].attrs["nonfinite"] != 0 or not np.isfinite(f["potential"][...]).all():
            raise AssertionError("the resumed map holds non-finite values")


def limit_file_size(limit):
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


@case
def file_size_limit(tmp):
    """ulimit -f: a clear error (no SIGXFSZ death), and the partial file it leaves does not break
    the next --resume."""
    args = ["--atoms", MOLECULE, "--grid", "97", "--device", "cpu", "--no-progress", "-o", "m.h5"]
    for limit in (48, 300_000):  # in the superblock; among the values
        proc = subprocess.run([base.DCS] + args, cwd=tmp, capture_output=True, text=True,
                              preexec_fn=limit_file_size(limit), timeout=300)
        if proc.returncode != 1:
            raise AssertionError(f"ulimit -f {limit} bytes: exit {proc.returncode}, expected 1\n"
                                 f"{proc.stderr}")
        assert_in("file size limit (ulimit -f)", proc.stderr)
    # What a run killed by SIGXFSZ used to leave: the first 48 bytes of an HDF5 file. It holds
    # no checkpoint: --resume says so and starts afresh.
    run(args, tmp, 0)
    with open(os.path.join(tmp, "m.h5"), "rb") as handle:
        head = handle.read(48)
    os.remove(os.path.join(tmp, "m.h5"))
    with open(os.path.join(tmp, "m.h5.partial"), "wb") as handle:
        handle.write(head)
    proc = run(args + ["--resume"], tmp, 0)
    assert_in("holds no usable checkpoint", proc.stderr)
    if not os.path.exists(os.path.join(tmp, "m.h5")) or os.path.exists(os.path.join(tmp, "m.h5.partial")):
        raise AssertionError("the resumed run should have started afresh and committed m.h5")


@case
def write_error_during_resume_keeps_the_partial(tmp):
    """A write error while resuming (here a file size limit reached by the compressed chunks)
    keeps the earlier run's partial file with its last checkpoint; the next --resume finishes
    the map bit-identical to an uninterrupted run."""
    args = SLOW + ["--compress", "1", "-o", "m.h5"]
    run(SLOW + ["--compress", "1", "-o", "ref.h5"], tmp, 0)
    kept_partial(tmp, args)
    partial = os.path.join(tmp, "m.h5.partial")
    with h5py.File(partial, "r") as f:
        done_before = int(np.sum(f["resume/plane_done"][...]))
    limit = os.path.getsize(partial) + 200_000
    proc = subprocess.run([base.DCS] + args + ["--resume"], cwd=tmp, capture_output=True,
                          text=True, preexec_fn=limit_file_size(limit), timeout=300)
    if proc.returncode != 1:
        raise AssertionError(f"expected exit 1 (file size limit), got {proc.returncode}\n{proc.stderr}")
    assert_in("file size limit (ulimit -f)", proc.stderr)
    assert_in("partial map is kept in m.h5.partial", proc.stderr)
    with h5py.File(partial, "r") as f:
        if int(np.sum(f["resume/plane_done"][...])) < done_before:
            raise AssertionError("the kept partial file lost done planes")
    run(args + ["--resume"], tmp, 0)
    assert_same_map(os.path.join(tmp, "ref.h5"), os.path.join(tmp, "m.h5"))


@case
def write_error_in_one_writer_keeps_the_partial(tmp):
    """Four writers (DCS_WRITERS) on 2 MB slabs; a file size limit set on the running process
    (prlimit) three quarters into the values once planes are checkpointed: the writer past it
    fails, dcs names the file and the reason, keeps the partial file with its checkpoints, and
    --resume with other writers finishes the map bit-identical to an uninterrupted run."""
    args = [a if a != "4M" else "16M" for a in SLOW] + ["-o", "m.h5"]
    run(args[:-1] + ["ref.h5"], tmp, 0)
    limit = os.path.getsize(os.path.join(tmp, "ref.h5")) * 3 // 4
    proc = start(args, tmp, env=dict(os.environ, DCS_WRITERS="4"))
    partial = os.path.join(tmp, "m.h5.partial")
    wait_for_done_planes(partial, proc)
    resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (limit, limit))
    _, err = proc.communicate(timeout=300)
    if proc.returncode != 1:
        raise AssertionError(f"expected exit 1 (a write error), got {proc.returncode}\n{err}")
    assert_in("m.h5.partial: file size limit (ulimit -f)", err)
    assert_in("partial map is kept in m.h5.partial", err)
    with h5py.File(partial, "r") as f:
        done = int(np.sum(f["resume/plane_done"][...]))
    if done < 8:
        raise AssertionError(f"the kept partial file lost done planes ({done} left)")
    proc = subprocess.run([base.DCS] + args + ["--resume"], cwd=tmp, capture_output=True,
                          text=True, env=dict(os.environ, DCS_WRITERS="2"), timeout=300)
    if proc.returncode != 0 or f"{done} of" not in proc.stderr:
        raise AssertionError(f"the resume should reuse {done} planes:\n{proc.stderr}")
    assert_same_map(os.path.join(tmp, "ref.h5"), os.path.join(tmp, "m.h5"))


def drop_to_nobody():
    user = pwd.getpwnam("nobody")
    os.setgid(user.pw_gid)
    os.setuid(user.pw_uid)


@case
def unreadable_partial(tmp):
    """A partial file that cannot be opened is reported with the system's reason (permission
    denied), not as damaged. Root ignores permissions: as root the runs drop to nobody."""
    args = SLOW + ["-o", "m.h5"]
    kept_partial(tmp, args)
    os.chmod(os.path.join(tmp, "m.h5.partial"), 0)
    preexec = None
    if os.geteuid() == 0:
        os.chmod(tmp, 0o777)
        preexec = drop_to_nobody
        probe = subprocess.run([base.DCS, "--version"], capture_output=True, preexec_fn=preexec)
        if probe.returncode != 0:
            print("skipped: the dcs binary cannot be run as nobody here")
            return
    for extra in (["--resume"], []):
        proc = subprocess.run([base.DCS] + args + extra, cwd=tmp, capture_output=True, text=True,
                              preexec_fn=preexec, timeout=300)
        if proc.returncode == 0:
            raise AssertionError(f"{extra}: an unreadable partial file was used\n{proc.stderr}")
        assert_in("cannot open m.h5.partial: Permission denied", proc.stderr)
        if "damaged" in proc.stderr:
            raise AssertionError(f"reported as damaged:\n{proc.stderr}")


@case
def user_file_named_like_the_partial(tmp):
    """A file the user named m.h5.partial is not dcs's: never replaced or removed without --force."""
    partial = os.path.join(tmp, "m.h5.partial")
    with open(partial, "w") as handle:
        handle.write("my notes\n")
    args = ["--atoms", MOLECULE, "--grid", "33", "--device", "cpu", "--no-progress", "-o", "m.h5"]
    for extra in ([], ["--resume"]):
        proc = run(args + extra, tmp, 1)
        assert_in("m.h5.partial exists and is not a dcs partial file (not an HDF5 file)"
                  if not extra else "m.h5.partial is not a dcs partial file (not an HDF5 file)",
                  proc.stderr)
        if "replacing" in proc.stderr:
            raise AssertionError(f"a refused file is not being replaced:\n{proc.stderr}")
        assert_in("--force", proc.stderr)
        with open(partial) as handle:
            if handle.read() != "my notes\n":
                raise AssertionError("the user's file was changed")
    run(args + ["--force"], tmp, 0)
    if os.path.exists(partial) or not os.path.exists(os.path.join(tmp, "m.h5")):
        raise AssertionError("--force should have replaced the file and committed m.h5")


def main(name):
    """Runs one case in a fresh directory (made readable again afterwards: a case may lock its
    files away); `list` prints the cases."""
    if name == "list":
        print("\n".join(CASES))
        return
    with tempfile.TemporaryDirectory(prefix="dcs-store-") as tmp:
        try:
            CASES[name](tmp)
        finally:
            os.chmod(tmp, 0o700)
            for entry in os.listdir(tmp):
                os.chmod(os.path.join(tmp, entry), 0o600)
    print(f"{name}: ok")


if __name__ == "__main__":
    main(sys.argv[3])
