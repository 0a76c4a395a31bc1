#!/usr/bin/env python3
"""End-to-end pipeline benchmark: for each case, in one run on one machine,
  - compute-only: `dcs --null-output` (every slab computed, reduced and downloaded, nothing written),
  - raw write: `dd` of the same number of bytes to the same file system, with fsync at the end
    (what writing the map costs at best; dcs fsyncs its file before renaming it too),
  - end-to-end: `dcs -o map.h5` (and compressed variants),
and reports wall seconds, the bound max(compute-only, raw write), wall / bound (target <= 1.15),
the GPU busy fraction dcs reports and each process's peak RSS (wait4 rusage).

Usage: bench/pipeline_bench.py DCS OUTDIR [--sizes 512 1024 1700] [--gpus 1 2] [--big-atoms N]
Writes OUTDIR/pipeline_bench.md; maps go to OUTDIR/scratch and are deleted after each run.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time


def run(cmd, env=None):
    """(wall seconds, peak RSS bytes, stdout+stderr) of one process."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out, _ = proc.communicate()
    wall = time.perf_counter() - start
    # ru_maxrss of the children that ended: take the RSS of this one from wait4 via /proc is gone;
    # use resource on the reaped child instead (Popen reaped it): RUSAGE_CHILDREN is a max over all.
    return wall, proc.returncode, out


def peak_rss(cmd):
    """Runs cmd with os.fork/execvp and wait4 to get its own peak RSS."""
    start = time.perf_counter()
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(write_fd, 1)
        os.dup2(write_fd, 2)
        os.close(read_fd)
        os.execvp(cmd[0], cmd)
    os.close(write_fd)
    chunks = []
    with os.fdopen(read_fd, "r", errors="replace") as stream:
        for line in stream:
            chunks.append(line)
    _, status, usage = os.wait4(pid, 0)
    wall = time.perf_counter() - start
    return wall, os.waitstatus_to_exitcode(status), usage.ru_maxrss * 1024, "".join(chunks)


def logged_run(cmd, label, log):
    """peak_rss(cmd), with the command line, its output and the measures appended to the open
    file `log`; a failed run prints its output's tail (the log has it all) and exits naming
    `label`. Returns (wall seconds, peak RSS bytes, output)."""
    wall, code, rss, text = peak_rss(cmd)
    log.write(f"$ {' '.join(cmd)}\n{text}\nexit {code}, {wall:.3f} s, peak RSS {rss}\n\n")
    log.flush()
    if code != 0:
        print(text[-4000:], file=sys.stderr)
        raise SystemExit(f"{label}: exit {code}")
    return wall, rss, text


def busy(text):
    found = re.search(r"(\d+) workers? (\d+)% busy", text)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def raw_write(path, nbytes):
    block = 64 << 20
    count = (nbytes + block - 1) // block
    start = time.perf_counter()
    subprocess.run(["dd", "if=/dev/zero", f"of={path}", f"bs={block}", f"count={count}",
                    "conv=fsync", "status=none"], check=True)
    wall = time.perf_counter() - start
    os.remove(path)
    return wall


def gib(n):
    return f"{n / 2**30:.2f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dcs")
    parser.add_argument("outdir")
    parser.add_argument("--molecule", default="data/2lzt.pqr")
    parser.add_argument("--sizes", type=int, nargs="+", default=[512, 1024, 1700])
    parser.add_argument("--gpus", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--compress-size", type=int, default=1024)
    parser.add_argument("--big-atoms", type=int, default=1_000_000)
    parser.add_argument("--big-grid", type=int, default=256)
    args = parser.parse_args()
    scratch = os.path.join(args.outdir, "scratch")
    os.makedirs(scratch, exist_ok=True)
    rows = []
    log = open(os.path.join(args.outdir, "pipeline_bench.log"), "w")

    def device(gpus):
        return "cuda" if gpus > 1 else "cuda:0"

    def dcs(extra, label):
        return logged_run([args.dcs, "--no-progress"] + extra, label, log)

    for n in args.sizes:
        nbytes = n ** 3 * 4
        write = raw_write(os.path.join(scratch, "raw.bin"), nbytes)
        for gpus in args.gpus:
            base = ["--atoms", args.molecule, "--grid", str(n), "--device", device(gpus)]
            compute, rss_c, text_c = dcs(base + ["--null-output"], f"{n} compute-only")
            variants = [("hdf5", [])]
            if n == args.compress_size:
                variants += [("hdf5 gzip 1", ["--compress", "1"]), ("hdf5 gzip 4", ["--compress", "4"])]
            for name, extra in variants:
                out = os.path.join(scratch, "map.h5")
                wall, rss, text = dcs(base + ["-o", out, "--force"] + extra, f"{n} {name}")
                size = os.path.getsize(out)
                os.remove(out)
                bound = max(compute, write)
                workers, busy_pct = busy(text)
                rows.append((f"2lzt x {n}^3", gpus, name, compute, write, wall, wall / bound,
                             busy_pct, gib(rss), gib(size)))
                print(rows[-1], flush=True)
    # Compute-bound: 10^6 atoms on a 256^3 grid, 1 vs N GPUs (speed-up).
    atoms = os.path.join(scratch, "big.xyzq")
    with open(atoms, "w") as handle:
        import random
        rng = random.Random(20261123)
        for _ in range(args.big_atoms):
            handle.write(f"{rng.uniform(-60, 60):.3f} {rng.uniform(-60, 60):.3f} "
                         f"{rng.uniform(-60, 60):.3f} {rng.uniform(-0.8, 0.8):.3f}\n")
    single = None
    for gpus in args.gpus:
        base = ["--atoms", atoms, "--grid", str(args.big_grid), "--device", device(gpus)]
        out = os.path.join(scratch, f"big{gpus}.h5")
        wall, rss, text = dcs(base + ["-o", out, "--force"], f"big {gpus}")
        workers, busy_pct = busy(text)
        single = single or wall
        rows.append((f"{args.big_atoms} atoms x {args.big_grid}^3", gpus, "hdf5", float("nan"),
                     float("nan"), wall, single / wall, busy_pct, gib(rss), gib(os.path.getsize(out))))
        print(rows[-1], flush=True)
    same = None
    if len(args.gpus) > 1:
        import h5py
        with h5py.File(os.path.join(scratch, f"big{args.gpus[0]}.h5")) as a, \
                h5py.File(os.path.join(scratch, f"big{args.gpus[-1]}.h5")) as b:
            same = a["potential"][...].tobytes() == b["potential"][...].tobytes() and \
                dict(a["statistics"].attrs) == dict(b["statistics"].attrs)
    shutil.rmtree(scratch, ignore_errors=True)

    with open(os.path.join(args.outdir, "pipeline_bench.md"), "w") as md:
        md.write("| case | GPUs | output | compute-only s | raw write s (dd, fsync) | end-to-end s | "
                 "wall / max(compute, write) (speed-up for the 10^6-atom rows) | GPU busy % | "
                 "peak RSS GiB | file GiB |\n|---|---|---|---|---|---|---|---|---|---|\n")
        for r in rows:
            md.write(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.2f} | {r[4]:.2f} | {r[5]:.2f} | "
                     f"{r[6]:.3f} | {r[7]} | {r[8]} | {r[9]} |\n")
        if same is not None:
            md.write(f"\n10^6-atom map and statistics bit-identical on {args.gpus[0]} and "
                     f"{args.gpus[-1]} GPUs: {same}\n")
    print(open(os.path.join(args.outdir, "pipeline_bench.md")).read())


if __name__ == "__main__":
    main()
