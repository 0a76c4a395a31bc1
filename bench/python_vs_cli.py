#!/usr/bin/env python3
"""dcs.potential_map against the command line's compute time on the same molecule and grid
(issue 23: the Python call within 5 % of the command line's compute at 256^3).

  CLI compute:  `dcs --atoms MOL --grid N --null-output --device D`: the slab engine's wall time
                ("s compute" in its summary: every slab computed and reduced, nothing written);
  Python call:  wall time of dcs.potential_map(positions, charges, grid=N, device=D) (workers
                made, atoms prepared, the engine, the DataArray), and its engine time
                (attrs["compute_seconds"], the same measure as the CLI's).

Each is the best of --repeat runs, after one warm-up. Prints a table and the ratios.
Usage: bench/python_vs_cli.py DCS_BINARY [--atoms data/2lzt.pqr] [--grid 256] [--device auto]
Run with the venv that has the package (scripts/setup-python.sh; DCS_PYTHON_CUDA=ON for GPUs).
"""
import argparse
import pathlib
import re
import subprocess
import sys
import time

import dcs

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
from pqr_atoms import read_pqr  # noqa: E402  (the tests' reader of the same molecule)


def cli_compute(binary, atoms, grid, device):
    """(engine seconds, process wall seconds) of one --null-output run."""
    start = time.perf_counter()
    done = subprocess.run([binary, "--atoms", atoms, "--grid", str(grid), "--device", device,
                           "--null-output", "--force"], capture_output=True, text=True)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(done.stderr)
    found = re.search(r"total, ([\d.]+) s compute", done.stderr + done.stdout)
    if not found:
        sys.exit("no compute time in the summary:\n" + done.stderr)
    return float(found.group(1)), wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dcs")
    parser.add_argument("--atoms", default=str(ROOT / "data" / "2lzt.pqr"))
    parser.add_argument("--grid", type=int, default=256)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    positions, charges = read_pqr(args.atoms)

    cli_compute(args.dcs, args.atoms, args.grid, args.device)  # warm-up
    cli = [cli_compute(args.dcs, args.atoms, args.grid, args.device) for _ in range(args.repeat)]
    dcs.potential_map(positions, charges, grid=args.grid, device=args.device)  # warm-up
    py = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        v = dcs.potential_map(positions, charges, grid=args.grid, device=args.device)
        py.append((v.attrs["compute_seconds"], time.perf_counter() - start))
        device_name = v.attrs["provenance_device"]
        del v
    cli_engine, cli_wall = min(c[0] for c in cli), min(c[1] for c in cli)
    py_engine, py_wall = min(p[0] for p in py), min(p[1] for p in py)
    print(f"# {args.atoms}: {len(charges)} atoms, grid {args.grid}^3, device {args.device}, "
          f"best of {args.repeat}; dcs {dcs.__version__} on {device_name}")
    print("| measure | seconds |\n| --- | --- |")
    print(f"| CLI compute (engine, --null-output) | {cli_engine:.4f} |")
    print(f"| CLI process wall (start-up, read, compute) | {cli_wall:.4f} |")
    print(f"| Python potential_map engine | {py_engine:.4f} |")
    print(f"| Python potential_map call (wall) | {py_wall:.4f} |")
    print(f"\nPython call / CLI compute = {py_wall / cli_engine:.3f}  (target <= 1.05)")
    print(f"Python engine / CLI compute = {py_engine / cli_engine:.3f}")


if __name__ == "__main__":
    main()
