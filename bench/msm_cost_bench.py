#!/usr/bin/env python3
"""Calibrates msm's work estimate (libdcs/src/msm/work.cpp) against measured phase times.

Each case runs `dcs --threads 1` with --method exact and with --method msm on tiled 2lzt
(bench/msm_bench.py's tiling, protein density) and reads the per-phase seconds
(/provenance/timings: exact compute; msm upload = prepare, compute = slabs, validate = the
check) and the estimate's weighted terms from the -vv log. The exact kernel's seconds per pair
turn each phase into exact pairs; measured / estimated per phase is the correction its weight
needs, and the whole estimate's msm/exact against the measured ratio is the model's error. The
process's user CPU seconds (getrusage) are printed beside, to show a contended machine.

Usage: bench/msm_cost_bench.py DCS OUTDIR [--device cpu|cuda] [--cases COPIES:GRID:TARGET ...]
(--device cuda: the same comparison on the GPU, where both methods use the whole device: how far
the CPU-calibrated estimate is from the GPU's measured ratio)
(COPIES: copies of 2lzt tiled, or dN: N random charges in a 30 A cube)
Writes OUTDIR/msm_cost_bench.md.
"""
import argparse
import json
import os
import re
import resource
import subprocess
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from msm_bench import read_pqr, tiled, write_xyzq, SOURCE  # noqa: E402

TERMS = re.compile(r"short range ([\d.e+-]+), interpolation ([\d.e+-]+), levels ([\d.e+-]+), "
                   r"top ([\d.e+-]+), check ([\d.e+-]+): ([\d.e+-]+) against exact ([\d.e+-]+)")


def run(dcs, path, grid, out, extra, device="cpu"):
    # One CPU thread calibrates the CPU weights; on a GPU the whole device is what is compared.
    threads = ["--threads", "1"] if device == "cpu" else []
    cmd = [dcs, "--atoms", path, "--grid", str(grid), "--device", device] + threads + [
           "--no-progress", "--force", "-vv", "-o", out] + extra
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    proc = subprocess.run(cmd, capture_output=True, text=True)
    user = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr}")
    with h5py.File(out, "r") as f:
        t = {k: float(v) for k, v in f["provenance/timings"].attrs.items() if k != "unit"}
    os.unlink(out)
    terms = TERMS.search(proc.stderr + proc.stdout)
    return t, user, [float(v) for v in terms.groups()] if terms else None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dcs")
    parser.add_argument("outdir")
    parser.add_argument("--cases", nargs="+",
                        default=["1:33:1e-3", "1:65:1e-5", "8:33:1e-5", "8:65:1e-3", "8:65:1e-5",
                                 "27:49:1e-5", "27:65:1e-3"])
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    base = read_pqr(os.path.join(SOURCE, "data", "2lzt.pqr"))
    rows, raw = [], []
    for spec in args.cases:
        copies, grid, target = spec.split(":")
        if copies.startswith("d"):  # dN: N random charges in a 30 A cube (dense, issue 38's kind)
            rng = np.random.default_rng(1)
            n = int(copies[1:])
            atoms = np.column_stack([rng.uniform(0, 30, (n, 3)), rng.uniform(-0.5, 0.5, n)])
        else:
            atoms = tiled(base, int(copies))
        path = os.path.join(args.outdir, f"tiled{copies}.xyzq")
        if not os.path.exists(path):
            write_xyzq(path, atoms)
        out = os.path.join(args.outdir, "map.h5")
        te, ue, _ = run(args.dcs, path, grid, out, [], args.device)
        tm, um, terms = run(args.dcs, path, grid, out, ["--method", "msm", "--msm-error", target],
                            args.device)
        sr, interp, levels, top, check, est_msm, est_exact = terms
        per_pair = te["compute"] / est_exact
        measured = (tm["upload"] + tm["compute"] + tm["validate"]) / te["compute"]
        estimated = est_msm / est_exact
        rows.append((len(atoms), grid, target, te["compute"], tm["upload"], tm["compute"],
                     tm["validate"], ue, um, tm["upload"] / per_pair / (levels + top),
                     tm["compute"] / per_pair / (sr + interp), tm["validate"] / per_pair / check,
                     measured, estimated))
        print(rows[-1], flush=True)
        raw.append({"atoms": len(atoms), "grid": int(grid), "target": target, "per_pair": per_pair,
                    "prepare": tm["upload"], "slabs": tm["compute"], "check": tm["validate"],
                    "terms": terms})
    with open(os.path.join(args.outdir, "msm_cost_bench.json"), "w") as f:
        json.dump(raw, f, indent=1)
    with open(os.path.join(args.outdir, "msm_cost_bench.md"), "w") as f:
        f.write("| atoms | grid | --msm-error | exact compute s | msm prepare s | msm slabs s | "
                "msm check s | exact user s | msm user s | prepare meas/est | slabs meas/est | "
                "check meas/est | msm/exact measured | msm/exact estimated |\n")
        f.write("|" + "---:|" * 14 + "\n")
        for r in rows:
            f.write(f"| {r[0]} | {r[1]}^3 | {r[2]} | {r[3]:.3f} | {r[4]:.3f} | {r[5]:.3f} | "
                    f"{r[6]:.3f} | {r[7]:.2f} | {r[8]:.2f} | {r[9]:.2f} | {r[10]:.2f} | "
                    f"{r[11]:.2f} | {r[12]:.2f} | {r[13]:.2f} |\n")


if __name__ == "__main__":
    main()
