#!/usr/bin/env python3
"""MPI ranks through the real binary under OpenMPI's mpirun (the MPI build, CPU backend): one map
over 1-4 ranks bit-identical to the run without mpirun, a killed rank then --resume with another
rank count, many inputs handed out to ranks, and failures on one rank that stop every rank.

Usage: mpi_tests.py DCS_MPI_BINARY SOURCE_DIR CASE
Environment: DCS_SERIAL_BIN (optional) the serial build's dcs, compared too; DCS_TEST_DEVICE=cuda
runs the ranks on GPUs (the GPU machine).
"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import h5py

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from map_files import assert_same_map  # noqa: E402

DCS, SOURCE = sys.argv[1], sys.argv[2]
SERIAL = os.environ.get("DCS_SERIAL_BIN", "")
DEVICE = os.environ.get("DCS_TEST_DEVICE", "cpu")
MOLECULE = os.path.join(SOURCE, "data", "2lzt.pqr")
APBS = sorted(glob.glob("/usr/share/apbs/examples/**/*.pqr", recursive=True))
CASES = {}
MPIRUN = shutil.which("mpirun")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")


def case(function):
    CASES[function.__name__] = function
    return function


def run(command, cwd, expect=0, timeout=600):
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=ENV)
    if expect is not None and proc.returncode != expect:
        raise AssertionError(f"{' '.join(command)}: exit {proc.returncode}, expected {expect}\n"
                             f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


def mpirun(ranks, args, cwd, expect=0, binary=None):
    return run([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", str(ranks), binary or DCS] + args, cwd, expect)


def no_outputs(directory, allow_partial=False):
    left = [n for n in os.listdir(directory) if n.endswith((".h5", ".dx", ".mrc")) or
            (".tmp" in n) or (n.endswith(".partial") and not allow_partial)]
    assert not left, f"left behind: {left}"


BASE = ["--device", DEVICE, "--no-progress", "--checkpoint-interval", "0"]


@case
def ranks_1_to_4_are_bit_identical(tmp):
    args = ["--atoms", MOLECULE, "--grid", "61", "67", "64"] + BASE
    run([DCS] + args + ["-o", "plain.h5"], tmp)  # the MPI build without mpirun: the serial path
    if SERIAL:
        run([SERIAL] + args + ["-o", "serial.h5"], tmp)
        assert_same_map("plain.h5", "serial.h5")
    for ranks in (1, 2, 3, 4):
        for schedule in ("static", "dynamic"):
            out = f"r{ranks}{schedule}.h5"
            mpirun(ranks, args + ["-o", out, "--mpi-schedule", schedule], tmp)
            assert_same_map("plain.h5", out)
    # --validate under MPI (rank 0 compares with the float64 reference), and a compressed map.
    proc = mpirun(3, args + ["-o", "validated.h5", "--validate"], tmp)
    assert "validate  passed" in proc.stdout, proc.stdout
    assert_same_map("plain.h5", "validated.h5")
    run([DCS] + args + ["-o", "plain_gz.h5", "--compress", "2"], tmp)
    mpirun(2, args + ["-o", "r2_gz.h5", "--compress", "2"], tmp)
    assert_same_map("plain_gz.h5", "r2_gz.h5")
    with h5py.File("r2_gz.h5" if os.getcwd() == tmp else os.path.join(tmp, "r2_gz.h5")) as f:
        assert f["potential"].compression == "gzip", "the parallel store keeps the gzip filter"
    # A launcher that binds the rank to one core is named, with the way out.
    proc = run([MPIRUN, "--bind-to", "core", "-np", "1", DCS] + args + ["-o", "bound.h5"], tmp)
    if (os.cpu_count() or 1) > 1:
        assert "--bind-to none" in proc.stderr, proc.stderr
    # One summary, from rank 0 only.
    proc = mpirun(3, args + ["-o", "summary.h5"], tmp)
    assert proc.stdout.count("summary.h5") == 1, proc.stdout


@case
def msm_ranks_1_and_2_are_bit_identical(tmp):
    """--method msm over ranks: each rank prepares the same lattices and computes its slabs,
    rank 0 measures the error; 1 and 2 ranks give the bytes of the run without mpirun."""
    args = ["--atoms", MOLECULE, "--grid", "61", "67", "64", "--method", "msm"] + BASE
    run([DCS] + args + ["-o", "plain.h5"], tmp)
    for ranks in (1, 2):
        out = f"msm_r{ranks}.h5"
        proc = mpirun(ranks, args + ["-o", out], tmp)
        assert "msm error" in proc.stdout and "met)" in proc.stdout, proc.stdout
        assert_same_map("plain.h5", out)
        with h5py.File(os.path.join(tmp, out), "r") as f:
            assert f["method"].attrs["name"] == "msm" and f["method"].attrs["met"]


@case
def killed_rank_then_resume_with_other_rank_counts(tmp):
    args = ["--atoms", MOLECULE, "--grid", "240", "--threads", "1", "--no-progress",
            "--checkpoint-interval", "0", "--device", DEVICE, "--memory-limit", "8M"]
    if DEVICE == "cuda":  # a GPU maps 2lzt in milliseconds: 200,000 atoms on 256^3 take seconds
        heavy = os.path.join(tmp, "heavy.xyzq")
        state = 12345
        with open(heavy, "w") as handle:
            for _ in range(200_000):
                c = []
                for _ in range(4):
                    state = (state * 1103515245 + 12345) % 2**31
                    c.append(state / 2**31)
                handle.write(f"{c[0] * 60 - 30:.3f} {c[1] * 60 - 30:.3f} {c[2] * 60 - 30:.3f} {c[3] * 1.6 - 0.8:.3f}\n")
        args = ["--atoms", heavy, "--grid", "256", "--no-progress", "--checkpoint-interval", "0",
                "--device", DEVICE, "--memory-limit", "64M"]
    run([DCS] + args + ["-o", "ref.h5"], tmp)
    command = [MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", "2", DCS] + args + ["-o", "k.h5"]
    proc = subprocess.Popen(command, cwd=tmp, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    partial = os.path.join(tmp, "k.h5.partial")
    deadline = time.time() + 120
    done = 0
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
        try:
            with h5py.File(partial, "r", locking=False) as f:
                done = int(f["resume/plane_done"][...].sum())
        except Exception:
            continue
        if done >= 8:
            break
    assert proc.poll() is None, f"the run ended before it could be killed:\n{proc.communicate()}"
    ranks = subprocess.run(["pgrep", "-f", f"^{DCS} "], capture_output=True, text=True).stdout.split()
    assert len(ranks) == 2, f"expected two rank processes, found {ranks}"
    os.kill(int(ranks[-1]), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0, "a killed rank must make the job fail"
    assert not os.path.exists(os.path.join(tmp, "k.h5")), "no final file after a killed rank"
    assert os.path.exists(partial), "the partial file is kept for --resume"
    with h5py.File(partial, "r") as f:
        flagged = int(f["resume/plane_done"][...].sum())
    assert 0 < flagged < 240 if DEVICE == "cpu" else 0 < flagged < 256, f"{flagged} planes flagged done"
    proc = mpirun(3, args + ["-o", "k.h5", "--resume"], tmp)
    assert "slabs to compute (the others are done" in proc.stderr, proc.stderr
    assert_same_map("ref.h5", "k.h5")
    assert not os.path.exists(partial)
    # --resume of a complete output: skipped by every rank count.
    proc = mpirun(2, args + ["-o", "k.h5", "--resume"], tmp)
    assert "complete already" in proc.stdout, proc.stdout


@case
def many_inputs_are_handed_out_to_ranks(tmp):
    inputs = APBS[:6]
    if len(inputs) < 4:
        print("SKIP: apbs-data examples not installed (apt-get install apbs-data)")
        sys.exit(77)
    with open(os.path.join(tmp, "bad.pqr"), "w") as f:
        f.write("ATOM      1  N   ALA A   1       1.000   2.000   x.000  0.1000 1.5000\n")
    args = ["--grid", "33", "--output-dir", "maps"] + BASE
    os.makedirs(os.path.join(tmp, "single"))
    for path in inputs:
        run([DCS, "--atoms", path, "-o", os.path.join("single", os.path.basename(path)[:-4] + ".h5"),
             "--grid", "33"] + BASE, tmp)
    proc = mpirun(3, ["--atoms"] + inputs + ["bad.pqr", "--keep-going"] + args, tmp, expect=3)
    for path in inputs:
        name = os.path.basename(path)[:-4] + ".h5"
        assert_same_map(os.path.join(tmp, "single", name), os.path.join(tmp, "maps", name))
    assert "batch: 7 inputs: 6 written, 0 complete already, 1 failed" in proc.stdout, proc.stdout
    assert "failed: bad.pqr: bad.pqr:1:" in proc.stdout, proc.stdout
    ranks_used = {line.split(" on rank ")[1].split()[0] for line in proc.stdout.splitlines() if " on rank " in line}
    assert len(ranks_used) >= 2, f"inputs should spread over the ranks: {proc.stdout}"
    # --resume: nothing finished is redone.
    before = {n: os.stat(os.path.join(tmp, "maps", n)).st_mtime_ns for n in os.listdir(os.path.join(tmp, "maps"))}
    proc = mpirun(2, ["--atoms"] + inputs + ["--resume"] + args, tmp)
    assert "6 complete already" in proc.stdout, proc.stdout
    after = {n: os.stat(os.path.join(tmp, "maps", n)).st_mtime_ns for n in os.listdir(os.path.join(tmp, "maps"))}
    assert before == after, "a resumed batch rewrote complete outputs"
    # Without --keep-going the first failure stops the batch on every rank.
    proc = mpirun(2, ["--atoms", "bad.pqr"] + inputs + ["--force", "--grid", "33", "--output-dir", "m2"] + BASE,
                  tmp, expect=3)
    assert "failed: bad.pqr" in proc.stdout, proc.stdout


@case
def a_failure_on_one_rank_stops_every_rank(tmp):
    # A file missing on rank 1 only: each rank starts in its own directory.
    for rank in (0, 1):
        os.makedirs(os.path.join(tmp, f"node{rank}"))
    shutil.copy(MOLECULE, os.path.join(tmp, "node0", "mol.pqr"))
    out = os.path.join(tmp, "out.h5")
    wrapper = ["sh", "-c", f'cd "{tmp}/node$OMPI_COMM_WORLD_RANK" && exec "$0" "$@"', DCS]
    args = ["--atoms", "mol.pqr", "--grid", "40", "-o", out] + BASE
    proc = run([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", "2"] + wrapper + args, tmp, expect=3)
    assert "rank 1 failed: mol.pqr: no such file" in proc.stderr, proc.stderr
    no_outputs(tmp)
    # Different bytes on two ranks: refused, naming the rank.
    with open(os.path.join(tmp, "node1", "mol.pqr"), "w") as f:
        f.write(open(MOLECULE).read().replace(" 1.000 ", " 1.001 ", 1) + "REMARK differs\n")
    proc = run([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", "2"] + wrapper + args, tmp, expect=3)
    assert "rank 1 read other bytes than rank 0" in proc.stderr, proc.stderr
    no_outputs(tmp)
    # An output directory that cannot be created (a regular file in the way): clear error.
    open(os.path.join(tmp, "blocker"), "w").close()
    proc = mpirun(2, ["--atoms", MOLECULE, "--grid", "40", "--output-dir", "blocker/maps"] + BASE, tmp,
                  expect=None)
    assert proc.returncode != 0 and "blocker" in proc.stderr, proc.stderr
    no_outputs(tmp)
    # --device cuda where a rank has no GPU: every rank exits with the reason.
    if DEVICE == "cpu":
        proc = mpirun(2, ["--atoms", MOLECULE, "--grid", "40", "-o", out, "--device", "cuda",
                          "--no-progress"], tmp, expect=2)
        assert "--device cuda" in proc.stderr, proc.stderr
        no_outputs(tmp)


@case
def ensembles_over_ranks_match_the_serial_run(tmp):
    atoms = [line for line in open(MOLECULE) if line.startswith("ATOM")]
    with open(os.path.join(tmp, "ens.pqr"), "w") as f:
        for number, shift in ((1, 0.0), (4, 0.7), (7, -1.3)):
            f.write(f"MODEL     {number:4d}\n")
            for line in atoms:
                x = float(line[30:38]) + shift
                f.write(line[:30] + f"{x:8.3f}" + line[38:])
            f.write("ENDMDL\n")
    args = ["--atoms", "ens.pqr", "--grid", "37"] + BASE
    run([DCS] + args + ["--models", "each", "--output-dir", "serial"], tmp)
    proc = mpirun(2, args + ["--models", "each", "--output-dir", "ranks"], tmp)
    names = sorted(os.listdir(os.path.join(tmp, "serial")))
    assert names == ["ens.model1.h5", "ens.model4.h5", "ens.model7.h5"], names
    assert sorted(os.listdir(os.path.join(tmp, "ranks"))) == names
    for name in names:
        assert_same_map(os.path.join(tmp, "serial", name), os.path.join(tmp, "ranks", name))
    assert "batch: 3 maps: 3 written" in proc.stdout, proc.stdout
    run([DCS] + args + ["--models", "average", "-o", "avg_serial.h5"], tmp)
    mpirun(3, args + ["--models", "average", "-o", "avg_ranks.h5"], tmp)
    assert_same_map("avg_serial.h5", "avg_ranks.h5")


def main():
    name = sys.argv[3]
    if MPIRUN is None:
        print("SKIP: mpirun not found (apt-get install openmpi-bin)")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="dcs-mpi-") as tmp:
        os.chdir(tmp)
        CASES[name](tmp)
    print(f"{name}: passed")


if __name__ == "__main__":
    main()
