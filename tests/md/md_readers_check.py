#!/usr/bin/env python3
"""dcs's MD readers against MDAnalysis, on MDAnalysisTests' files.

    md_readers_check.py MD_DUMP

For each case, MD_DUMP (tests/md/md_dump.cpp) reads a topology and trajectory files with
dcs::io::read_topology and TrajectoryReader; MDAnalysis reads the same files. Compared: the atom
count, charges (|dq| <= 1e-5 e), atom names, residue names, residue numbers, segment IDs where
both readers have them, every position of every frame (|dx| <= 1e-4 A) and the frame times
where both state them (|dt| <= 1e-6 ps). Prints the largest differences measured. Exit 0 when
all agree, 1 otherwise, 77 (skipped) without MDAnalysis/MDAnalysisTests.
"""
import json
import os
import subprocess
import sys
import tempfile
import warnings

try:
    import numpy as np
    import MDAnalysis as mda
    import MDAnalysisTests.datafiles as d
except ImportError as error:
    print(f"skipped: {error} (scripts/setup-md.sh makes the venv)")
    sys.exit(77)

warnings.filterwarnings("ignore")

CHARGE_TOL = 1e-5  # e
POSITION_TOL = 1e-4  # A
TIME_TOL = 1e-6  # ps

failures = []


def fail(case, what):
    failures.append(f"{case}: {what}")
    print(f"  FAIL {what}")


def dump(md_dump, out, topology, trajectories):
    subprocess.run([md_dump, out, topology, *trajectories], check=True)
    with open(os.path.join(out, "atoms.json")) as f:
        meta = json.load(f)
    n = len(meta["atoms"])
    positions = None
    if trajectories:
        positions = np.fromfile(os.path.join(out, "positions.f64"), dtype="<f8")
        positions = positions.reshape(meta["frames"], n, 3)
    return meta, positions


def compare(case, md_dump, topology, trajectories, segids=True, resids="resids"):
    print(f"{case}: {os.path.basename(topology)} + {[os.path.basename(t) for t in trajectories]}")
    u = mda.Universe(topology, *trajectories) if trajectories else mda.Universe(topology)
    with tempfile.TemporaryDirectory() as out:
        meta, positions = dump(md_dump, out, topology, trajectories)
    atoms = meta["atoms"]
    n = len(atoms)
    if n != u.atoms.n_atoms:
        fail(case, f"{n} atoms, MDAnalysis {u.atoms.n_atoms}")
        return
    q = np.array([a["charge"] for a in atoms])
    dq = np.abs(q - u.atoms.charges).max()
    print(f"  {n} atoms, total charge {q.sum():.6f} (MDAnalysis {u.atoms.charges.sum():.6f}), "
          f"max |dq| {dq:.3g} e")
    if dq > CHARGE_TOL:
        fail(case, f"charges differ by up to {dq:.3g} e")
    for ours, theirs, what in (
        ([a["name"] for a in atoms], u.atoms.names, "names"),
        ([a["res_name"] for a in atoms], u.atoms.resnames, "residue names"),
        ([a["res_seq"] for a in atoms], getattr(u.atoms, resids), f"residue numbers ({resids})"),
    ):
        bad = [i for i in range(n) if ours[i] != theirs[i]]
        if bad:
            i = bad[0]
            fail(case, f"{what}: {len(bad)} differ, first atom {i}: {ours[i]!r} vs {theirs[i]!r}")
    if segids:
        bad = [i for i in range(n) if atoms[i]["segment"] != u.atoms.segids[i]]
        if bad:
            fail(case, f"segids: {len(bad)} differ, first {atoms[bad[0]]['segment']!r} vs "
                       f"{u.atoms.segids[bad[0]]!r}")
    if not trajectories:
        return
    frames = len(u.trajectory)
    if meta["frames"] != frames:
        fail(case, f"{meta['frames']} frames, MDAnalysis {frames}")
        return
    dx = 0.0
    dt = 0.0
    times = 0
    for i, ts in enumerate(u.trajectory):
        dx = max(dx, float(np.abs(positions[i] - ts.positions).max()))
        ours = meta["times"][i]
        # DCD: dcs states no time (MDAnalysis derives one from the header's time step).
        if ours is not None:
            dt = max(dt, abs(ours - ts.time))
            times += 1
    print(f"  {frames} frames, max |dx| {dx:.3g} A; {times} times compared, max |dt| {dt:.3g} ps")
    if dx > POSITION_TOL:
        fail(case, f"positions differ by up to {dx:.3g} A")
    if dt > TIME_TOL:
        fail(case, f"times differ by up to {dt:.3g} ps")


def main():
    md_dump = sys.argv[1]
    compare("PSF+DCD", md_dump, d.PSF, [d.DCD])
    # TPR: chemfiles reports no molecule-block names (MDAnalysis' seg_0_...), so no segids.
    compare("TPR+XTC", md_dump, d.TPR, [d.XTC], segids=False)
    compare("TPR+TRR", md_dump, d.TPR, [d.TRR], segids=False)
    compare("TPR+XTC+TRR", md_dump, d.TPR, [d.XTC, d.TRR], segids=False)
    compare("PRMTOP+NCDF", md_dump, d.PRMncdf, [d.NCDF], segids=False)
    compare("PRMTOP ache", md_dump, d.PRM, [], segids=False)
    amber = os.path.join(os.path.dirname(d.PRM))
    compare("PARM7+NC ace_mbondi3", md_dump, os.path.join(amber, "ace_mbondi3.parm7"),
            [os.path.join(amber, "ace_mbondi3.nc")], segids=False)
    compare("PARM7 ace_mbondi3.negative", md_dump, os.path.join(amber, "ace_mbondi3.negative.parm7"),
            [], segids=False)
    # A PQR as the topology: adk_open.pqr has adk's 3341 atoms in the PSF's order.
    compare("PQR+DCD", md_dump, d.PQR, [d.DCD], segids=False)
    if failures:
        print("\n".join(["FAILED:"] + failures))
        return 1
    print("all agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
