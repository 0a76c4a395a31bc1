#!/usr/bin/env python3
"""The trajectory job's files through the real `dcs` binary: a damaged frame-maps partial under
--resume, output names that collide with the frame maps, long selections, the free space of
every file together, a trajectory changed before --resume, a DCD cut in its header. The
trajectories are small synthetic DCD files (a PQR topology), written here.

Usage: trajectory_files_tests.py DCS_BINARY SOURCE_DIR CASE
"""
import os
import signal
import struct
import subprocess
import sys
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import assert_in, run  # noqa: E402

SANITIZED = os.environ.get("DCS_TEST_SANITIZED") == "1"
CASES = {}


def case(function):
    CASES[function.__name__] = function
    return function


def write_pqr(path, count):
    """`count` atoms on a jittered lattice, charges +-0.5, residue names ALA/GLY."""
    rng = np.random.default_rng(7)
    with open(path, "w") as f:
        for i in range(count):
            x, y, z = (i % 10) * 2.0, (i // 10 % 10) * 2.0, (i // 100) * 2.0
            x, y, z = np.array([x, y, z]) + rng.uniform(-0.3, 0.3, 3)
            q = 0.5 if i % 2 else -0.5
            resname = "ALA" if i % 3 else "GLY"
            f.write(f"ATOM  {i + 1:5d}  C   {resname} A{i // 10 + 1:4d}    "
                    f"{x:8.3f}{y:8.3f}{z:8.3f} {q:7.4f} 1.7000\n")


def record(payload):
    return struct.pack("<i", len(payload)) + payload + struct.pack("<i", len(payload))


def dcd_bytes(frames):
    """A CHARMM DCD (no unit cell) of `frames`: float32 array [frame][atom][3]."""
    n = frames.shape[1]
    icntrl = [0] * 20
    icntrl[0] = len(frames)
    icntrl[2] = 1
    icntrl[3] = len(frames)
    icntrl[19] = 24
    out = record(b"CORD" + struct.pack("<9i", *icntrl[:9]) + struct.pack("<f", 0.002) +
                 struct.pack("<10i", *icntrl[10:]))
    out += record(struct.pack("<i", 1) + b"dcs hostile trajectory".ljust(80))
    out += record(struct.pack("<i", n))
    for xyz in frames:
        for axis in range(3):
            out += record(xyz[:, axis].astype("<f4").tobytes())
    return out


def make_system(tmp, atoms=300, frames=12, seed=3):
    """top.pqr and traj.dcd in `tmp`: `atoms` atoms moving a little over `frames` frames."""
    write_pqr(os.path.join(tmp, "top.pqr"), atoms)
    rng = np.random.default_rng(seed)
    base_xyz = np.array([[(i % 10) * 2.0, (i // 10 % 10) * 2.0, (i // 100) * 2.0]
                         for i in range(atoms)])
    xyz = base_xyz[None, :, :] + rng.normal(0.0, 0.4, (frames, atoms, 3))
    with open(os.path.join(tmp, "traj.dcd"), "wb") as f:
        f.write(dcd_bytes(xyz.astype(np.float32)))
    return ["--topology", "top.pqr", "--trajectory", "traj.dcd", "--device", "cpu",
            "--no-progress"]


def start(args, cwd):
    return subprocess.Popen([base.DCS] + args, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def checkpointed_frames(path, z=0):
    """Frames the statistics checkpoint holds for plane z (its best valid slot), 0 if none."""
    try:
        with open(path, "rb") as f:
            head = f.read(48)
            nx, ny = struct.unpack("<qq", head[16:32])
            key_bytes = struct.unpack("<I", head[12:16])[0]
            header = max(4096, (48 + key_bytes + 4095) // 4096 * 4096)
            slot = 32 + nx * ny * 24
            best = 0
            for s in range(2):
                f.seek(header + (2 * z + s) * slot)
                magic, plane, frames = struct.unpack("<Qqq", f.read(24))
                if magic == 0x31544F4C53434644 and plane == z:
                    best = max(best, frames)
            return best
    except (OSError, struct.error):
        return 0


def stopped_run(tmp, args, frames):
    """A run (-o m.h5) stopped by SIGTERM once plane 0 has `frames` frames checkpointed."""
    proc = start(args, tmp)
    deadline = time.time() + 120
    while checkpointed_frames(os.path.join(tmp, "m.h5.frames.partial")) < frames:
        if proc.poll() is not None or time.time() > deadline:
            raise AssertionError(f"no checkpointed frames (exit {proc.poll()})")
        time.sleep(0.01)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    if proc.returncode != 143:
        raise AssertionError(f"SIGTERM: exit {proc.returncode}\n{err}")


def listing(tmp):
    return sorted(f for f in os.listdir(tmp) if f not in ("top.pqr", "traj.dcd"))


@case
def nan_in_frame_maps_partial_is_recomputed(tmp):
    """A NaN planted in a checkpointed frame of <stem>.frames.h5.partial: --resume finds it
    (the frames' statistics no longer follow from the maps kept), computes those planes again
    and commits the uninterrupted run's frame maps, with no NaN."""
    grid = "24" if SANITIZED else "48"  # about 3 s a run unsanitized on one thread
    args = make_system(tmp, atoms=1500, frames=40) + [
        "--grid", grid, "--threads", "1", "--frame-maps", "--checkpoint-interval", "0"]
    run(args + ["-o", "ref.h5"], tmp, 0)
    stopped_run(tmp, args + ["-o", "m.h5"], frames=4)
    with h5py.File(os.path.join(tmp, "m.frames.h5.partial"), "r+") as f:
        f["frame_maps"][1, 5, 7, 3] = np.nan
    proc = run(args + ["-o", "m.h5", "--resume"], tmp, 0)
    assert_in("m.frames.h5.partial", proc.stderr)
    assert_in("plane 5", proc.stderr)
    with h5py.File(os.path.join(tmp, "ref.frames.h5"), "r") as ref, \
            h5py.File(os.path.join(tmp, "m.frames.h5"), "r") as got:
        if not np.isfinite(got["frame_maps"][...]).all():
            raise AssertionError("the resumed frame maps hold a NaN")
        if not np.array_equal(ref["frame_maps"][...], got["frame_maps"][...]):
            raise AssertionError("the resumed frame maps differ from the uninterrupted run's")
    with h5py.File(os.path.join(tmp, "ref.h5"), "r") as ref, \
            h5py.File(os.path.join(tmp, "m.h5"), "r") as got:
        if not np.array_equal(ref["potential"][...], got["potential"][...]):
            raise AssertionError("the resumed mean map differs from the uninterrupted run's")


@case
def frame_maps_name_is_checked_with_the_outputs(tmp):
    """--dx or --mrc named like the frame maps: refused before any work (exit 2, nothing
    written), with --force too."""
    args = make_system(tmp, atoms=30, frames=3) + ["--grid", "16", "--frame-maps"]
    for option in ("--dx", "--mrc"):
        for force in ([], ["--force"]):
            proc = run(args + ["-o", "m.h5", option, "m.frames.h5"] + force, tmp, 2)
            assert_in("m.frames.h5", proc.stderr)
            assert_in("the frame maps", proc.stderr)
            if listing(tmp):
                raise AssertionError(f"{option} {force}: files left: {listing(tmp)}")
    # No HDF5 output: the frame maps are named after the DX file; the MRC file cannot be them.
    proc = run(args + ["--no-hdf5", "--dx", "m.dx", "--mrc", "m.frames.h5"], tmp, 2)
    assert_in("the frame maps", proc.stderr)
    if listing(tmp):
        raise AssertionError(f"--no-hdf5: files left: {listing(tmp)}")


@case
def long_selections_work(tmp):
    """A --select and an --align of 20 KB each (long residue lists): the run works, the map
    file records them whole (/trajectory/select_text, align_text; the attributes and settings
    by size and SHA-256); --resume of the finished run finds it complete."""
    args = make_system(tmp, atoms=300, frames=3) + ["--grid", "16"]
    ids = " ".join(str(i) for i in range(1, 4000))
    select = f"resid {ids} or resname ALA"
    align = f"resname GLY and resid {ids}"
    run(args + ["-o", "m.h5", "--select", select, "--align", align, "--frame-maps"], tmp, 0)
    with h5py.File(os.path.join(tmp, "m.h5"), "r") as f:
        group = f["trajectory"]
        if (group["select_text"][0].decode() != select or
                group["align_text"][0].decode() != align):
            raise AssertionError("the map file does not hold the selections whole")
        assert_in("SHA-256", group.attrs["select"])
    if listing(tmp) != ["m.frames.h5", "m.h5", "m.pqr"]:  # m.pqr: the fitted first frame
        raise AssertionError(f"files: {listing(tmp)}")
    proc = run(args + ["-o", "m.h5", "--select", select, "--align", align, "--frame-maps",
                       "--resume"], tmp, 0)
    assert_in("complete", proc.stderr)


@case
def free_space_counts_every_file_together(tmp):
    """The frame statistics and the frame maps each fit in the free space but not together:
    refused before any work (exit 1, an I/O failure), naming the sum, nothing written."""
    info = os.statvfs(tmp)
    free = info.f_bavail * info.f_frsize
    # 12 frames: the frame maps (4 B a point a frame) as large as the statistics (48 B a point);
    # each 70 % of the free space.
    points = int(0.7 * free / 48)
    n = int(round(points ** (1 / 3)))
    if n > 4000:
        print(f"skipped: {free} bytes free would need a {n}^3 grid")
        return
    args = make_system(tmp, atoms=3, frames=12) + [
        "--grid", str(n), "--frame-maps", "--memory-limit", "64M", "--threads", "1"]
    try:
        proc = run(args + ["-o", "m.h5"], tmp, 1, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("the run was not refused up front (still running after 60 s)")
    assert_in("free", proc.stderr)
    assert_in("the frame maps", proc.stderr)
    assert_in("the frame statistics", proc.stderr)
    if listing(tmp):
        raise AssertionError(f"files left: {listing(tmp)}")


@case
def changed_trajectory_is_named_on_resume(tmp):
    """A trajectory file changed between a stopped run and --resume: the refusal names the file
    and what changed (exit 2, as any other resume mismatch)."""
    args = make_system(tmp, atoms=600, frames=40) + [
        "--grid", "24" if SANITIZED else "48", "--threads", "1", "--checkpoint-interval", "0"]
    stopped_run(tmp, args + ["-o", "m.h5"], frames=2)
    make_system(tmp, atoms=600, frames=40, seed=4)  # the same size, other positions
    proc = run(args + ["-o", "m.h5", "--resume"], tmp, 2)
    assert_in("trajectory file 1 traj.dcd changed: SHA-256", proc.stderr)


@case
def dcd_cut_in_its_atom_count_names_the_file(tmp):
    """A DCD cut inside its atom-count record: refused naming the file."""
    args = make_system(tmp, atoms=30, frames=3) + ["--grid", "16"]
    with open(os.path.join(tmp, "traj.dcd"), "rb") as f:
        data = f.read()
    count = 4 + 84 + 4 + 4 + 4 + 80 + 4  # where the atom-count record starts
    for cut in (count + 2, count + 4, count + 8, count + 10):  # in the count, in the end marker
        with open(os.path.join(tmp, "traj.dcd"), "wb") as f:
            f.write(data[:cut])
        proc = run(args + ["-o", "m.h5"], tmp, 3)
        assert_in("traj.dcd: truncated DCD header (atom count record)", proc.stderr)
        if "''" in proc.stderr or listing(tmp):
            raise AssertionError(f"cut at {cut}: {proc.stderr} {listing(tmp)}")


if __name__ == "__main__":
    base.main(CASES, prefix="dcs-trajectory-")
