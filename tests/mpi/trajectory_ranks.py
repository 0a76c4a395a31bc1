#!/usr/bin/env python3
"""A trajectory's averaged map over MPI ranks (the MPI build, real mpirun): 2 and 3 ranks give the
bytes of the run without mpirun (and of the serial build, DCS_SERIAL_BIN), --periodic too, and a
run killed under 3 ranks resumes under 2 to the same bytes (each with --profile: its mean and
per-frame profiles too); ranks reading other trajectory bytes are
refused naming the rank and the file.

Usage: trajectory_ranks.py DCS_MPI_BINARY CASE
Data: MDAnalysisTests' adk PSF+DCD (from the package where it imports, else DCS_MD_DATA=DIR with
adk.psf and adk_dims.dcd). DCS_TEST_DEVICE=cuda runs the ranks on GPUs. Exit 77 without mpirun
or data.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py

DCS = sys.argv[1]
CASE = sys.argv[2]
SERIAL = os.environ.get("DCS_SERIAL_BIN", "")
DEVICE = os.environ.get("DCS_TEST_DEVICE", "cpu")
MPIRUN = shutil.which("mpirun")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
NAMES = ("potential", "trajectory/stdev", "trajectory/min", "trajectory/max", "trajectory/frames",
         "trajectory/time_ps")
# --profile: the mean map's profile and each frame's (every run here has one).
PROFILE_NAMES = ("trajectory/profile/potential", "trajectory/profile/frame_potential")


def data_files():
    try:
        import MDAnalysisTests.datafiles as d
        return d.PSF, d.DCD
    except ImportError:
        root = os.environ.get("DCS_MD_DATA", "")
        psf, dcd = os.path.join(root, "adk.psf"), os.path.join(root, "adk_dims.dcd")
        if root and os.path.exists(psf) and os.path.exists(dcd):
            return psf, dcd
    print("SKIPPED: no MDAnalysisTests and no DCS_MD_DATA (scripts/setup-md.sh)")
    sys.exit(77)


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def run(command, expect=0):
    proc = subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=600)
    if proc.returncode != expect:
        fail(f"{' '.join(command)}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}")
    return proc


def mpirun(ranks, args):
    return run([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", str(ranks), DCS] + args)


def datasets(path):
    with h5py.File(path, "r") as h5:
        found = {name: h5[name][...].tobytes() for name in NAMES + PROFILE_NAMES}
    with open(path[:-len(".h5")] + ".profile_frames.csv", "rb") as f:
        found["profile_frames.csv"] = f.read()
    return found


def same(a, b, label):
    da, db = datasets(a), datasets(b)
    for name in da:
        if da[name] != db[name]:
            fail(f"{label}: {name} differs")
    print(f"{label}: identical")


def trajectory_ranks_match_the_serial_run(work, psf, dcd, base, args):
    """2 and 3 ranks (and the MPI build without mpirun) write the bytes of one process."""
    plain = os.path.join(work, "plain.h5")
    run([DCS] + args + ["-o", plain])
    if SERIAL:
        serial = os.path.join(work, "serial.h5")
        run([SERIAL] + args + ["-o", serial])
        same(plain, serial, "MPI build without mpirun vs serial build")
    for ranks in (2, 3):
        out = os.path.join(work, f"r{ranks}.h5")
        mpirun(ranks, args + ["-o", out])
        same(plain, out, f"{ranks} ranks")
        if os.path.exists(out + ".frames.partial") or os.path.exists(out + ".profile.partial"):
            fail("frame statistics or plane sums left behind")
    # More ranks than planes: a rank without planes still agrees, rank 0 still writes.
    thin = args[:-2] + ["--grid", "20", "20", "2"]
    one, three = os.path.join(work, "thin1.h5"), os.path.join(work, "thin3.h5")
    run([DCS] + thin + ["-o", one])
    mpirun(3, thin + ["-o", three])
    same(one, three, "3 ranks, 2 planes")


def periodic_ranks_match_the_serial_run(work, psf, dcd, base, args):
    """--periodic under 2 and 3 ranks writes the bytes of one process."""
    # --periodic (Ewald in each frame's own cell: MDAnalysisTests' AMBER parm7 + NetCDF,
    # a water box; adk's DCD has no cell): 2 and 3 ranks give the bytes of one process,
    # as the open-boundary map does.
    try:
        import MDAnalysisTests.datafiles as d
    except ImportError:
        print("SKIPPED: the periodic case needs MDAnalysisTests (scripts/setup-md.sh)")
        sys.exit(77)
    periodic = ["--topology", d.PRMncdf, "--trajectory", d.NCDF, "--device", DEVICE,
                "--no-progress", "--threads", "1", "--frames", "::3", "--grid", "24",
                "--periodic", "--profile", "b"]
    plain = os.path.join(work, "plain.h5")
    run([DCS] + periodic + ["-o", plain])
    for ranks in (2, 3):
        out = os.path.join(work, f"p{ranks}.h5")
        mpirun(ranks, periodic + ["-o", out])
        same(plain, out, f"--periodic, {ranks} ranks")


def trajectory_killed_under_3_ranks_resumes_under_2(work, psf, dcd, base, args):
    """A run killed under 3 ranks resumes under 2 to the bytes of an uninterrupted one."""
    # Every frame checkpointed; on GPUs a larger grid, so that the run outlasts its start.
    slow = base + ["--checkpoint-interval", "0", "--grid",
                   "128" if DEVICE == "cuda" else "48"]
    whole = os.path.join(work, "whole.h5")
    start = time.time()
    run([DCS] + slow + ["-o", whole])
    took = time.time() - start
    out = os.path.join(work, "killed.h5")
    proc = subprocess.Popen([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", "3",
                             DCS] + slow + ["-o", out], env=ENV,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    # Once the frame statistics exist (after start-up, which under mpirun on GPUs can
    # outlast a short run's computing), a while more, then kill -9 one rank.
    deadline = time.time() + 120
    while time.time() < deadline and not os.path.exists(out + ".frames.partial"):
        time.sleep(0.05)
    time.sleep(max(0.5, took * 0.3))  # mpirun then stops the other ranks
    ranks = subprocess.run(["pgrep", "-f", f"^{DCS} "], capture_output=True,
                           text=True).stdout.split()
    if not ranks:
        fail("no rank running when the frame statistics appeared")
    os.kill(int(ranks[-1]), signal.SIGKILL)
    proc.wait(timeout=120)
    deadline = time.time() + 60
    while time.time() < deadline and subprocess.run(
            ["pgrep", "-f", f"^{DCS} "], capture_output=True).returncode == 0:
        time.sleep(0.1)
    if os.path.exists(out):
        fail(f"finished before the kill ({took:.1f} s uninterrupted)")
    if not os.path.exists(out + ".frames.partial"):
        fail("the kill left no frame statistics")
    resumed = mpirun(2, slow + ["-o", out, "--resume"])
    print([l for l in resumed.stderr.splitlines() if "checkpoints" in l][:2])
    same(whole, out, "killed under 3 ranks, resumed under 2")


def trajectory_ranks_reading_other_bytes_are_named(work, psf, dcd, base, args):
    """Ranks reading different trajectory bytes are refused, naming the rank and the file."""
    # Each rank in its own directory with its own copy of the trajectory; rank 1's has
    # one coordinate byte changed: refused naming the rank and the file, nothing written.
    for rank in (0, 1):
        os.makedirs(os.path.join(work, f"node{rank}"))
        shutil.copy(dcd, os.path.join(work, f"node{rank}", "traj.dcd"))
    with open(os.path.join(work, "node1", "traj.dcd"), "r+b") as f:
        f.seek(-100, os.SEEK_END)
        byte = f.read(1)
        f.seek(-100, os.SEEK_END)
        f.write(bytes([byte[0] ^ 1]))
    out = os.path.join(work, "out.h5")
    wrapper = ["sh", "-c", f'cd "{work}/node$OMPI_COMM_WORLD_RANK" && exec "$0" "$@"', DCS]
    local = ["--topology", psf, "--trajectory", "traj.dcd"] + base[4:] + args[len(base):]
    proc = run([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", "2"] + wrapper +
               local + ["-o", out], expect=3)
    if "traj.dcd: rank 1 read other bytes than rank 0" not in proc.stderr:
        fail(f"the rank and the file are not named:\n{proc.stderr}")
    if [f for f in os.listdir(work) if not f.startswith("node")]:
        fail(f"files left: {os.listdir(work)}")


CASES = {
    "trajectory_ranks_match_the_serial_run": trajectory_ranks_match_the_serial_run,
    "periodic_ranks_match_the_serial_run": periodic_ranks_match_the_serial_run,
    "trajectory_killed_under_3_ranks_resumes_under_2": trajectory_killed_under_3_ranks_resumes_under_2,
    "trajectory_ranks_reading_other_bytes_are_named": trajectory_ranks_reading_other_bytes_are_named,
}


def main():
    if MPIRUN is None:
        print("SKIPPED: no mpirun")
        sys.exit(77)
    if CASE not in CASES:
        fail(f"unknown case {CASE}")
    psf, dcd = data_files()
    base = ["--topology", psf, "--trajectory", dcd, "--device", DEVICE, "--no-progress",
            "--threads", "1", "--profile", "x"]
    args = base + ["--frames", "::4", "--grid", "30"]
    with tempfile.TemporaryDirectory(prefix="dcs-mpi-traj-") as work:
        CASES[CASE](work, psf, dcd, base, args)
    print("trajectory_ranks: OK")

if __name__ == "__main__":
    main()
