#!/usr/bin/env python3
"""Trajectory throughput: frames per second of `dcs --topology --trajectory` end to end (decode,
fit, compute, add, checkpoint, write), against the kernel's own limit measured in the same run:
one map of the same atoms and grid with --null-output (compute only), whose rate is the most
frames per second the GPU(s) can give.

The system is synthetic (numpy only, so it runs where MDAnalysis is absent): N atoms with
charges of +-0.5 e in a 60 Å box, as a PQR topology, and F frames of a random walk written as a
CHARMM DCD (the layout chemfiles and VMD read).

With --periodic the DCD carries the cubic cell (--side, Å) in every frame and every run is
`--periodic` (the Ewald method, kernels/src/periodic on the GPU); --side 100 at 1e5 atoms is
water's density (0.1 atoms/Å³), the issue's 1e5 atoms x 100^3 case.

With --water the system is rigid three-site waters (O -0.834 e, two H +0.417 e) with their
bonds in a PSF topology, every atom wrapped into the cell one by one, so that --pbc whole (the
default) makes the cut molecules whole in every frame: the host's work of a real box.

The decode columns are the host side: reading, making whole, selecting and fitting each frame,
summed over the decoding threads (--decode-threads, default dcs's own choice), and the frames per
second those threads alone could give.

Usage: bench/trajectory_bench.py DCS OUTDIR [--atoms 100000] [--frames 60] [--grid 100]
       [--devices cuda:0 cuda] [--periodic] [--side 60] [--water] [--decode-threads N]
Writes OUTDIR/trajectory_bench.md.
"""
import argparse
import os
import re
import struct
import subprocess
import time

import numpy as np


def write_pqr(path, positions, charges):
    with open(path, "w") as f:
        for i, ((x, y, z), q) in enumerate(zip(positions, charges)):
            f.write(f"ATOM  {i % 100000:5d}  C   RES A{i // 10 % 10000:4d}    "
                    f"{x:8.3f}{y:8.3f}{z:8.3f} {q:7.4f} 1.7000\n")


def fortran_record(f, payload):
    f.write(struct.pack("<i", len(payload)))
    f.write(payload)
    f.write(struct.pack("<i", len(payload)))


def write_dcd(path, frames, side=None):
    """CHARMM DCD; with `side` every frame starts with its cubic cell (A, gamma, B, beta, alpha, C
    as doubles, the angles in degrees: CHARMM 24's layout, which chemfiles reads)."""
    n = frames.shape[1]
    with open(path, "wb") as f:
        icntrl = [0] * 20
        icntrl[0] = len(frames)  # NSET
        icntrl[1] = 0  # ISTART
        icntrl[2] = 1  # NSAVC
        icntrl[3] = len(frames)
        icntrl[10] = 1 if side else 0  # unit cell in every frame
        icntrl[19] = 24  # CHARMM version
        fortran_record(f, b"CORD" + struct.pack("<9i", *icntrl[:9]) + struct.pack("<f", 0.002)
                       + struct.pack("<10i", *icntrl[10:]))
        title = b"dcs trajectory benchmark".ljust(80)
        fortran_record(f, struct.pack("<i", 1) + title)
        fortran_record(f, struct.pack("<i", n))
        for xyz in frames:
            if side:
                fortran_record(f, struct.pack("<6d", side, 90.0, side, 90.0, 90.0, side))
            for axis in range(3):
                fortran_record(f, xyz[:, axis].astype("<f4").tobytes())


def write_water_psf(path, waters):
    """PSF (EXT layout) of `waters` three-site waters, O-H bonds listed."""
    names, charges, masses = ("OH2", "H1", "H2"), (-0.834, 0.417, 0.417), (15.9994, 1.008, 1.008)
    with open(path, "w") as f:
        f.write(f"PSF EXT\n\n         1 !NTITLE\n REMARKS dcs benchmark waters\n\n"
                f"{3 * waters:10d} !NATOM\n")
        f.write("".join(f"{3 * w + a + 1:10d} {'W':<8} {w + 1:<8d} {'TIP3':<8} {names[a]:<8} "
                        f"{'OT' if a == 0 else 'HT':<6} {charges[a]:14.6f}{masses[a]:14.4f}"
                        f"{0:8d}\n" for w in range(waters) for a in range(3)))
        f.write(f"\n{2 * waters:10d} !NBOND: bonds\n")
        pairs = [p for w in range(waters) for p in (3 * w + 1, 3 * w + 2, 3 * w + 1, 3 * w + 3)]
        for k in range(0, len(pairs), 8):
            f.write("".join(f"{p:10d}" for p in pairs[k:k + 8]) + "\n")
        for section in ("NTHETA: angles", "NPHI: dihedrals", "NIMPHI: impropers", "NDON: donors",
                        "NACC: acceptors", "NNB"):
            f.write(f"\n{0:10d} !{section}\n")
        f.write("\n")


def water_frames(rng, atoms, frames, side):
    """Waters (rigid, randomly placed) moving by a random walk, each atom wrapped into the cell."""
    waters = atoms // 3
    oxygen = rng.uniform(0, side, (waters, 3))
    shape = np.array([[0.0, 0.0, 0.0], [0.9572, 0.0, 0.0], [-0.24, 0.9266, 0.0]])
    start = (oxygen[:, None, :] + shape[None]).reshape(3 * waters, 3)
    steps = rng.normal(0, 0.05, (frames, waters, 1, 3)).cumsum(0)
    moved = (start.reshape(1, waters, 3, 3) + steps).reshape(frames, 3 * waters, 3)
    return (moved % side).astype(np.float32)


def run(cmd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    return wall, proc.stderr + proc.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("dcs")
    p.add_argument("outdir")
    p.add_argument("--atoms", type=int, default=100000)
    p.add_argument("--frames", type=int, default=60)
    p.add_argument("--grid", type=int, default=100)
    p.add_argument("--devices", nargs="+", default=["cuda:0", "cuda"])
    p.add_argument("--periodic", action="store_true")
    p.add_argument("--side", type=float, default=60.0)
    p.add_argument("--water", action="store_true")
    p.add_argument("--decode-threads", type=int, default=None)
    p.add_argument("--gpu-workers", type=int, default=None)
    args = p.parse_args()
    work = os.path.join(args.outdir, "trajectory_scratch")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    pqr, dcd = os.path.join(work, "sys.pqr"), os.path.join(work, "sys.dcd")
    if args.water:
        frames = water_frames(rng, args.atoms, args.frames, args.side)
        pqr = os.path.join(work, "sys.psf")  # the topology (bonds: --pbc whole has work)
        write_water_psf(pqr, args.atoms // 3)
        write_dcd(dcd, frames, args.side)
    else:
        start = rng.uniform(0, args.side, (args.atoms, 3))
        charges = np.where(rng.random(args.atoms) < 0.5, -0.5, 0.5)
        steps = rng.normal(0, 0.05, (args.frames, args.atoms, 3)).cumsum(0)
        frames = (start[None] + steps).astype(np.float32)
        write_pqr(pqr, frames[0], charges)
        write_dcd(dcd, frames, args.side if args.periodic else None)
    decoders = ([] if args.decode_threads is None
                else ["--decode-threads", str(args.decode_threads)])
    if args.gpu_workers is not None:
        decoders += ["--gpu-workers", str(args.gpu_workers)]
    rows = []
    grid = ["--grid", str(args.grid), "--no-progress", "--force"]
    if args.periodic:
        grid.append("--periodic")
    box = ["--box", f"{args.side},{args.side},{args.side}"] if args.periodic else []
    for device in args.devices:
        one_map = None
        if not args.water:  # a PSF is no atom file: the one-map run needs the PQR
            _, log = run([args.dcs, "--atoms", pqr, *box, *grid, "--device", device,
                          "--null-output"])
            for line in log.splitlines():
                mm = re.search(r"([0-9.]+) s compute and write", line)
                if mm:
                    one_map = float(mm.group(1))
        null_wall, log_null = run([args.dcs, "--topology", pqr, "--trajectory", dcd, *grid,
                                   *decoders, "--device", device, "--null-output"])
        fps_null = float(re.search(r"\(([0-9.]+) frames/s\)", log_null).group(1))
        out = os.path.join(work, "mean.h5")
        e2e_wall, log_e2e = run([args.dcs, "--topology", pqr, "--trajectory", dcd, *grid,
                                 *decoders, "--device", device, "-o", out])
        fps_engine = float(re.search(r"\(([0-9.]+) frames/s\)", log_e2e).group(1))
        for name, text in (("null", log_null), ("e2e", log_e2e)):  # the runs' own reports
            with open(os.path.join(args.outdir, f"dcs_{device.replace(':', '')}_{name}.log"),
                      "w") as f:
                f.write(text)
        mm = re.search(r"decoding ([0-9.]+) s on ([0-9]+) thread", log_e2e)
        decode, threads = float(mm.group(1)), int(mm.group(2))
        rows.append((device, one_map, fps_null, fps_engine, args.frames / e2e_wall, decode,
                     threads, e2e_wall))
        os.remove(out)
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.strip().replace("\n", "; ")
    except FileNotFoundError:
        gpu = "no GPU (nvidia-smi not found)"
    with open(os.path.join(args.outdir, "trajectory_bench.md"), "w") as f:
        f.write(f"# Trajectory throughput\n\nDevice: {gpu}\n\n"
                f"System: {args.atoms} atoms, {args.frames} frames (DCD), grid {args.grid}^3 "
                f"({args.grid ** 3} points){', periodic in a cubic cell of ' + str(args.side) + ' A' if args.periodic else ''}; "
                f"command: `bench/trajectory_bench.py DCS OUT --atoms {args.atoms} --frames "
                f"{args.frames} --grid {args.grid}{' --periodic --side ' + str(args.side) if args.periodic else ''}"
                f"{' --water' if args.water else ''}"
                f"{' --gpu-workers ' + str(args.gpu_workers) if args.gpu_workers else ''}`\n\n"
                "| device | one map, compute only (s) | kernel limit (frames/s) | frames/s, "
                "--null-output | frames/s, frame engine | frames/s, whole run (process wall) "
                "| decode (s, summed over threads) | decode threads | decode per frame (s) "
                "| decode limit (frames/s) | wall (s) |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|\n")
        for device, one_map, fps_null, fps_engine, fps_e2e, decode, threads, wall in rows:
            limit = f"{1 / one_map:.1f}" if one_map else "?"
            per_frame = decode / args.frames
            f.write(f"| {device} | {one_map if one_map else '?'} | {limit} | {fps_null:.1f} | "
                    f"{fps_engine:.1f} | {fps_e2e:.1f} | {decode:.2f} | {threads} | "
                    f"{per_frame:.4f} | {threads / max(per_frame, 1e-9):.1f} | {wall:.2f} |\n")
    print(open(os.path.join(args.outdir, "trajectory_bench.md")).read())


if __name__ == "__main__":
    main()
