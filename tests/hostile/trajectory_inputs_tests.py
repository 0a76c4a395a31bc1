#!/usr/bin/env python3
"""Hostile MD inputs through the real `dcs` binary: fit atoms on one line, an XTC frame with a
negative precision, --frames at int64's limits or empty, a truncated PSF, and an MD setup's PDB
file named .pqr. The files are made with MDAnalysis (and MDAnalysisTests' adk system), so this
script runs with the venv of scripts/setup-md.sh; exit 77 (skipped) without it. Shares the
harness of tests/integration/cli_tests.py.

Usage: trajectory_inputs_tests.py DCS_BINARY SOURCE_DIR CASE   (CASE 'list' prints the names)
"""
import os
import re
import shutil
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
from md_or_skip import data, mda  # noqa: E402  (exit 77 without MDAnalysis)
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import cli_tests as base  # noqa: E402  (reads DCS and SOURCE from sys.argv)
from cli_tests import assert_in, run, write  # noqa: E402

GRID = ["--grid", "9", "--device", "cpu", "--no-progress"]
CASES = {}
case = lambda function: CASES.setdefault(function.__name__, function)  # noqa: E731


def left_behind(directory, inputs):
    return sorted(set(os.listdir(directory)) - set(inputs))


def small_system(tmp, first_frame):
    """A PQR topology of len(first_frame) atoms C1, C2, ... and a 3-frame DCD whose first frame
    is `first_frame` (the later ones rotated and shifted): (topology, trajectory)."""
    n = len(first_frame)
    topology = write(tmp, "t.pqr", "".join(
        f"ATOM  {k + 1:5d}  C{k + 1:<3d}LIG A   1    {x:8.3f}{y:8.3f}{z:8.3f} 0.1000 1.7000\n"
        for k, (x, y, z) in enumerate(first_frame)))
    c, s = np.cos(0.3), np.sin(0.3)
    turn = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    frames = [np.asarray(first_frame, dtype=float)]
    for f in (1, 2):
        frames.append(frames[-1] @ turn.T + [0.5 * f, 0, 0])
    universe = mda.Universe.empty(n, trajectory=True)
    universe.load_new(np.array(frames, dtype=np.float32), order="fac")
    trajectory = os.path.join(tmp, "t.dcd")
    with mda.Writer(trajectory, n) as writer:
        for _ in universe.trajectory:
            writer.write(universe.atoms)
    return topology, trajectory


@case
def fit_atoms_on_one_line_are_refused(tmp):
    # C1..C3 on one line through the origin (exactly, then 0.002 Å off it); C4 off the line.
    rng = np.random.default_rng(5)
    atoms = [(1.0, 2.0, 3.0), (2.0, 4.0, 6.0), (3.5, 7.0, 10.5)] + [
        tuple(rng.uniform(-8, 8, 3)) for _ in range(9)]
    topology, trajectory = small_system(tmp, atoms)
    inputs = os.listdir(tmp)
    base = ["--topology", topology, "--trajectory", trajectory] + GRID
    proc = run(base + ["--align", "name C1 C2 C3"], tmp, 2)
    assert_in('--align "name C1 C2 C3": its 3 atoms lie on one line in frame 0', proc.stderr)
    assert_in("rotation about that line is undetermined", proc.stderr)
    if left_behind(tmp, inputs):
        raise AssertionError(f"files left behind: {left_behind(tmp, inputs)}")
    # The same atoms bent well off the line, and three atoms of the cloud, are fitted.
    run(base + ["--align", "name C1 C2 C4", "-o", "bent.h5"], tmp, 0)
    atoms[1] = (2.0, 4.0, 6.002)  # 0.0016 Å RMS off the line: still refused
    topology, trajectory = small_system(tmp, atoms)
    run(base + ["--align", "name C1 C2 C3", "-o", "near.h5"], tmp, 2)


@case
def xtc_frame_with_a_negative_precision_is_refused(tmp):
    # adk's XTC with frame 2's precision (the float after the header's second atom count)
    # negated: read as given, it is the mirror image of the frame.
    bad = os.path.join(tmp, "mirror.xtc")
    shutil.copy(data.XTC, bad)
    with open(bad, "r+b") as handle:
        raw = bytearray(handle.read())
        at = 0
        for _ in range(2):  # frame header 92 bytes, then the compressed bytes padded to 4
            packed = struct.unpack(">i", raw[at + 88:at + 92])[0]
            at += 92 + (packed + 3) // 4 * 4
        precision = struct.unpack(">f", raw[at + 56:at + 60])[0]
        if precision <= 0:
            raise AssertionError(f"frame 2's precision is {precision} already")
        raw[at + 56:at + 60] = struct.pack(">f", -precision)
        handle.seek(0)
        handle.write(raw)
    proc = run(["--topology", data.TPR, "--trajectory", bad, "--frames", "0:2"] + GRID, tmp, 3)
    assert_in("mirror.xtc: frame 2: corrupt XTC frame header (precision -1000", proc.stderr)
    if left_behind(tmp, ["mirror.xtc"]):
        raise AssertionError(f"files left behind: {left_behind(tmp, ['mirror.xtc'])}")


@case
def frames_at_the_int64_limits_or_empty(tmp):
    rng = np.random.default_rng(7)
    topology, trajectory = small_system(tmp, [tuple(rng.uniform(-8, 8, 3)) for _ in range(6)])
    base = ["--topology", topology, "--trajectory", trajectory] + GRID
    proc = run(base + ["--frames", ""], tmp, 2)
    assert_in('--frames "": empty', proc.stderr)
    big, small = str(2**63 - 1), str(-2**63)
    # start + step beyond INT64_MAX: frame 1 alone, reported as such.
    proc = run(base + ["--frames", f"1::{big}", "-o", "one.h5"], tmp, 0)
    assert_in("1 of 3 frames", proc.stderr)
    proc = run(base + ["--frames", f"{small}:{big}:{big}", "-o", "first.h5"], tmp, 0)
    assert_in("1 of 3 frames", proc.stderr)
    for frames in (big, small, f"{big}:"):
        proc = run(base + ["--frames", frames, "-o", "none.h5"], tmp, 2)
        assert_in("selects no frame of the trajectory's 3", proc.stderr)
    proc = run(base + ["--frames", str(2**63), "-o", "none.h5"], tmp, 2)
    assert_in("is not an integer", proc.stderr)


@case
def truncated_psf_warnings_have_no_escaped_newline(tmp):
    with open(data.PSF) as handle:
        lines = handle.readlines()
    bonds = next(i for i, line in enumerate(lines) if "!NBOND" in line)
    psf = write(tmp, "cut.psf", "".join(lines[:bonds + 10]))
    proc = run(["--topology", psf, "--trajectory", data.DCD] + GRID, tmp, 3)
    assert_in("cut.psf", proc.stderr)
    assert_in("warning: chemfiles:", proc.stderr)
    if "\\n" in proc.stderr:
        raise AssertionError(f"a literal \\n in:\n{proc.stderr}")


@case
def md_pdb_named_pqr_is_refused(tmp):
    # adk (PSF) written as PDB by MDAnalysis, as an MD setup leaves it: occupancy 1.00, the
    # heavy atoms with B-factors and the hydrogens (1685 of 3341 atoms) with B = 0.
    universe = mda.Universe(data.PSF, data.DCD)
    hydrogen = np.array([name.startswith("H") for name in universe.atoms.names])
    universe.add_TopologyAttr("tempfactors", np.where(hydrogen, 0.0, 15.0 + 20.0 * (
        np.arange(len(hydrogen)) % 7) / 7))
    universe.add_TopologyAttr("occupancies", np.ones(len(hydrogen)))
    pdb = os.path.join(tmp, "adk.pqr")

    def write_pdb():
        with mda.Writer(os.path.join(tmp, "adk.pdb")) as writer:
            writer.write(universe.atoms)
        os.rename(os.path.join(tmp, "adk.pdb"), pdb)

    # With the segment ID in columns 73-76 the line is no PQR record: named as PDB at its line.
    write_pdb()
    proc = run(["--atoms", pdb] + GRID, tmp, 3)
    if not re.search(r"adk\.pqr:\d+: looks like a PDB file", proc.stderr):
        raise AssertionError(f"no 'adk.pqr:LINE: looks like a PDB file' in:\n{proc.stderr}")
    assert_in("segment '4AKE' in 73-76", proc.stderr)
    # Without it the lines parse as PQR: the occupancies and B-factors give the file away.
    universe.segments.segids = [""]
    write_pdb()
    if hydrogen.sum() * 2 <= len(hydrogen):
        raise AssertionError("the hydrogens are not the majority: not the case of issue 35")
    proc = run(["--atoms", pdb] + GRID, tmp, 3)
    assert_in("looks like a PDB file", proc.stderr)
    assert_in(f"are 0 for {hydrogen.sum()} atoms", proc.stderr)
    if left_behind(tmp, ["adk.pqr"]):
        raise AssertionError(f"files left behind: {left_behind(tmp, ['adk.pqr'])}")
    proc = run(["--atoms", pdb, "--charges-as-given"] + GRID, tmp, 0)
    assert_in(f"total charge +{len(hydrogen)}.0000 e", proc.stderr)


if __name__ == "__main__":
    base.main(CASES)
