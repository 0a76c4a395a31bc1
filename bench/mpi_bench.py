#!/usr/bin/env python3
"""MPI strong scaling of one map: 1, 2, 4 ranks (static and dynamic slab assignment) on the CPU
backend, and on GPUs (one per rank where there are enough), against the run without mpirun.
Each configuration's map is compared byte for byte with the first; the ideal for N ranks is the
1-rank time / N (the limit: ranks share nothing but the file).

Usage: mpi_bench.py DCS_MPI_BINARY OUTDIR [--grid N] [--ranks 1,2,4] [--repeats R] [--gpu-atoms N]
Writes OUTDIR/mpi_bench.md.
"""
import argparse
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

import h5py

# The same synthetic atoms as the pipeline tests' (tests/support/synthetic_atoms.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "support"))
from synthetic_atoms import write_xyzq  # noqa: E402

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")


def timed(command, cwd):
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=ENV)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    match = re.search(r"time\s+([\d.]+) s total, ([\d.]+) s compute and write", proc.stdout)
    return wall, float(match.group(2)) if match else float("nan")


def potential_bytes(path):
    with h5py.File(path, "r") as f:
        return f["potential"][...].tobytes()


def gpu_count():
    try:
        return len(subprocess.run(["nvidia-smi", "--list-gpus"], capture_output=True, text=True).stdout.splitlines())
    except FileNotFoundError:
        return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dcs")
    parser.add_argument("outdir")
    parser.add_argument("--grid", type=int, default=128, help="CPU case grid (compute-bound)")
    parser.add_argument("--cpu-atoms", type=int, default=100_000)
    parser.add_argument("--ranks", default="1,2,4")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--gpu-atoms", type=int, default=200_000)
    parser.add_argument("--gpu-only", action="store_true", help="skip the CPU cases")
    args = parser.parse_args()
    dcs = os.path.abspath(args.dcs)
    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    molecule = os.path.join(source, "data", "2lzt.pqr")
    mpirun = shutil.which("mpirun")
    ranks = [int(r) for r in args.ranks.split(",")]
    rows = []
    with tempfile.TemporaryDirectory(prefix="dcs-mpibench-") as tmp:
        cpu_atoms = os.path.join(tmp, "cpu.xyzq")
        write_xyzq(cpu_atoms, args.cpu_atoms)
        cases = [] if args.gpu_only else [("cpu", cpu_atoms, args.grid), ("cpu", molecule, 256)]
        gpus = gpu_count()
        if gpus > 0:
            heavy = os.path.join(tmp, "heavy.xyzq")
            write_xyzq(heavy, args.gpu_atoms)
            cases.append(("cuda", heavy, 256))
        for device, atoms, grid in cases:
            base = ["--atoms", atoms, "--grid", str(grid), "--device", device, "--no-progress", "--force"]
            reference = None
            best = {}
            for label, command_prefix in [("no mpirun", [])] + [
                    (f"{n} rank{'s' if n > 1 else ''} {schedule}", [mpirun, "--oversubscribe", "--bind-to", "none", "-np", str(n)])
                    for n in ranks for schedule in ("static", "dynamic")]:
                extra = [] if not command_prefix else ["--mpi-schedule", label.split()[-1]]
                out = os.path.join(tmp, "map.h5")
                times = [timed(command_prefix + [dcs] + base + extra + ["-o", out], tmp) for _ in range(args.repeats)]
                wall, engine = min(times)
                data = potential_bytes(out)
                reference = reference or data
                n = int(label.split()[0]) if command_prefix else 1
                schedule = label.split()[-1]
                if command_prefix and n == 1:
                    best[schedule] = wall
                # The ideal: N x faster when each rank brings its own GPU; the same time when the
                # ranks split one node's cores or share GPUs.
                resources = min(n, gpus) if device == "cuda" else 1
                efficiency = best[schedule] / wall / resources if schedule in best else float("nan")
                rows.append((device, label, n, wall, engine, efficiency, data == reference,
                             " ".join(["mpirun --bind-to none -np", str(n)] if command_prefix else []) + " dcs " + " ".join(base + extra)))
        device_text = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                                     text=True).stdout.strip().replace("\n", ", ") if gpus else "none"
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    lines = ["# MPI strong scaling of one map", "",
             f"- host CPU: {cpu}, {os.cpu_count()} hardware threads; GPUs: {device_text} ({gpus})",
             f"- binary: {dcs}; OpenMPI: {subprocess.run([mpirun, '--version'], capture_output=True, text=True).stdout.splitlines()[0]}",
             f"- {platform.node()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; best of {args.repeats}",
             "- wall: mpirun to exit (start-up, reading, compute, write, commit); engine: the slowest rank's "
             "compute-and-write phase; efficiency: 1-rank wall (same schedule, under mpirun) / (N x wall) (1.0 = the ideal of N ranks "
             "sharing nothing but the file). CPU ranks split the cores (--threads = cores / ranks per node).",
             "- cases: CPU, compute-bound (random atoms x grid^3) and write-heavy (2lzt x 256^3, 64 MiB map); "
             "GPU: random atoms x 256^3.",
             "- GPU ranks: one GPU per rank when there are enough GPUs; with fewer, ranks share a GPU and "
             "no speed-up is possible (the row then only checks the map).", "",
             "| device | run | ranks | wall (s) | engine (s) | efficiency | map identical |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for device, label, n, wall, engine, eff, same, command in rows:
        case_name = command.split("--atoms ")[1].split()[0].rsplit("/", 1)[-1] + " " + command.split("--grid ")[1].split()[0] + "^3"
        lines.append(f"| {device} {case_name} | {label} | {n} | {wall:.3f} | {engine:.3f} | {eff:.2f} | {'yes' if same else 'NO'} |")
    lines += ["", "Commands:", ""] + [f"    {command}" for *_, command in rows]
    os.makedirs(args.outdir, exist_ok=True)
    with open(os.path.join(args.outdir, "mpi_bench.md"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    if not all(row[6] for row in rows):
        sys.exit("a map differed")


if __name__ == "__main__":
    main()
