#!/usr/bin/env python3
"""End to end against its floors (issue 24), every case with its floor measured in the same run:

  case                        end to end                        floor
  2lzt x 1700^3               dcs -o map.h5                     dd of the same bytes, bs=16M,
                                                                conv=fdatasync (also without sync)
  2lzt x 1024^3, --compress 1 dcs -o map.h5 --compress 1        the same map uncompressed
  10^6 atoms x 256^3          dcs -o map.h5                     the engine's own time (compute
                                                                and write, from its summary) +
                                                                a bare CUDA process (driver,
                                                                context, exit: no GPU run can
                                                                take less)
  2lzt x 256^3                dcs -o map.h5 (README's first)    the same
  10^6 atoms, 1 -> 2 GPUs     speed-up end to end and engine    byte comparison of the maps

Each dcs run is timed from fork to exit (wall), its peak RSS from wait4, and its -vv log (every
line stamped with seconds since start) kept in OUTDIR/e2e_bench.log, so that the time before
the first slab can be read off.

Usage: bench/e2e_bench.py DCS OUTDIR [--gpus 1 2] [--quick] [--commit HASH]
Writes OUTDIR/e2e_bench.md; maps go to OUTDIR/scratch and are removed after each run.
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pipeline_bench import logged_run  # noqa: E402  (one copy of the fork/wait4 timing)


def dd_write(path, nbytes, sync):
    """Seconds to write nbytes of zeros with dd bs=16M (conv=fdatasync when sync)."""
    block = 16 << 20
    cmd = ["dd", "if=/dev/zero", f"of={path}", f"bs={block}", f"count={(nbytes + block - 1) // block}",
           "status=none"] + (["conv=fdatasync"] if sync else [])
    start = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - start
    os.remove(path)
    return wall


def engine_seconds(text):
    """The summary's 'X s compute and write' (the slab engine, from the first slab to the last)."""
    found = re.search(r"([0-9.]+) s compute and write", text)
    return float(found.group(1)) if found else float("nan")


def write_seconds(text):
    found = re.search(r"([0-9.]+) s writing", text)
    return float(found.group(1)) if found else float("nan")


def busy(text):
    found = re.search(r"(\d+) workers? (\d+)% busy", text)
    return f"{found.group(1)} × {found.group(2)} %" if found else "—"


def first_slab_seconds(text):
    """Seconds from start to the engine's start, read off the -vv stamps ('store ... ready')."""
    found = re.search(r"\+([0-9.]+) s info: store .* ready", text)
    return float(found.group(1)) if found else float("nan")


def bare_cuda_seconds(dcs):
    """Wall of a process that only starts CUDA on device 0 and exits (dcs_cuda_startup_probe
    beside dcs; the fastest of three): no run on a GPU can end sooner after it starts."""
    probe = os.path.join(os.path.dirname(os.path.abspath(dcs)), "dcs_cuda_startup_probe")
    if not os.path.exists(probe):
        return 0.0
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([probe, "1"], stdout=subprocess.DEVNULL, check=True)
        best = min(best, time.perf_counter() - start)
    return best


def device_name():
    try:
        names = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                               capture_output=True, text=True, check=True).stdout.split("\n")
        names = [n.strip() for n in names if n.strip()]
        return f"{len(names)} × {names[0]}" if names else "no GPU"
    except (OSError, subprocess.CalledProcessError):
        return "no GPU"


def write_random_atoms(path, n):
    """n atoms spread over a 120 Å box (a fixed seed), as a 59-MB-per-10^6-atom PQR file."""
    rng = random.Random(20261126)
    with open(path, "w") as handle:
        for i in range(n):
            handle.write(f"ATOM  {i % 100000:5d}  C   ALA A{i % 10000:4d}    "
                         f"{rng.uniform(-60, 60):8.3f}{rng.uniform(-60, 60):8.3f}"
                         f"{rng.uniform(-60, 60):8.3f} {rng.uniform(-0.8, 0.8):7.4f} 1.7000\n")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("dcs")
    parser.add_argument("outdir")
    parser.add_argument("--molecule", default="data/2lzt.pqr")
    parser.add_argument("--gpus", type=int, nargs="+", default=[1])
    parser.add_argument("--atoms", type=int, default=1_000_000)
    parser.add_argument("--quick", action="store_true", help="smaller grids (a smoke test)")
    parser.add_argument("--commit", default=os.environ.get("DCS_GIT_REVISION", ""))
    return parser.parse_args()


def write_report(args, rows):
    """OUTDIR/e2e_bench.md: the device, the commit and command, a table row per case."""
    with open(os.path.join(args.outdir, "e2e_bench.md"), "w") as md:
        md.write(f"Device: {device_name()}; commit {args.commit or 'unknown'}; "
                 f"command: bench/e2e_bench.py DCS OUT --gpus {' '.join(map(str, args.gpus))}"
                 f"{' --quick' if args.quick else ''}\n\n")
        md.write("| case | end to end s | floor | floor s | ratio | goal | notes |\n"
                 "|---|---|---|---|---|---|---|\n")
        for case, wall, floor_name, floor, ratio, goal, note in rows:
            md.write(f"| {case} | {wall:.2f} | {floor_name} | {floor:.3f} | {ratio:.2f} | {goal} | "
                     f"{note} |\n")
        md.write("\nThe last row's ratio is the speed-up (1 GPU wall / N GPUs wall).\n")
    print(open(os.path.join(args.outdir, "e2e_bench.md")).read())


def main():
    args = parse_args()
    big, mid, small = (1700, 1024, 256) if not args.quick else (256, 128, 64)
    scratch = os.path.join(args.outdir, "scratch")
    os.makedirs(scratch, exist_ok=True)
    log = open(os.path.join(args.outdir, "e2e_bench.log"), "w")

    has_gpu = device_name() != "no GPU"

    def dcs(extra, label, gpus=1):
        dev = ("cuda" if gpus > 1 else "cuda:0") if has_gpu else "cpu"
        return logged_run([args.dcs, "--no-progress", "-vv", "--device", dev] + extra, label, log)

    def map_run(atoms, n, extra, label, gpus=1, keep=None):
        out = keep or os.path.join(scratch, "map.h5")
        wall, rss, text = dcs(["--atoms", atoms, "--grid", str(n), "-o", out, "--force"] + extra,
                              label, gpus)
        size = os.path.getsize(out)
        if keep is None:
            os.remove(out)
        return wall, rss, text, size

    rows = []  # (case, end to end s, floor name, floor s, ratio, goal, notes)
    bare = bare_cuda_seconds(args.dcs)
    start_floor = f"engine + bare CUDA process ({bare:.2f} s)"
    # 1. The largest map against the disk.
    nbytes = big ** 3 * 4
    dd_sync = dd_write(os.path.join(scratch, "raw.bin"), nbytes, True)
    dd_plain = dd_write(os.path.join(scratch, "raw.bin"), nbytes, False)
    compute, _, text_c = dcs(["--atoms", args.molecule, "--grid", str(big), "--null-output"],
                             "compute-only")
    wall, rss, text, size = map_run(args.molecule, big, [], f"{big}^3")
    floor = max(dd_sync, compute)
    rows.append((f"2lzt × {big}³ ({size / 1e9:.1f} GB)", wall,
                 "max(dd bs=16M conv=fdatasync, compute only)", floor, wall / floor, "≤ 1.10",
                 f"dd without sync {dd_plain:.2f} s; compute only {compute:.2f} s; writer "
                 f"{write_seconds(text):.2f} s; {busy(text)} busy; peak RSS {rss / 2**30:.2f} GiB"))
    print(rows[-1], flush=True)
    # 2. Compression against the same map uncompressed.
    plain, _, _, plain_size = map_run(args.molecule, mid, [], f"{mid}^3")
    gz, rss, text, gz_size = map_run(args.molecule, mid, ["--compress", "1"], f"{mid}^3 gzip 1")
    rows.append((f"2lzt × {mid}³, --compress 1 ({gz_size / 1e9:.2f} GB)", gz, "uncompressed",
                 plain, gz / plain, "≤ 1.25",
                 f"uncompressed file {plain_size / 1e9:.2f} GB; peak RSS {rss / 2**30:.2f} GiB"))
    print(rows[-1], flush=True)
    # 3. Many atoms: the serial start against the engine.
    atoms = os.path.join(scratch, "big.pqr")
    write_random_atoms(atoms, args.atoms)
    walls = {}
    maps = {}
    for gpus in args.gpus:
        maps[gpus] = os.path.join(scratch, f"big{gpus}.h5")
        wall, rss, text, _ = map_run(atoms, small, [], f"big {gpus}", gpus, keep=maps[gpus])
        walls[gpus] = (wall, engine_seconds(text))
        if gpus == args.gpus[0]:
            rows.append((f"{args.atoms:.0e} atoms × {small}³ ({os.path.getsize(atoms) / 1e6:.0f} MB "
                         "PQR)", wall, start_floor, engine_seconds(text) + bare,
                         wall / (engine_seconds(text) + bare), "≤ 1.10",
                         f"engine started at +{first_slab_seconds(text):.2f} s; {busy(text)} busy"))
            print(rows[-1], flush=True)
    # 4. The README's first command.
    wall, rss, text, _ = map_run(args.molecule, small, [], f"{small}^3")
    rows.append((f"2lzt × {small}³ (the README's first command)", wall, start_floor,
                 engine_seconds(text) + bare, wall / (engine_seconds(text) + bare), "≤ 2",
                 f"engine started at +{first_slab_seconds(text):.2f} s; engine alone "
                 f"{engine_seconds(text):.3f} s"))
    print(rows[-1], flush=True)
    # 5. Several GPUs end to end.
    notes = []
    if len(args.gpus) > 1:
        import h5py
        one, many = args.gpus[0], args.gpus[-1]
        with h5py.File(maps[one]) as a, h5py.File(maps[many]) as b:
            same = a["potential"][...].tobytes() == b["potential"][...].tobytes() and \
                dict(a["statistics"].attrs) == dict(b["statistics"].attrs)
        speed = walls[one][0] / walls[many][0]
        rows.append((f"{args.atoms:.0e} atoms, {one} → {many} GPUs", walls[many][0],
                     f"{one} GPU end to end", walls[one][0], speed, f"≥ {0.925 * many:.2f} ×",
                     f"speed-up end to end {speed:.2f} ×, engine "
                     f"{walls[one][1] / walls[many][1]:.2f} ×; maps and statistics "
                     f"bit-identical: {same}"))
        print(rows[-1], flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    write_report(args, rows)


if __name__ == "__main__":
    main()
