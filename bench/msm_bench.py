#!/usr/bin/env python3
"""--method msm against --method exact through the real binary, end to end.

(a) crossover: wall time of exact and msm (--msm-error 1e-3) on real molecules (data/2lzt.pqr,
    apbs-data molecules under /usr/share/apbs*/ when present, tiled copies of 2lzt for more
    atoms) at several grids, i.e. time against atoms x points;
(b) msm time against atoms, from 1e4 to --max-atoms (tiled 2lzt at protein density, so the box
    grows with the atoms) at a fixed grid, with the time per atom, to show linear cost;
(c) the error every msm run measured against the float64 direct sum (its /method attributes).

Times: `wall` is the whole process (read, prepare, compute, the error check, write); `prepare`,
`compute` and `check` are the file's /provenance/timings (upload = MSM's lattices and bins,
compute = slabs, validate = the error check at the --validate sample, whose cost grows with the
atoms as 4096 x atoms float64 evaluations).

Usage: bench/msm_bench.py DCS OUTDIR [--device cpu|cuda] [--max-atoms 1000000]
       [--grids 33 65 97] [--fixed-grid 97] [--exact-max-evaluations 2e11]
Writes OUTDIR/msm_bench.md.
"""
import argparse
import glob
import os
import platform
import subprocess
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.dirname(HERE)


def read_pqr(path):
    """x, y, z, q of every ATOM/HETATM record (whitespace-separated PQR)."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                fields = line.split()
                rows.append([float(v) for v in fields[-5:-1]])
    return np.array(rows)


def tiled(atoms, copies):
    """`copies` copies of a molecule on a cubic lattice 2 Å apart (protein-like density)."""
    extent = atoms[:, :3].max(axis=0) - atoms[:, :3].min(axis=0) + 2.0
    side = int(np.ceil(copies ** (1 / 3)))
    blocks = []
    for n in range(copies):
        shift = np.array([n % side, n // side % side, n // side // side]) * extent
        block = atoms.copy()
        block[:, :3] += shift
        blocks.append(block)
    return np.concatenate(blocks)


def write_xyzq(path, atoms):
    np.savetxt(path, atoms, fmt="%.3f %.3f %.3f %.4f")


def run(dcs, path, grid, out, device, extra):
    cmd = [dcs, "--atoms", path, "--grid", str(grid), "--device", device, "--no-progress",
           "--force", "-o", out] + extra
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr}")
    with h5py.File(out, "r") as f:
        t = dict(f["provenance/timings"].attrs)
        m = dict(f["method"].attrs) if "method" in f else {}
        potential = f["potential"][()] if extra and "exact" in extra else None
    os.unlink(out)
    return {"wall": wall, "prepare": float(t.get("upload", 0)), "compute": float(t.get("compute", 0)),
            "check": float(t.get("validate", 0)), "method": m, "potential": potential}


def git_commit():
    try:
        return subprocess.run(["git", "-C", SOURCE, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dcs")
    parser.add_argument("outdir")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--max-atoms", type=float, default=1e6)
    parser.add_argument("--grids", type=int, nargs="+", default=[33, 65, 97])
    parser.add_argument("--fixed-grid", type=int, default=97)
    parser.add_argument("--exact-max-evaluations", type=float, default=2e11,
                        help="skip exact runs above this many atom-point evaluations")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    work = os.path.join(args.outdir, "msm_bench_inputs")
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "map.h5")

    lysozyme = read_pqr(os.path.join(SOURCE, "data", "2lzt.pqr"))
    molecules = [("2lzt", lysozyme)]
    for name in ("1a63", "complex"):
        found = sorted(glob.glob(f"/usr/share/apbs*/examples/**/{name}.pqr", recursive=True))
        if found:
            molecules.append((name, read_pqr(found[0])))
    molecules += [("2lzt x8", tiled(lysozyme, 8)), ("2lzt x27", tiled(lysozyme, 27))]

    lines = ["# --method msm against --method exact", "",
             f"- command: `{' '.join(['bench/msm_bench.py'] + os.sys.argv[1:])}`",
             f"- commit: {git_commit()}", f"- device: --device {args.device}; host "
             f"{platform.node()}, {os.cpu_count()} CPU threads visible ({platform.processor() or platform.machine()})",
             f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", "",
             "wall = the whole process; prepare = MSM's lattices and bins; compute = the slabs; "
             "check = the error measured at the --validate sample (every msm run). Errors are "
             "the run's own /method rms_rel_error and max_rel_error.", "",
             "## (a) crossover: exact and msm (--msm-error 1e-3) against atoms x points", "",
             "| molecule | atoms | grid | points | exact wall s | msm wall s | msm prepare s | "
             "msm compute s | msm check s | exact/msm compute | msm rel. RMS error | "
             "max error / max abs V |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines))
    for name, atoms in molecules:
        path = os.path.join(work, name.replace(" ", "_") + ".xyzq")
        write_xyzq(path, atoms)
        for grid in args.grids:
            points = grid ** 3
            msm = run(args.dcs, path, grid, out, args.device, ["--method", "msm"])
            if len(atoms) * points <= args.exact_max_evaluations:
                exact = run(args.dcs, path, grid, out, args.device, [])
                exact_wall, exact_compute = f"{exact['wall']:.2f}", exact["compute"]
                ratio = f"{exact_compute / msm['compute']:.1f}" if msm["compute"] > 0 else "-"
            else:
                exact_wall, ratio = "skipped", "-"
            m = msm["method"]
            row = (f"| {name} | {len(atoms)} | {grid}^3 | {points} | {exact_wall} | "
                   f"{msm['wall']:.2f} | {msm['prepare']:.3f} | {msm['compute']:.3f} | "
                   f"{msm['check']:.3f} | {ratio} | {m.get('rms_rel_error', float('nan')):.2e} | "
                   f"{m.get('max_rel_error', float('nan')):.2e} |")
            print(row, flush=True)
            lines.append(row)

    lines += ["", f"## (b) msm time against atoms at a fixed {args.fixed_grid}^3 grid "
              "(tiled 2lzt, --msm-error 1e-3)", "",
              "| atoms | wall s | prepare s | compute s | check s | (prepare + compute) / atom, us | "
              "msm rel. RMS error | max error / max abs V |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines[-5:]))
    sizes = [n for n in (1e4, 3e4, 1e5, 3e5, 1e6, 3e6, 1e7, 3e7, 1e8) if n <= args.max_atoms]
    for target in sizes:
        copies = max(1, int(round(target / len(lysozyme))))
        atoms = tiled(lysozyme, copies)
        path = os.path.join(work, "tiled.xyzq")
        write_xyzq(path, atoms)
        msm = run(args.dcs, path, args.fixed_grid, out, args.device, ["--method", "msm"])
        m = msm["method"]
        per_atom = 1e6 * (msm["prepare"] + msm["compute"]) / len(atoms)
        row = (f"| {len(atoms)} | {msm['wall']:.2f} | {msm['prepare']:.3f} | {msm['compute']:.3f} | "
               f"{msm['check']:.3f} | {per_atom:.2f} | {m.get('rms_rel_error', float('nan')):.2e} | "
               f"{m.get('max_rel_error', float('nan')):.2e} |")
        print(row, flush=True)
        lines.append(row)
        os.unlink(path)

    with open(os.path.join(args.outdir, "msm_bench.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {os.path.join(args.outdir, 'msm_bench.md')}")


if __name__ == "__main__":
    main()
