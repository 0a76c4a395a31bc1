#!/usr/bin/env python3
"""Cross-checks dcs's distance selections (around, sphzone, sphlayer) and byres / same residue
as against MDAnalysis's select_atoms on real periodic systems (tests/selection/).

    distance_check.py --tool build/.../select_tool --workdir DIR

For MDAnalysisTests' GROMACS adk in water (GRO + XTC and TPR + XTC: a triclinic cell, 60/60/90
degrees, with Na+ ions), AMBER's truncated octahedron (PRM7 + NetCDF, 109.47 degrees) and the
hexagonal membrane system (GRO + XTC, gamma 120): frames as read, then the same frame with every
atom wrapped into the cell (molecules split across the boundary) and shifted by an odd vector
before wrapping. Each is compared with select_atoms(text, periodic=True), dcs given the cell;
the first frame also with periodic=False, dcs given no cell. An atom on which the two disagree
is accepted only where its distance (float64, minimum image over the 27 neighbour images,
computed here) is within 1e-3 Å of the cutoff: MDAnalysis works on float32 coordinates.
Exit 77 (skip) without MDAnalysis/MDAnalysisTests.
"""
import argparse
import os
import sys
import time
import warnings

try:
    import numpy as np
    import MDAnalysis as mda
    import MDAnalysisTests.datafiles as d
    from MDAnalysis.lib.mdamath import triclinic_vectors
except ImportError as e:  # the venv of scripts/setup-md.sh is missing or incomplete
    print(f"distance_check: skipped: {e}")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from selection_check import run_tool, write_table  # noqa: E402

warnings.simplefilter("ignore")

SOLUTE = "(protein or resname POPE)"
IONS = "resname NA+ CL- Na+ Cl-"
# (text, what a disagreement may be): None (none allowed), ("around", R, REF): the atom's
# distance to REF's atoms at R; ("sph", (R, ...), REF): its distance to REF's centre at one of
# the radii; ("byres", R, REF): one atom of its residue at R from REF's atoms.
SELECTIONS = [
    (f"around 3.5 {SOLUTE}", ("around", 3.5, SOLUTE)),
    (f"around 8 {IONS}", ("around", 8.0, IONS)),
    (f"{IONS} and around 12 {SOLUTE}", ("around", 12.0, SOLUTE)),  # the ions near the solute
    ("around 5 resid 10:12 and name CA", ("around", 5.0, "resid 10:12 and name CA")),
    ("(around 5 resid 10:12) and name OW", ("around", 5.0, "resid 10:12")),
    ("around 30 resid 3", ("around", 30.0, "resid 3")),
    ("around 45 resid 3", ("around", 45.0, "resid 3")),  # beyond half the shortest width
    ("around 0 name CA", ("around", 0.0, "name CA")),
    ("not around 10 resid 1:20", ("around", 10.0, "resid 1:20")),
    (f"sphzone 12 {SOLUTE}", ("sph", (12.0,), SOLUTE)),
    ("sphzone 9.5 resid 5", ("sph", (9.5,), "resid 5")),
    (f"sphlayer 5 10 {SOLUTE}", ("sph", (5.0, 10.0), SOLUTE)),
    ("sphlayer 0 4 resid 7 and name N", ("sph", (0.0, 4.0), "resid 7 and name N")),
    (f"byres around 3 {SOLUTE}", ("byres", 3.0, SOLUTE)),
    ("same residue as (resname SOL WAT and around 3.2 resid 4)", ("byres", 3.2, "resid 4")),
    ("byres name CA and resid 3:9", None),
    ("same residue as name HW2 H2 and index 30000:30030", None),
    ("byres index 0:30 or byres index 10000", None),
]
# Both must refuse (dcs: with the position in the text).
REFUSED = ["around name CA", "around 5", "sphlayer 5 name CA", "byres", "around x5 protein",
           "same residue name CA"]
# dcs refuses; MDAnalysis selects nothing (negative, NaN, an inner radius over the outer one)
# or, after 'same', knows more properties than 'residue'.
DCS_STRICTER = ["around -1 name CA", "sphlayer 8 4 name CA", "around nan name CA",
                "same resid as name CA"]


def universes():
    yield "gro_xtc", mda.Universe(d.GRO, d.XTC)
    yield "tpr_xtc", mda.Universe(d.TPR, d.XTC)
    yield "prm7_truncoct", mda.Universe(d.PRM7, d.NCDFtruncoct)
    yield "membrane_hex", mda.Universe(d.GRO_MEMPROT, d.XTC_MEMPROT)


def min_image_distances(points, centre, dims):
    """float64 distances of `points` to `centre`, minimum image over the 27 neighbours."""
    box = triclinic_vectors(np.asarray(dims, dtype=np.float64)).astype(np.float64)
    delta = points.astype(np.float64) - np.asarray(centre, dtype=np.float64)
    frac = delta @ np.linalg.inv(box)
    delta = (frac - np.round(frac)) @ box
    best = np.full(len(delta), np.inf)
    for i in (-1, 0, 1):
        for j in (-1, 0, 1):
            for k in (-1, 0, 1):
                shifted = delta + np.array([i, j, k], dtype=np.float64) @ box
                best = np.minimum(best, np.sqrt((shifted ** 2).sum(axis=1)))
    return best


def plain_distances(points, centre, dims):
    return np.sqrt(((points.astype(np.float64) - np.asarray(centre, np.float64)) ** 2).sum(1))


def near_cutoff(u, check, atom, periodic):
    """Whether a disagreement on `atom` is float32 rounding at a cutoff (1e-3 Å)."""
    if check is None:
        return False
    kind, radius, ref_text = check
    measure = min_image_distances if periodic else plain_distances
    ref = u.select_atoms(ref_text).positions
    if kind == "sph":
        d_c = measure(u.atoms.positions[atom:atom + 1], ref.astype(np.float64).mean(0),
                      u.dimensions)[0]
        return any(abs(d_c - r) < 1e-3 for r in radius)
    near = [atom] if kind == "around" else u.atoms[atom].residue.atoms.indices
    return any(abs(min(measure(ref, u.atoms.positions[a], u.dimensions)) - radius) < 1e-3
               for a in near)


def frames(u):
    """(label, prepare) for each state of the coordinates compared."""
    last = len(u.trajectory) - 1
    yield "frame 0", lambda: u.trajectory[0]
    yield f"frame {last}", lambda: u.trajectory[last]

    def wrapped():
        u.trajectory[last]
        u.atoms.wrap(compound="atoms")

    def shifted():
        u.trajectory[0]
        u.atoms.translate([13.7, -21.2, 5.3])
        u.atoms.wrap(compound="atoms")
    yield f"frame {last} wrapped atom by atom", wrapped
    yield "frame 0 shifted and wrapped", shifted


def compare(u, label, tool, table, periodic, failures, counts):
    write_table(u, table)
    cell = [repr(float(v)) for v in u.dimensions] if periodic else []
    texts = [t for t, _ in SELECTIONS] + REFUSED + DCS_STRICTER
    start = time.perf_counter()
    answers = dict(zip(texts, run_tool(tool, table, texts, cell)))
    counts["dcs_seconds"] += time.perf_counter() - start
    for text, kind in SELECTIONS:
        got = answers[text]
        if got.startswith("error:"):
            failures.append(f"{label}: {text!r}: dcs refused: {got}")
            continue
        start = time.perf_counter()
        expected = set(u.select_atoms(text, periodic=periodic).indices.tolist())
        counts["md_seconds"] += time.perf_counter() - start
        mine = {int(v) for v in got.split()}
        counts["compared"] += 1
        counts["atoms"] += len(expected)
        for atom in sorted(mine ^ expected):
            if near_cutoff(u, kind, atom, periodic):
                counts["at_cutoff"] += 1
            else:
                failures.append(f"{label}: {text!r}: atom {atom}: dcs "
                                f"{'selects' if atom in mine else 'leaves'} it, MDAnalysis "
                                f"{'selects' if atom in expected else 'leaves'} it")
                break
    for text in REFUSED:
        try:
            u.select_atoms(text)
            md_refuses = False
        except Exception:  # SelectionError, ValueError, IndexError: each refusal's own
            md_refuses = True
        if not md_refuses or not answers[text].startswith("error:"):
            failures.append(f"{label}: {text!r}: expected both to refuse; dcs {answers[text]!r}")
    for text in DCS_STRICTER:
        if not answers[text].startswith("error:"):
            failures.append(f"{label}: {text!r}: dcs accepted what it documents as refused")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    failures = []
    counts = {"compared": 0, "atoms": 0, "at_cutoff": 0, "dcs_seconds": 0.0, "md_seconds": 0.0}
    for name, u in universes():
        table = os.path.join(args.workdir, f"{name}.tsv")
        for k, (frame_label, prepare) in enumerate(frames(u)):
            if name == "tpr_xtc" and k in (1, 2):  # gro_xtc's coordinates: TPR's topology only
                continue
            prepare()
            label = f"{name} {frame_label} ({len(u.atoms)} atoms, cell {u.dimensions.round(2)})"
            compare(u, label, args.tool, table, True, failures, counts)
            if k == 0:
                compare(u, label + " without the cell", args.tool, table, False, failures,
                        counts)
            print(f"distance_check: {label}: compared")
    print(f"distance_check: {counts['compared']} selections compared with MDAnalysis "
          f"({counts['atoms']} atoms selected in all), {counts['at_cutoff']} atoms within 1e-3 Å "
          f"of a cutoff read differently (float32 there), {len(failures)} failures; "
          f"dcs {counts['dcs_seconds']:.1f} s (tool, table reading included), "
          f"MDAnalysis {counts['md_seconds']:.1f} s")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
