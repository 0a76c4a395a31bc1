#!/usr/bin/env python3
"""Scaling over the GPUs of one machine (issue 36 item 4): for 1, 2, ... N GPUs (N: the GPUs
visible here, or --gpus), each case end to end with its floor measured in the same call:

  case                           run                                    floor
  exact 1.5e6 atoms x 464^3      dcs -o map.h5                          max(dd of the map's bytes
  exact 1e6 atoms x 256^3        dcs -o map.h5                          by 4 writers, conv=
                                                                        fdatasync; the same run
                                                                        with --null-output)
  msm 1.5e6 atoms x 464^3        dcs --method msm -o map.h5             as above
  trajectory 1e5 atoms x 100^3   dcs --topology --trajectory -o mean.h5 the same with
                                                                        --null-output

The atoms are e2e_bench's random PQR atoms (a fixed seed) and trajectory_bench's random walk;
N GPUs are `--device cuda:0,1,...,N-1`. Each row gives the wall time, its floor, the speed-up
over one GPU and the goal from the issue (>= 0.9 N end to end). On a machine with one GPU it
runs the one-GPU rows only; --quick shrinks every case (a smoke test, also on a CPU with
--device cpu, where the GPU counts are replaced by one CPU run).

Usage: bench/scaling_bench.py DCS OUTDIR [--gpus 1 2 4] [--cases exact464 exact256 msm traj]
                              [--quick] [--device cpu]
Writes OUTDIR/scaling_bench.md and OUTDIR/scaling_bench.log (every run's -vv output).
"""
import argparse
import os
import re
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_bench import busy, device_name, engine_seconds, write_random_atoms  # noqa: E402
from pipeline_bench import logged_run  # noqa: E402
from trajectory_bench import write_dcd, write_pqr  # noqa: E402
from writer_bench import dd_parallel  # noqa: E402

# name: (atoms, grid, extra dcs arguments); --quick divides atoms by 100 and the grid by 4.
MAPS = {"exact464": (1_500_000, 464, []), "exact256": (1_000_000, 256, []),
        "msm": (1_500_000, 464, ["--method", "msm", "--msm-error", "1e-3"])}
TRAJ = (100_000, 60, 100)  # atoms, frames, grid


def visible_gpus():
    listing = device_name()
    found = re.match(r"(\d+) ×", listing)
    return int(found.group(1)) if found else 0


def trajectory_inputs(work, atoms, frames):
    """trajectory_bench's system: random charges of +-0.5 e in a 60 A box, a random walk."""
    rng = np.random.default_rng(7)
    start = rng.uniform(0, 60.0, (atoms, 3))
    charges = np.where(rng.random(atoms) < 0.5, -0.5, 0.5)
    walk = (start[None] + rng.normal(0, 0.05, (frames, atoms, 3)).cumsum(0)).astype(np.float32)
    pqr, dcd = os.path.join(work, "traj.pqr"), os.path.join(work, "traj.dcd")
    write_pqr(pqr, walk[0], charges)
    write_dcd(dcd, walk, None)
    return pqr, dcd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dcs")
    parser.add_argument("outdir")
    parser.add_argument("--gpus", type=int, nargs="+", help="GPU counts (default 1..visible)")
    parser.add_argument("--cases", nargs="+", default=["exact464", "exact256", "msm", "traj"],
                        choices=["exact464", "exact256", "msm", "traj"])
    parser.add_argument("--quick", action="store_true", help="small cases (a smoke test)")
    parser.add_argument("--device", default="cuda", help="cuda, or cpu for a smoke test")
    args = parser.parse_args()
    on_gpu = args.device == "cuda"
    counts = args.gpus or list(range(1, max(1, visible_gpus()) + 1))
    if not on_gpu:
        counts = [1]
    scratch = os.path.join(args.outdir, "scratch")
    os.makedirs(scratch, exist_ok=True)
    log = open(os.path.join(args.outdir, "scaling_bench.log"), "w")

    def device(gpus):
        return ",".join(f"cuda:{g}" for g in range(gpus)) if on_gpu else "cpu"

    def dcs(extra, label, gpus):
        return logged_run([args.dcs, "--no-progress", "-vv", "--device", device(gpus)] + extra,
                          label, log)

    rows = []  # case, GPUs, wall, floor, floor note, speed-up, goal, notes
    for case in args.cases:
        if case == "traj":
            atoms, frames, grid = TRAJ
            if args.quick:
                atoms, frames, grid = atoms // 100, 12, grid // 4
            pqr, dcd = trajectory_inputs(scratch, atoms, frames)
            common = ["--topology", pqr, "--trajectory", dcd, "--grid", str(grid), "--force"]
            label = f"trajectory {atoms:.0e} atoms × {grid}³, {frames} frames"
        else:
            atoms, grid, extra = MAPS[case]
            if args.quick:
                atoms, grid = atoms // 100, grid // 4
            pqr = os.path.join(scratch, f"{atoms}.pqr")
            if not os.path.exists(pqr):
                write_random_atoms(pqr, atoms)
            common = ["--atoms", pqr, "--grid", str(grid), "--force"] + extra
            label = f"{'msm' if case == 'msm' else 'exact'} {atoms:.1e} atoms × {grid}³"
        one = None
        for gpus in counts:
            out = os.path.join(scratch, "out.h5")
            compute, _, _ = dcs(common + ["--null-output"], f"{case} null {gpus}", gpus)
            wall, rss, text = dcs(common + ["-o", out], f"{case} {gpus}", gpus)
            nbytes = os.path.getsize(out)
            os.remove(out)
            dd = dd_parallel(scratch, nbytes, 4)
            floor = max(dd, compute)
            one = one or wall
            fps = re.search(r"\(([0-9.]+) frames/s\)", text)
            notes = (f"compute only {compute:.2f} s; dd ×4 {dd:.2f} s; engine "
                     f"{engine_seconds(text):.2f} s; {busy(text)} busy; peak RSS "
                     f"{rss / 2**30:.2f} GiB" + (f"; {fps.group(1)} frames/s" if fps else ""))
            rows.append((label, gpus if on_gpu else "cpu", wall, floor, wall / floor,
                         one / wall, f"≥ {0.9 * gpus:.1f} ×" if gpus > 1 else "—", notes))
            print(rows[-1], flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    with open(os.path.join(args.outdir, "scaling_bench.md"), "w") as md:
        md.write(f"Device: {device_name()}; {os.cpu_count()} cores; command: "
                 f"bench/scaling_bench.py DCS OUT --gpus {' '.join(map(str, counts))} --cases "
                 f"{' '.join(args.cases)}{' --quick' if args.quick else ''}\n\n"
                 "| case | GPUs | end to end s | floor s | wall / floor | speed-up | goal | "
                 "notes |\n|---|---|---|---|---|---|---|---|\n")
        for label, gpus, wall, floor, ratio, speed, goal, notes in rows:
            md.write(f"| {label} | {gpus} | {wall:.2f} | {floor:.2f} | {ratio:.2f} | "
                     f"{speed:.2f} × | {goal} | {notes} |\n")
        md.write("\nfloor = max(dd of the output's bytes by 4 parallel writers with "
                 "conv=fdatasync, the same run with --null-output at the same GPU count); "
                 "speed-up = one GPU's wall / this row's wall.\n")
    print(open(os.path.join(args.outdir, "scaling_bench.md")).read())


if __name__ == "__main__":
    main()
