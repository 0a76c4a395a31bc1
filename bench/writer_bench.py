#!/usr/bin/env python3
"""The map writer against the parallel disk floor (issue 36 item 3), measured in the same call.

For each writer count W (DCS_WRITERS) and each way of writing (--modes: `page`, the page cache
with the writeback started by W writers; `direct`, the chunks written past the page cache by as
many threads, DCS_DIRECT_WRITES):
  dcs        dcs --atoms MOLECULE --grid N -o map.h5 (and, with --mrc, an MRC map beside it),
             timed from fork to exit; its summary's writer seconds, busy workers, and the -vv
             stamp at which the store was ready (no value can be written before it)
  floor      W parallel `dd if=/dev/zero bs=16M conv=fdatasync` writers, each of 1/W of the same
             bytes (the files dcs wrote), to the same directory; the compute-only run
             (--null-output) too, since no run can beat its computation
  ratio      dcs wall / max(dd floor, compute only): the goal is <= 1.10
  ratio+start  dcs wall / max(store ready + dd floor, compute only): the same with the time
             before the first value exists counted (process start, reading, the store, the
             device), which the dd floor leaves out

The dd floors of one writer and of W writers are both printed, so the table shows how much a
single writer leaves on the table on this disk.

Usage: bench/writer_bench.py DCS OUTDIR [--grid 1200] [--writers 1 4] [--modes page direct]
                             [--device cuda:0] [--molecule data/2lzt.pqr] [--mrc] [--repeat 1]
(a GPU machine: --grid 1000 or 1700; here, on a CPU: --grid 800 --device cpu --molecule a
few-atom .xyzq). Writes OUTDIR/writer_bench.md; the maps and dd files go to OUTDIR/scratch and
are removed.
"""
import argparse
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e_bench import busy, device_name, first_slab_seconds, write_seconds  # noqa: E402
from pipeline_bench import peak_rss  # noqa: E402


def dd_parallel(directory, nbytes, writers):
    """Seconds for `writers` dd processes, each writing 1/writers of nbytes of zeros with bs=16M
    and conv=fdatasync to its own file, started together; the files are removed."""
    block = 16 << 20
    blocks = max(1, -(-nbytes // (block * writers)))
    paths = [os.path.join(directory, f"dd{w}.bin") for w in range(writers)]
    start = time.perf_counter()
    procs = [subprocess.Popen(["dd", "if=/dev/zero", f"of={p}", f"bs={block}", f"count={blocks}",
                               "conv=fdatasync", "status=none"]) for p in paths]
    for proc in procs:
        if proc.wait() != 0:
            raise SystemExit("dd failed")
    wall = time.perf_counter() - start
    for path in paths:
        os.remove(path)
    return wall


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dcs")
    parser.add_argument("outdir")
    parser.add_argument("--grid", type=int, default=1200)
    parser.add_argument("--writers", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--modes", nargs="+", default=["page", "direct"],
                        choices=["page", "direct"], help="page cache, or direct writes")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--molecule", default="data/2lzt.pqr")
    parser.add_argument("--mrc", action="store_true", help="an MRC map beside the HDF5 map")
    parser.add_argument("--repeat", type=int, default=1, help="runs per writer count (best kept)")
    args = parser.parse_args()
    scratch = os.path.join(args.outdir, "scratch")
    os.makedirs(scratch, exist_ok=True)
    log = open(os.path.join(args.outdir, "writer_bench.log"), "w")

    def dcs(extra, writers, mode="page"):
        os.environ["DCS_WRITERS"] = str(writers)
        os.environ["DCS_DIRECT_WRITES"] = "1" if mode == "direct" else "0"
        cmd = [args.dcs, "--no-progress", "-vv", "--device", args.device, "--atoms",
               args.molecule, "--grid", str(args.grid)] + extra
        wall, code, rss, text = peak_rss(cmd)
        log.write(f"$ DCS_WRITERS={writers} DCS_DIRECT_WRITES={os.environ['DCS_DIRECT_WRITES']} "
                  f"{' '.join(cmd)}\n{text}\nexit {code}, {wall:.3f} s, peak RSS {rss}\n\n")
        log.flush()
        if code != 0:
            print(text, file=sys.stderr)
            raise SystemExit(f"dcs exit {code}")
        return wall, rss, text

    compute, _, _ = dcs(["--null-output"], args.writers[0])
    outputs = ["-o", os.path.join(scratch, "map.h5"), "--force"]
    if args.mrc:
        outputs += ["--mrc", os.path.join(scratch, "map.mrc")]
    rows = []
    floors = {}
    for writers in args.writers:
        for mode in args.modes:
            best = None
            for _ in range(args.repeat):
                wall, rss, text = dcs(outputs, writers, mode)
                nbytes = sum(os.path.getsize(os.path.join(scratch, f))
                             for f in os.listdir(scratch))
                for f in os.listdir(scratch):
                    os.remove(os.path.join(scratch, f))
                if best is None or wall < best[0]:
                    best = (wall, rss, text, nbytes)
            wall, rss, text, nbytes = best
            # The floors right after the run, on the same bytes: one writer and this many.
            for count in sorted({1, writers}):
                floors[(count, nbytes)] = min(floors.get((count, nbytes), float("inf")),
                                              dd_parallel(scratch, nbytes, count))
            ddw = floors[(writers, nbytes)]
            start = first_slab_seconds(text)
            floor = max(ddw, compute)
            started = max(start + ddw, compute)
            rows.append((writers, mode, nbytes, wall, start, floors[(1, nbytes)], ddw, compute,
                         floor, wall / floor, wall / started, write_seconds(text), busy(text),
                         rss / 2**30))
            print(rows[-1], flush=True)
    os.environ.pop("DCS_WRITERS", None)
    os.environ.pop("DCS_DIRECT_WRITES", None)

    with open(os.path.join(args.outdir, "writer_bench.md"), "w") as md:
        md.write(f"Device: {device_name()}; {os.cpu_count()} cores; command: bench/writer_bench.py "
                 f"DCS OUT --grid {args.grid} --writers {' '.join(map(str, args.writers))} "
                 f"--modes {' '.join(args.modes)} --device {args.device} --molecule "
                 f"{args.molecule}{' --mrc' if args.mrc else ''}\n\n")
        md.write("| writers | mode | bytes | dcs s | store ready s | dd 1 writer s | "
                 "dd W writers s | compute only s | floor s | ratio | ratio+start | "
                 "writer busy s | workers busy | peak RSS GiB |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
        for (writers, mode, nbytes, wall, start, dd1, ddw, comp, floor, ratio, ratio_started,
             writer, workers, rss) in rows:
            md.write(f"| {writers} | {mode} | {nbytes / 1e9:.2f} GB | {wall:.2f} | {start:.2f} | "
                     f"{dd1:.2f} | {ddw:.2f} | {comp:.2f} | {floor:.2f} | **{ratio:.2f}** | "
                     f"{ratio_started:.2f} | {writer:.2f} | {workers} | {rss:.2f} |\n")
        md.write("\nfloor = max(dd of the same bytes by W parallel writers with conv=fdatasync, "
                 "compute only); goal: ratio <= 1.10. ratio+start counts the time before the "
                 "store was ready (-vv stamp) on top of the dd floor: no byte of the map exists "
                 "before it.\n")
    print(open(os.path.join(args.outdir, "writer_bench.md")).read())


if __name__ == "__main__":
    main()
