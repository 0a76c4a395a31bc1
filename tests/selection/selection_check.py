#!/usr/bin/env python3
"""Cross-checks dcs's selections and superposition against MDAnalysis (tests/selection/).

    selection_check.py --tool build/.../select_tool --workdir DIR --part select|fit

select: for MDAnalysisTests' adk PSF (CHARMM names, segid 4AKE), adk_oplsaa TPR (GROMACS names,
segids seg_N_..., chain IDs with '+') and chainIDrepeat PDB (chains A-D), writes the atom table
select_tool reads and compares, for every selection below, dcs's indices with
u.select_atoms(text).indices; selections both must refuse, and the known, deliberate differences
(dcs refuses what MDAnalysis silently reads as empty), are checked too.
fit: for frame pairs of the adk DCD, the CA atoms' least_squares_fit against
MDAnalysis.analysis.align.rotation_matrix on the centred coordinates (rotation and RMSD to
1e-6), and the fit applied to the mobile frame against MDAnalysis's own fitted coordinates.
Exit 77 (skip) without MDAnalysis/MDAnalysisTests.
"""
import argparse
import os
import subprocess
import sys
import warnings

try:
    import numpy as np
    import MDAnalysis as mda
    import MDAnalysisTests.datafiles as d
    from MDAnalysis.analysis import align
    from MDAnalysis.exceptions import SelectionError
except ImportError as e:  # the venv of scripts/setup-md.sh is missing or incomplete
    print(f"selection_check: skipped: {e}")
    sys.exit(77)

warnings.simplefilter("ignore")

# (selection, which universes it applies to: None = all). Every keyword, wildcards, ranges in
# every spelling, values lists, precedence of not/and/or, parentheses, protein/backbone.
SELECTIONS = [
    "all",
    "name CA",
    "name CA CB N",
    "name C*",
    "name H?",
    "name *1",
    "name O* and not name OH2",
    "name [CN]",
    "name [!CNO]*",
    "name [A-C]?",
    "name [b-a-C] [z-a]",                       # fnmatch drops reversed ranges with their ends
    "resname LYS ARG",
    "resname GL?",
    "resname *",
    "resid 10",
    "resid 10:20",
    "resid 10-20",
    "resid 10 to 20",
    "resid 5 : 7 100",
    "resid 1- 3 200:214",
    "resid 1 -5 3",                            # three values: 1, -5, 3
    "index 0",
    "index 100:199",
    "index 5 7 9-11",
    "bynum 1",
    "bynum 100:199",
    "bynum 5 7 9-11",
    "protein",
    "backbone",
    "nucleic",
    "not protein",
    "protein and not backbone",
    "backbone and resid 1:5",
    "name CA or name CB and resid 5",          # (CA or CB) and resid 5 in MDAnalysis
    "name CA or (name CB and resid 5)",
    "resid 5 and name CA or name N",
    "not name CA and resid 1:3",
    "not (name CA and resid 1:3)",
    "not not name CA",
    "(resid 1:10 or resid 20:30) and (name N or name C) and not resname GLY",
    "((name CA))or(name CB)",
    "protein and (name CA N C O) and not backbone",
    "segid 4AKE",
    "segid 4*",
    "segid seg_0_*",
    "segid seg_?_SOL seg_2_NA+",
    "segid A C",
    "chainID A",
    "chainID B D and resid 2",
    "chainid [AB]",
    "chainID AKeco and name CA",
    "chainID NA+",
    "name \\CA",
    "resname SOL and name OW and index 40000:40100",
]

# Both must refuse.
REFUSED = ["nam CA", "name", "(name CA", "name CA)", "resid 5 to", "name CA and", "not",
           "resid abc", "protein backbone", "or name CA", "()"]
# dcs refuses, MDAnalysis selects nothing or ignores the rest (documented in selection.hpp).
DCS_STRICTER = ["", "   ", "resid 20:10", "index 9:3", "bynum 1:5x"]


def universes():
    yield "psf", mda.Universe(d.PSF, d.DCD)
    yield "tpr", mda.Universe(d.TPR)
    yield "pdb_chains", mda.Universe(d.PDB_chainidrepeat)


def write_table(u, path):
    a = u.atoms
    try:
        chains = a.chainIDs
    except Exception:  # no chain IDs in this topology (PSF)
        chains = [""] * len(a)
    with open(path, "w") as out:
        out.write("# index name resname resid segid chain x y z\n")
        for i, (atom, chain) in enumerate(zip(a, chains)):
            x, y, z = (repr(float(c)) for c in atom.position)
            out.write(f"{i}\t{atom.name}\t{atom.resname}\t{atom.resid}\t{atom.segid}\t{chain}"
                      f"\t{x}\t{y}\t{z}\n")


def run_tool(tool, table, texts, cell=()):
    """dcs's answer to each text (select_tool select TABLE [CELL]): indices or "error: ..."."""
    result = subprocess.run([tool, "select", table, *cell], input="".join(t + "\n" for t in texts),
                            capture_output=True, text=True, check=True)
    lines = result.stdout.split("\n")[: len(texts)]
    assert len(lines) == len(texts), result.stdout
    return lines


def check_select(tool, workdir):
    failures, compared, skipped = [], 0, 0
    for label, u in universes():
        table = os.path.join(workdir, f"{label}.tsv")
        write_table(u, table)
        texts = SELECTIONS + REFUSED + DCS_STRICTER
        answers = dict(zip(texts, run_tool(tool, table, texts)))
        for text in SELECTIONS:
            try:
                expected = u.select_atoms(text).indices.tolist()
            except (SelectionError, ValueError, AttributeError):  # chainID on a PSF, which has none
                skipped += 1
                continue
            got = answers[text]
            if got.startswith("error:"):
                failures.append(f"{label}: {text!r}: dcs refused: {got}")
                continue
            indices = [int(v) for v in got.split()]
            compared += 1
            if indices != expected:
                failures.append(f"{label}: {text!r}: dcs {len(indices)} atoms, MDAnalysis "
                                f"{len(expected)}; first differences "
                                f"{sorted(set(indices) ^ set(expected))[:10]}")
        for text in REFUSED:
            try:
                u.select_atoms(text)
                md_refuses = False
            except (SelectionError, ValueError, IndexError):
                md_refuses = True
            if not md_refuses or not answers[text].startswith("error:"):
                failures.append(f"{label}: {text!r}: expected both to refuse; MDAnalysis "
                                f"{'refused' if md_refuses else 'accepted'}, dcs {answers[text]!r}")
        for text in DCS_STRICTER:
            if not answers[text].startswith("error:"):
                failures.append(f"{label}: {text!r}: dcs accepted what it documents as refused")
        print(f"selection_check: {label}: {len(u.atoms)} atoms, {len(SELECTIONS)} selections")
    print(f"selection_check: {compared} selections compared with MDAnalysis, {skipped} skipped "
          f"(MDAnalysis refuses them for that topology), {len(failures)} failures")
    return failures


def check_fit(tool, workdir):
    u = mda.Universe(d.PSF, d.DCD)
    ca = u.select_atoms("name CA")
    failures = []
    pairs = [(0, 1), (0, 50), (10, 97), (25, 75), (97, 0), (40, 41)]
    worst_r = worst_rmsd = worst_xyz = 0.0
    for mobile_frame, ref_frame in pairs:
        paths = []
        coords = []
        for frame in (mobile_frame, ref_frame):
            u.trajectory[frame]
            path = os.path.join(workdir, f"ca_{frame}.tsv")
            write_table_positions(ca, path)
            paths.append(path)
            coords.append(ca.positions.astype(np.float64))
        out = subprocess.run([tool, "fit", *paths], capture_output=True, text=True, check=True)
        values = [float(v) for v in out.stdout.split()]
        rotation, rmsd = np.array(values[:9]).reshape(3, 3), values[9]
        from_centre, to_centre = np.array(values[10:13]), np.array(values[13:16])
        mob, ref = coords
        # MDAnalysis's convention: R from rotation_matrix(centred mobile, centred reference)
        # rotates column vectors, ref_c ~ R @ mob_c; AlignTraj then applies positions @ R.T.
        r_md, rmsd_md = align.rotation_matrix(mob - mob.mean(axis=0), ref - ref.mean(axis=0))
        fitted_md = (mob - mob.mean(axis=0)) @ r_md.T + ref.mean(axis=0)
        fitted = (mob - from_centre) @ rotation.T + to_centre
        dr = np.abs(rotation - r_md).max()
        drmsd = abs(rmsd - rmsd_md)
        dxyz = np.abs(fitted - fitted_md).max()
        worst_r, worst_rmsd, worst_xyz = max(worst_r, dr), max(worst_rmsd, drmsd), max(worst_xyz, dxyz)
        print(f"selection_check: fit frame {mobile_frame} onto {ref_frame} ({len(ca)} CA): "
              f"rmsd dcs {rmsd:.9f} MDAnalysis {rmsd_md:.9f} A; max |dR| {dr:.2e}, "
              f"max |dx| of the fitted atoms {dxyz:.2e} A")
        if dr > 1e-6 or drmsd > 1e-6 or dxyz > 1e-5:
            failures.append(f"frames {mobile_frame}->{ref_frame}: |dR| {dr:.3e}, |drmsd| "
                            f"{drmsd:.3e}, |dx| {dxyz:.3e}")
        if np.abs(from_centre - mob.mean(axis=0)).max() > 1e-9:
            failures.append(f"frames {mobile_frame}->{ref_frame}: from_centre differs")
    print(f"selection_check: worst |dR| {worst_r:.2e}, |drmsd| {worst_rmsd:.2e} A, "
          f"|dx| {worst_xyz:.2e} A over {len(pairs)} frame pairs")
    return failures


def write_table_positions(group, path):
    with open(path, "w") as out:
        for i, (atom, p) in enumerate(zip(group, group.positions)):
            x, y, z = (repr(float(c)) for c in p)
            out.write(f"{i}\t{atom.name}\t{atom.resname}\t{atom.resid}\t{atom.segid}\t\t{x}\t{y}\t{z}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--part", choices=["select", "fit"], required=True)
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    failures = check_select(args.tool, args.workdir) if args.part == "select" else \
        check_fit(args.tool, args.workdir)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
