#!/usr/bin/env python3
"""The streaming pipeline through the real `dcs` binary on the CPU backends: kill -9 and SIGTERM
at several points then --resume (bit-identical /potential and /statistics), several CPU workers
and slab sizes (identical files), --memory-limit (bounded resident set, clear refusal), resume
mismatches, skipping complete outputs, compressed maps, DX-only runs, --output-dir creation.

Usage: pipeline_cli_tests.py DCS_BINARY SOURCE_DIR CASE
With DCS_TEST_DEVICE=cuda (the GPU machine) the runs use every GPU instead of CPU workers.
"""
import glob
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from map_files import assert_same_map  # noqa: E402
from synthetic_atoms import write_xyzq  # noqa: E402

DCS, SOURCE = sys.argv[1], sys.argv[2]
MOLECULE = os.path.join(SOURCE, "data", "2lzt.pqr")
DEVICE = os.environ.get("DCS_TEST_DEVICE", "cpu")
ON_GPU = DEVICE.startswith("cuda")  # "cuda" (every GPU) or "cuda:N[,M...]" (those named)


def gpus_used():
    """The GPUs a run with --device DEVICE uses: those named, else every visible one."""
    if DEVICE.startswith("cuda:"):
        return len(DEVICE[len("cuda:"):].split(","))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    return len(glob.glob("/proc/driver/nvidia/gpus/*"))


CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def dcs(args, cwd, expect=0, timeout=600):
    proc = subprocess.run([DCS] + args, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != expect:
        raise AssertionError(f"dcs {' '.join(args)}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


# 17 slabs of 12 planes, 2 buffers. Under the sanitizers (DCS_TEST_SANITIZED=1, the "sanitize"
# test preset; the binary is about 10 times slower) 128^3 points with 1600K give 16 slabs of 8
# planes, 2 buffers: the same kills and resumes in a quarter of the time (the kills are placed at
# fractions of the uninterrupted run's wall time).
SANITIZED = os.environ.get("DCS_TEST_SANITIZED") == "1"
BASE = ["--atoms", MOLECULE, "--grid", "128" if SANITIZED else "200", "--device", DEVICE,
        "--threads", "1", "--memory-limit", "1600K" if SANITIZED else "4M",
        "--checkpoint-interval", "0", "--no-progress"]
GPUS = max(1, gpus_used()) if ON_GPU else 0
if ON_GPU:
    # A GPU computes 2lzt on 200^3 in milliseconds: give the kills a run of about a second
    # (200,000 atoms per GPU on 256^3, every GPU used) and room for 16-plane slabs.
    # Counted without a child process: a CUDA context in a child would count in the RSS test's
    # RUSAGE_CHILDREN peak.
    HEAVY = os.path.join(tempfile.gettempdir(), f"dcs-heavy-{os.getpid()}.xyzq")
    write_xyzq(HEAVY, 200_000 * GPUS)
    # The budget grows with the workers: the atoms are reserved at 64 bytes each (12.8 MB a GPU)
    # and each of the G workers needs a slab buffer besides the writer's (G + 1 at least, 2G + 2
    # ideally, of 16 planes = 4 MiB here), so the runs keep several slabs per GPU on any count.
    BASE = ["--atoms", HEAVY, "--grid", "256", "--device", DEVICE, "--memory-limit",
            f"{48 + 13 * GPUS}M", "--checkpoint-interval", "0", "--no-progress"]


def reference(tmp, extra=()):
    """The uninterrupted run; returns its path and its wall time (to place the kills)."""
    start = time.perf_counter()
    dcs(BASE + list(extra) + ["-o", "ref.h5"], tmp)
    return os.path.join(tmp, "ref.h5"), time.perf_counter() - start


def kill_at(args, cwd, seconds, sig, partial=None):
    """Sends `sig` `seconds` after the start, or, given `partial`, that long after the partial
    file appears (so that the kill lands while slabs are being computed, not during start-up)."""
    proc = subprocess.Popen([DCS] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    if partial is not None:
        deadline = time.time() + 120
        while not os.path.exists(partial) and proc.poll() is None and time.time() < deadline:
            time.sleep(0.005)
    time.sleep(seconds)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def kill9_chain(tmp, extra=()):
    ref, seconds = reference(tmp, extra)
    args = BASE + list(extra) + ["-o", "out.h5"]
    partial = os.path.join(tmp, "out.h5.partial")
    # The first run, killed; then resumed runs killed at later points; then one to completion.
    kills = 0
    reused = 0
    # Later kills for the resumed runs: where slabs are few and fast (four on two H200s) the first
    # kill may precede every checkpoint, a later one must not.
    for index, fraction in enumerate((0.3, 0.45, 0.6)):
        delay = fraction * seconds
        code, err = kill_at(args + (["--resume"] if index else []), tmp, delay, signal.SIGKILL,
                            partial)
        found = re.search(r"resuming .*: (\d+) of", err)
        reused += int(found.group(1)) if found else 0
        if code == 0:
            break  # finished before the kill (fast machine): still compared below
        if os.path.exists(os.path.join(tmp, "out.h5")):
            # The kill landed after the run's atomic rename, while the finished process exited
            # (seen under load): the final name may only ever hold the complete map, so it must
            # be the reference's bit for bit, with no partial left; then as finished.
            if os.path.exists(partial):
                raise AssertionError("a killed run left both the final file and the partial")
            assert_same_map(ref, os.path.join(tmp, "out.h5"))
            break
        kills += 1
        if not os.path.exists(partial):
            raise AssertionError(f"no partial file after kill -9 at {delay} s:\n{err}")
    if kills == 0:
        raise AssertionError("the run finished before the first kill: make the test grid larger")
    proc = dcs(args + ["--resume"], tmp)
    found = re.search(r"resuming .*: (\d+) of", proc.stderr)
    reused += int(found.group(1)) if found else 0
    if reused == 0:
        raise AssertionError(f"the resumed run did not reuse the partial file:\n{proc.stdout}\n"
                             f"{proc.stderr}")
    if os.path.exists(partial):
        raise AssertionError("the partial file is left after completion")
    assert_same_map(ref, os.path.join(tmp, "out.h5"))


@case
def kill9_resume_is_bit_identical(tmp):
    kill9_chain(tmp)


@case
def compressed_kill9_resume(tmp):
    kill9_chain(tmp, ["--compress", "3"])
    with h5py.File(os.path.join(tmp, "out.h5"), "r") as f:
        if f["potential"].compression != "gzip" or not f["potential"].shuffle:
            raise AssertionError("expected a shuffle+gzip dataset")


@case
def sigterm_keeps_partial_and_resumes(tmp):
    ref, seconds = reference(tmp)
    args = BASE + ["-o", "out.h5", "--dx"]
    code, err = kill_at(args, tmp, 0.3 * seconds, signal.SIGTERM, os.path.join(tmp, "out.h5.partial"))
    if code == 0:
        raise AssertionError("finished before SIGTERM: make the grid larger")
    left = sorted(f for f in os.listdir(tmp) if f.startswith("out"))
    if left != ["out.h5.partial"]:
        raise AssertionError(f"after SIGTERM expected only out.h5.partial, found {left}\n{err}")
    if "--resume" not in err:
        raise AssertionError(f"the message should say how to resume:\n{err}")
    dcs(args + ["--resume"], tmp)
    assert_same_map(ref, os.path.join(tmp, "out.h5"))
    if not os.path.exists(os.path.join(tmp, "out.dx")):
        raise AssertionError("the DX file of the resumed run is missing")


@case
def cpu_workers_and_slab_sizes_give_identical_files(tmp):
    common = ["--atoms", MOLECULE, "--grid", "70", "61", "83", "--no-progress"]
    dcs(common + ["-o", "a.h5", "--device", DEVICE], tmp)
    # On GPUs the smallest slab is 16 planes (273 KiB here) and G workers need G + 1 of them.
    small = f"{(GPUS + 1) * 280 + 100}K" if ON_GPU else "300K"
    variants = [["--memory-limit", f"{2 * (GPUS + 1)}M" if ON_GPU else "2M"],
                ["--memory-limit", small]]
    if DEVICE == "cpu":
        variants += [["--cpu-workers", "2"], ["--cpu-workers", "3", "--memory-limit", "2M"]]
    for index, extra in enumerate(variants):
        dcs(common + ["-o", f"b{index}.h5", "--device", DEVICE] + extra, tmp)
        assert_same_map(os.path.join(tmp, "a.h5"), os.path.join(tmp, f"b{index}.h5"))


@case
def memory_limit_bounds_the_resident_set(tmp):
    # A 320^3 map (125 MiB of floats) under a 16 MiB limit: the process never holds the map.
    xyzq = os.path.join(tmp, "few.xyzq")
    with open(xyzq, "w") as handle:
        for n in range(20):
            handle.write(f"{n % 5 * 3.0} {n % 4 * 2.5} {n % 3 * 4.0} {(-1) ** n * 0.5}\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    proc = dcs(["--atoms", xyzq, "--grid", "320", "--device", "cpu", "--memory-limit", "16M",
                "-o", "big.h5", "--no-progress"], tmp)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    map_kib = 320 ** 3 * 4 // 1024
    if peak_kib >= map_kib // 2 or peak_kib <= before:
        raise AssertionError(f"peak RSS {peak_kib} KiB for a {map_kib} KiB map under a 16 MiB "
                             f"limit\n{proc.stderr}")
    with h5py.File(os.path.join(tmp, "big.h5"), "r") as f:
        if f["potential"].shape != (320, 320, 320) or not np.isfinite(f["potential"][-1]).all():
            raise AssertionError("the map is incomplete")


@case
def memory_limit_too_small_is_refused(tmp):
    proc = dcs(["--atoms", MOLECULE, "--grid", "300", "--device", "cpu", "--memory-limit", "100K",
                "-o", "x.h5"], tmp, expect=2)
    if "--memory-limit" not in proc.stderr or "too small" not in proc.stderr:
        raise AssertionError(proc.stderr)
    if os.listdir(tmp):
        raise AssertionError(f"files left: {os.listdir(tmp)}")


@case
def resume_refuses_other_settings(tmp):
    args = BASE + ["-o", "out.h5"]
    # Killed once slabs are being written (a partial still being created holds nothing to
    # resume, and --resume then starts afresh whatever the settings).
    code, _ = kill_at(args, tmp, 0.3, signal.SIGKILL, os.path.join(tmp, "out.h5.partial"))
    if code == 0:
        raise AssertionError("finished before the kill")
    proc = dcs(args + ["--resume", "--dielectric", "2"], tmp, expect=2)
    if "dielectric was 1, now 2" not in proc.stderr:
        raise AssertionError(proc.stderr)
    n = int(args[3])
    proc = dcs(args[:3] + [str(n + 1)] + args[4:] + ["--resume"], tmp, expect=2)
    if f"grid.counts was {n} {n} {n}, now {n + 1} {n + 1} {n + 1}" not in proc.stderr:
        raise AssertionError(proc.stderr)
    # Without --resume the stale partial file is replaced, with a warning.
    proc = dcs(args[:3] + ["40"] + args[4:], tmp)
    if "replacing" not in proc.stderr:
        raise AssertionError(proc.stderr)


@case
def resume_skips_complete_outputs(tmp):
    inputs = []
    for name in ("a", "b"):
        path = os.path.join(tmp, f"{name}.xyzq")
        with open(path, "w") as handle:
            handle.write(f"0 0 0 1\n1 {len(name)} 0 -1\n")
        inputs.append(path)
    dcs(["--atoms"] + inputs + ["--grid", "24", "--output-dir", "maps", "--device", DEVICE], tmp)
    stamp = os.path.getmtime(os.path.join(tmp, "maps", "a.h5"))
    proc = dcs(["--atoms"] + inputs + ["--grid", "24", "--output-dir", "maps", "--device", DEVICE,
                "--resume"], tmp)
    if proc.stdout.count("skipped") != 2:
        raise AssertionError(proc.stdout)
    if os.path.getmtime(os.path.join(tmp, "maps", "a.h5")) != stamp:
        raise AssertionError("a complete output was rewritten")
    # Other settings: a complete file that does not match is refused, not silently kept.
    dcs(["--atoms", inputs[0], "--grid", "25", "--output-dir", "maps", "--device", DEVICE,
         "--resume"], tmp, expect=1)


@case
def dx_only_leaves_no_scratch(tmp):
    common = ["--atoms", MOLECULE, "--grid", "33", "41", "29", "--device", DEVICE, "--no-progress"]
    dcs(common + ["-o", "full.h5", "--dx"], tmp)
    dcs(common + ["--no-hdf5", "--dx", "only.dx", "--memory-limit",
                  f"{max(1024, (GPUS + 1) * 160 + 600)}K" if ON_GPU else "200K"], tmp)
    left = sorted(os.listdir(tmp))
    if left != ["full.dx", "full.h5", "only.dx"]:
        raise AssertionError(f"unexpected files: {left}")

    def data(path):  # the values and grid lines (the header comments hold times and commands)
        with open(path) as handle:
            return [l for l in handle if not l.startswith("#")]
    if data(os.path.join(tmp, "full.dx")) != data(os.path.join(tmp, "only.dx")):
        raise AssertionError("the DX written alone differs from the one beside the HDF5 file")
    with h5py.File(os.path.join(tmp, "full.h5"), "r") as f:
        v = f["potential"][...]
    values = np.array(" ".join(l for l in data(os.path.join(tmp, "full.dx"))
                               if l[:1] in "-0123456789 ").split(), dtype=np.float64)
    # DX is z fastest: x outer, y, z inner.
    if not np.allclose(values, v.transpose(2, 1, 0).ravel(), rtol=6e-7, atol=0):
        raise AssertionError("DX values are not the HDF5 values in z-fastest order")


@case
def gpus_one_and_all_give_identical_files(tmp):
    """On a machine with two or more GPUs: every GPU (dynamic slab scheduling) against one."""
    listing = subprocess.run([DCS, "devices"], capture_output=True, text=True).stdout
    gpus = sum(1 for line in listing.splitlines() if line.startswith("cuda:"))
    if gpus < 2:
        print(f"skipped: needs two CUDA devices, found {gpus}")
        sys.exit(77)
    common = ["--atoms", MOLECULE, "--grid", "301", "--no-progress", "--memory-limit", "256M"]
    dcs(common + ["--device", "cuda:0", "-o", "one.h5"], tmp)
    proc = dcs(common + ["--device", "cuda", "-o", "all.h5"], tmp)
    if f"{gpus} workers" not in proc.stdout:
        raise AssertionError(f"expected {gpus} workers:\n{proc.stdout}")
    assert_same_map(os.path.join(tmp, "one.h5"), os.path.join(tmp, "all.h5"))
    dcs(common + ["--device", "cuda:1,0", "-o", "swapped.h5"], tmp)
    assert_same_map(os.path.join(tmp, "one.h5"), os.path.join(tmp, "swapped.h5"))


@case
def output_dir_is_created(tmp):
    dcs(["--atoms", MOLECULE, "--grid", "16", "--device", DEVICE, "--output-dir", "new/deeper"], tmp)
    if not os.path.exists(os.path.join(tmp, "new", "deeper", "2lzt.h5")):
        raise AssertionError(os.listdir(tmp))


if __name__ == "__main__":
    name = sys.argv[3]
    if name == "list":
        print("\n".join(CASES))
        sys.exit(0)
    try:
        with tempfile.TemporaryDirectory(prefix="dcs-pipeline-") as tmp:
            CASES[name](tmp)
    finally:
        if ON_GPU:
            os.remove(HEAVY)
    print(f"{name}: ok")
