#!/usr/bin/env python3
"""The periodic (Ewald) potential on the CPU (dcs::periodic through tests/periodic/periodic_dump):
random neutral charges at water's atom density (0.1 per Å^3) in a cubic cell, smooth PME at the
default accuracy (1e-5, order 6, real cutoff 10 Å): the preparation (cell list, spreading, FFTs),
the potential at every atom, a map on the cell's grid, and the float64 Ewald sum at a sample of
the map's points (its cost per point, and the map's measured relative RMS error there).
Prints a Markdown table (bench/results/periodic_cpu_*.md).

Usage: periodic_cpu_bench.py PERIODIC_DUMP [--atoms 10000 100000] [--spacing 1.0 2.0]
                             [--reference-points 50] [--threads 0]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def write_system(path, atoms, seed):
    length = (atoms / 0.1) ** (1.0 / 3.0)
    rng = np.random.default_rng(seed)
    positions = rng.uniform(0.0, length, (atoms, 3))
    charges = rng.uniform(-1.0, 1.0, atoms)
    charges -= charges.mean()
    with open(path, "w") as out:
        out.write(f"cell {length!r} {length!r} {length!r} 90 90 90\n")
        for (x, y, z), q in zip(positions.tolist(), charges.tolist()):
            out.write(f"{x!r} {y!r} {z!r} {q!r}\n")
    return length


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump")
    parser.add_argument("--atoms", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--spacing", type=float, nargs="+", default=[1.0, 2.0])
    parser.add_argument("--reference-points", type=int, default=50)
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if len(args.spacing) != len(args.atoms):
        sys.exit("--spacing needs one value per --atoms")
    print("| atoms | cell (Å) | parameters | prepare (s) | at atoms (s) | map points | map (s) "
          "| µs/point | float64 reference: points, real cutoff, s, ms/point | map error (rel. RMS) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="dcs-periodic-bench-") as work:
        for atoms, spacing in zip(args.atoms, args.spacing):
            path = os.path.join(work, f"random_{atoms}.xyzq")
            length = write_system(path, atoms, seed=atoms)
            out = subprocess.run([args.dump, path, "--map-spacing", str(spacing),
                                  "--reference-points", str(args.reference_points),
                                  "--threads", str(args.threads)],
                                 check=True, capture_output=True, text=True).stdout
            r = json.loads(out)
            print(f"| {atoms} | {length:.1f} | {r['parameters']} | {r['prepare_s']:.2f} "
                  f"| {r['atoms_s']:.2f} | {r['map_points']} ({spacing:g} Å) | {r['map_s']:.2f} "
                  f"| {1e6 * r['map_s'] / r['map_points']:.1f} "
                  f"| {r['reference_points']}, {r['reference_cutoff']:g} Å, {r['reference_s']:.2f}, "
                  f"{1e3 * r['reference_s'] / r['reference_points']:.0f} | {r['map_error']:.2e} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
